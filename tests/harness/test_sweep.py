"""Stale workspaces: a run that died (SIGKILL, a second Ctrl-C) leaves its `mh-*` directory in
the temp dir; the next run removes it -- and nothing else: never a live run's workspace, never a
directory without the marker, never another user's or another host's, never through a symlink.
"""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Completed, Project
from liverun import (
    HANG_GUARD,
    ONE_MUTATION_SPEC,
    Sandbox,
    add_probes,
    alive,
    snapshot,
    spawn,
    wait_for,
)

from mutharness.repo.workspace import MARKER
from mutharness.sweep import pid_alive, sweep_stale_workspaces

Cli = Callable[..., Completed]
MakeProject = Callable[..., Project]

POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and ownership")
ROOT_ONLY = pytest.mark.skipif(
    sys.platform == "win32" or os.geteuid() != 0, reason="needs root to make another user's dir"
)


def _dead_pid() -> int:
    """The pid of a process that has ended and been reaped."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          check=True, capture_output=True, text=True)
    return int(done.stdout)


def _workspace(tmpdir: Path, name: str, marker: str | None) -> Path:
    """A workspace-like directory: a checkout with a read-only git object, and the marker."""
    base = tmpdir / name
    (base / "repo/.git/objects/ab").mkdir(parents=True)
    blob = base / "repo/.git/objects/ab/cdef"
    blob.write_bytes(b"blob")
    blob.chmod(stat.S_IREAD)
    (base / "repo/src.py").write_text("x = 1\n")
    if marker is not None:
        (base / MARKER).write_text(marker)
    return base


def test_a_workspace_whose_creator_is_dead_is_removed_whole(tmp_path: Path) -> None:
    stale = _workspace(tmp_path, "mh-stale", f"{_dead_pid()}\n{socket.gethostname()}\n")

    removed = sweep_stale_workspaces(tmp_path)

    assert removed == (stale,)
    assert not stale.exists()


@POSIX_ONLY
def test_the_sweep_leaves_every_other_kind_of_mh_entry_alone(tmp_path: Path) -> None:
    host = socket.gethostname()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    dead = _dead_pid()
    try:
        kept = {
            "live creator (another process)":
                _workspace(tmp_path, "mh-live", f"{sleeper.pid}\n{host}\n"),
            "live creator (this process)":
                _workspace(tmp_path, "mh-self", f"{os.getpid()}\n{host}\n"),
            "no marker": _workspace(tmp_path, "mh-nomarker", None),
            "empty marker": _workspace(tmp_path, "mh-empty", ""),
            "marker not a pid": _workspace(tmp_path, "mh-garbage", f"pid\n{host}\n"),
            "marker without a host": _workspace(tmp_path, "mh-nohost", f"{dead}\n"),
            "marker of another host":
                _workspace(tmp_path, "mh-elsewhere", f"{dead}\nother-host\n"),
            "not named mh-*": _workspace(tmp_path, "other-dead", f"{dead}\n{host}\n"),
        }
        target = _workspace(tmp_path, "outside", f"{dead}\n{host}\n")
        (tmp_path / "mh-link").symlink_to(target, target_is_directory=True)
        kept["a symlink to a stale workspace (its target)"] = target
        kept["a symlink to a stale workspace (the link)"] = tmp_path / "mh-link"
        linked = _workspace(tmp_path, "mh-linked-marker", None)
        (tmp_path / "a-marker").write_text(f"{dead}\n{host}\n")
        (linked / MARKER).symlink_to(tmp_path / "a-marker")
        kept["marker is a symlink"] = linked
        dir_marker = _workspace(tmp_path, "mh-dir-marker", None)
        (dir_marker / MARKER).mkdir()
        kept["marker is a directory"] = dir_marker
        (tmp_path / "mh-file").write_text(f"{dead}\n{host}\n")
        kept["a file, not a directory"] = tmp_path / "mh-file"
        stale = _workspace(tmp_path, "mh-stale", f"{dead}\n{host}\n")

        removed = sweep_stale_workspaces(tmp_path)
    finally:
        sleeper.kill()
        sleeper.wait()

    assert removed == (stale,)
    gone = [case for case, path in kept.items() if not os.path.lexists(path)]
    assert gone == []
    assert (target / "repo/src.py").exists()


@ROOT_ONLY
def test_the_sweep_leaves_a_dead_runs_workspace_alone_when_another_user_owns_it(
    tmp_path: Path,
) -> None:
    foreign = _workspace(tmp_path, "mh-foreign", f"{_dead_pid()}\n{socket.gethostname()}\n")
    for path in [foreign, *foreign.rglob("*")]:
        os.lchown(path, 65534, 65534)

    assert sweep_stale_workspaces(tmp_path) == ()
    assert (foreign / MARKER).exists()


def test_a_temp_dir_that_does_not_exist_sweeps_nothing(tmp_path: Path) -> None:
    assert sweep_stale_workspaces(tmp_path / "missing") == ()


def test_this_process_is_alive_and_a_reaped_one_is_not() -> None:
    assert pid_alive(os.getpid())
    assert not pid_alive(_dead_pid())


@pytest.mark.skipif(sys.platform != "linux", reason="needs /proc (Linux)")
def test_a_zombie_counts_as_dead() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    stat_file = Path(f"/proc/{child.pid}/stat")
    try:
        deadline = time.monotonic() + 30
        while stat_file.read_text().rsplit(")", 1)[1].split()[0] != "Z":
            assert time.monotonic() < deadline, "the child never exited"
            time.sleep(0.01)

        assert not pid_alive(child.pid)
    finally:
        child.wait()


@POSIX_ONLY
def test_a_run_sweeps_dead_runs_workspaces_but_never_a_live_runs_nor_one_without_a_marker(
    make_project: MakeProject, cli: Cli, tmp_path: Path
) -> None:
    first = make_project("first")
    add_probes(first)
    second = make_project("second", spec=ONE_MUTATION_SPEC)
    sandbox = Sandbox.under(tmp_path)
    stale = _workspace(sandbox.tmpdir, "mh-stale", f"{_dead_pid()}\n{socket.gethostname()}\n")
    unmarked = _workspace(sandbox.tmpdir, "mh-unmarked", None)
    proc = spawn(first.root, "verify", "specs/gate.json", env=sandbox.env(MH_BLOCK="baseline"))
    try:
        wait_for((sandbox.spy / "baseline.pids").exists, proc, "the first run's baseline")
        [live] = [path for path in sandbox.workspaces() if path not in (stale, unmarked)]

        done = cli(second.root, "verify", "specs/calc.json", env=sandbox.env())

        assert done.code == 0, done.out + done.err
        assert sorted(sandbox.workspaces()) == sorted([live, unmarked])
        assert (live / "repo/src/calc.py").exists()
    finally:
        sandbox.open_gate()
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, out + err
    assert sandbox.workspaces() == [unmarked]


@POSIX_ONLY
def test_after_a_SIGKILL_mid_mutant_the_tree_is_untouched_the_lock_free_and_the_next_run_sweeps(
    make_project: MakeProject, cli: Cli, tmp_path: Path
) -> None:
    project = make_project()
    add_probes(project)
    sandbox = Sandbox.under(tmp_path)
    before = snapshot(project.root)
    proc = spawn(project.root, "verify", "specs/gate.json", *HANG_GUARD,
                 env=sandbox.env(MH_BLOCK="mutant"))
    pids: tuple[int, ...] = ()
    try:
        wait_for((sandbox.spy / "mutant.pids").exists, proc, "the mutant's tests")
        pids = sandbox.pids("mutant")
        proc.kill()
        proc.communicate(timeout=60)
        # SIGKILL cannot be trapped: the tests (in their own session) outlive mutharness...
        assert proc.returncode == -signal.SIGKILL
        assert all(alive(pid) for pid in pids)
        assert snapshot(project.root) == before
        [left] = sandbox.workspaces()
        assert (left / MARKER).read_text().split()[0] == str(proc.pid)

        again = cli(project.root, "verify", "--lock-timeout", "0", "specs/gate.json",
                    env=sandbox.env())

        # ...until the next run's sweep kills what still runs in the stale workspace
        assert again.code == 0, again.out + again.err
        assert [pid for pid in pids if alive(pid)] == []
        assert sandbox.workspaces() == []
        assert snapshot(project.root) == before
    finally:
        for pid in pids:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
