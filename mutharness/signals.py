"""Termination signals: the first one unwinds so that cleanup runs, a later one exits at once.

Handled: SIGINT (Ctrl-C), SIGTERM (a CI cancel), and where they exist SIGHUP (the terminal
closed) and SIGBREAK (Windows Ctrl-Break); a signal already ignored when the run starts
(`nohup`) stays ignored. Closing a Windows console also arrives as SIGBREAK, but Windows ends
the process as soon as the C runtime has noted it (python/cpython#96289), before any cleanup:
the job object kills the tests, and the next run's sweep removes the workspace. The first raises
KeyboardInterrupt (SIGINT) or `Interrupted`, which unwinds through every `finally`: the test
process tree is killed, the workspace removed, the results written, the lock released. Any later
signal raises `ForcedExit`: the user wants out now; the tests are still killed on the way out,
the workspace is left for the next run's sweep.

A few short critical sections (a git command, putting a file's original bytes back) hold the
signals with `deferred()` and deliver the first one when they end.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from mutharness.errors import ExitCode, ForcedExit, Interrupted

_NAMES = ("SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK")


def handled_signals(available: Any = signal) -> tuple[int, ...]:
    """The numbers of the handled signals that exist on this platform (`available`: a module)."""
    numbers = (getattr(available, name, None) for name in _NAMES)
    return tuple(int(number) for number in numbers if number is not None)


def _taken_over() -> tuple[int, ...]:
    """The handled signals not ignored at this moment: one ignored when the run started
    (`nohup`, a background job of a non-interactive shell) stays ignored."""
    return tuple(
        number for number in handled_signals() if signal.getsignal(number) is not signal.SIG_IGN
    )


def exit_status(signal_number: int) -> ExitCode:
    """143 for SIGTERM; 130 for Ctrl-C and everything like it (SIGHUP, SIGBREAK)."""
    return ExitCode.TERMINATED if signal_number == signal.SIGTERM else ExitCode.INTERRUPTED


class SignalStages:
    """A signal handler: the first signal unwinds, any later one forces the exit."""

    def __init__(self) -> None:
        self.first: int | None = None

    def __call__(self, signal_number: int, _frame: FrameType | None) -> None:
        if self.first is not None:
            raise ForcedExit(signal_number)
        self.first = signal_number
        if signal_number == signal.SIGINT:
            raise KeyboardInterrupt
        raise Interrupted(signal_number)


@contextmanager
def interrupts() -> Iterator[SignalStages]:
    """Within the block, every handled signal goes through one `SignalStages`."""
    stages = SignalStages()
    previous = {number: signal.signal(number, stages) for number in _taken_over()}
    try:
        yield stages
    finally:
        for number, handler in previous.items():
            signal.signal(number, signal.SIG_DFL if handler is None else handler)


def block() -> None:
    """POSIX: block the handled signals (a signal that arrives is kept pending, not lost)."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_BLOCK, handled_signals())


def unblock() -> None:
    """POSIX: unblock the handled signals; one kept pending is delivered now."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, handled_signals())


@contextmanager
def blocked() -> Iterator[None]:
    """POSIX: the handled signals blocked within the block and delivered when it ends. A child
    forked within it starts with them blocked: it unblocks them (`unblock`) once its own
    handlers are set, so no signal reaches it through handlers it inherited."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, handled_signals())
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextmanager
def deferred() -> Iterator[None]:
    """Hold the handled signals until the block has ended, then deliver the first one.

    For short critical sections only: a git command (GitPython neither kills nor waits for its
    child when an exception interrupts it, so a signal mid-command would let the workspace be
    deleted under a still-running git; git commands are short and local, and on a terminal
    Ctrl-C reaches git too), or writing a file's original bytes back. Signals that arrive
    together in the block are delivered as one. Only the main thread can set handlers;
    elsewhere this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []

    def hold(signal_number: int, _frame: FrameType | None) -> None:
        pending.append(signal_number)

    previous = {number: signal.signal(number, hold) for number in _taken_over()}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, signal.SIG_DFL if handler is None else handler)
        if pending:
            signal.raise_signal(pending[0])  # the handler in force before runs now
