"""How a `verify -j` worker starts and ends: forked from its parent on Linux (the parent's
prepared plan: no interpreter start, imports or preparation of its own), elsewhere a new
process (`commands.worker`, prepared again); its results file says how it ended."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from mutharness import process
from mutharness.errors import ExitCode, ForcedExit, Interrupted, MutharnessError
from mutharness.lab.events import Silent
from mutharness.lab.feed import Feed
from mutharness.lab.order import Fed
from mutharness.lab.session import Plan, Session
from mutharness.model.results import RunResult, write_results
from mutharness.signals import exit_status, interrupts, unblock


class Child(Protocol):
    """A running worker, as its parent follows it (`process.Forked`, `process.Background`)."""

    @property
    def pid(self) -> int: ...

    @property
    def log_path(self) -> Path: ...

    def poll(self) -> int | None: ...

    def wait(self) -> int: ...

    def interrupt(self, signal_number: int) -> None: ...

    def kill(self) -> None: ...


def served(json_path: Path, command: tuple[str, ...], parent: int | None,
           work: Callable[[], RunResult]) -> int:
    """A worker's life: `work` under its signal handling, stopped with its parent (`parent`,
    its pid); its results file says what happened, also on an error before its session."""
    try:
        with interrupts():
            unblock()  # forked: blocked since the fork (see `process.Forked`)
            if parent is not None:
                process.end_with_parent(parent)
            run = work()
    except MutharnessError as error:  # before its session: the parent reads it from here
        write_results(RunResult(tool={}, commit="", dirty=False, dirty_changes=(),
                                command=command, specs=(), complete=False,
                                error=error), json_path)
        return int(error.exit_code)
    except KeyboardInterrupt:
        return int(ExitCode.INTERRUPTED)
    except (Interrupted, ForcedExit) as interrupted:
        return int(exit_status(interrupted.signal_number))
    return int(run.exit_code())


def start_worker(
    plan: Plan, results: Path, feed: Path, *, name: str, argv: Callable[[], Sequence[str]],
    cwd: Path, environ: Mapping[str, str], temp_dir: Path, log_path: Path,
) -> Child:
    """Worker `name` of `plan`, writing `results`, fed from `feed`: forked where
    `process.FORKS`, else the new process `argv()` (its job file, written only then, names
    the same)."""
    if not process.FORKS:
        return process.Background(argv(), cwd=cwd, env=environ, log_path=log_path)
    parent = os.getpid()
    mine = replace(plan, json_path=results, fail_fast=False)  # the parent stops the run

    def work() -> RunResult:
        return Session(mine, Fed(Feed(feed, parent))).execute(Silent(), environ, temp_dir)

    return process.Forked(lambda: served(results, plan.command, parent, work), name=name,
                          log_path=log_path)
