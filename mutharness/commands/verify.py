"""`mutharness verify`: the specs' mutations run against their tests, sequentially or with -j."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mutharness.commands.prepare import (
    Inherited,
    Prepared,
    Settings,
    default_specs,
    locked,
    prepare,
    record_refusal,
    settings_json,
    settings_of,
)
from mutharness.errors import (
    MutharnessError,
    NothingSelected,
    OptionConflict,
    OutputClosed,
)
from mutharness.lab.events import Listener
from mutharness.lab.feed import Feed
from mutharness.lab.order import Fed, Whole
from mutharness.lab.session import Plan, Session
from mutharness.model.results import RunResult, keep_previous, write_results
from mutharness.model.shards import Shard, ShardPlan
from mutharness.signals import interrupts

if TYPE_CHECKING:  # a -j worker (`execute` alone) imports neither the reports nor -j's parent
    from mutharness.lab.parallel import Parallel
    from mutharness.reports.console import Console
    from mutharness.reports.outputs import Reports


def run(
    console: Console, specs: tuple[Path, ...], cli_options: Mapping[str, Any], *,
    since: str | None, allow_dirty: bool, fail_fast: bool, jobs: int, shard_text: str | None,
    json_path: Path | None, evidence_dir: Path | None, template_dir: Path | None,
    config: Path | None, reports: Reports,
) -> int:
    """The command line's verify, from its parsed arguments to its exit code (errors raised)."""
    command = ("mutharness", "verify", *(path.as_posix() for path in specs))
    try:
        shard = None if shard_text is None else Shard.parse(shard_text)
        _refuse_conflicts(shard, fail_fast, evidence_dir)
        settings = settings_of(
            specs or default_specs("to verify", cli_options, config), cli_options, config,
            allow_dirty, command,
            fail_fast=fail_fast, json_path=json_path.absolute() if json_path else None,
            since=since, shard=shard, jobs=jobs,
        )
        if evidence_dir is not None:  # a broken override template fails before any test runs
            from mutharness.reports.evidence import load_templates  # Jinja2: only for evidence

            load_templates(template_dir)
    except MutharnessError as error:  # no earlier results pass for this run's
        record_refusal(json_path.absolute() if json_path else None, Path.cwd(), command,
                       os.environ, error)
        raise
    with interrupts():
        result = execute(settings, console, os.environ)
    try:
        from mutharness.commands.finish import finish
        return int(finish(result, console, evidence_dir, template_dir, reports))
    except OutputClosed as closed:
        return int(closed.exit_code)


def _refuse_conflicts(shard: Shard | None, fail_fast: bool, evidence_dir: Path | None) -> None:
    """Options that cannot go together are refused before anything is looked at."""
    if shard is not None and fail_fast:
        raise OptionConflict(("--shard", "--fail-fast"), "a shard that stops early leaves "
                             "mutations no shard ran, and merge refuses the set")
    if shard is not None and evidence_dir is not None:
        raise OptionConflict(("--shard", "--evidence"), "a shard holds part of a run; "
                             "merge the shards' results (mutharness merge --evidence DIR)")


def execute(
    settings: Settings, listener: Listener, environ: Mapping[str, str], lock: bool = True,
) -> RunResult:
    """Run every spec end to end and write the results file; raises before anything runs.

    After the lock is taken every failure (disk full, a git error, a closed stdout...) ends
    the run with its results written and the error in them, never a traceback. Without
    `lock` (a `verify -j` worker) the run is under its parent's lock. A run refused before
    it runs replaces the results file an earlier run left with its record of the refusal."""
    try:
        prepared = prepare(settings, environ)
    except MutharnessError as error:
        if lock:
            record_refusal(settings.json_path, settings.start, settings.command, environ, error)
        raise
    json_path = settings.json_path or prepared.run_dir / "results.json"
    if prepared.selection is not None:
        if not prepared.specs:  # the results say so too: an older results file is no answer
            with locked(prepared):
                keep_previous(json_path)
                write_results(RunResult(
                    tool={}, commit=prepared.source.head, dirty=bool(prepared.changes),
                    dirty_changes=prepared.changes, command=settings.command, specs=(),
                    settings={"since": prepared.selection.rev,
                              "selection": prepared.selection.describe()},
                ), json_path)
            raise NothingSelected(prepared.selection.describe())
        listener.selected(prepared.selection)
    plan = Plan(
        source=prepared.source, specs=prepared.specs, options=prepared.options,
        tracked=prepared.tracked, changes=prepared.changes, included=prepared.included,
        fail_fast=settings.fail_fast, json_path=json_path,
        command=settings.command, git_version=prepared.git_version,
        skip_rules=prepared.skip_rules,
    )
    shard = None if settings.shard is None else ShardPlan.of(settings.shard, plan.specs)
    order = (Whole(shard) if settings.feed is None  # a -j worker runs what its parent feeds
             else Fed(Feed(settings.feed, settings.parent)))
    if not lock:
        return Session(plan, order).execute(listener, environ, prepared.temp_dir)
    # no more workers than mutations to run (shard 1/1 is the whole run)
    jobs = min(settings.jobs, (shard or ShardPlan.of(Shard(1, 1), plan.specs)).size)
    with locked(prepared):
        if jobs > 1:
            return _parallel(settings, prepared, plan, jobs, shard).execute(
                listener, environ, prepared.temp_dir)
        return Session(plan, order).execute(listener, environ, prepared.temp_dir)


def _parallel(settings: Settings, prepared: Prepared, plan: Plan, jobs: int,
              shard: ShardPlan | None) -> Parallel:
    """`jobs` workers, each handed the run's mutations (a shard's, with `--shard`) one at a
    time (`verify -j`)."""
    from mutharness.lab.parallel import Parallel, WorkerJob, scratch_directory
    scratch = scratch_directory(prepared.temp_dir)
    workers = []
    for index in range(1, jobs + 1):
        results, feed = scratch / f"results-{index}.json", scratch / f"feed-{index}.jsonl"
        worker = replace(settings, jobs=1, shard=None, feed=feed, parent=os.getpid(),
                         json_path=results, fail_fast=False, inherited=Inherited(
                             prepared.source.head, prepared.changes, prepared.included))
        document = settings_json(worker)
        workers.append(WorkerJob(index, jobs, document, results, feed))
    return Parallel(plan, workers, scratch, worker_argv, settings.start, shard)


def worker_argv(job_file: Path) -> list[str]:
    """The command line of a worker (this interpreter, this mutharness)."""
    return [sys.executable, "-m", "mutharness.commands.worker", str(job_file)]
