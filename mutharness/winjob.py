"""Windows Job Objects: a child and everything it starts, killed together.

Windows has no process groups to signal. A Job Object with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
holds the child and, by default, every process it starts; TerminateJobObject (on a timeout) or
closing the last handle (at the end of every run) ends them all. When a job cannot be made or the
child cannot be put in one (an old Windows that forbids nested jobs, say), the caller's fallback
(`taskkill /T /F /PID`) is used instead.

The Win32 calls go through `Kernel32`, a Protocol: the real implementation (ctypes, built only on
win32) and a recording fake in the tests, which check the logic here on every platform.

Known limit: the child is assigned right after CreateProcess returns, so a child that started a
process in its first instants would leave that one outside the job. The child is always a Python
interpreter, which takes tens of milliseconds before it can start anything.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable
from typing import Protocol

JOB_OBJECT_EXTENDED_LIMIT_INFORMATION = 9  # the JOBOBJECTINFOCLASS value
JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION = 0x00000400  # a crash never waits on an error dialog
JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x00002000
LIMIT_FLAGS = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION
PROCESS_TERMINATE = 0x0001
PROCESS_SET_QUOTA = 0x0100
KILLED_EXIT_CODE = 1  # what the killed processes exit with (as `taskkill /F` does)


class BasicLimitInformation(ctypes.Structure):
    """JOBOBJECT_BASIC_LIMIT_INFORMATION."""

    _fields_ = (
        ("PerProcessUserTimeLimit", ctypes.c_int64),  # LARGE_INTEGER
        ("PerJobUserTimeLimit", ctypes.c_int64),
        ("LimitFlags", ctypes.c_uint32),  # DWORD
        ("MinimumWorkingSetSize", ctypes.c_size_t),  # SIZE_T
        ("MaximumWorkingSetSize", ctypes.c_size_t),
        ("ActiveProcessLimit", ctypes.c_uint32),
        ("Affinity", ctypes.c_size_t),  # ULONG_PTR
        ("PriorityClass", ctypes.c_uint32),
        ("SchedulingClass", ctypes.c_uint32),
    )


class IoCounters(ctypes.Structure):
    """IO_COUNTERS."""

    _fields_ = tuple(
        (name, ctypes.c_uint64)
        for name in (
            "ReadOperationCount", "WriteOperationCount", "OtherOperationCount",
            "ReadTransferCount", "WriteTransferCount", "OtherTransferCount",
        )
    )


class ExtendedLimitInformation(ctypes.Structure):
    """JOBOBJECT_EXTENDED_LIMIT_INFORMATION."""

    _fields_ = (
        ("BasicLimitInformation", BasicLimitInformation),
        ("IoInfo", IoCounters),
        ("ProcessMemoryLimit", ctypes.c_size_t),
        ("JobMemoryLimit", ctypes.c_size_t),
        ("PeakProcessMemoryUsed", ctypes.c_size_t),
        ("PeakJobMemoryUsed", ctypes.c_size_t),
    )


class Kernel32(Protocol):
    """The kernel32 functions this module calls; handles are ints, 0 is NULL (failure)."""

    def CreateJobObjectW(self, attributes: None, name: None) -> int: ...
    def SetInformationJobObject(
        self, job: int, info_class: int, info: ExtendedLimitInformation, length: int
    ) -> bool: ...
    def OpenProcess(self, access: int, inherit: bool, pid: int) -> int: ...
    def AssignProcessToJobObject(self, job: int, process: int) -> bool: ...
    def TerminateJobObject(self, job: int, exit_code: int) -> bool: ...
    def CloseHandle(self, handle: int) -> bool: ...
    def last_error(self) -> int:
        """GetLastError of the calling thread, as left by the last call above."""
        ...


class JobError(OSError):
    """A Job Object call failed; the message names the call and the Windows error code."""

    def __init__(self, call: str, code: int) -> None:
        super().__init__(f"{call} failed (Windows error {code})")
        self.call = call
        self.code = code


class JobObject:
    """One Job Object handle: processes in it die when it is terminated or closed."""

    def __init__(self, kernel32: Kernel32, handle: int) -> None:
        self.kernel32 = kernel32
        self.handle = handle
        self.closed = False

    @classmethod
    def create(cls, kernel32: Kernel32) -> JobObject:
        """A new anonymous job whose processes die when its last handle closes."""
        handle = kernel32.CreateJobObjectW(None, None)
        if not handle:
            raise JobError("CreateJobObjectW", kernel32.last_error())
        job = cls(kernel32, handle)
        info = ExtendedLimitInformation()
        info.BasicLimitInformation.LimitFlags = LIMIT_FLAGS
        if not kernel32.SetInformationJobObject(
            handle, JOB_OBJECT_EXTENDED_LIMIT_INFORMATION, info, ctypes.sizeof(info)
        ):
            error = JobError("SetInformationJobObject", kernel32.last_error())
            job.close()
            raise error
        return job

    def assign(self, pid: int) -> None:
        """Put the process `pid` (and so everything it starts from now on) in this job."""
        process = self.kernel32.OpenProcess(PROCESS_SET_QUOTA | PROCESS_TERMINATE, False, pid)
        if not process:
            raise JobError("OpenProcess", self.kernel32.last_error())
        try:
            if not self.kernel32.AssignProcessToJobObject(self.handle, process):
                raise JobError("AssignProcessToJobObject", self.kernel32.last_error())
        finally:
            self.kernel32.CloseHandle(process)

    def terminate(self) -> bool:
        """End every process in the job now; False if Windows refused."""
        if self.closed:
            return False
        return bool(self.kernel32.TerminateJobObject(self.handle, KILLED_EXIT_CODE))

    def close(self) -> None:
        """Close the handle (once): with kill-on-close, whatever is still in the job dies."""
        if not self.closed:
            self.closed = True
            self.kernel32.CloseHandle(self.handle)


class ProcessTree:
    """A child's process tree on Windows: in a Job Object when possible, else `fallback(pid)`."""

    def __init__(
        self, pid: int, job: JobObject | None, fallback: Callable[[int], None], problem: str = ""
    ) -> None:
        self.pid = pid
        self.job = job
        self.fallback = fallback
        self.problem = problem  # why there is no job, when there is none

    @classmethod
    def attach(
        cls, pid: int, kernel32: Kernel32 | None, fallback: Callable[[int], None]
    ) -> ProcessTree:
        """Put `pid` in a new kill-on-close job; on any failure, keep only the fallback."""
        if kernel32 is None:
            return cls(pid, None, fallback, "no kernel32")
        try:
            job = JobObject.create(kernel32)
        except JobError as error:
            return cls(pid, None, fallback, str(error))
        try:
            job.assign(pid)
        except JobError as error:
            job.close()
            return cls(pid, None, fallback, str(error))
        return cls(pid, job, fallback)

    def kill(self) -> None:
        """Kill the whole tree: TerminateJobObject, or the fallback when that is not possible."""
        if self.job is not None and self.job.terminate():
            return
        self.fallback(self.pid)

    def close(self) -> None:
        """At the end of every run: close the job, killing anything the child left behind."""
        if self.job is not None:
            self.job.close()


if sys.platform == "win32":  # pragma: no cover - exercised by the Windows CI job
    from ctypes import wintypes

    class WindowsKernel32:
        """The real kernel32, through ctypes (with the calling thread's last error kept)."""

        def __init__(self) -> None:
            dll = ctypes.WinDLL("kernel32", use_last_error=True)
            self._create = dll.CreateJobObjectW
            self._create.argtypes = (ctypes.c_void_p, wintypes.LPCWSTR)
            self._create.restype = wintypes.HANDLE
            self._set = dll.SetInformationJobObject
            self._set.argtypes = (wintypes.HANDLE, ctypes.c_int, ctypes.c_void_p, wintypes.DWORD)
            self._set.restype = wintypes.BOOL
            self._open = dll.OpenProcess
            self._open.argtypes = (wintypes.DWORD, wintypes.BOOL, wintypes.DWORD)
            self._open.restype = wintypes.HANDLE
            self._assign = dll.AssignProcessToJobObject
            self._assign.argtypes = (wintypes.HANDLE, wintypes.HANDLE)
            self._assign.restype = wintypes.BOOL
            self._terminate = dll.TerminateJobObject
            self._terminate.argtypes = (wintypes.HANDLE, wintypes.UINT)
            self._terminate.restype = wintypes.BOOL
            self._close = dll.CloseHandle
            self._close.argtypes = (wintypes.HANDLE,)
            self._close.restype = wintypes.BOOL

        def CreateJobObjectW(self, attributes: None, name: None) -> int:
            return int(self._create(attributes, name) or 0)

        def SetInformationJobObject(
            self, job: int, info_class: int, info: ExtendedLimitInformation, length: int
        ) -> bool:
            return bool(self._set(job, info_class, ctypes.byref(info), length))

        def OpenProcess(self, access: int, inherit: bool, pid: int) -> int:
            return int(self._open(access, inherit, pid) or 0)

        def AssignProcessToJobObject(self, job: int, process: int) -> bool:
            return bool(self._assign(job, process))

        def TerminateJobObject(self, job: int, exit_code: int) -> bool:
            return bool(self._terminate(job, exit_code))

        def CloseHandle(self, handle: int) -> bool:
            return bool(self._close(handle))

        def last_error(self) -> int:
            return ctypes.get_last_error()


def kernel32() -> Kernel32 | None:
    """The real kernel32 on Windows; None elsewhere (or if it cannot be loaded)."""
    if sys.platform == "win32":  # pragma: no cover - exercised by the Windows CI job
        try:
            return WindowsKernel32()
        except (OSError, AttributeError):
            return None
    return None
