"""Faults of the machine rather than of the spec: git refusing a repository another user owns,
and a file system whose file locks do not work. Each ends in one clear error (exit 2), changes
nothing of the user's (tree, `.git`, global git config), and never runs without the lock.

(Not a git repository, an unborn HEAD and a missing git are in test_isolation.py.)
"""

from __future__ import annotations

import errno
import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import filelock
import pytest
from conftest import Completed, Project
from liverun import Sandbox, snapshot

from mutharness.digest import tree_digest
from mutharness.errors import ExitCode, OSProblem, WorkspaceError
from mutharness.lock import HOLDER_NAME, repository_lock
from mutharness.model.verdict import LOW_SPACE_BYTES
from mutharness.repo.git import refused_directory

Cli = Callable[..., Completed]
MakeProject = Callable[..., Project]

NOBODY = 65534


def _chown_tree(root: Path, uid: int) -> None:
    for path in [root, *root.rglob("*")]:
        os.lchown(path, uid, uid)


@pytest.mark.skipif(
    sys.platform == "win32" or os.geteuid() != 0,
    reason="needs root (POSIX) to hand the repository to another user",
)
def test_a_repository_another_user_owns_exits_5_quoting_gits_refusal_and_the_remedy_for_its_root(
    make_project: MakeProject, cli: Cli, git_home: Path, tmp_path: Path
) -> None:
    project = make_project()
    _chown_tree(project.root, NOBODY)
    sandbox = Sandbox.under(tmp_path)
    before = snapshot(project.root)
    home_before = tree_digest(git_home)

    done = cli(project.root / "src", "verify", "../specs/calc.json", env=sandbox.env())

    assert done.code == 5, done.out + done.err
    assert "Traceback" not in done.err
    assert done.err.startswith("mutharness: error: git refuses")
    assert "detected dubious ownership in repository at" in done.err  # git's own words
    remedy = re.search(r"git config --global --add safe\.directory (.+) \(mutharness", done.err)
    assert remedy is not None, done.err
    assert remedy.group(1) == str(project.root)  # the repository's root, not the cwd below it
    assert tree_digest(git_home) == home_before  # the global git config is never changed
    assert snapshot(project.root) == before
    assert not (project.root / ".mutharness").exists()
    assert sandbox.workspaces() == []


@pytest.mark.parametrize(("stderr", "directory"), [
    ("fatal: detected dubious ownership in repository at '/srv/repo'\n"
     "To add an exception for this directory, call:\n\n"
     "\tgit config --global --add safe.directory /srv/repo", "/srv/repo"),
    ("\n  stderr: 'fatal: detected dubious ownership in repository at 'C:/work/my repo'\n"
     "'C:/work/my repo' is owned by:\n\t'S-1-5-32-544'\nbut the current user is:\n"
     "\t'S-1-5-21-1'\nTo add an exception for this directory, call:\n\n"
     "\tgit config --global --add safe.directory 'C:/work/my repo''", "C:/work/my repo"),
    ("fatal: unsafe repository ('/srv/old' is owned by someone else)\n"
     "To add an exception for this directory, call:\n\n"
     "\tgit config --global --add safe.directory /srv/old", "/srv/old"),
    ("fatal: not a git repository (or any of the parent directories): .git", None),
])
def test_the_directory_git_refuses_is_read_from_its_message_in_both_wordings(
    stderr: str, directory: str | None
) -> None:
    assert refused_directory(stderr) == directory


class _NoFlockLock(filelock.FileLock):
    """filelock on NFS mounted `nolock`: flock fails with ENOSYS, as filelock 4 reports it."""

    def _acquire(self) -> None:
        raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS), self.lock_file)


class _NotImplementedLock(filelock.FileLock):
    """The same file system as filelock 3 reported it."""

    def _acquire(self) -> None:
        raise NotImplementedError(
            "FileSystem does not appear to support flock; use SoftFileLock instead"
        )


class _ReadOnlyLock(filelock.FileLock):
    """A run directory on a read-only file system."""

    def _acquire(self) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), self.lock_file)


@pytest.mark.parametrize(("factory", "words"), [
    (_NoFlockLock, "has no working file locks"),
    (_NotImplementedLock, "has no working file locks"),
    (_ReadOnlyLock, "cannot take the lock"),
], ids=["ENOSYS", "NotImplementedError", "EROFS"])
def test_a_lock_that_cannot_be_taken_is_one_clear_error_and_nothing_runs_without_it(
    factory: Callable[..., filelock.BaseFileLock], words: str, tmp_path: Path
) -> None:
    ran = False

    with pytest.raises(WorkspaceError) as raised:  # noqa: SIM117 - the body must not run
        with repository_lock(tmp_path, 5, lock_factory=factory):
            ran = True

    assert not ran
    assert raised.value.exit_code == ExitCode.ENVIRONMENT
    message = raised.value.message()
    assert words in message and str(tmp_path) in message
    assert "local disk" in message
    assert not (tmp_path / HOLDER_NAME).exists()


def test_the_lock_is_a_real_file_lock_never_a_silent_soft_fallback(tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    class Watched(filelock.FileLock):
        def _acquire(self) -> None:
            seen["fallback_to_soft"] = self.fallback_to_soft
            super()._acquire()

    with repository_lock(tmp_path, 5, lock_factory=Watched):
        assert (tmp_path / HOLDER_NAME).exists()

    assert seen == {"fallback_to_soft": False}
    assert not (tmp_path / HOLDER_NAME).exists()


FILLING_TEST = '''\
import os


def test_fills_the_disk_its_run_writes_to():
    try:
        with open("filler.bin", "wb") as out:
            while True:
                out.write(b"0" * (1 << 20))
    except OSError:
        pass
'''


@pytest.fixture
def small_tmpdir(tmp_path: Path) -> Any:
    """A 48 MiB file system as TMPDIR (a real tmpfs: root on Linux only)."""
    import subprocess

    if sys.platform != "linux" or os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root on Linux")
    mount = tmp_path / "small"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", str(mount)],
                          capture_output=True, text=True, check=False)
    if made.returncode != 0:
        pytest.skip(f"this machine cannot mount a tmpfs: {made.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_run_that_fills_the_disk_is_refused_naming_the_lack_of_space(
    make_project: Callable[..., Project], cli: Callable[..., Completed], small_tmpdir: Path
) -> None:
    from conftest import default_spec

    project = make_project(spec=default_spec(
        tests=["tests/test_calc.py", "tests/test_fill.py"], expectBaselinePass=5))
    project.write("tests/test_fill.py", FILLING_TEST)
    project.commit("a test that fills the disk")

    done = cli(project.root, "verify", "specs/calc.json",
               env={**os.environ, "TMPDIR": str(small_tmpdir)})

    assert done.code == 3, done.out + done.err
    assert "no space left" in done.err.lower()
    assert "report unreadable" not in done.err
    results = json.loads((project.root / ".mutharness" / "results.json").read_text("utf-8"))
    lost = results["specs"][0]["baseline"]
    assert lost["report"] == "missing"
    assert 0 <= lost["free_bytes"] < LOW_SPACE_BYTES  # measured: even a cut log blames space


@pytest.mark.parametrize(("winerror", "shown"), [
    (1359, "Internal error [WinError 1359] while starting the tests"),  # CreateProcess under Wine
    (None, "Internal error [EINVAL] while starting the tests"),  # POSIX: errno's name
])
def test_an_os_error_names_the_windows_error_code_where_windows_gave_one(
    winerror: int | None, shown: str
) -> None:
    error = OSError(errno.EINVAL, "Internal error")
    if winerror is not None:  # Windows sets it; an OSError on POSIX has none
        error.winerror = winerror  # type: ignore[attr-defined]
    assert OSProblem.from_error(error, "starting the tests").message() == shown
