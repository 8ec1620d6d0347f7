"""One verify at a time per repository: a filelock in the run directory that names its holder."""

from __future__ import annotations

import errno
import json
import os
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import filelock

from mutharness.errors import LockBusyError, WorkspaceError
from mutharness.repo.files import write_atomic

LOCK_NAME = "lock"
HOLDER_NAME = "lock-holder.json"


def _describe_holder(path: Path) -> str:
    try:
        holder = json.loads(path.read_text(encoding="utf-8"))
        return f"pid {holder['pid']} on {holder['host']}, started {holder['started']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "unknown (no readable holder record)"


def _no_locks(run_dir: Path, detail: str) -> WorkspaceError:
    """Never fall back to running unlocked, nor to a soft lock a crash would leave stale."""
    return WorkspaceError(
        f"the file system of {run_dir} has no working file locks ({detail}); "
        "run mutharness on a local disk"
    )


@contextmanager
def repository_lock(
    run_dir: Path, timeout_s: float,
    lock_factory: Callable[..., filelock.BaseFileLock] = filelock.FileLock,
) -> Iterator[None]:
    """Hold the repository's exclusive lock; wait at most `timeout_s`, then name the holder.

    `lock_factory` makes the lock (a filelock class); tests pass one that fails as a file
    system without working locks does.
    """
    lock = lock_factory(
        str(run_dir / LOCK_NAME), timeout=timeout_s, thread_local=False, fallback_to_soft=False
    )
    holder_path = run_dir / HOLDER_NAME
    started = time.monotonic()
    try:
        lock.acquire()
    except filelock.Timeout:
        raise LockBusyError(
            str(run_dir / LOCK_NAME), round(time.monotonic() - started, 1),
            _describe_holder(holder_path),
        ) from None
    except NotImplementedError as error:  # filelock 3 reported a flock-less file system so
        raise _no_locks(run_dir, str(error)) from None
    except OSError as error:  # filelock 4: ENOSYS from flock (NFS mounted nolock...)
        if error.errno == errno.ENOSYS:
            raise _no_locks(run_dir, error.strerror or str(error)) from None
        raise WorkspaceError(
            f"cannot take the lock {run_dir / LOCK_NAME}: {error.strerror or error}; "
            "mutharness needs a writable run directory on a local disk"
        ) from None
    try:
        holder = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        write_atomic(holder_path, json.dumps(holder) + "\n")  # never half a record
        yield
    finally:
        holder_path.unlink(missing_ok=True)
        lock.release()
