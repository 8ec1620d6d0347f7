"""The Windows Job Object logic, checked on every platform through a recording kernel32.

The fake records every call with its arguments (the limit structure is copied when passed), hands
out distinct handles, and fails the calls a test names. The invariant checked throughout: every
handle the fake handed out is closed exactly once, whatever failed. On Windows, one more test runs
a real child tree through `process.run` and the real kernel32.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from mutharness import process, winjob
from mutharness.winjob import ExtendedLimitInformation, JobError, JobObject, ProcessTree

PID = 4242
ERROR_ACCESS_DENIED = 5


class FakeKernel32:
    """Records calls; `fail` names the calls that return failure (and set the last error)."""

    def __init__(self, *fail: str) -> None:
        self.fail = set(fail)
        self.calls: list[tuple[Any, ...]] = []
        self.opened: list[int] = []
        self.closed: list[int] = []
        self.error = 0
        self._next = 100

    def _handle(self, call: str) -> int:
        if call in self.fail:
            self.error = ERROR_ACCESS_DENIED
            return 0
        self._next += 4
        self.opened.append(self._next)
        return self._next

    def _ok(self, call: str) -> bool:
        if call in self.fail:
            self.error = ERROR_ACCESS_DENIED
            return False
        return True

    def CreateJobObjectW(self, attributes: None, name: None) -> int:
        handle = self._handle("CreateJobObjectW")
        self.calls.append(("CreateJobObjectW", attributes, name, handle))
        return handle

    def SetInformationJobObject(
        self, job: int, info_class: int, info: ExtendedLimitInformation, length: int
    ) -> bool:
        copy = ExtendedLimitInformation.from_buffer_copy(bytes(info))
        self.calls.append(("SetInformationJobObject", job, info_class, copy, length))
        return self._ok("SetInformationJobObject")

    def OpenProcess(self, access: int, inherit: bool, pid: int) -> int:
        handle = self._handle("OpenProcess")
        self.calls.append(("OpenProcess", access, inherit, pid, handle))
        return handle

    def AssignProcessToJobObject(self, job: int, process: int) -> bool:
        self.calls.append(("AssignProcessToJobObject", job, process))
        return self._ok("AssignProcessToJobObject")

    def TerminateJobObject(self, job: int, exit_code: int) -> bool:
        self.calls.append(("TerminateJobObject", job, exit_code))
        return self._ok("TerminateJobObject")

    def CloseHandle(self, handle: int) -> bool:
        self.calls.append(("CloseHandle", handle))
        self.closed.append(handle)
        return True

    def last_error(self) -> int:
        return self.error

    def names(self) -> list[str]:
        return [call[0] for call in self.calls]

    def every_handle_closed_once(self) -> bool:
        return Counter(self.closed) == Counter(self.opened)


class Fallback:
    """Stands in for `taskkill /T /F /PID`: records the pids it was asked to kill."""

    def __init__(self) -> None:
        self.pids: list[int] = []

    def __call__(self, pid: int) -> None:
        self.pids.append(pid)


def test_a_tree_is_put_in_a_kill_on_close_job_and_the_process_handle_is_closed_at_once() -> None:
    kernel = FakeKernel32()

    tree = ProcessTree.attach(PID, kernel, Fallback())

    assert kernel.names() == [
        "CreateJobObjectW", "SetInformationJobObject", "OpenProcess",
        "AssignProcessToJobObject", "CloseHandle",
    ]
    job, process_handle = kernel.opened
    assert kernel.calls[0] == ("CreateJobObjectW", None, None, job)
    _, set_job, info_class, info, length = kernel.calls[1]
    assert (set_job, info_class) == (job, winjob.JOB_OBJECT_EXTENDED_LIMIT_INFORMATION)
    assert length == ctypes.sizeof(ExtendedLimitInformation)
    flags = info.BasicLimitInformation.LimitFlags
    assert flags == 0x2000 | 0x0400  # KILL_ON_JOB_CLOSE | DIE_ON_UNHANDLED_EXCEPTION
    assert not flags & 0x0800 and not flags & 0x1000  # no BREAKAWAY_OK, no SILENT_BREAKAWAY_OK
    only_flags = ExtendedLimitInformation()
    only_flags.BasicLimitInformation.LimitFlags = flags
    assert bytes(info) == bytes(only_flags)  # every other field zero: no other limit is set
    assert kernel.calls[2] == ("OpenProcess", 0x0100 | 0x0001, False, PID, process_handle)
    assert kernel.calls[3:] == [
        ("AssignProcessToJobObject", job, process_handle), ("CloseHandle", process_handle),
    ]
    assert tree.job is not None and tree.problem == ""


def test_a_kill_terminates_the_job_and_the_close_at_the_end_of_the_run_closes_it_once() -> None:
    kernel, fallback = FakeKernel32(), Fallback()
    tree = ProcessTree.attach(PID, kernel, fallback)
    job = kernel.opened[0]
    del kernel.calls[:]

    tree.kill()
    tree.close()
    tree.close()

    assert kernel.calls == [
        ("TerminateJobObject", job, winjob.KILLED_EXIT_CODE), ("CloseHandle", job),
    ]
    assert fallback.pids == []
    assert kernel.every_handle_closed_once()


def test_a_run_that_ends_normally_still_closes_the_job_which_kills_what_was_left_in_it() -> None:
    kernel = FakeKernel32()
    tree = ProcessTree.attach(PID, kernel, Fallback())
    del kernel.calls[:]

    tree.close()

    assert kernel.names() == ["CloseHandle"]
    assert kernel.every_handle_closed_once()


@pytest.mark.parametrize(
    ("failing", "calls_made"),
    [
        ("CreateJobObjectW", ["CreateJobObjectW"]),
        ("SetInformationJobObject",
         ["CreateJobObjectW", "SetInformationJobObject", "CloseHandle"]),
        ("OpenProcess",
         ["CreateJobObjectW", "SetInformationJobObject", "OpenProcess", "CloseHandle"]),
        ("AssignProcessToJobObject",
         ["CreateJobObjectW", "SetInformationJobObject", "OpenProcess",
          "AssignProcessToJobObject", "CloseHandle", "CloseHandle"]),
    ],
)
def test_when_the_job_cannot_be_made_or_joined_every_handle_is_closed_and_kill_uses_taskkill(
    failing: str, calls_made: list[str]
) -> None:
    kernel, fallback = FakeKernel32(failing), Fallback()

    tree = ProcessTree.attach(PID, kernel, fallback)

    assert kernel.names() == calls_made
    assert kernel.every_handle_closed_once()
    assert tree.job is None
    assert tree.problem == f"{failing} failed (Windows error {ERROR_ACCESS_DENIED})"
    tree.kill()
    tree.close()
    assert fallback.pids == [PID]
    assert kernel.names() == calls_made  # no call on a handle that was never made or is closed


def test_when_terminate_job_object_fails_the_kill_falls_back_to_taskkill() -> None:
    kernel, fallback = FakeKernel32("TerminateJobObject"), Fallback()
    tree = ProcessTree.attach(PID, kernel, fallback)

    tree.kill()
    tree.close()

    assert "TerminateJobObject" in kernel.names()
    assert fallback.pids == [PID]
    assert kernel.every_handle_closed_once()


def test_without_a_kernel32_there_is_no_job_and_kill_uses_the_fallback() -> None:
    fallback = Fallback()

    tree = ProcessTree.attach(PID, None, fallback)
    tree.kill()
    tree.close()

    assert tree.job is None and fallback.pids == [PID]


def test_a_closed_job_is_never_terminated_through_its_stale_handle() -> None:
    kernel = FakeKernel32()
    job = JobObject.create(kernel)
    job.close()

    assert job.terminate() is False
    assert kernel.names().count("TerminateJobObject") == 0


def test_a_job_error_names_the_call_and_the_windows_error_code() -> None:
    error = JobError("AssignProcessToJobObject", 5)

    assert (error.call, error.code) == ("AssignProcessToJobObject", 5)
    assert str(error) == "AssignProcessToJobObject failed (Windows error 5)"
    assert isinstance(error, OSError)


@pytest.mark.skipif(ctypes.sizeof(ctypes.c_void_p) != 8, reason="the x64 layout")
def test_the_limit_structure_has_the_windows_x64_layout() -> None:
    basic = winjob.BasicLimitInformation
    extended = ExtendedLimitInformation

    assert ctypes.sizeof(basic) == 64 and ctypes.sizeof(winjob.IoCounters) == 48
    assert ctypes.sizeof(extended) == 144
    assert basic.LimitFlags.offset == 16 and basic.Affinity.offset == 48
    assert extended.IoInfo.offset == 64 and extended.ProcessMemoryLimit.offset == 112


@pytest.mark.skipif(sys.platform == "win32", reason="off Windows there is no kernel32")
def test_off_windows_there_is_no_kernel32_and_process_uses_no_job() -> None:
    assert winjob.kernel32() is None


@pytest.mark.skipif(sys.platform != "win32", reason="the real Job Object path")
def test_on_windows_a_timed_out_child_and_its_grandchild_die_with_the_job(
    tmp_path: Path,
) -> None:  # pragma: no cover - exercised by the Windows CI job
    assert winjob.kernel32() is not None
    out = tmp_path / "grandchild.pid"
    code = textwrap.dedent('''\
        import os, subprocess, sys, time
        out = sys.argv[1]
        subprocess.Popen([sys.executable, "-c", "import os, sys, time; "
                          "open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(600)", out])
        while not os.path.exists(out):
            time.sleep(0.01)
        while True:
            pass
    ''')

    result = process.run(
        [sys.executable, "-c", code, str(out)], cwd=tmp_path, env=dict(os.environ),
        log_path=tmp_path / "child.log", timeout_s=5,
    )

    assert result.timed_out
    pid = int(out.read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        found = subprocess.run(
            ["tasklist", "/FI", f"PID eq {pid}", "/NH"], capture_output=True, text=True,
        ).stdout
        if str(pid) not in found:
            break
        time.sleep(0.1)
    assert str(pid) not in found
