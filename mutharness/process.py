"""Child processes: own process group, output to a file, timeout, and whole-tree kill."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

GRACE_S = 2.0


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


def _kill_tree(proc: subprocess.Popen[bytes]) -> None:
    """Kill the child and everything it started: the process group on POSIX."""
    if sys.platform == "win32":  # pragma: no cover - exercised by the Windows CI job
        subprocess.run(
            ["taskkill", "/T", "/F", "/PID", str(proc.pid)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
        proc.kill()
        return
    if _posix_kill_group(proc.pid, signal.SIGTERM):
        deadline = time.monotonic() + GRACE_S
        while time.monotonic() < deadline:
            if proc.poll() is not None and not _posix_kill_group(proc.pid, 0):
                return
            time.sleep(0.02)
        _posix_kill_group(proc.pid, signal.SIGKILL)


def _reap_group(proc: subprocess.Popen[bytes]) -> None:
    """After the leader exits, kill whatever it left behind in its group."""
    if sys.platform != "win32":
        _posix_kill_group(proc.pid, signal.SIGKILL)


def run(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    log_path: Path,
    timeout_s: float,
) -> ProcessResult:
    """Run `argv` to completion or timeout; stdout and stderr go to `log_path`."""
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
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            **kwargs,  # type: ignore[call-overload]
        )
        timed_out = False
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_tree(proc)
            proc.wait()
        except BaseException:
            _kill_tree(proc)
            proc.wait()
            raise
        finally:
            _reap_group(proc)
    return ProcessResult(
        tuple(argv), proc.returncode, timed_out, time.monotonic() - started, str(log_path)
    )
