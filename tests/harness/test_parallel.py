"""`verify -j N`: worker processes in their own workspaces; what a user sees is a -j 1 run."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Completed, Project, default_spec, git

from mutharness.results import from_json, to_json

ProjectFactory = Callable[..., Project]
Cli = Callable[..., Completed]

RECORDING = '''\
import os


def pytest_sessionstart(session):
    with open(os.environ["RUNS_LOG"], "a", encoding="utf-8") as log:
        log.write(f"{os.getpid()} {os.getcwd()}\\n")
'''

BOUNDS = default_spec(mutations=[
    {"name": "the high bound is ignored", "file": "src/calc.py",
     "anchor": "    if value > high:\n        return high\n", "replacement": ""},
    {"name": "the low bound returns the high one", "file": "src/calc.py",
     "anchor": "        return low\n", "replacement": "        return high\n"},
    {"name": "the value is returned unchanged", "file": "src/calc.py",
     "anchor": "    return value\n", "replacement": "    return value + 1\n"},
])


@pytest.fixture
def project(make_project: ProjectFactory) -> Project:
    """The calc project with two specs (5 mutations) and a conftest that logs every run."""
    made = make_project()
    made.spec("bounds", BOUNDS)
    made.write("tests/conftest.py", RECORDING)
    made.commit("two specs; every run logged")
    return made


def env_logging(project: Project, name: str) -> dict[str, str]:
    return {**os.environ, "PYTHONIOENCODING": "utf-8",
            "RUNS_LOG": str(project.root.parent / name)}


def console(out: str, name: str) -> list[str]:
    """The console lines, durations and the output files' name (`name`) masked."""
    return [re.sub(r"\(\d+\.\d\d s\)", "(T s)", line).replace(name, "OUT")
            for line in out.splitlines()]


def timeless(path: Path) -> dict[str, object]:
    return to_json(from_json(json.loads(path.read_text("utf-8"))), timings=False)


def test_j2_shows_the_console_results_and_evidence_of_j1(project: Project, cli: Cli) -> None:
    here = project.root.parent
    one = cli(project.root, "verify", "specs", "--json", str(here / "one.json"),
              "--evidence", str(here / "one"), env=env_logging(project, "one.log"))
    two = cli(project.root, "verify", "specs", "-j", "2", "--json", str(here / "two.json"),
              "--evidence", str(here / "two"), env=env_logging(project, "two.log"))

    assert one.code == 0, one.out + one.err
    assert two.code == 0, two.out + two.err
    assert console(two.out, str(here / "two")) == console(one.out, str(here / "one"))
    assert timeless(here / "two.json") == timeless(here / "one.json")
    first, second = sorted((here / "one").iterdir()), sorted((here / "two").iterdir())
    assert [p.name for p in second] == [p.name for p in first]
    for expected, got in zip(first, second, strict=True):
        assert got.read_bytes() == expected.read_bytes(), got.name
    workspaces = {line.split()[1] for line in (here / "two.log").read_text().splitlines()}
    assert len(workspaces) == 2  # two workers, each in its own workspace
    assert git(project.root, "status", "--porcelain") == ""


def test_j2_with_a_shard_or_fail_fast_is_refused(project: Project, cli: Cli) -> None:
    for extra in (["--shard", "1/2"], ["--fail-fast"]):
        done = cli(project.root, "verify", "specs", "-j", "2", *extra)
        assert done.code == 2
        assert f"-j 2 with {extra[0]}: not supported" in done.err


HANGING = default_spec(mutations=[
    {"name": "the low bound hangs", "file": "src/calc.py",
     "anchor": "        return low\n",
     "replacement": "        import time\n        time.sleep(600)\n"},
    {"name": "the high bound is ignored", "file": "src/calc.py",
     "anchor": "    if value > high:\n        return high\n", "replacement": ""},
])


def test_a_timeout_under_j2_is_run_again_alone_before_it_is_reported(
    make_project: ProjectFactory, cli: Cli
) -> None:
    project = make_project(spec=HANGING)
    project.write("tests/conftest.py", RECORDING)
    project.commit("every run logged")
    log = project.root.parent / "runs.log"

    done = cli(project.root, "verify", "specs", "-j", "2", "--timeout-floor", "10",
               "--timeout-constant", "0", env=env_logging(project, "runs.log"))

    assert done.code == 2, done.out + done.err
    results = json.loads((project.root / ".mutharness/results.json").read_text("utf-8"))
    verdicts = [m["verdict"] for m in results["specs"][0]["mutations"]]
    assert verdicts == ["TIMEOUT", "CAUGHT"]
    # collect + baseline in each of two workers, one run each; then alone: collect, baseline,
    # and the hanging mutant again
    assert len(log.read_text().splitlines()) == 2 * 2 + 2 + 3
    lines = [line for line in done.out.splitlines() if line.startswith(("  ", "✗"))]
    assert "the low bound hangs" in lines[0] and "the high bound is ignored" in lines[1]


SLOW = '''\
import time

from calc import clamp


def test_slow_below():
    time.sleep(1)
    assert clamp(-5, 0, 10) == 0


def test_slow_above():
    time.sleep(1)
    assert clamp(50, 0, 10) == 10
'''


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_an_interrupted_j2_run_stops_its_workers_and_leaves_nothing_behind(
    make_project: ProjectFactory, tmp_path: Path
) -> None:
    project = make_project(spec=default_spec(
        tests=["tests/test_slow.py"], expectBaselinePass=2,
        mutations=BOUNDS["mutations"]))
    project.write("tests/test_slow.py", SLOW)
    project.write("tests/conftest.py", RECORDING)
    project.commit("slow tests")
    temp = tmp_path / "tmp"
    temp.mkdir()
    log = tmp_path / "runs.log"
    env = {**os.environ, "TMPDIR": str(temp), "RUNS_LOG": str(log)}
    child = subprocess.Popen(
        [sys.executable, "-m", "mutharness", "verify", "specs", "-j", "2"],
        cwd=project.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # both workers are past their baseline, mutants run
        if log.exists() and len(log.read_text().splitlines()) >= 5:
            break
        time.sleep(0.05)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=120)

    assert child.returncode == 130, out + err
    assert not [p for p in temp.iterdir() if p.name.startswith(("mh-", "mutharness-jobs-"))]
    assert git(project.root, "status", "--porcelain") == ""
    results = json.loads((project.root / ".mutharness/results.json").read_text("utf-8"))
    assert results["interrupted"] is True and results["exit_code"] == 130
    pids = {int(line.split()[0]) for line in log.read_text().splitlines()}
    for pid in pids:  # every pytest child is gone
        assert not Path(f"/proc/{pid}").exists() or sys.platform != "linux"


def test_j2_writing_its_results_inside_the_tree_is_not_a_dirty_tree_to_its_workers(
    project: Project, cli: Cli
) -> None:
    done = cli(project.root, "verify", "specs", "-j", "2", "--json", "out.json",
               env=env_logging(project, "runs.log"))

    assert done.code == 0, done.out + done.err
    assert git(project.root, "status", "--porcelain") == "?? out.json\n"
    assert len(json.loads((project.root / "out.json").read_text("utf-8"))["specs"]) == 2
