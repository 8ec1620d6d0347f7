"""Child processes: own process group, output to a file, timeout, and whole-tree kill.

What is killed, and when (after a timeout, an interrupt, and at the end of every run):

* POSIX: the child leads a new session; its process group gets SIGTERM, a grace period, then
  SIGKILL. When the run ends, whatever is left in the group gets SIGKILL.
* Linux, additionally: every run puts a random marker in its child's environment
  (`MUTHARNESS_RUN=<token>`), inherited by everything the child starts. When the run ends, every
  process of ours whose `/proc/<pid>/environ` carries that marker gets SIGKILL (through a pidfd,
  so a recycled pid is never hit): this catches descendants that left the group (`setsid`,
  daemons). And mutharness is a child subreaper (`PR_SET_CHILD_SUBREAPER`): a descendant whose
  parent died is re-parented to it instead of init, so one that also replaced its environment
  (a double fork, then `exec` with a cleared one) is found as an adopted child and killed.
* Other POSIX systems (macOS, BSD): the process group only; a descendant that calls `setsid`
  escapes.
* Windows: a Job Object with kill-on-close (see `winjob`), `taskkill /T /F` as the fallback;
  CREATE_NEW_PROCESS_GROUP so that Ctrl-Break can be delivered.

Output always goes to a file, never a pipe, so a descendant holding it open cannot hang us.
"""

from __future__ import annotations

import contextlib
import errno
import gc
import io
import os
import secrets
import select
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mutharness import signals, winjob

GRACE_S = 2.0
RUN_MARKER = "MUTHARNESS_RUN"
WORKSPACE_MARK = "MUTHARNESS_WORKSPACE"  # every process of a run names its workspace (see sweep)
SWEEP_ROUNDS = 200  # a descendant that keeps forking is chased this many times, no more
SWEEP_PAUSE_S = 0.005
PR_SET_PDEATHSIG, PR_SET_NAME, PR_SET_CHILD_SUBREAPER = 1, 15, 36  # prctl's options (Linux)
POLL_SLICE_S = 60.0  # the longest single wait on a pidfd (a timeout may be huge or infinite)


@dataclass(frozen=True)
class ProcessResult:
    """What one child process did."""

    argv: tuple[str, ...]
    pid: int
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


@dataclass(frozen=True)
class Mark:
    """What identifies the processes of a run: a NAME=value in the environment, or (for the
    processes of a dead run's workspace) a working directory inside that workspace."""

    environment: bytes
    cwd_under: str | None = None

    def matches(self, pid: int) -> bool:
        """Whether `pid` is ours and carries the mark (gone, a zombie, unreadable: no)."""
        try:
            if os.stat(f"/proc/{pid}").st_uid != os.getuid():
                return False
            with open(f"/proc/{pid}/environ", "rb") as handle:
                if self.environment in handle.read().split(b"\0"):
                    return True
            if self.cwd_under is not None:
                cwd = os.readlink(f"/proc/{pid}/cwd")
                return cwd == self.cwd_under or cwd.startswith(self.cwd_under + os.sep)
        except OSError:
            return False
        return False


def _kill_marked(pid: int, mark: Mark) -> bool:
    """SIGKILL `pid` if it carries the mark; a pidfd pins it, so a recycled pid is safe."""
    if sys.platform != "linux":
        return False
    try:
        pidfd = os.pidfd_open(pid)
    except OSError as error:
        if error.errno != errno.ENOSYS:
            return False  # already gone
        if not mark.matches(pid):  # a kernel before 5.3: no pidfd, a plain kill
            return False
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
        return True
    try:
        if not mark.matches(pid):
            return False
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    except OSError:
        return False
    finally:
        os.close(pidfd)
    return True


def _pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def _sweep_once(mark: Mark) -> int:
    me = os.getpid()
    return sum(1 for pid in _pids() if pid != me and _kill_marked(pid, mark))


def sweep_marked(mark: Mark) -> int:
    """Linux: SIGKILL every process of ours that carries `mark`.

    Returns how many kills were sent (0 elsewhere). Repeats until a pass finds none, so that
    a descendant forking while we look is chased too (bounded by SWEEP_ROUNDS).
    """
    if sys.platform != "linux" or not os.path.isdir("/proc"):
        return 0
    sent = 0
    for _ in range(SWEEP_ROUNDS):
        killed = _sweep_once(mark)
        if not killed:
            break
        sent += killed
        time.sleep(SWEEP_PAUSE_S)  # let the killed ones die before looking again
    return sent


def sweep(marker: str) -> int:
    """Linux: SIGKILL every process of ours that carries this run's marker (see above)."""
    return sweep_marked(Mark(f"{RUN_MARKER}={marker}".encode()))


def kill_in_workspace(base: Path) -> int:
    """Linux: SIGKILL what a dead run left running in its workspace `base`: processes whose
    environment names it (WORKSPACE_MARK), or whose working directory is inside it."""
    real = os.path.realpath(base)
    return sweep_marked(Mark(f"{WORKSPACE_MARK}={base}".encode(), cwd_under=real))


def _prctl(option: int, argument: int | bytes) -> bool:
    """Linux: `prctl(option, argument)` on this process; whether it succeeded."""
    if sys.platform != "linux":
        return False
    import ctypes

    try:
        return int(ctypes.CDLL(None, use_errno=True).prctl(option, argument, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def become_subreaper() -> bool:
    """Linux: make this process the child subreaper of everything it starts (idempotent)."""
    return _prctl(PR_SET_CHILD_SUBREAPER, 1)


def end_with_parent(parent: int) -> None:
    """Linux: have SIGTERM sent to this process when `parent` dies (a `verify -j` worker whose
    run was killed outright stops and cleans up instead of running on unlocked), and send it
    now if `parent` is already gone."""
    if sys.platform != "linux":
        return
    _prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM))
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGTERM)


def _parent_of(pid: int) -> int | None:
    """The parent of `pid` by its `/proc` stat line (read as bytes: a scan reads every
    process's, several times per run)."""
    try:
        handle = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
        try:
            data = os.read(handle, 4096)
        finally:
            os.close(handle)
        return int(data.rsplit(b")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def children() -> set[int]:
    """Linux: the pids whose parent is this process (None of them reaped here)."""
    if sys.platform != "linux":
        return set()
    me = os.getpid()
    return {pid for pid in _pids() if _parent_of(pid) == me}


def reap_adopted(keep: set[int]) -> int:
    """Linux: SIGKILL and reap this process's children that are not in `keep`: descendants of
    a finished run re-parented to us (we are their subreaper). Returns how many were killed."""
    killed = 0
    for pid in children() - keep:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)  # our child: its pid cannot be recycled until reaped
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, 0)
        killed += 1
    return killed


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
    end_group(proc.pid, lambda: proc.poll() is not None)


def kill_group(pgid: int) -> None:
    """POSIX: SIGKILL the process group `pgid` at once (gone already: nothing to do)."""
    _posix_kill_group(pgid, signal.SIGKILL)


def end_group(pgid: int, exited: Callable[[], bool]) -> None:
    """POSIX: SIGTERM the process group `pgid`, a grace period, then SIGKILL; `exited` says
    whether its leader has exited (and been reaped by whoever is its parent)."""
    if _posix_kill_group(pgid, signal.SIGTERM):
        deadline = time.monotonic() + GRACE_S
        while time.monotonic() < deadline:
            if exited() and not _posix_kill_group(pgid, 0):
                return
            time.sleep(0.02)
        _posix_kill_group(pgid, signal.SIGKILL)


def _reap(
    proc: subprocess.Popen[bytes], tree: winjob.ProcessTree | None, marker: str, keep: set[int]
) -> None:
    """After the child is gone, kill whatever it left behind: group, marked strays, adopted
    orphans (Linux), job (Windows). Rounds go on while any of them finds something, since a
    killed process's own children are re-parented to us only once it is dead."""
    if sys.platform == "win32":  # pragma: no cover - exercised by the Windows CI job
        if tree is not None:
            tree.close()
        return
    reap_group(proc.pid, marker, keep)


def reap_group(pgid: int, marker: str, keep: set[int]) -> None:
    """POSIX, after a run's leader is gone: SIGKILL what is left of its group `pgid`, the
    processes carrying the run's `marker` and the orphans re-parented to us (not in `keep`)."""
    mark = Mark(f"{RUN_MARKER}={marker}".encode())
    for _ in range(SWEEP_ROUNDS):
        grouped = _posix_kill_group(pgid, signal.SIGKILL)
        found = reap_adopted(keep)
        if sys.platform == "linux":
            found += _sweep_once(mark)
        if not found and (not grouped or sys.platform != "linux"):
            return
        time.sleep(SWEEP_PAUSE_S)


def _exited_within(proc: subprocess.Popen[bytes], timeout_s: float) -> bool:
    """Wait for the child to exit, at most `timeout_s`; whether it did. On Linux a pidfd wakes
    the wait the moment the child exits (subprocess's own timed wait polls with sleeps of up
    to 50 ms: about 25 ms lost per run, a second over a 40-mutation spec)."""
    pidfd_open = getattr(os, "pidfd_open", None)
    fd = None
    if pidfd_open is not None:
        with contextlib.suppress(OSError):
            fd = pidfd_open(proc.pid)
    if fd is None:
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return False
        return True
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        deadline = time.monotonic() + timeout_s
        while proc.poll() is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            poller.poll(max(1, int(min(remaining, POLL_SLICE_S) * 1000)))
        return True
    finally:
        os.close(fd)


def new_marker() -> str:
    """A fresh value of RUN_MARKER for one run."""
    return secrets.token_hex(16)


def run(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    log_path: Path,
    timeout_s: float,
) -> ProcessResult:
    """Run `argv` to completion or timeout; stdout and stderr go to `log_path`."""
    return Started(argv, cwd=cwd, env=env, log_path=log_path).finish(timeout_s)


class Started:
    """A child started now and waited for later (`finish`): `run` in two steps, so that the
    caller can work meanwhile (the interpreter's probe beside the workspace's checkout). The
    caller's own children at the start are never killed as its leftovers; one never
    finished is ended with its tree by `abandon`."""

    def __init__(
        self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], log_path: Path
    ) -> None:
        self.argv = tuple(argv)
        self.marker = new_marker()
        kwargs: dict[str, object] = {}
        if sys.platform == "win32":  # pragma: no cover - exercised by the Windows CI job
            kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP
        else:
            kwargs["start_new_session"] = True
        become_subreaper()
        self.keep = children()  # the caller's own children (never ours to kill)
        self.started = time.monotonic()
        self.log_path = log_path
        with log_path.open("wb") as log:
            self.proc: subprocess.Popen[bytes] = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env={**env, RUN_MARKER: self.marker},
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                **kwargs,  # type: ignore[call-overload]
            )
        self.tree: winjob.ProcessTree | None = None
        if sys.platform == "win32":  # pragma: no cover - exercised by the Windows CI job
            try:
                self.tree = winjob.ProcessTree.attach(self.proc.pid, winjob.kernel32(), _taskkill)
            except BaseException:
                self.abandon()
                raise

    def finish(self, timeout_s: float) -> ProcessResult:
        """Wait for it to exit, at most `timeout_s` from now (then its tree is killed); what
        it left behind is killed either way."""
        proc = self.proc
        timed_out = False
        try:
            try:
                if not _exited_within(proc, timeout_s):
                    timed_out = True
                    _kill_tree(proc, self.tree)
                    proc.wait()
            except BaseException:
                _kill_tree(proc, self.tree)
                proc.wait()
                raise
        finally:
            _reap(proc, self.tree, self.marker, self.keep)
        return ProcessResult(
            self.argv, proc.pid, proc.returncode, timed_out, time.monotonic() - self.started,
            str(self.log_path),
        )

    def abandon(self) -> None:
        """End it and what it started, unwaited for (its caller stopped first)."""
        if self.proc.poll() is None:
            _kill_tree(self.proc, self.tree)
        self.proc.wait()
        _reap(self.proc, self.tree, self.marker, self.keep)


class Background:
    """A child the caller follows while it runs (a `verify -j` worker): its own session or
    process group, output to a file; polled, signalled, waited for, killed with its tree."""

    def __init__(
        self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], log_path: Path
    ) -> None:
        kwargs: dict[str, object] = {}
        if sys.platform == "win32":  # pragma: no cover - exercised by the Windows CI job
            kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP
        else:
            kwargs["start_new_session"] = True
        with log_path.open("wb") as log:
            self.proc: subprocess.Popen[bytes] = subprocess.Popen(
                list(argv), cwd=cwd, env=dict(env), stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, **kwargs,  # type: ignore[call-overload]
            )
        self.log_path = log_path

    @property
    def pid(self) -> int:
        return self.proc.pid

    def poll(self) -> int | None:
        """Its exit status, or None while it runs."""
        return self.proc.poll()

    def interrupt(self, signal_number: int) -> None:
        """Pass on a termination signal (on Windows as Ctrl-Break, all its group can get)."""
        if self.proc.poll() is not None:
            return
        with contextlib.suppress(OSError):
            if sys.platform == "win32":  # pragma: no cover - exercised by the Windows CI job
                self.proc.send_signal(signal.CTRL_BREAK_EVENT)
            else:
                self.proc.send_signal(signal_number)

    def wait(self) -> int:
        return self.proc.wait()

    def kill(self) -> None:
        """Kill it and everything it started, then reap it."""
        if self.proc.poll() is None:
            _kill_tree(self.proc, None)
        self.proc.wait()


FORKS = sys.platform == "linux"  # where `Forked` starts a `-j` worker (elsewhere: `Background`)
FORKED_FAILED = 70  # a forked child's status when `main` raised (EX_SOFTWARE)


class Forked:
    """A child forked from this process (Linux), running `main` there with the state this
    process has (a `verify -j` worker starts from its parent's prepared run: no interpreter
    start, imports or preparation of its own): its own session, stdin from the null device,
    its output to a file, its name `name` (what `ps -o comm` and `top` show); it leaves with
    `os._exit` and `main`'s status, never through the caller's frames, `finally` blocks or
    exit handlers. Polled, signalled, waited for and killed with its tree as a `Background`.

    Fork only from the main thread, with no lock another thread may hold needed in the child:
    the child writes through new `sys.stdout` and `sys.stderr` objects (the status line's
    ticker thread may hold the old ones' locks), and `main` must not use this process's
    open pipes or locks (GitPython starts a process per command here: nothing is shared).
    As a new process starts, the child holds none of this process's other descriptors (the
    repository lock's among them), and what it inherited is never garbage-collected there
    (`gc.freeze`: no finalizer closes a descriptor number the child reuses). The handled
    signals are blocked across the fork: the child starts with them blocked and `main`
    unblocks them once its own handlers are set (`signals.unblock`); the caller holds them
    (`signals.deferred`) until it has recorded the child."""

    def __init__(self, main: Callable[[], int], *, name: str, log_path: Path) -> None:
        for stream in (sys.stdout, sys.stderr):  # nothing buffered is written twice
            with contextlib.suppress(Exception):
                stream.flush()
        log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with signals.blocked(), warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)  # 3.12+: see above
                pid = os.fork()
                if pid == 0:
                    _forked_child(main, name, log)
        finally:
            os.close(log)
        self.pid = pid
        self.log_path = log_path
        self.returncode: int | None = None

    def _waited(self, flags: int) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, flags)
            except ChildProcessError:  # reaped elsewhere: its status is lost
                self.returncode = FORKED_FAILED
                return self.returncode
            if pid == self.pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def poll(self) -> int | None:
        """Its exit status (minus the signal that ended it), or None while it runs."""
        return self._waited(os.WNOHANG)

    def wait(self) -> int:
        status = self._waited(0)
        assert status is not None
        return status

    def interrupt(self, signal_number: int) -> None:
        """Pass on a termination signal."""
        if self.poll() is None:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal_number)

    def kill(self) -> None:
        """Kill it and everything it started, then reap it."""
        if self.poll() is None:
            end_group(self.pid, lambda: self.poll() is not None)
        self.wait()


def _forked_child(main: Callable[[], int], name: str, log: int) -> None:
    """The forked child's whole life (its handled signals blocked until `main` unblocks
    them): never returns."""
    status = FORKED_FAILED
    try:
        gc.freeze()
        os.setsid()
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))
        sys.stdout, sys.stderr = (  # new objects: another thread may hold the old locks
            io.TextIOWrapper(io.FileIO(fd, "w", closefd=False), encoding="utf-8",
                             errors="backslashreplace", line_buffering=True)
            for fd in (1, 2))
        _prctl(PR_SET_NAME, name.encode()[:15])  # what `ps -o comm` shows
        status = main()
    except BaseException:
        with contextlib.suppress(BaseException):
            import traceback

            traceback.print_exc()
    finally:
        signals.block()  # its own handlers are gone: nothing may unwind it now
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(status)


class Piped:
    """A long-lived child spoken to through pipes (the pytest fork server): requests on its
    stdin, answers on its stdout, its stderr to a file; its own session (POSIX only)."""

    def __init__(
        self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], log_path: Path
    ) -> None:
        become_subreaper()
        with log_path.open("wb") as log:
            self.proc: subprocess.Popen[bytes] = subprocess.Popen(
                list(argv), cwd=cwd, env=dict(env), stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=log, start_new_session=True,
            )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def output(self) -> int:
        """The file descriptor its answers arrive on."""
        assert self.proc.stdout is not None
        return self.proc.stdout.fileno()

    def send(self, data: bytes) -> None:
        """Write to its stdin (OSError once it stopped reading)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def wait(self) -> int:
        return self.proc.wait()

    def end(self, timeout_s: float) -> None:
        """Close its stdin, let it exit within `timeout_s`, else end its group; reap it."""
        with contextlib.suppress(OSError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            end_group(self.proc.pid, lambda: self.proc.poll() is not None)
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
