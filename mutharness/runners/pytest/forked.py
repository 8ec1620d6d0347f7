"""The fork server's harness side: a pytest server per workspace, one forked child per run.

The server (`_forkserver`, in the tests' interpreter) imports pytest once; each run is a child
it forks, which imports the project afresh and ends as a process ends, leading its own
session: a timeout or an interrupt ends that session's group as
`process.run` ends a subprocess's, and what the run left behind is reaped the same way (the
group, the run's marker, orphans re-parented to us). Anything unexpected from the server is
`ServerUnusable`, and the runner falls back to a fresh process per run.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mutharness import process

MODULE = "_mutharness_forkserver"  # the server's file in the start-up directory
ANSWER_TIMEOUT_S = 120.0  # the server's start (importing pytest) and each fork's answer
CLOSE_TIMEOUT_S = 5.0
# what an interpreter's own start-up may take out of its environment (macOS's framework stub
# hands the real executable this variable, which consumes it): never start-up code's doing
INTERPRETER_OWN = frozenset({"__PYVENV_LAUNCHER__"})


class ServerUnusable(Exception):
    """Why the fork server cannot (or can no longer) run the tests."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def environment_changes(given: Mapping[str, str], found: object) -> list[str]:
    """The variables the server's start-up (the interpreter's, then importing pytest) set,
    changed or removed in the environment it was `given` (`found`: the server's own, as it
    reported it when ready; not a mapping: that it did not report one)."""
    if not isinstance(found, Mapping):
        return ["the server did not report its environment"]
    return sorted(name for name in {*given, *found} - INTERPRETER_OWN
                  if given.get(name) != found.get(name))


def _pid(answer: dict[str, Any] | None) -> int:
    """The child's pid from the server's answer to a request."""
    pid = answer.get("pid") if answer is not None else None
    if not isinstance(pid, int):
        raise ServerUnusable(f"the server did not fork a run ({answer!r})")
    return pid


class ForkServer:
    """One running server: requests on its stdin, answers on its stdout, its log a file."""

    def __init__(self, proc: process.Piped, log_path: Path, env: Mapping[str, str]) -> None:
        self.proc = proc
        self.log_path = log_path
        self.env = dict(env)  # what it was given, to compare with what it reports when ready
        self.buffer = b""
        self.start_s = 0.0  # the processor time the server's start took, once ready

    @classmethod
    def launch(cls, python: str, env: Mapping[str, str], cwd: Path,
               log_path: Path) -> ForkServer:
        """Start the server in `cwd` (outside the workspace); `ready` waits for it."""
        proc = process.Piped([python, "-m", MODULE], cwd=cwd, env=env, log_path=log_path)
        return cls(proc, log_path, env)

    def ready(self) -> ForkServer:
        """This server, once it has loaded pytest and found nothing that makes it unusable;
        else it is closed and ServerUnusable says why."""
        try:
            ready = self._answer(ANSWER_TIMEOUT_S)
            if ready is None:
                raise ServerUnusable(f"it did not load pytest within {ANSWER_TIMEOUT_S:g} s")
            if not ready.get("ready"):
                raise ServerUnusable(str(ready.get("problem") or "it refused to start"))
            start_s = ready.get("start_s")
            self.start_s = float(start_s) if isinstance(start_s, (int, float)) else 0.0
            changed = environment_changes(self.env, ready.get("environ"))
            if changed:
                raise ServerUnusable(
                    f"the interpreter's start-up changed its environment ({', '.join(changed)}), "
                    "which a forked child, given the run's environment, would not have: every "
                    "run is a new interpreter, as a fresh `python -m pytest` is; "
                    "`--pytest-runner subprocess` chooses that from the start, without this "
                    "note")
        except BaseException:
            self.close()
            raise
        return self

    def _said(self) -> str:
        tail = ""
        with contextlib.suppress(OSError):
            tail = self.log_path.read_text(encoding="utf-8", errors="replace").strip()
        return f": {tail.splitlines()[-1][:300]}" if tail else ""

    def _line(self) -> bytes | None:
        if b"\n" not in self.buffer:
            return None
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line

    def _answer(self, timeout_s: float | None) -> dict[str, Any] | None:
        """The server's next answer; None when none came within `timeout_s` (None: no limit)."""
        output = self.proc.output()
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        line = self._line()
        while line is None:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                readable, _, _ = select.select(
                    [output], [], [],
                    None if remaining is None else min(remaining, process.POLL_SLICE_S),
                )
                chunk = os.read(output, 65536) if readable else None
            except OSError as error:
                raise ServerUnusable(f"its answers cannot be read ({error.strerror})") from None
            if chunk is None:
                if deadline is not None and time.monotonic() >= deadline:
                    return None
                continue
            if not chunk:
                code = self.proc.wait()
                raise ServerUnusable(f"the server exited (status {code}){self._said()}")
            self.buffer += chunk
            line = self._line()
        try:
            found = json.loads(line.decode())
        except ValueError:
            raise ServerUnusable(f"the server answered {line[:200]!r}") from None
        if not isinstance(found, dict):
            raise ServerUnusable(f"the server answered {line[:200]!r}")
        return found

    def _send(self, message: Mapping[str, Any]) -> None:
        try:
            self.proc.send((json.dumps(message) + "\n").encode())
        except OSError as error:
            raise ServerUnusable(f"the server stopped reading ({error.strerror})") from None

    def run(
        self, args: Sequence[str], *, cwd: Path, env: Mapping[str, str], log_path: Path,
        timeout_s: float,
    ) -> process.ProcessResult:
        """One run of pytest with `args` in a forked child; as `process.run` reports one.
        Interrupted at any point (also before the server named the child), the child's
        session is ended and what it left is reaped before the interrupt goes on."""
        marker = process.new_marker()
        keep = process.children()  # the server, and the caller's own children
        started = time.monotonic()
        held: list[dict[str, Any]] = []
        pid: int | None = None

        def exited() -> bool:
            if not held:
                found = self._answer(0.0)
                if found is not None:
                    held.append(found)
            return bool(held)

        timed_out = False
        try:
            try:
                self._send({"args": list(args), "cwd": str(cwd), "log": str(log_path),
                            "env": {**env, process.RUN_MARKER: marker}})
                pid = _pid(self._answer(ANSWER_TIMEOUT_S))
                done = self._answer(timeout_s)
                if done is None:
                    timed_out = True
                    process.end_group(pid, exited)
                    done = held[0] if held else self._answer(ANSWER_TIMEOUT_S)
            except ServerUnusable:
                if pid is not None:
                    process.kill_group(pid)  # the run is void: its server is gone
                raise
            except BaseException:
                with contextlib.suppress(ServerUnusable):
                    if pid is None:
                        pid = _pid(self._answer(process.GRACE_S))
                    process.end_group(pid, exited)
                    if not held:
                        self._answer(process.GRACE_S)
                raise
        finally:
            if pid is not None:
                process.reap_group(pid, marker, keep)
        status = done.get("status") if done is not None else None
        if not isinstance(status, int):
            raise ServerUnusable(f"the server did not report the run's end ({done!r})")
        return process.ProcessResult(
            (*args,), pid, status, timed_out, time.monotonic() - started, str(log_path),
        )

    def close(self) -> None:
        """Let the server go (its stdin closed), its group ended if it does not in a moment."""
        self.proc.end(CLOSE_TIMEOUT_S)
