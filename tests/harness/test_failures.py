"""Every failure that is not a verdict is exit 2 with one clear line and the results of what
finished, never a traceback and exit 1: disk full, a read-only directory a test left, file names
that are not UTF-8, a closed or full stdout, an unusable TMPDIR."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from conftest import Completed, Project, default_spec, git
from inproc import in_process
from liverun import LOW_BOUND, Sandbox, results_of, snapshot

ProjectFactory = Callable[..., Project]
Cli = Callable[..., Completed]

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="uses Linux namespaces")
UNPRIVILEGED_UID = 1000


def _unshare_works(*flags: str) -> bool:
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    done = subprocess.run([unshare, *flags, "true"], capture_output=True)
    return done.returncode == 0


def unprivileged(argv: Sequence[str]) -> list[str]:
    """`argv` as a user without privileges: as this user when it is not root; as root, through
    a user namespace that maps us to an ordinary uid (no capability over any file)."""
    if os.geteuid() != 0:
        return list(argv)
    return ["unshare", f"--map-user={UNPRIVILEGED_UID}", f"--map-group={UNPRIVILEGED_UID}",
            *argv]


def on_a_small_tmpfs(argv: Sequence[str], mountpoint: Path, size: str) -> list[str]:
    """`argv` with a tmpfs of `size` mounted on `mountpoint` (a private mount namespace)."""
    return ["unshare", "--map-root-user", "--mount", "sh", "-c",
            'mount -t tmpfs -o size="$0" tmpfs "$1" && shift && exec "$@"',
            size, str(mountpoint), *argv]


def mutharness(*args: str) -> list[str]:
    return [sys.executable, "-m", "mutharness", *args]


def run(argv: Sequence[str], cwd: Path, env: dict[str, str]) -> Completed:
    done = subprocess.run(list(argv), cwd=cwd, env=env, capture_output=True, text=True,
                          encoding="utf-8", errors="replace", timeout=300)
    return Completed(done.returncode, done.stdout, done.stderr)


def assert_one_clear_line(done: Completed, phrase: str) -> None:
    assert done.code == 5, done.out + done.err
    assert "Traceback" not in done.err and "Exception ignored" not in done.err, done.err
    errors = [line for line in done.err.splitlines() if line.startswith("mutharness: error:")]
    assert len(errors) == 1 and phrase in errors[0], done.err


FILLER = '''\
import errno
import os

from calc import clamp


def test_fills_the_disk_when_the_low_bound_is_gone():
    if clamp(-5, 0, 10) != 0:
        with open(os.environ["MH_FILL"], "wb") as handle:
            try:
                while True:
                    handle.write(b"x" * 65536)
                    handle.flush()
            except OSError as error:
                assert error.errno == errno.ENOSPC
'''


@linux_only
@pytest.mark.skipif(not _unshare_works("--map-root-user", "--mount"),
                    reason="no unprivileged user and mount namespaces here")
def test_a_disk_that_fills_up_mid_run_is_exit_5_naming_it_with_the_results_so_far(
    make_project: ProjectFactory, cli: Cli, tmp_path: Path
) -> None:
    project = make_project(spec=default_spec(
        tests=["tests/test_calc.py", "tests/test_fill.py"], expectBaselinePass=5,
        mutations=[LOW_BOUND, default_spec()["mutations"][1]],
    ))
    project.write("tests/test_fill.py", FILLER)
    project.commit("a test that fills the disk under one mutant")
    sandbox = Sandbox.under(tmp_path)
    earlier = cli(project.root, "verify", "specs/calc.json")  # a results file of an earlier run
    assert earlier.code in (0, 1) and results_of(project.root)["complete"] is True, earlier.out
    before = snapshot(project.root)
    env = sandbox.env(MH_FILL=str(sandbox.tmpdir / "filler"))

    # every test runs (--no-first-failure): the filling test comes after the caught one
    done = run(on_a_small_tmpfs(mutharness("verify", "specs/calc.json", "--no-first-failure"),
                                sandbox.tmpdir, "48m"), project.root, env)

    assert_one_clear_line(done, "no space left on the device while")
    results = results_of(project.root)
    assert (results["complete"], results["exit_code"]) == (False, 5)
    assert "no space left on the device" in results["error"]
    assert results["specs"][0]["error"].startswith("stopped by an error after")
    assert {k: v for k, v in snapshot(project.root).items()} == before
    assert git(project.root, "status", "--porcelain") == ""


READ_ONLY = '''\
import os
import pathlib


def test_leaves_a_read_only_directory_behind(tmp_path):
    for place in (pathlib.Path("left"), tmp_path / "left"):
        place.mkdir()
        (place / "inside.txt").write_text("x")
        place.chmod(0o555)
'''


@linux_only
@pytest.mark.skipif(sys.platform == "linux" and os.geteuid() == 0
                    and not _unshare_works(f"--map-user={UNPRIVILEGED_UID}"),
                    reason="no way to run as an unprivileged user here")
def test_read_only_directories_a_test_left_are_removed_and_no_workspace_leaks(
    make_project: ProjectFactory, tmp_path: Path
) -> None:
    project = make_project(spec=default_spec(
        tests=["tests/test_calc.py", "tests/test_ro.py"], expectBaselinePass=5,
    ))
    project.write("tests/test_ro.py", READ_ONLY)
    project.commit("a test that leaves read-only directories")
    sandbox = Sandbox.under(tmp_path)

    # every test runs (--no-first-failure): the test leaving them comes after the caught one
    done = run(unprivileged(mutharness("verify", "specs/calc.json", "--no-first-failure")),
               project.root, sandbox.env())

    assert done.code == 0, done.out + done.err
    assert [m["removed"] for m in results_of(project.root)["specs"][0]["mutations"]] == [
        ["left"], ["left"]
    ]
    assert sandbox.workspaces() == []


@linux_only
def test_file_names_that_are_not_utf_8_are_handled_and_shown_escaped(
    make_project: ProjectFactory, tmp_path: Path
) -> None:
    project = make_project()
    (project.root / os.fsdecode(b"caf\xe9.txt")).write_bytes(b"a tracked latin-1 name\n")
    project.write("tests/test_names.py", (
        "import os\n\n\ndef test_writes_a_name_that_is_not_utf8():\n"
        "    open(os.fsdecode(b'out-\\xff.txt'), 'w').close()\n"
    ))
    project.spec("calc", default_spec(tests=["tests/test_calc.py", "tests/test_names.py"],
                                      expectBaselinePass=5))
    project.commit("names that are not UTF-8")

    # every test runs (--no-first-failure): the test writing the name comes after the caught one
    done = in_process(project.root, "verify", "specs/calc.json", "--no-first-failure")

    assert done.code == 0, done.out + done.err
    assert [m["removed"] for m in results_of(project.root)["specs"][0]["mutations"]] == [
        ["out-\\xff.txt"], ["out-\\xff.txt"]
    ]
    (project.root / os.fsdecode(b"new-\xfe.txt")).write_bytes(b"untracked\n")
    dirty = in_process(project.root, "verify", "specs/calc.json")
    assert_one_clear_line(dirty, "the working tree has 1 uncommitted change(s)")
    assert "?? new-\\xfe.txt" in dirty.err


def test_a_stdout_closed_mid_run_stops_it_with_exit_5_and_results(
    make_project: ProjectFactory, tmp_path: Path
) -> None:
    project = make_project()
    sandbox = Sandbox.under(tmp_path)
    proc = subprocess.Popen(mutharness("verify", "specs/calc.json"), cwd=project.root,
                            env=sandbox.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, encoding="utf-8")
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()  # as `| head -1` reads
    proc.stdout.close()
    err = proc.stderr.read()
    code = proc.wait(timeout=300)

    assert first.startswith("HEAD ")
    assert_one_clear_line(Completed(code, "", err), "standard output cannot be written")
    results = results_of(project.root)
    assert results["complete"] is False and "standard output" in results["error"]
    assert sandbox.workspaces() == []


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_a_full_stdout_is_exit_5_with_one_clear_line(
    make_project: ProjectFactory, tmp_path: Path
) -> None:
    project = make_project()
    sandbox = Sandbox.under(tmp_path)
    with open("/dev/full", "w") as full:
        done = subprocess.run(mutharness("verify", "specs/calc.json"), cwd=project.root,
                              env=sandbox.env(), stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=300)

    assert_one_clear_line(Completed(done.returncode, "", done.stderr),
                          "standard output cannot be written (No space left on device)")
    assert sandbox.workspaces() == []


@pytest.mark.parametrize("kind", ["missing", "a file", "with the separator", "read-only"])
def test_an_unusable_tmpdir_is_exit_5_with_one_clear_line_and_nothing_created(
    make_project: ProjectFactory, tmp_path: Path, kind: str
) -> None:
    project = make_project()
    before = snapshot(project.root)
    tmpdir = {"missing": tmp_path / "no-such-dir", "a file": tmp_path / "a-file",
              "with the separator": tmp_path / f"a{os.pathsep}b",
              "read-only": tmp_path / "read-only"}[kind]
    argv = mutharness("verify", "specs/calc.json")
    if kind == "a file":
        tmpdir.write_text("not a directory\n")
    elif kind != "missing":
        tmpdir.mkdir()
    if kind == "read-only":
        if sys.platform != "linux" or (os.geteuid() == 0 and not _unshare_works(
                f"--map-user={UNPRIVILEGED_UID}")):
            pytest.skip("no way to run as an unprivileged user here")
        tmpdir.chmod(0o555)
        argv = unprivileged(argv)

    done = run(argv, project.root, {**os.environ, "TMPDIR": str(tmpdir)})

    phrase = {"missing": "does not exist or is not a directory",
              "a file": "does not exist or is not a directory",
              "with the separator": "which separates PYTHONPATH entries",
              "read-only": "is not writable"}[kind]
    assert_one_clear_line(done, f"the temporary directory TMPDIR={tmpdir}")
    assert phrase in done.err
    assert snapshot(project.root) == before  # not even .mutharness/


def test_untracked_bytecode_in_pycache_is_no_change_but_anything_else_there_is(
    make_project: ProjectFactory
) -> None:
    """A test run by hand leaves `__pycache__/*.pyc` beside the sources of a project that does
    not ignore them: never a commit's, never read by a run; a file of another kind there is
    still an uncommitted change."""
    project = make_project()
    cache = project.root / "src" / "__pycache__"
    cache.mkdir()
    (cache / "calc.cpython-311.pyc").write_bytes(b"\x00bytecode")

    clean = in_process(project.root, "verify", "specs/calc.json")
    (cache / "notes.txt").write_text("mine\n", encoding="utf-8")
    dirty = in_process(project.root, "verify", "specs/calc.json")

    assert clean.code == 0, clean.out + clean.err
    assert_one_clear_line(dirty, "the working tree has 1 uncommitted change(s)")
    assert "?? src/__pycache__/notes.txt" in dirty.err
    assert ".pyc" not in dirty.err
