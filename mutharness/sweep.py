"""Stale workspaces: `mh-*` directories a dead run left in the temp directory.

A run killed outright (SIGKILL, power loss) or told to exit at once (a second Ctrl-C) cannot
remove its workspace. Each workspace holds a marker file naming the pid and host that created
it; the next run removes the workspaces whose creator is dead. Never one whose creator is alive
(or might be: another host, an unreadable marker), never a directory without the marker, never
another user's, never through a symlink.
"""

from __future__ import annotations

import os
import socket
import stat
import sys
import tempfile
from pathlib import Path

from mutharness.paths import WORKSPACE_PREFIX
from mutharness.process import kill_in_workspace
from mutharness.repo.workspace import MARKER, remove_workspace_dir


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists on this machine (a zombie counts as dead)."""
    if pid <= 0:
        return True  # not a process id: treat as alive, so nothing is removed on its account
    if sys.platform == "win32":  # pragma: no cover - exercised by the Windows CI job
        return _windows_pid_alive(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, another user's
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True  # no /proc (macOS): a signal-0 success is all we know
    return state != "Z"


def _windows_pid_alive(pid: int) -> bool:  # pragma: no cover - Windows only
    """OpenProcess + GetExitCodeProcess (os.kill(pid, 0) would terminate the process there)."""
    import ctypes

    if sys.platform != "win32":
        raise OSError("Windows only")
    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    query_limited_information, access_denied, still_active = 0x1000, 5, 259
    handle = kernel32.OpenProcess(query_limited_information, False, pid)
    if not handle:
        return ctypes.get_last_error() == access_denied
    try:
        code = ctypes.c_ulong()
        if not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)):
            return True
        return code.value == still_active
    finally:
        kernel32.CloseHandle(handle)


def marker_owner(base: Path) -> int | None:
    """The pid recorded in `base`'s marker when it names this host; None when unreadable."""
    marker = base / MARKER
    try:
        info = marker.lstat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > 4096:
            return None
        lines = marker.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    if len(lines) < 2 or not lines[0].isdigit() or lines[1] != socket.gethostname():
        return None
    return int(lines[0])


def _ours(info: os.stat_result) -> bool:
    return not hasattr(os, "geteuid") or info.st_uid == os.geteuid()


def stale_workspaces(temp_dir: Path) -> tuple[Path, ...]:
    """The `mh-*` workspaces in `temp_dir` that this user's dead runs on this host left."""
    try:
        entries = sorted(temp_dir.glob(f"{WORKSPACE_PREFIX}*"))
    except OSError:
        return ()
    stale: list[Path] = []
    for base in entries:
        try:
            info = base.lstat()
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or not _ours(info):  # a symlink is not a dir here
            continue
        try:
            if not _ours((base / MARKER).lstat()):
                continue
        except OSError:
            continue
        pid = marker_owner(base)
        if pid is not None and not pid_alive(pid):
            stale.append(base)
    return tuple(stale)


def sweep_stale_workspaces(temp_dir: Path | None = None) -> tuple[Path, ...]:
    """Remove the stale workspaces in `temp_dir` (default: the system temp directory), first
    killing what still runs there (Linux: the tests of a run killed with SIGKILL).

    Returns those removed. Best effort: one that cannot be removed (another run removing it
    at the same time, a file held open on Windows) is left for a later sweep.
    """
    directory = Path(tempfile.gettempdir()) if temp_dir is None else temp_dir
    removed: list[Path] = []
    for base in stale_workspaces(directory):
        kill_in_workspace(base)
        try:
            remove_workspace_dir(base)
        except OSError:
            continue
        removed.append(base)
    return tuple(removed)
