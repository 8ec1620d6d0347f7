"""`verify -j`: a worker joining a spec another worker holds takes that worker's baseline when
a run in its own workspace proves it there, and measures its own when it does not."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import Completed, Project, default_spec, git

from mutharness.errors import Interrupted
from mutharness.lab.feed import Feed, Handed
from mutharness.lab.handover import Sibling
from mutharness.lab.schedule import Item
from mutharness.model.results import RunResult, from_json, write_results
from mutharness.runners.base import NoFacts

Cli = Callable[..., Completed]
MakeProject = Callable[..., Project]

# every run of a test records where it ran, whether a fresh process or a forked child ran it,
# and the bytes of the module under test as it found them (a baseline's are the committed ones)
SPY = '''\
import hashlib
import os
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def spied():
    try:  # a child of the fork server (its __main__ is pytest's, as a fresh process's is)
        parent = Path(f"/proc/{os.getppid()}/cmdline").read_bytes()
    except OSError:
        parent = b""
    forked = b"_mutharness_forkserver" in parent
    source = hashlib.sha256(Path("src/calc.py").read_bytes()).hexdigest()
    with open(Path(os.environ["MH_SPY"], "runs"), "a", encoding="utf-8") as log:
        log.write(f"{os.getcwd()}\\t{'forked' if forked else 'fresh'}\\t{source}\\n")
    yield
'''
CLAIM = """\
    first = Path(os.environ["MH_SPY"], "first-cwd")
    try:
        with open(first, "x", encoding="utf-8") as made:
            made.write(os.getcwd())
    except FileExistsError:
        pass
    assert first.read_text(encoding="utf-8") == os.getcwd()
"""
# a test that passes only in the workspace that ran it first
WHERE = f"""\
import os
from pathlib import Path


def test_runs_where_it_first_ran():
{CLAIM}"""

def _runs(spy: Path) -> list[tuple[str, str, str]]:
    lines = (spy / "runs").read_text(encoding="utf-8").splitlines()
    return [(cwd, how, source) for cwd, how, source in (line.split("\t") for line in lines)]


def _spied(make_project: MakeProject, tmp_path: Path) -> tuple[Project, dict[str, str]]:
    project = make_project()
    project.write("tests/conftest.py", SPY)
    project.commit("every test run spied on")
    spy = tmp_path / "spy"
    spy.mkdir()
    return project, {**os.environ, "MH_SPY": str(spy)}


def _committed(project: Project) -> str:
    return hashlib.sha256((project.root / "src/calc.py").read_bytes()).hexdigest()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the fork server forks")
def test_a_joining_worker_proves_the_other_workers_baseline_in_its_workspace_and_measures_none(
    make_project: MakeProject, cli: Cli, tmp_path: Path
) -> None:
    project, env = _spied(make_project, tmp_path)
    alone = cli(project.root, "verify", "specs/calc.json", "--json",
                str(tmp_path / "one.json"), env={**env, "MH_SPY": str(tmp_path)})
    (tmp_path / "runs").unlink()

    done = cli(project.root, "verify", "specs/calc.json", "-j", "2", "--json",
               str(tmp_path / "two.json"), env=env)

    assert alone.code == 0 and done.code == 0, done.out + done.err
    runs = _runs(Path(env["MH_SPY"]))
    committed = _committed(project)
    baselines = [cwd for cwd, how, source in runs if how == "fresh" and source == committed]
    unmutated_forked = {cwd for cwd, how, source in runs
                        if how == "forked" and source == committed}
    assert len({cwd for cwd, _, _ in runs}) == 2  # each worker ran tests in its workspace
    assert len(baselines) == 4  # one fresh baseline: the calc spec's four tests, once
    # each workspace proved its fork server by an unmutated run in a forked child
    assert unmutated_forked == {cwd for cwd, _, _ in runs}

    def timeless(name: str) -> object:
        from mutharness.model.results import to_json
        return to_json(from_json(json.loads((tmp_path / name).read_text("utf-8"))),
                       timings=False)
    assert timeless("two.json") == timeless("one.json")
    assert git(project.root, "status", "--porcelain") == ""


@pytest.mark.parametrize("runner", ["forked", "subprocess"])
def test_a_baseline_that_holds_only_in_the_first_workspace_is_never_a_second_workers(
    make_project: MakeProject, cli: Cli, tmp_path: Path, runner: str
) -> None:
    project = make_project(spec=default_spec(
        tests=["tests/test_calc.py", "tests/test_where.py"], expectBaselinePass=5))
    project.write("tests/test_where.py", WHERE)
    project.commit("a test that passes only where it first ran")
    # the second workspace's own baseline is red: the run has no verdict (a kill by
    # test_runs_where_it_first_ran there would be the workspace's, not the mutant's)
    _assert_j2_gives_no_verdict(project, cli, tmp_path, "--pytest-runner", runner)


def _assert_j2_gives_no_verdict(project: Project, cli: Cli, tmp_path: Path, *args: str) -> None:
    """`-j 2` of the calc spec refuses it: the workers' baselines disagreed, no verdict."""
    spy = tmp_path / "spy"
    spy.mkdir()
    done = cli(project.root, "verify", "specs/calc.json", "-j", "2", *args,
               env={**os.environ, "MH_SPY": str(spy)})
    [part] = json.loads((project.root / ".mutharness/results.json").read_text("utf-8"))["specs"]
    assert done.code != 0, done.out + done.err
    assert part["mutations"] == []
    assert "its baseline was refused in worker" in part["error"], part["error"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the fork server forks")
def test_an_xdist_suite_under_j2_shows_the_console_of_j1(
    make_project: MakeProject, cli: Cli, make_venv: Callable[..., Any], tool_site: Path
) -> None:
    project = make_project()
    project.write("pyproject.toml", '[tool.pytest.ini_options]\npythonpath = ["src"]\n'
                                    'addopts = "-n 2"\n')
    project.commit("xdist workers")
    venv = make_venv("xdist", tools=tool_site)

    one, two = (cli(project.root, "verify", "specs/calc.json", "-j", jobs,
                    "--python", str(venv.python)) for jobs in ("1", "2"))

    assert one.code == 0 and two.code == 0, one.out + one.err + two.out + two.err
    # the joining worker's server cannot collect an xdist suite: that is no note of its own,
    # the baseline's proof gives the one -j 1 gives (xdist), once
    # durations and the mutants' timeout (a multiple of the baseline's time once that is
    # long: a loaded machine's) masked
    timeless = [re.sub(r"mutation timeout [\d.]+ s", "mutation timeout T s",
                       re.sub(r"\(\d+\.\d\d s\)", "(T s)", done.out)) for done in (one, two)]
    assert timeless[1] == timeless[0]
    assert two.err == one.err
    assert "note:" not in two.err, two.err


def _recorded() -> RunResult:
    """A real run's results (the committed evidence of a bundled spec)."""
    path = Path(__file__).resolve().parents[2] / "evidence" / "mutharness-guards.json"
    return from_json(json.loads(path.read_text("utf-8")))


def _sibling_with(tmp_path: Path, run: RunResult) -> Sibling:
    write_results(run, tmp_path / "sibling.json")
    return Sibling(tmp_path / "sibling.json")


SIBLING_PARTS: dict[str, tuple[Callable[[RunResult], RunResult], bool]] = {
    "its part with a measured baseline": (lambda run: run, True),
    "another commit": (lambda run: replace(run, commit="0" * 40), False),
    "its baseline refused": (lambda run: replace(run, specs=tuple(
        replace(part, error="baseline red") for part in run.specs)), False),
    "another spec under the same id": (lambda run: replace(run, specs=tuple(
        replace(part, spec=replace(part.spec, digest="0" * 64)) for part in run.specs)),
        False),
    "its run ended without the spec": (lambda run: replace(run, specs=(), complete=True),
                                       False),
}


@pytest.mark.parametrize("case", SIBLING_PARTS)
def test_a_siblings_results_give_its_baseline_only_when_it_measured_this_spec_at_this_commit(
    tmp_path: Path, case: str
) -> None:
    recorded = _recorded()
    change, given = SIBLING_PARTS[case]
    spec = recorded.specs[0].spec

    part = _sibling_with(tmp_path, change(recorded)).baseline(spec, recorded.commit, 60)

    assert (part is not None) is given
    if part is not None:
        assert part.baseline == recorded.specs[0].baseline


def test_a_worker_waiting_for_a_siblings_baseline_stops_as_if_terminated_when_its_parent_is_gone(
    tmp_path: Path
) -> None:
    recorded = _recorded()
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # exited and reaped
    waiting = replace(  # the sibling is still measuring it
        _sibling_with(tmp_path, replace(recorded, specs=(), complete=False)),
        parent=int(gone.stdout))

    with pytest.raises(Interrupted):
        waiting.baseline(recorded.specs[0].spec, recorded.commit, 60)


def test_a_worker_stops_waiting_for_a_file_that_never_becomes_a_siblings_results(
    tmp_path: Path
) -> None:
    recorded = _recorded()
    (tmp_path / "sibling.json").write_text('{"schema": 1, "specs": [', "utf-8")  # never whole

    part = Sibling(tmp_path / "sibling.json").baseline(recorded.specs[0].spec,
                                                      recorded.commit, 0.2)

    assert part is None  # this worker measures its own


def test_a_feed_line_names_the_results_file_a_joining_worker_reads_its_baseline_from(
    tmp_path: Path
) -> None:
    feed = Feed(tmp_path / "feed.jsonl")
    feed.give(Item("a", 0))
    feed.give(Item("b", 1), tmp_path / "worker-1.json")
    feed.end()

    assert list(feed.items()) == [Handed(Item("a", 0)),
                                  Handed(Item("b", 1), tmp_path / "worker-1.json")]


RECORDS = {
    "as pytest's part of a baseline is kept": (
        {"pytest_exit": 0, "config_file": "pyproject.toml", "modules": [["calc", "src/calc.py"]]},
        True),
    "without its modules (an older results file)": (
        {"pytest_exit": 0, "config_file": "pyproject.toml"}, False),
    "modules that are not pairs of names": (
        {"pytest_exit": 0, "config_file": None, "modules": [["calc"]]}, False),
    "an exit code that is not a number": (
        {"pytest_exit": "0", "config_file": None, "modules": []}, False),
}


@pytest.mark.parametrize("case", RECORDS)
def test_a_baseline_read_back_is_proven_only_with_the_modules_a_proof_compares(
    case: str
) -> None:
    from mutharness.runners.pytest.runner import PytestFacts, _read_back

    recorded, usable = RECORDS[case]
    baseline = _recorded().specs[0].baseline
    assert baseline is not None

    read = _read_back(replace(baseline, extension=NoFacts(recorded)))

    assert (read is not None) is usable
    if read is not None:
        assert isinstance(read.extension, PytestFacts)
        assert read.extension.to_json() == recorded
