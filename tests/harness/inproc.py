"""The command line run in the test's own process, for the commands a child adds nothing to.

`in_process(cwd, *args, env=None)` is `conftest.run_cli` without the child (its 0.3-0.5 s of
imports): the same `Completed(code, out, err)`, the same exit codes (click's standalone main,
as `python -m mutharness` runs it: a usage error 2, `_Main`'s 70 for an exception nothing
expected, every `sys.exit` as given) and the two streams apart. What a command changes in the
process is put back: the working directory, the whole environment (`prepare_process` deletes
git's variables, `configure_git` adds GitPython's), the signal handlers, the standard streams
(click's `CliRunner`), Linux's child-subreaper flag (a run sets it; the pytest-xdist worker
must not adopt later tests' orphans). An exception that escapes click fails the test with its
traceback.

It is for every command whose test checks what the command decides and writes: `check`,
`merge`, `render`, `evidence-check`, what is refused before any test runs (usage errors,
options, config), and `verify`, `baseline` and `redfirst` runs, whose children (pytest, node,
git) stay real (`replay.replaying` can hand back recorded ones). What only a process shows
stays on the real child (`cli`): signals, a closed standard output, `-j` workers, the exit code
the operating system sees, Windows; and each test module keeps its first real-child test.

This module is not `conftest.py` on purpose: the mutharness-* specs' tests load that file, so
each change to it stales their evidence (`evidence/mutharness-*.md`).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path

from conftest import Completed

PROG_NAME = "python -m mutharness"  # what click names the program in a child's usage lines
_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK")
                 if hasattr(signal, name))


@contextmanager
def kept_environ() -> Iterator[None]:
    """The environment as it was, whatever the body set or deleted in it."""
    saved = dict(os.environ)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37


@contextmanager
def kept_subreaper() -> Iterator[None]:
    """Linux: this process's child-subreaper flag as it was (a run makes itself the subreaper
    of what it starts, for good, as a command's process may), and no child the body left
    behind that has ended and is not reaped (a zombie)."""
    if sys.platform != "linux":
        yield
        return
    import ctypes

    from mutharness.process import children

    libc = ctypes.CDLL(None, use_errno=True)
    flag = ctypes.c_int()
    libc.prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0)
    before = children()
    try:
        yield
    finally:
        libc.prctl(_PR_SET_CHILD_SUBREAPER, flag.value, 0, 0, 0)
        for pid in children() - before:
            with suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)


def _runner() -> object:
    from click.testing import CliRunner

    try:  # click before 8.2 mixes stderr into stdout unless told not to
        return CliRunner(mix_stderr=False)  # type: ignore[call-arg]
    except TypeError:  # click 8.2 and newer: the streams are always apart
        return CliRunner()


def in_process(cwd: Path, *args: str, env: Mapping[str, str] | None = None) -> Completed:
    """Run `mutharness ARGS` in this process from `cwd`, with `env` as the whole environment
    (default: this one), as `conftest.run_cli` runs it in a child."""
    from mutharness.cli import main

    runner = _runner()
    handlers = {number: signal.getsignal(number) for number in _SIGNALS}
    here = os.getcwd()
    with kept_environ(), kept_subreaper():
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        os.chdir(cwd)
        try:
            result = runner.invoke(  # type: ignore[attr-defined]
                main, list(args), prog_name=PROG_NAME, catch_exceptions=False,
            )
        finally:
            os.chdir(here)
            changed = [number for number, handler in handlers.items()
                       if signal.getsignal(number) != handler]
            for number in changed:
                signal.signal(number, handlers[number])
    assert not changed, f"the command left signal handlers installed: {changed}"
    return Completed(result.exit_code, result.stdout, result.stderr)
