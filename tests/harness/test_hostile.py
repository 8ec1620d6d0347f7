"""Hostile mutants: loops, runaway grandchildren, crashes, early exits, forged reports, and runs
that rewrite, delete or symlink workspace files. Real repositories, real children, real signals.

Each test runs the real command line once on a spec whose hostile mutations are interleaved with
two ordinary ones (a caught one and a documented survivor), so every hostile mutation is followed
by one that must still get its correct verdict on a clean workspace. Every hostile snippet
appends its pid (and its grandchildren's) to `<spy>/pids`, outside the workspace. After each run:

* no recorded pid exists any more (`os.kill(pid, 0)` raises ProcessLookupError);
* the user's tree and `.git` are byte-identical (bar `.mutharness/`), `git status` unchanged;
* a sentinel file outside the tree and the workspace is unchanged;
* the harness's TMPDIR is empty again: no workspace and nothing the tests wrote there is left.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import Completed, Project, git
from liverun import LOW_BOUND, Sandbox, git_status, snapshot

from mutharness.digest import tree_digest

Cli = Callable[..., Completed]
MakeProject = Callable[..., Project]

POSIX_ONLY = pytest.mark.skipif(
    sys.platform == "win32", reason="pid checks with os.kill(pid, 0) and POSIX signals"
)
LINUX_ONLY = pytest.mark.skipif(
    not sys.platform.startswith("linux"),
    reason="a grandchild that calls setsid is killed through /proc (Linux only)",
)

SURVIVOR = {
    "name": "SURVIVOR (documented): >= to > at 18 is not pinned",
    "file": "src/calc.py",
    "anchor": "return age >= 18",
    "replacement": "return age >= 17",
    "expectCaught": False,
}
CAUGHT = dict(LOW_BOUND)

# Every hostile snippet starts here: record the pid of the process running it.
RECORD = '''\
import os as _os
with open(_os.path.join(_os.environ["MH_SPY_DIR"], "pids"), "a") as _pids:
    _pids.write(f"{_os.getpid()}\\n")
'''


def at_import(name: str, code: str) -> dict[str, Any]:
    """A mutation that runs `code` when `calc` is imported (during collection)."""
    return {
        "name": f"HOSTILE at import: {name}",
        "file": "src/calc.py",
        "anchor": "def is_adult(age):\n",
        "replacement": RECORD + textwrap.dedent(code) + "\n\ndef is_adult(age):\n",
    }


def in_test(name: str, code: str) -> dict[str, Any]:
    """A mutation that runs `code` inside `clamp`, i.e. during the first test that calls it."""
    body = textwrap.indent(RECORD + textwrap.dedent(code), "    ")
    return {
        "name": f"HOSTILE in a test: {name}",
        "file": "src/calc.py",
        "anchor": "    if value < low:\n",
        "replacement": body + "    if value < low:\n",
    }


def spec(*mutations: dict[str, Any]) -> dict[str, Any]:
    return {"tests": ["tests/test_calc.py"], "expectBaselinePass": 4, "mutations": list(mutations)}


@dataclass(frozen=True)
class Run:
    """A finished hostile run: the CLI's output and the results file's mutations."""

    done: Completed
    mutations: list[dict[str, Any]]
    pids: list[int]

    @property
    def verdicts(self) -> list[str]:
        return [mutation["verdict"] for mutation in self.mutations]

    def reason(self, index: int) -> str:
        return str(self.mutations[index]["reason"])


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _recorded(sandbox: Sandbox) -> list[int]:
    path = sandbox.spy / "pids"
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def _started_here(pid: int, sandbox: Sandbox) -> bool:
    """Whether `pid` is still a process this test started (never a recycled pid): on Linux its
    environment names this test's spy directory; elsewhere, that it exists."""
    if not sys.platform.startswith("linux"):
        return _exists(pid)
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False
    return f"MH_SPY_DIR={sandbox.spy}".encode() in environ


@contextlib.contextmanager
def _no_strays(sandbox: Sandbox) -> Iterator[None]:
    """If the run fails, no process a hostile snippet recorded outlives the test."""
    try:
        yield
    except BaseException:
        for pid in _recorded(sandbox):
            if _started_here(pid, sandbox):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
        raise


def assert_no_orphans(pids: list[int]) -> None:
    """Every pid is gone; killed strays are reaped by init, which may take a moment."""
    deadline = time.monotonic() + 15
    while any(_exists(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def run_hostile(
    project: Project, cli: Cli, sandbox: Sandbox, outside: list[Path], *args: str,
    **env: str,
) -> Run:
    """One verify of specs/calc.json, with every invariant of the module docstring checked."""
    before, status = snapshot(project.root), git_status(project.root)
    outside_before = [tree_digest(path.parent) for path in outside]
    with _no_strays(sandbox):
        done = cli(project.root, "verify", *args, "specs/calc.json",
                   env=sandbox.env(**env), timeout=120)
        pids = _recorded(sandbox)
        assert_no_orphans(pids)
    assert snapshot(project.root) == before, done.out + done.err
    assert git_status(project.root) == status
    assert [tree_digest(path.parent) for path in outside] == outside_before
    assert sorted(os.listdir(sandbox.tmpdir)) == [], "the run left something in TMPDIR"
    assert (project.root / ".mutharness/results.json").exists(), done.out + done.err
    results = json.loads((project.root / ".mutharness/results.json").read_text("utf-8"))
    [spec_result] = results["specs"]
    assert spec_result["error"] == "", spec_result["error"]
    return Run(done, spec_result["mutations"], pids)


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    return Sandbox.under(tmp_path)


@pytest.fixture
def sentinel(tmp_path: Path) -> Path:
    """A file outside the user's tree and every workspace, that nothing may change."""
    path = tmp_path / "outside" / "sentinel.txt"
    path.parent.mkdir()
    path.write_text("sentinel: nobody writes here\n")
    return path


GRANDCHILD = '''\
import os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
spy = os.environ["MH_SPY_DIR"]
with open(os.path.join(spy, "pids"), "a") as pids:
    pids.write(f"{os.getpid()}\\n")
open(os.path.join(spy, sys.argv[1]), "w").close()
time.sleep(600)
'''

SPAWN_THEN_LOOP = f'''\
import subprocess as _sp, sys as _sys, time as _time
_spy = _os.environ["MH_SPY_DIR"]
_code = {GRANDCHILD!r}
_sp.Popen([_sys.executable, "-c", _code, "ready-group"])  # same group, inherits stdout/stderr
_sp.Popen([_sys.executable, "-c", _code, "ready-escaped"], start_new_session=True)  # setsid
_ready = [_os.path.join(_spy, name) for name in ("ready-group", "ready-escaped")]
while not all(_os.path.exists(path) for path in _ready):
    _time.sleep(0.01)
while True:
    pass
'''


@LINUX_ONLY
def test_a_loop_and_a_loop_with_sigterm_proof_and_escaped_grandchildren_time_out_with_no_orphan(
    make_project: MakeProject, cli: Cli, sandbox: Sandbox, sentinel: Path
) -> None:
    project = make_project(spec=spec(
        in_test("an infinite loop", "while True:\n    pass\n"),
        CAUGHT,
        in_test("grandchildren that ignore SIGTERM, one after setsid, then a loop",
                SPAWN_THEN_LOOP),
        SURVIVOR,
    ))

    run = run_hostile(project, cli, sandbox, [sentinel], "--pytest-runner", "subprocess",
                      "--timeout-floor", "3", "--timeout-factor", "1", "--timeout-constant", "0")

    assert run.verdicts == ["TIMEOUT", "CAUGHT", "TIMEOUT", "SURVIVED"]
    assert run.reason(0) == run.reason(2) == "exceeded 3 s"
    assert [m["facts"]["timeout_s"] for m in run.mutations] == [3.0] * 4
    assert [m["facts"]["timed_out"] for m in run.mutations] == [True, False, True, False]
    assert (sandbox.spy / "ready-group").exists() and (sandbox.spy / "ready-escaped").exists()
    assert len(run.pids) == 4  # two pytest processes, two grandchildren: all gone
    assert run.done.code == 4


SEGFAULT = "import ctypes\nctypes.string_at(0)\n"


@POSIX_ONLY
def test_segfaults_and_os_exit_at_import_or_in_a_test_are_untrustworthy_never_evidence(
    make_project: MakeProject, cli: Cli, sandbox: Sandbox, sentinel: Path
) -> None:
    project = make_project(spec=spec(
        in_test("a segfault", SEGFAULT),
        CAUGHT,
        at_import("a segfault", SEGFAULT),
        at_import("os._exit(0)", "_os._exit(0)\n"),
        at_import("os._exit(1)", "_os._exit(1)\n"),
        SURVIVOR,
        in_test("os._exit(0)", "_os._exit(0)\n"),
        in_test("os._exit(1)", "_os._exit(1)\n"),
        CAUGHT,
    ))

    run = run_hostile(project, cli, sandbox, [sentinel], "--pytest-runner", "subprocess")

    assert run.verdicts == [
        "UNTRUSTWORTHY", "CAUGHT", "UNTRUSTWORTHY", "UNTRUSTWORTHY", "UNTRUSTWORTHY",
        "SURVIVED", "UNTRUSTWORTHY", "UNTRUSTWORTHY", "CAUGHT",
    ]
    assert run.reason(0) == run.reason(2) == f"killed by signal {signal.SIGSEGV}"
    assert run.reason(3) == run.reason(6) == "report missing (exit status 0)"
    assert run.reason(4) == run.reason(7) == "report missing (exit status 1)"
    assert len(run.pids) == 6  # a pytest process per run
    assert run.done.code == 4
    # the default (the fork server) gives the same verdicts for the same reasons
    default = run_hostile(project, cli, sandbox, [sentinel])
    assert default.verdicts == run.verdicts
    assert [default.reason(n) for n in range(9)] == [run.reason(n) for n in range(9)]
    assert default.done.code == 4


FAKE_REPORT = '''\
import json as _json, re as _re, sys as _sys, time as _time
_names = {names}
_doc = {{
    "created": {created}, "duration": 0.1, "exitcode": 0, "root": _os.getcwd(),
    "environment": {{}}, "summary": {{"passed": len(_names), "total": len(_names),
    "collected": len(_names)}}, "collectors": [],
    "tests": [{{"nodeid": nodeid, "lineno": 1, "outcome": "passed",
               "setup": {{"duration": 0.0, "outcome": "passed"}},
               "call": {{"duration": 0.0, "outcome": "passed"}},
               "teardown": {{"duration": 0.0, "outcome": "passed"}}}} for nodeid in _names],
}}
_paths = [_os.environ["MUTHARNESS_REPORT_OUT"]] if "MUTHARNESS_REPORT_OUT" in _os.environ else []
_paths.append(_os.path.join(_os.environ.get("TMPDIR", "/tmp"), "report.json"))
_paths += {extra_paths}
for _path in _paths:
    with open(_path, "w") as _out:
        _json.dump(_doc, _out)
if {forge_probe}:  # the harness's session-end record too (its path is in the environment)
    with open(_os.environ["MUTHARNESS_PROBE_OUT"], "w") as _out:
        _json.dump({{"modules": {{}}, "sys_path": []}}, _out)
_os._exit(0)
'''

THE_RIGHT_NODEIDS = (
    '["tests/test_calc.py::" + name for name in '
    '_re.findall(r"^def (test_\\w+)", open("tests/test_calc.py").read(), _re.M)]'
)


WRONG_NODEIDS = '["tests/test_calc.py::test_fake_%d" % n for n in range(4)]'


def fake_report(names: str, created: str, extra_paths: str = "[]", forge_probe: bool = False
                ) -> str:
    return FAKE_REPORT.format(
        names=names, created=created, extra_paths=extra_paths, forge_probe=forge_probe
    )


@POSIX_ONLY
def test_fake_all_passed_reports_followed_by_os_exit_0_are_untrustworthy_never_survived(
    make_project: MakeProject, cli: Cli, sandbox: Sandbox, sentinel: Path
) -> None:
    project = make_project(spec=spec(
        in_test("an old empty report in the cwd, TMPDIR and the real report path",
                fake_report("[]", "0", extra_paths='["report.json"]')),
        CAUGHT,
        in_test("a fresh report with no tests", fake_report("[]", "_time.time()")),
        in_test("a fresh report with the wrong tests", fake_report(WRONG_NODEIDS, "_time.time()")),
        SURVIVOR,
        in_test("a fresh report with the baseline's very tests, all passed",
                fake_report(THE_RIGHT_NODEIDS, "_time.time()")),
        in_test("a fresh report with no tests and a forged session-end record",
                fake_report("[]", "_time.time()", forge_probe=True)),
        in_test("a fresh report with the wrong tests and a forged session-end record",
                fake_report(WRONG_NODEIDS, "_time.time()", forge_probe=True)),
        CAUGHT,
    ))

    run = run_hostile(project, cli, sandbox, [sentinel])

    assert run.verdicts == [
        "UNTRUSTWORTHY", "CAUGHT", "UNTRUSTWORTHY", "UNTRUSTWORTHY", "SURVIVED",
        "UNTRUSTWORTHY", "UNTRUSTWORTHY", "UNTRUSTWORTHY", "CAUGHT",
    ]
    assert run.reason(0) == "report stale (exit status 0)"
    unfinished = "report session-unfinished (exit status 0)"
    assert run.reason(2) == run.reason(3) == run.reason(5) == unfinished
    assert run.reason(6) == "ran 0 tests: an empty run proves nothing"
    assert run.reason(7).startswith("test ids differ between runs")
    assert "missing tests/test_calc.py::test_adult_at_eighteen" in run.reason(7)
    assert "new tests/test_calc.py::test_fake_0" in run.reason(7)
    assert run.done.code == 4


EDIT_OTHERS_AT_IMPORT = '''\
_os.remove("pyproject.toml")  # without it, `from calc import` fails: the next run would break
with open("specs/calc.json", "a") as _spec:
    _spec.write("\\n")
with open("planted.txt", "w") as _planted:
    _planted.write("left by a mutant\\n")
'''

PLANT_A_TEST = '''\
if "def test_planted" not in open("tests/test_calc.py").read():
    with open("tests/test_calc.py", "a") as _tests:  # collected by the next run, if not undone
        _tests.write("\\n\\ndef test_planted():\\n    assert True\\n")
'''


@POSIX_ONLY
def test_a_run_that_deletes_or_edits_other_workspace_files_is_untrustworthy_and_is_undone(
    make_project: MakeProject, cli: Cli, sandbox: Sandbox, sentinel: Path
) -> None:
    project = make_project(spec=spec(
        at_import("deletes pyproject.toml, edits the spec, plants a file",
                  EDIT_OTHERS_AT_IMPORT),
        CAUGHT,
        in_test("appends a test to the test file", PLANT_A_TEST),
        SURVIVOR,
    ))

    run = run_hostile(project, cli, sandbox, [sentinel])

    assert run.verdicts == ["UNTRUSTWORTHY", "CAUGHT", "UNTRUSTWORTHY", "SURVIVED"]
    assert run.reason(0) == (  # planted.txt is untracked: deleted, no drift
        "workspace changed after restore: pyproject.toml, specs/calc.json"
    )
    assert run.reason(2) == "workspace changed after restore: tests/test_calc.py"
    # the caught one stopped at its first failing test (the default)
    assert [m["facts"]["collected"] for m in run.mutations] == [4, 1, 4, 4]
    assert run.done.code == 4


DELETE_GIT = '''\
import shutil as _shutil
_shutil.rmtree(".git")
with open("planted.txt", "w") as _planted:
    _planted.write("left by a mutant\\n")
'''

EMPTY_GIT = '''\
import shutil as _shutil
if _os.path.isfile(".git/HEAD"):
    _shutil.rmtree(".git")
    _os.mkdir(".git")
'''


@POSIX_ONLY
def test_a_run_that_deletes_the_workspaces_git_dir_never_makes_git_reset_an_enclosing_repo(
    make_project: MakeProject, cli: Cli, tmp_path: Path, sentinel: Path
) -> None:
    outer = tmp_path / "outer"  # TMPDIR inside another repository with uncommitted work
    outer.mkdir()
    git(outer, "init", "-q")
    (outer / "notes.txt").write_text("committed\n")
    git(outer, "add", "notes.txt")
    git(outer, "commit", "-q", "-m", "notes")
    (outer / "notes.txt").write_text("committed\nand an uncommitted line the user needs\n")
    sandbox = Sandbox(outer / "tmp", tmp_path / "spy")
    sandbox.tmpdir.mkdir()
    sandbox.spy.mkdir()
    project = make_project(spec=spec(
        at_import("deletes .git and plants a file", DELETE_GIT),
        CAUGHT,
        in_test("replaces .git with an empty directory", EMPTY_GIT),
        SURVIVOR,
    ))
    outer_before = tree_digest(outer, frozenset({"tmp"}))

    run = run_hostile(project, cli, sandbox, [sentinel])

    assert tree_digest(outer, frozenset({"tmp"})) == outer_before
    assert "uncommitted line" in (outer / "notes.txt").read_text()
    assert run.verdicts == ["UNTRUSTWORTHY", "CAUGHT", "UNTRUSTWORTHY", "SURVIVED"]
    assert ".git" in run.reason(0) and ".git" in run.reason(2)
    assert run.done.code == 4


TARGET_TO_SYMLINK = '''\
if not _os.path.islink("src/calc.py"):
    _os.remove("src/calc.py")
    _os.symlink(_os.environ["MH_SENTINEL"], "src/calc.py")
'''

DIRECTORY_TO_SYMLINK = '''\
import shutil as _shutil
if not _os.path.islink("src"):
    _shutil.rmtree("src")
    _os.symlink(_os.environ["MH_OUTSIDE_SRC"], "src")
'''

REWRITE_TARGET = '''\
if not open("src/calc.py").read().endswith("# by the run\\n"):
    with open("src/calc.py", "a") as _target:
        _target.write("# by the run\\n")
'''


@POSIX_ONLY
def test_a_target_or_its_directory_swapped_for_a_symlink_is_never_written_through(
    make_project: MakeProject, cli: Cli, sandbox: Sandbox, sentinel: Path, tmp_path: Path
) -> None:
    outside_src = tmp_path / "outside-src"
    outside_src.mkdir()
    (outside_src / "calc.py").write_text("# a file outside: the restore must not touch it\n")
    project = make_project(spec=spec(
        in_test("replaces its target with a symlink to a file outside", TARGET_TO_SYMLINK),
        CAUGHT,
        in_test("replaces the target's directory with a symlink to one outside",
                DIRECTORY_TO_SYMLINK),
        SURVIVOR,
        in_test("rewrites its own target file", REWRITE_TARGET),
        CAUGHT,
    ))

    run = run_hostile(project, cli, sandbox, [sentinel, outside_src / "calc.py"],
                      MH_SENTINEL=str(sentinel), MH_OUTSIDE_SRC=str(outside_src))

    assert run.verdicts == [
        "UNTRUSTWORTHY", "CAUGHT", "UNTRUSTWORTHY", "SURVIVED", "UNTRUSTWORTHY", "CAUGHT",
    ]
    for index in (0, 2, 4):
        assert "src/calc.py" in run.reason(index), run.reason(index)
    assert run.done.code == 4


def test_the_timeout_is_max_of_floor_and_factor_times_baseline_plus_constant_per_mutation(
    make_project: MakeProject, cli: Cli, sandbox: Sandbox
) -> None:
    project = make_project(spec=spec(CAUGHT, SURVIVOR))

    done = cli(project.root, "verify", "specs/calc.json", "--timeout-floor", "1",
               "--timeout-factor", "2.5", "--timeout-constant", "1.5", env=sandbox.env())
    scaled = json.loads((project.root / ".mutharness/results.json").read_text("utf-8"))
    floored_done = cli(project.root, "verify", "specs/calc.json", "--timeout-floor", "45",
                       env=sandbox.env())
    floored = json.loads((project.root / ".mutharness/results.json").read_text("utf-8"))

    # limits this tight may time a mutant out on a loaded machine: the limits are the facts here
    assert scaled["complete"] and not scaled["error"], done.out + done.err
    assert floored_done.code == 0, floored_done.out + floored_done.err
    assert scaled["settings"]["values"] == {
        **scaled["settings"]["values"],
        "timeout-floor": 1.0, "timeout-factor": 2.5, "timeout-constant": 1.5,
    }
    [spec_result] = scaled["specs"]
    expected = max(1.0, 2.5 * spec_result["baseline"]["duration_s"] + 1.5)
    assert abs(spec_result["timeout_s"] - expected) <= 0.1
    assert [m["facts"]["timeout_s"] for m in spec_result["mutations"]] == [
        spec_result["timeout_s"]
    ] * 2
    [floored_spec] = floored["specs"]
    assert floored["settings"]["values"]["timeout-floor"] == 45.0
    assert [m["facts"]["timeout_s"] for m in floored_spec["mutations"]] == [45.0, 45.0]
    assert floored_spec["timeout_s"] == 45.0
