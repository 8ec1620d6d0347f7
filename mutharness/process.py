"""Child processes: own process group, output to a file, timeout, and whole-tree kill.

What is killed, and when (after a timeout, an interrupt, and at the end of every run):

* POSIX: the child leads a new session; its process group gets SIGTERM, a grace period, then
  SIGKILL. When the run ends, whatever is left in the group gets SIGKILL.
* Linux, additionally: every run puts a random marker in its child's environment
  (`MUTHARNESS_RUN=<token>`), inherited by everything the child starts. When the run ends, every
  process of ours whose `/proc/<pid>/environ` carries that marker gets SIGKILL (through a pidfd,
  so a recycled pid is never hit): this catches descendants that left the group (`setsid`,
  daemons). A descendant that replaces its environment (exec with a new one) or makes itself
  undumpable escapes this sweep.
* Other POSIX systems (macOS, BSD): the process group only; a descendant that calls `setsid`
  escapes.
* Windows: a Job Object with kill-on-close (see `winjob`), `taskkill /T /F` as the fallback;
  CREATE_NEW_PROCESS_GROUP so that Ctrl-Break can be delivered.

Output always goes to a file, never a pipe, so a descendant holding it open cannot hang us.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mutharness import winjob

GRACE_S = 2.0
RUN_MARKER = "MUTHARNESS_RUN"
SWEEP_ROUNDS = 200  # a descendant that keeps forking is chased this many times, no more
SWEEP_PAUSE_S = 0.005


@dataclass(frozen=True)
class ProcessResult:
    """What one child process did."""

    argv: tuple[str, ...]
    returncode: int | None  # negative: killed by that signal (POSIX)
    timed_out: bool
    duration_s: float
    log_path: str

    @property
    def signal_number(self) -> int | None:
        """The signal that ended the child, if one did."""
        if self.returncode is not None and self.returncode < 0:
            return -self.returncode
        return None


def _posix_kill_group(pgid: int, sig: int) -> bool:
    """Send `sig` to a process group; False once the group no longer exists."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:  # a zombie-only group on some kernels
        return False
    return True


def _carries(pid: int, needle: bytes) -> bool:
    """Whether the process `pid` is ours and its environment holds `needle` (a NAME=value)."""
    try:
        if os.stat(f"/proc/{pid}").st_uid != os.getuid():
            return False
        with open(f"/proc/{pid}/environ", "rb") as handle:
            return needle in handle.read().split(b"\0")
    except OSError:  # gone, a zombie, or not readable: nothing to kill
        return False


def _kill_marked(pid: int, needle: bytes) -> bool:
    """SIGKILL `pid` if it carries the marker; a pidfd pins it, so a recycled pid is safe."""
    if sys.platform != "linux":
        return False
    try:
        pidfd = os.pidfd_open(pid)
    except OSError as error:
        if error.errno != errno.ENOSYS:
            return False  # already gone
        if not _carries(pid, needle):  # a kernel before 5.3: no pidfd, a plain kill
            return False
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        return True
    try:
        if not _carries(pid, needle):
            return False
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    except OSError:
        return False
    finally:
        os.close(pidfd)
    return True


def sweep(marker: str) -> int:
    """Linux: SIGKILL every process of ours whose environment carries this run's marker.

    Returns how many kills were sent (0 elsewhere). Repeats until a pass finds none, so that
    a descendant forking while we look is chased too (bounded by SWEEP_ROUNDS).
    """
    if sys.platform != "linux" or not os.path.isdir("/proc"):
        return 0
    needle = f"{RUN_MARKER}={marker}".encode()
    me = os.getpid()
    sent = 0
    for _ in range(SWEEP_ROUNDS):
        try:
            pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
        except OSError:
            return sent
        killed = sum(1 for pid in pids if pid != me and _kill_marked(pid, needle))
        if not killed:
            break
        sent += killed
        time.sleep(SWEEP_PAUSE_S)  # let the killed ones die before looking again
    return sent


def _taskkill(pid: int) -> None:  # pragma: no cover - exercised by the Windows CI job
    """`taskkill /T /F /PID pid` from System32 (never a taskkill.exe found in the cwd)."""
    root = os.environ.get("SYSTEMROOT", r"C:\Windows")
    subprocess.run(
        [os.path.join(root, "System32", "taskkill.exe"), "/T", "/F", "/PID", str(pid)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False,
    )


def _kill_tree(proc: subprocess.Popen[bytes], tree: winjob.ProcessTree | None) -> None:
    """Kill the child and everything it started: the job (Windows) or the group (POSIX)."""
    if sys.platform == "win32":  # pragma: no cover - exercised by the Windows CI job
        if tree is not None:
            tree.kill()
        else:
            _taskkill(proc.pid)
        proc.kill()
        return
    if _posix_kill_group(proc.pid, signal.SIGTERM):
        deadline = time.monotonic() + GRACE_S
        while time.monotonic() < deadline:
            if proc.poll() is not None and not _posix_kill_group(proc.pid, 0):
                return
            time.sleep(0.02)
        _posix_kill_group(proc.pid, signal.SIGKILL)


def _reap(proc: subprocess.Popen[bytes], tree: winjob.ProcessTree | None, marker: str) -> None:
    """After the child is gone, kill whatever it left behind: group, marked strays, job."""
    if sys.platform == "win32":  # pragma: no cover - exercised by the Windows CI job
        if tree is not None:
            tree.close()
        return
    _posix_kill_group(proc.pid, signal.SIGKILL)
    sweep(marker)


def run(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    log_path: Path,
    timeout_s: float,
) -> ProcessResult:
    """Run `argv` to completion or timeout; stdout and stderr go to `log_path`."""
    marker = secrets.token_hex(16)
    kwargs: dict[str, object] = {}
    if sys.platform == "win32":  # pragma: no cover - exercised by the Windows CI job
        kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP
    else:
        kwargs["start_new_session"] = True
    started = time.monotonic()
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env={**env, RUN_MARKER: marker},
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            **kwargs,  # type: ignore[call-overload]
        )
        tree: winjob.ProcessTree | None = None
        timed_out = False
        try:
            if sys.platform == "win32":  # pragma: no cover - exercised by the Windows CI job
                tree = winjob.ProcessTree.attach(proc.pid, winjob.kernel32(), _taskkill)
            try:
                proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill_tree(proc, tree)
                proc.wait()
            except BaseException:
                _kill_tree(proc, tree)
                proc.wait()
                raise
        finally:
            _reap(proc, tree, marker)
    return ProcessResult(
        tuple(argv), proc.returncode, timed_out, time.monotonic() - started, str(log_path)
    )
