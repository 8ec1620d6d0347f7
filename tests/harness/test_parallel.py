"""`verify -j N`: worker processes in their own workspaces; what a user sees is a -j 1 run."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import (
    BOUNDS,
    Completed,
    Project,
    calc_project,
    default_spec,
    git,
    logging_git,
    project_copy,
)
from inproc import in_process
from replay import Recording, recorded_verify, replaying

from mutharness.model.results import from_json, to_json
from mutharness.repo.workspace import MARKER
from mutharness.sweep import pid_alive

ProjectFactory = Callable[..., Project]
Cli = Callable[..., Completed]

RECORDING = '''\
import os


def pytest_sessionstart(session):
    with open(os.environ["RUNS_LOG"], "a", encoding="utf-8") as log:
        log.write(f"{os.getpid()} {os.getcwd()}\\n")
'''


def _two_specs(base: Path) -> Path:
    made = calc_project(base / "repo")
    made.spec("bounds", BOUNDS)
    made.write("tests/conftest.py", RECORDING)
    made.commit("two specs; every run logged")
    return made.root


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Recording]:
    """Made once a session: `project` as committed and the real runs of its -j 1 verify."""
    log = tmp_path_factory.mktemp("runs-log") / "recorded.log"
    return recorded_verify(tmp_path_factory, "parallel-runs", _two_specs, "specs",
                           env={"RUNS_LOG": str(log)})


@pytest.fixture
def project(runs: tuple[Path, Recording], tmp_path: Path, git_home: Path) -> Iterator[Project]:
    """The calc project with two specs (5 mutations) and a conftest that logs every run; a
    -j 1 verify in the test's process replays the recorded runs, a -j 2 one runs its own."""
    with replaying(runs[1]):
        yield project_copy(runs[0], tmp_path)


FRESH = ("--pytest-runner", "subprocess")  # the runs the RECORDING conftest logs are processes


def env_logging(project: Project, name: str) -> dict[str, str]:
    return {**os.environ, "PYTHONIOENCODING": "utf-8",
            "RUNS_LOG": str(project.root.parent / name)}


def console(out: str, name: str) -> list[str]:
    """The console lines, durations, the mutants' timeout (a multiple of the baseline's time
    once that is long: a loaded machine's) and the output files' name (`name`) masked."""
    return [re.sub(r"mutation timeout [\d.]+ s", "mutation timeout T s", re.sub(
        r"\(\d+\.\d\d s\)", "(T s)", line)).replace(name, "OUT") for line in out.splitlines()]


def timeless(path: Path) -> dict[str, object]:
    return to_json(from_json(json.loads(path.read_text("utf-8"))), timings=False)


def test_j2_shows_the_console_results_and_evidence_of_j1(project: Project, cli: Cli) -> None:
    here = project.root.parent
    # a fresh process per run: the recorded runs of -j 1 are a subprocess runner's
    one = in_process(project.root, "verify", "specs", "--json", str(here / "one.json"),
                     "--evidence", str(here / "one"), *FRESH)  # -j 1: the recorded runs
    two = cli(project.root, "verify", "specs", "-j", "2", "--json", str(here / "two.json"),
              "--evidence", str(here / "two"), *FRESH, env=env_logging(project, "two.log"))

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


def test_j2_workers_started_as_new_processes_show_what_forked_ones_show(
    project: Project, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where a worker cannot be forked (Windows, macOS) it is `python -m
    mutharness.commands.worker`, which prepares the run again: the same run as a forked one."""
    from mutharness import process

    here = project.root.parent
    forked = cli(project.root, "verify", "specs", "-j", "2", "--json", str(here / "one.json"),
                 *FRESH, env=env_logging(project, "one.log"))
    monkeypatch.setattr(process, "FORKS", False)
    started = in_process(project.root, "verify", "specs", "-j", "2", "--json",
                         str(here / "two.json"), *FRESH, env=env_logging(project, "two.log"))

    assert forked.code == 0, forked.out + forked.err
    assert started.code == 0, started.out + started.err
    assert console(started.out, str(here / "two.json")) == console(
        forked.out, str(here / "one.json"))
    assert timeless(here / "two.json") == timeless(here / "one.json")
    workspaces = {line.split()[1] for line in (here / "two.log").read_text().splitlines()}
    assert len(workspaces) == 2  # two workers, each in its own workspace


@pytest.mark.skipif(sys.platform != "linux", reason="workers are forked on Linux only")
def test_j2_workers_start_from_their_parent_s_preparation_without_asking_git_again(
    project: Project, cli: Cli
) -> None:
    """On Linux a -j worker is forked from its parent once the run is prepared: it neither
    starts Python and imports mutharness again nor reads HEAD, the config and the specs
    again (each worker's first mutation waited for both)."""
    here = project.root.parent
    calls = here / "git-calls.log"
    env = {**env_logging(project, "two.log"), "PATH": logging_git(here / "bin", calls)}

    two = cli(project.root, "verify", "specs", "-j", "2", *FRESH, env=env)

    assert two.code == 0, two.out + two.err
    asked = calls.read_text(encoding="utf-8").splitlines()
    # the repository found once (the parent's), two workspaces made (one per worker)
    assert len([line for line in asked if " rev-parse --show-toplevel" in line]) == 1, asked
    assert len([line for line in asked if " init -q " in line]) == 2, asked
    workspaces = {line.split()[1] for line in (here / "two.log").read_text().splitlines()}
    assert len(workspaces) == 2  # still two workers, each in its own workspace


def test_a_shard_run_with_j2_is_that_shard_run_with_j1_and_merges_with_the_others(
    project: Project, cli: Cli
) -> None:
    here = project.root.parent
    runs = {  # -j 1 in the test's process (the recorded runs), -j 2 its own real workers
        "1": in_process(project.root, "verify", "specs", "--shard", "2/2", "--json",
                        str(here / "j1.json"), *FRESH),
        "2": cli(project.root, "verify", "specs", "--shard", "2/2", "-j", "2", "--json",
                 str(here / "j2.json"), *FRESH, env=env_logging(project, "j2.log")),
    }
    first = in_process(project.root, "verify", "specs", "--shard", "1/2", "--json",
                       str(here / "first.json"), *FRESH)
    merged = in_process(project.root, "merge", str(here / "first.json"), str(here / "j2.json"),
                        "--json", str(here / "merged.json"))
    whole = in_process(project.root, "verify", "specs", "--json", str(here / "whole.json"),
                       *FRESH)

    for done in (*runs.values(), first, merged, whole):
        assert done.code == 0, done.out + done.err
    assert console(runs["2"].out, str(here / "j2")) == console(runs["1"].out, str(here / "j1"))
    assert timeless(here / "j2.json") == timeless(here / "j1.json")
    # shard 2/2 is bounds #3 and calc's two, run by its workers as shards 3/4 and 4/4
    assert {spec["id"]: len(spec["mutations"]) for spec in timeless(here / "j2.json")["specs"]} \
        == {"bounds": 1, "calc": 2}
    workspaces = {line.split()[1] for line in (here / "j2.log").read_text().splitlines()}
    assert len(workspaces) == 2
    assert timeless(here / "merged.json")["specs"] == timeless(here / "whole.json")["specs"]


@pytest.mark.parametrize(("stops", "code", "ran", "shown"), [
    ("unexpected", 1, ["bounds"], 2),  # bounds' second mutation, wrongly documented
    ("spec-error", 3, ["bounds"], 0),  # bounds' baseline count is wrong: no mutation runs
    # calc's first mutation, wrongly documented: worker 2's, after bounds from both workers
    ("later-spec", 1, ["bounds", "calc"], 1),
])
def test_j2_fail_fast_stops_where_j1_does_with_its_console_results_and_evidence(
    make_project: ProjectFactory, cli: Cli, stops: str, code: int, ran: list[str], shown: int
) -> None:
    bounds = json.loads(json.dumps(BOUNDS))
    calc = default_spec()
    if stops == "unexpected":
        bounds["mutations"][1]["expectCaught"] = False  # caught: the first unexpected result
    elif stops == "spec-error":
        bounds["expectBaselinePass"] = 5
    else:
        calc["mutations"][0]["expectCaught"] = False
    project = make_project(spec=calc)
    project.spec("bounds", bounds)
    project.write("tests/conftest.py", RECORDING)
    project.commit(f"bounds stops a fail-fast run ({stops})")
    here = project.root.parent
    runs = {}
    for jobs in ("1", "2"):
        runs[jobs] = cli(project.root, "verify", "specs", "--fail-fast", "-j", jobs,
                         "--json", str(here / f"j{jobs}.json"), "--evidence",
                         str(here / f"j{jobs}"), *FRESH,
                         env=env_logging(project, f"j{jobs}.log"))

    one, two = runs["1"], runs["2"]
    assert one.code == code, one.out + one.err
    assert two.code == code, two.out + two.err
    assert console(two.out, str(here / "j2")) == console(one.out, str(here / "j1"))
    stopped = timeless(here / "j1.json")
    assert timeless(here / "j2.json") == stopped
    assert [spec["id"] for spec in stopped["specs"]] == ran  # what follows never ran
    assert len(stopped["specs"][-1]["mutations"]) == shown
    assert ("--fail-fast" in stopped["specs"][-1]["stopped"]) == (stops != "spec-error")
    for name in (*(f"{spec}.{kind}" for spec in ran for kind in ("md", "json")), "index.md"):
        assert (here / "j2" / name).read_bytes() == (here / "j1" / name).read_bytes(), name
    assert git(project.root, "status", "--porcelain") == ""


HANGING = default_spec(mutations=[
    {"name": "the low bound hangs the first time, then returns the high one",
     "file": "src/calc.py", "anchor": "        return low\n",
     "replacement": (
         "        import os, time\n"
         "        marker = os.environ['RUNS_LOG'] + '.hung'\n"
         "        if not os.path.exists(marker):\n"
         "            open(marker, 'w').close()\n"
         "            time.sleep(600)\n"
         "        return high\n")},
    {"name": "the high bound is ignored", "file": "src/calc.py",
     "anchor": "    if value > high:\n        return high\n", "replacement": ""},
])


def test_a_timeout_under_j2_is_run_again_alone_and_that_run_is_reported(
    make_project: ProjectFactory, cli: Cli
) -> None:
    project = make_project(spec=HANGING)
    project.write("tests/conftest.py", RECORDING)
    project.commit("every run logged")
    log = project.root.parent / "runs.log"

    done = cli(project.root, "verify", "specs", "-j", "2", "--timeout-floor", "10",
               "--timeout-constant", "0", "--pytest-runner", "subprocess",  # a process a run
               env=env_logging(project, "runs.log"))

    assert done.code == 0, done.out + done.err
    results = json.loads((project.root / ".mutharness/results.json").read_text("utf-8"))
    verdicts = [m["verdict"] for m in results["specs"][0]["mutations"]]
    assert verdicts == ["CAUGHT", "CAUGHT"]  # the re-run's verdict, not the worker's TIMEOUT
    # the baseline in each of two workers, one run each; then alone: the baseline, and the
    # mutant again
    assert len(log.read_text().splitlines()) == 2 * 1 + 2 + 2
    lines = [line for line in done.out.splitlines() if line.startswith(("  ", "✗"))]
    assert "hangs the first time" in lines[0] and "the high bound is ignored" in lines[2]
    assert "TIMEOUT" not in done.out


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


def _workers(temp: Path) -> list[int]:
    """The pids of live -j workers of runs whose temp directory is `temp`: forked ones by
    their name (`mutharness-wN`), started ones by their command line."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
            name = (entry / "comm").read_text().strip()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            environment = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        worker = name.startswith("mutharness-w") or b"mutharness.commands.worker" in words
        if worker and state != "Z" and f"TMPDIR={temp}".encode() in environment:
            found.append(int(entry.name))
    return found


def _slow_run(make_project: ProjectFactory, tmp_path: Path, copies: int = 1) -> tuple[
    Project, subprocess.Popen[str], Path, Path
]:
    project = make_project(spec=default_spec(
        tests=["tests/test_slow.py"], expectBaselinePass=2,
        mutations=BOUNDS["mutations"] * copies))
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
    # both workers are past their baseline and run mutants (RECORDING logs a line per pytest
    # session with its workspace: two in each, its baseline and a mutant): waited for as long
    # as it takes (the run itself fails the test if it ends first), never a guess at how long
    while not (_sessions_per_workspace(log) >= 2 and (
            sys.platform != "linux" or len(_workers(temp)) == 2)):
        if child.poll() is not None:
            out, err = child.communicate()
            pytest.fail(f"the run ended (exit {child.returncode}) before both workers ran "
                        f"mutants:\n{out}\n{err}")
        time.sleep(0.05)
    return project, child, temp, log


def _sessions_per_workspace(log: Path) -> int:
    """The fewest pytest sessions RECORDING logged in one of two workspaces (0: not two yet)."""
    lines = log.read_text().splitlines() if log.exists() else []
    counts = Counter(line.split(maxsplit=1)[1] for line in lines)
    return min(counts.values()) if len(counts) == 2 else 0


def _workspace_owners(temp: Path) -> list[int]:
    """The pid named by the marker of each workspace left under `temp`."""
    return [int((path / MARKER).read_text().split()[0])
            for path in temp.iterdir() if path.name.startswith("mh-") and (path / MARKER).exists()]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_an_interrupted_j2_run_stops_its_workers_and_leaves_nothing_behind(
    make_project: ProjectFactory, tmp_path: Path
) -> None:
    project, child, temp, log = _slow_run(make_project, tmp_path)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=120)

    assert child.returncode == 130, out + err
    assert not [p for p in temp.iterdir() if p.name.startswith(("mh-", "mutharness-jobs-"))]
    assert git(project.root, "status", "--porcelain") == ""
    results = json.loads((project.root / ".mutharness/results.json").read_text("utf-8"))
    assert results["interrupted"] is True and results["exit_code"] == 130
    shown = [line for line in out.splitlines() if line.lstrip().startswith("CAUGHT")]
    for spec in results["specs"]:  # the spec being shown, as -j 1 keeps it: what was shown
        assert spec["error"] == spec["stopped"] == (
            f"interrupted after {len(shown)} of 3 mutation(s)")
        assert len(spec["mutations"]) == len(shown)
    pids = {int(line.split()[0]) for line in log.read_text().splitlines()}
    assert [pid for pid in pids if _running(pid)] == []  # every pytest child is gone


def test_j2_writing_its_results_inside_the_tree_is_not_a_dirty_tree_to_its_workers(
    project: Project, cli: Cli
) -> None:
    done = cli(project.root, "verify", "specs", "-j", "2", "--json", "out.json",
               env=env_logging(project, "runs.log"))

    assert done.code == 0, done.out + done.err
    assert git(project.root, "status", "--porcelain") == "?? out.json\n"
    assert len(json.loads((project.root / "out.json").read_text("utf-8"))["specs"]) == 2


def _running(pid: int) -> bool:
    """Whether `pid` is a live process (on Linux a zombie, dead and awaiting its reaper, is
    not; elsewhere whether a signal can reach it)."""
    if sys.platform != "linux":
        return pid_alive(pid)
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_a_worker_killed_outright_stops_the_others_and_the_run_says_so(
    make_project: ProjectFactory, tmp_path: Path
) -> None:
    project, child, temp, log = _slow_run(make_project, tmp_path)
    os.kill(max(_workers(temp)), signal.SIGKILL)
    out, err = child.communicate(timeout=120)

    assert child.returncode == 5, out + err
    assert "was killed by signal 9 (SIGKILL) before its results were complete" in err
    assert _workers(temp) == []
    # the killed worker's workspace and its tests' processes are gone at once, not left for
    # a later run's sweep
    assert not [p for p in temp.iterdir() if p.name.startswith("mh-")]
    pids = {int(line.split()[0]) for line in log.read_text().splitlines()}
    assert [pid for pid in pids if _running(pid)] == []
    assert git(project.root, "status", "--porcelain") == ""
    results = json.loads((project.root / ".mutharness/results.json").read_text("utf-8"))
    assert results["exit_code"] == 5 and "SIGKILL" in results["error"]


@pytest.mark.skipif(sys.platform != "linux", reason="PR_SET_PDEATHSIG, /proc")
def test_workers_of_a_run_killed_outright_stop_and_remove_their_workspaces(
    make_project: ProjectFactory, tmp_path: Path, cli: Cli
) -> None:
    project, child, temp, log = _slow_run(make_project, tmp_path, copies=3)  # 9 mutants
    child.kill()
    started = len(log.read_text().splitlines())
    child.communicate(timeout=60)
    deadline = time.monotonic() + 120
    while _workers(temp) and time.monotonic() < deadline:
        time.sleep(0.05)

    assert _workers(temp) == []  # each got SIGTERM when its parent died, and cleaned up
    # they stopped at once: at most the run each was starting, not their remaining mutants
    assert len(log.read_text().splitlines()) <= started + 2
    # what is left is the killed run's own: its job files, and any workspace of its own
    # (a TIMEOUT re-run), for the next run's sweep; no worker's workspace
    assert "mh-jobs-" in [p.name[:8] for p in temp.iterdir()]
    assert set(_workspace_owners(temp)) <= {child.pid}
    assert git(project.root, "status", "--porcelain") == ""
    project.spec("quick", default_spec(), commit=True)  # the next run: quick tests
    again = cli(project.root, "verify", "specs/quick.json",
                env={**os.environ, "TMPDIR": str(temp), "RUNS_LOG": str(tmp_path / "again.log")})
    assert again.code == 0, again.out + again.err
    assert not any(temp.iterdir())  # the dead run's scratch directory was swept


def test_a_worker_job_reads_back_every_setting_it_was_given(tmp_path: Path) -> None:
    from mutharness.commands.prepare import (
        Inherited,
        Settings,
        settings_from_json,
        settings_json,
    )
    from mutharness.model.shards import Shard

    given = Settings(
        spec_paths=(Path("specs/a.json"), Path("specs/b.json")), start=tmp_path,
        cli_options={"timeout-floor": 30.0, "node.import": ("./setup.mjs",),
                     "first-failure": True, "python": "/venv/bin/python"},
        config=tmp_path / "mutharness.toml", allow_dirty=True, fail_fast=False,
        json_path=tmp_path / "w.json", command=("mutharness", "verify", "specs"),
        since="main", shard=Shard(2, 3), jobs=1, feed=tmp_path / "feed-1.jsonl", parent=4242,
        inherited=Inherited("a" * 40, (" M src/x.py",), ("src/x.py",)),
    )

    assert settings_from_json(json.loads(json.dumps(settings_json(given)))) == given


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_a_second_signal_ends_a_j2_run_at_once_and_its_workers_with_it(
    make_project: ProjectFactory, tmp_path: Path
) -> None:
    project, child, temp, _ = _slow_run(make_project, tmp_path, copies=3)
    child.send_signal(signal.SIGINT)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=120)
    deadline = time.monotonic() + 120
    while _workers(temp) and time.monotonic() < deadline:
        time.sleep(0.05)

    assert child.returncode == 130, out + err
    assert _workers(temp) == []
    assert git(project.root, "status", "--porcelain") == ""  # the user's tree is never touched


def test_a_worker_imports_neither_the_lock_nor_the_command_line_nor_the_reports() -> None:
    """A -j worker runs under its parent's lock and writes only its results file: what it
    starts with is what its first mutation waits for."""
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, mutharness.commands.worker; print(' '.join(sorted("
         "name for name in sys.modules if name.split('.')[0] in ('filelock', 'click', 'jinja2')"
         " or name.startswith(('mutharness.reports', 'mutharness.lab.parallel', "
         "'mutharness.lock', 'mutharness.commands.finish')))))"],
        capture_output=True, text=True, check=True)

    assert loaded.stdout.split() == []
