"""process.run with real children: timeouts, whole-tree kills, and no process left behind.

Every child here is a real interpreter. Grandchildren publish their pids (and that they are
ready) into a directory of the test before the child goes on, so no step waits on a fixed delay;
after each run every published pid must be gone (`os.kill(pid, 0)` -> ProcessLookupError).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mutharness import process

POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and sessions")
LINUX_ONLY = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="the marker sweep reads /proc (Linux only)"
)
STARTED_S = 3.0  # a timeout long enough for a child to start its grandchildren, even under load

# A grandchild: optionally ignores SIGTERM and/or leaves the session, publishes its pid, sleeps.
GRANDCHILD = '''\
import os, signal, sys, time
out, ignore_term, escape = sys.argv[1], sys.argv[2] == "1", sys.argv[3] == "1"
if escape:
    os.setsid()
if ignore_term:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
with open(out + ".tmp", "w") as handle:
    handle.write(str(os.getpid()))
os.replace(out + ".tmp", out)
time.sleep(600)
'''

# A daemon: double fork + setsid, so it is reparented away from the child at once.
DAEMON = '''\
import os, sys, time
out = sys.argv[1]
if os.fork():
    os._exit(0)
os.setsid()
if os.fork():
    os._exit(0)
with open(out + ".tmp", "w") as handle:
    handle.write(str(os.getpid()))
os.replace(out + ".tmp", out)
time.sleep(600)
'''


def child_code(spawns: list[tuple[str, list[str]]], then: str) -> str:
    """A child that starts `spawns` (script, args), waits until each published its pid, then
    runs `then` ("loop", "exit0", "sleep")."""
    return textwrap.dedent(f'''\
        import os, subprocess, sys, time
        outs = []
        for script, args in {spawns!r}:
            subprocess.Popen([sys.executable, "-c", script, *args])
            outs.append(args[0])
        deadline = time.monotonic() + 60
        while not all(os.path.exists(out) for out in outs) and time.monotonic() < deadline:
            time.sleep(0.01)
        print("ready", flush=True)
        then = {then!r}
        if then == "loop":
            while True:
                pass
        if then == "sleep":
            time.sleep(600)
        os._exit(0)
    ''')


def published(*paths: Path) -> list[int]:
    """The pids the grandchildren wrote."""
    return [int(path.read_text()) for path in paths]


def gone_within(pids: list[int], seconds: float = 10.0) -> list[int]:
    """Wait (bounded) for `pids` to vanish: killed processes are reaped by their new parent."""
    deadline = time.monotonic() + seconds
    left = list(pids)
    while left and time.monotonic() < deadline:
        left = [pid for pid in left if _exists(pid)]
        if left:
            time.sleep(0.02)
    return left


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def assert_no_such_process(pids: list[int]) -> None:
    """The orphan check: every pid is gone, as `os.kill(pid, 0)` says."""
    gone_within(pids)
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def _started_by(pid: int, token: str) -> bool:
    """Whether `pid` is still one of this test's processes (never a recycled pid): on Linux its
    environment carries the test's token; elsewhere, that it exists."""
    if not sys.platform.startswith("linux"):
        return _exists(pid)
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:
        return False
    return f"MH_TEST_TOKEN={token}".encode() in environ


@pytest.fixture
def strays(tmp_path: Path) -> Iterator[list[int]]:
    """Pids a test's children published; none outlives the test, should a kill have failed."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if _started_by(pid, str(tmp_path)):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


def run_child(tmp_path: Path, code: str, timeout_s: float,
              env: dict[str, str] | None = None) -> process.ProcessResult:
    return process.run(
        [sys.executable, "-c", code], cwd=tmp_path,
        env={**(env or os.environ), "MH_TEST_TOKEN": str(tmp_path)},
        log_path=tmp_path / "child.log", timeout_s=timeout_s,
    )


def test_a_child_that_loops_forever_is_timed_out_and_killed(tmp_path: Path) -> None:
    result = run_child(tmp_path, "while True:\n    pass\n", timeout_s=1)

    assert result.timed_out
    assert result.returncode is not None and result.returncode != 0
    assert result.duration_s < 30  # 1 s limit + 2 s grace, with a tenfold margin


@POSIX_ONLY
def test_a_grandchild_that_ignores_sigterm_and_holds_the_output_open_is_killed_and_run_returns(
    tmp_path: Path, strays: list[int]
) -> None:
    out = tmp_path / "grandchild.pid"
    code = child_code([(GRANDCHILD, [str(out), "1", "0"])], "loop")

    result = run_child(tmp_path, code, timeout_s=STARTED_S)
    strays.extend(published(out))

    assert "ready" in (tmp_path / "child.log").read_text()  # the timeout came after the spawn
    assert result.timed_out and result.signal_number == signal.SIGTERM
    assert result.duration_s < 10 * (STARTED_S + process.GRACE_S)  # never waits on the output
    assert_no_such_process(strays)


@POSIX_ONLY
def test_a_grandchild_left_in_the_group_by_a_child_that_exited_is_killed_when_the_run_ends(
    tmp_path: Path, strays: list[int]
) -> None:
    out = tmp_path / "grandchild.pid"
    code = child_code([(GRANDCHILD, [str(out), "1", "0"])], "exit0")

    result = run_child(tmp_path, code, timeout_s=60)
    strays.extend(published(out))

    assert (result.returncode, result.timed_out) == (0, False)
    assert_no_such_process(strays)


@LINUX_ONLY
def test_on_linux_grandchildren_that_left_the_session_are_killed_after_a_timeout(
    tmp_path: Path, strays: list[int]
) -> None:
    setsid, daemon = tmp_path / "setsid.pid", tmp_path / "daemon.pid"
    code = child_code(
        [(GRANDCHILD, [str(setsid), "1", "1"]), (DAEMON, [str(daemon)])], "loop"
    )

    result = run_child(tmp_path, code, timeout_s=STARTED_S)
    strays.extend(published(setsid, daemon))

    assert "ready" in (tmp_path / "child.log").read_text()  # the timeout came after the spawn
    assert result.timed_out
    assert_no_such_process(strays)


@LINUX_ONLY
def test_on_linux_grandchildren_that_left_the_session_are_killed_when_the_child_exits(
    tmp_path: Path, strays: list[int]
) -> None:
    setsid, daemon = tmp_path / "setsid.pid", tmp_path / "daemon.pid"
    code = child_code(
        [(GRANDCHILD, [str(setsid), "0", "1"]), (DAEMON, [str(daemon)])], "exit0"
    )

    result = run_child(tmp_path, code, timeout_s=60)
    strays.extend(published(setsid, daemon))

    assert (result.returncode, result.timed_out) == (0, False)
    assert_no_such_process(strays)


@LINUX_ONLY
def test_the_sweep_spares_processes_without_this_runs_marker(
    tmp_path: Path, strays: list[int]
) -> None:
    sleep = [sys.executable, "-c", "import time; time.sleep(600)"]
    unmarked = subprocess.Popen(sleep, start_new_session=True)
    other_run = subprocess.Popen(
        sleep, start_new_session=True,
        env={**os.environ, process.RUN_MARKER: "another-run-of-mutharness"},
    )
    strays.extend([unmarked.pid, other_run.pid])
    try:
        result = run_child(tmp_path, "print('done')", timeout_s=60)

        assert result.returncode == 0
        assert unmarked.poll() is None and other_run.poll() is None
    finally:
        for proc in (unmarked, other_run):
            proc.kill()
            proc.wait()


def test_every_run_gives_its_child_a_fresh_marker_and_keeps_the_callers_environment(
    tmp_path: Path,
) -> None:
    code = f"import os; print(os.environ[{process.RUN_MARKER!r}], os.environ['MH_KEEP'])"
    env = {**os.environ, "MH_KEEP": "kept"}
    markers = []
    for _ in range(2):
        result = run_child(tmp_path, code, timeout_s=60, env=env)
        assert result.returncode == 0
        marker, kept = (tmp_path / "child.log").read_text().split()
        assert kept == "kept" and len(marker) >= 32
        markers.append(marker)

    assert markers[0] != markers[1]
    assert process.RUN_MARKER not in env  # the caller's mapping is not changed


@POSIX_ONLY
def test_a_child_killed_by_a_signal_reports_that_signal_and_is_not_a_timeout(
    tmp_path: Path,
) -> None:
    result = run_child(tmp_path, "import ctypes; ctypes.string_at(0)", timeout_s=60)

    assert result.signal_number == signal.SIGSEGV
    assert not result.timed_out


def test_output_goes_to_the_log_file_and_the_exit_status_is_kept(tmp_path: Path) -> None:
    result = run_child(
        tmp_path,
        "import sys; print('out', flush=True); print('err', file=sys.stderr); sys.exit(3)",
        timeout_s=60,
    )

    assert (result.returncode, result.timed_out, result.signal_number) == (3, False, None)
    assert (tmp_path / "child.log").read_text().split() == ["out", "err"]


@pytest.mark.parametrize("timeout_s", [1e7, float("inf")])
def test_a_run_with_an_enormous_or_infinite_timeout_waits_for_its_child_as_any_other(
    tmp_path: Path, timeout_s: float
) -> None:
    result = process.run(
        [sys.executable, "-c", "raise SystemExit(3)"], cwd=tmp_path, env=dict(os.environ),
        log_path=tmp_path / "log", timeout_s=timeout_s,
    )
    assert result.returncode == 3 and not result.timed_out


FORKS_ONLY = pytest.mark.skipif(not process.FORKS, reason="workers are forked on Linux only")


def _forked(tmp_path: Path, main: Callable[[], int]) -> tuple[int, str]:
    """`main` run in a forked child to its end: its status (as `poll` says it too) and what
    it wrote."""
    child = process.Forked(main, name="mh-test-child", log_path=tmp_path / "child.log")
    status = child.wait()
    assert child.poll() == status
    return status, (tmp_path / "child.log").read_text(encoding="utf-8")


@FORKS_ONLY
def test_a_forked_child_says_its_function_s_status_into_its_log_and_skips_this_process_s_exits(
    tmp_path: Path,
) -> None:
    import atexit

    ran_atexit = tmp_path / "atexit-ran"

    def main() -> int:
        atexit.register(ran_atexit.write_text, "the parent's exit handlers ran in the child")
        print("said in the child")
        return 3

    assert _forked(tmp_path, main) == (3, "said in the child\n")
    assert not ran_atexit.exists()


@FORKS_ONLY
def test_a_forked_child_starts_with_the_handled_signals_blocked_and_no_descriptor_of_ours(
    tmp_path: Path,
) -> None:
    """A signal in the moment of the fork waits for the child's own handlers (it unblocks
    them once they are set); the parent's open files (the repository lock's) are not held."""
    from mutharness.signals import handled_signals

    with (tmp_path / "held.txt").open("w", encoding="utf-8") as held:
        descriptor = held.fileno()

        def main() -> int:
            blocked = signal.pthread_sigmask(signal.SIG_BLOCK, [])
            try:
                os.fstat(descriptor)
                inherited = True
            except OSError:
                inherited = False
            print(json.dumps({"blocked": [int(number) for number in blocked],
                              "inherited": inherited}))
            return 0

        status, output = _forked(tmp_path, main)

    assert status == 0
    said = json.loads(output)
    assert set(handled_signals()) <= set(said["blocked"])
    assert said["inherited"] is False
    assert signal.SIGTERM not in signal.pthread_sigmask(signal.SIG_BLOCK, [])  # ours: as it was


@FORKS_ONLY
def test_a_forked_child_killed_with_its_signals_blocked_is_ended_and_says_so(
    tmp_path: Path,
) -> None:
    started = tmp_path / "started"

    def main() -> int:
        started.write_text("running")
        time.sleep(600)
        return 0

    child = process.Forked(main, name="mh-test-child", log_path=tmp_path / "child.log")
    while not started.exists() and child.poll() is None:
        time.sleep(0.01)
    child.kill()  # SIGTERM is blocked in it: the grace period ends in SIGKILL

    assert child.poll() == -signal.SIGKILL
    assert not _exists(child.pid)  # reaped: no zombie either
