"""`verify -j N`: N worker processes, each one shard of the run in its own workspace.

The workers are `verify --shard k/N` runs under this run's lock (`lab.worker`); each is its
own process, so each is the subreaper of its own tests and kills only their trees. Their
results files, rewritten after every mutation, are followed here and shown as a `-j 1` run
shows them, spec by spec and mutation by mutation in the spec's order; at the end `merge`
joins them into the one results file a `-j 1` run writes. A TIMEOUT is re-run alone (with
every worker finished) before it is shown: load from the other workers must not make one.
With `--fail-fast` the run stops where a `-j 1` run stops, and keeps only what that run has.
"""

from __future__ import annotations

import json
import shutil
import signal
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mutharness import process
from mutharness.errors import ForcedExit, Interrupted, MergeError, MutharnessError
from mutharness.lab.ending import Ending, recorded
from mutharness.lab.events import Listener, Silent
from mutharness.lab.session import FAIL_FAST, Plan, Session, stopped_after
from mutharness.merge import completed, merge, notes_of
from mutharness.results import (
    MutationResult,
    RecordedError,
    ResultsError,
    RunResult,
    SpecResult,
    read_results,
    write_results,
)
from mutharness.shards import Shard, ShardPlan
from mutharness.spec import Spec
from mutharness.verdict import Verdict
from mutharness.workspace import marked_directory

POLL_S = 0.05  # how often the workers' results files are read
LOG_TAIL_CHARS = 2000


@dataclass(frozen=True)
class WorkerJob:
    """What worker `shard` is asked to run: its job document, and where it writes."""

    shard: Shard
    document: Mapping[str, Any]  # engine.settings_json for this worker, and its parent's pid
    results: Path
    assigned: Mapping[str, tuple[int, ...]]  # its mutations' indices per spec id


class _Worker:
    """One running worker and the latest results it wrote."""

    def __init__(self, job: WorkerJob, started: process.Background) -> None:
        self.job = job
        self.process = started
        self.seen: RunResult | None = None
        self.stamp: tuple[int, int, int] | None = None

    def refresh(self, force: bool = False) -> None:
        try:
            stat = self.job.results.stat()
        except FileNotFoundError:
            return
        stamp = (stat.st_ino, stat.st_mtime_ns, stat.st_size)  # every write is a new file
        if force or stamp != self.stamp:
            try:
                self.seen = read_results(self.job.results)
                self.stamp = stamp
            except ResultsError:  # not written yet: read it again next time
                return

    @property
    def ended(self) -> bool:
        return self.process.poll() is not None

    def part(self, spec_id: str) -> SpecResult | None:
        seen = self.seen
        if seen is None:
            return None
        return next((spec for spec in seen.specs if spec.spec.id == spec_id), None)

    def problem(self) -> str:
        """Why this worker ended without the results asked of it."""
        seen = self.seen
        if seen is not None and seen.error is not None:
            return f"worker {self.job.shard}: {seen.error.message()}"
        status = self.process.poll()
        how = (f"was killed by signal {-status} ({_signal_name(-status)})"
               if status is not None and status < 0 else f"exited with status {status}")
        try:
            said = self.process.log_path.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            said = ""
        return (f"worker {self.job.shard} {how} before its results were complete; its output: "
                + (said[-LOG_TAIL_CHARS:] if said else "(none)"))


def _named(workers: list[_Worker]) -> list[tuple[str, RunResult]]:
    """The workers' latest results, each named by its file (for merge and its messages)."""
    return [(str(w.job.results), w.seen) for w in workers if w.seen is not None]


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return "unknown"


class WorkerFailed(MutharnessError):
    """A `-j` worker ended without the results asked of it, and how it ended."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem

    def message(self) -> str:
        return self.problem


def _running(part: SpecResult) -> bool:
    """A spec a worker has measured and is still mutating (its partial result)."""
    return bool(part.error) and part.error == part.stopped


@dataclass(frozen=True)
class _Stop:
    """Where `--fail-fast` stopped a `-j` run, as a `-j 1` run would have: spec `spec`'s
    baseline part, and its results shown up to the first unexpected one (`shown`), or none
    when the spec itself failed (its error is the workers' to record)."""

    spec: Spec
    part: SpecResult
    shown: tuple[MutationResult, ...] | None


class _Follower:
    """Shows the workers' results in the order of a `-j 1` run, as they arrive; with
    `fail_fast`, only up to the first unexpected result or failed spec."""

    def __init__(self, workers: list[_Worker], listener: Listener,
                 rerun: Callable[[Spec, MutationResult], MutationResult],
                 fail_fast: bool) -> None:
        self.workers = workers
        self.listener = listener
        self.rerun = rerun
        self.fail_fast = fail_fast
        self.reruns: dict[tuple[str, int], MutationResult] = {}
        self.stop: _Stop | None = None
        self.told: dict[str, None] = {}  # the workers' notes shown, in order, each once

    def tell(self) -> None:
        """Show the notes the workers made since the last look (a runner's fall-back)."""
        for note in notes_of(run for _, run in _named(self.workers)):
            if note not in self.told:
                self.told[note] = None
                self.listener.note(note)

    def rerun_into(self, specs: tuple[SpecResult, ...]) -> tuple[SpecResult, ...]:
        """`specs` with each TIMEOUT re-run alone replaced by the re-run's result."""
        return tuple(
            replace(spec, mutations=tuple(
                self.reruns.get((spec.spec.id, m.mutation.index), m) for m in spec.mutations))
            for spec in specs
        )

    def _wait(self, ready: Callable[[], Any]) -> Any:
        while True:
            for worker in self.workers:
                worker.refresh()
            self.tell()
            found = ready()
            if found is not None:
                return found
            time.sleep(POLL_S)

    def _owner(self, spec: Spec, index: int) -> _Worker:
        return next(worker for worker in self.workers
                    if index in worker.job.assigned.get(spec.id, ()))

    def _baseline(self, worker: _Worker, spec: Spec) -> SpecResult:
        """The worker's part of `spec` once its baseline is measured (or the spec stopped);
        raises WorkerFailed when the worker ended first."""
        def ready() -> SpecResult | None:
            part = worker.part(spec.id)
            if part is None and worker.ended:
                worker.refresh(force=True)  # its last write may have come after the refresh
                part = worker.part(spec.id)
                if part is None:
                    raise WorkerFailed(worker.problem())
            return part
        found: SpecResult = self._wait(ready)
        return found

    def _mutation(self, worker: _Worker, spec: Spec, index: int) -> MutationResult | str:
        """Mutation `index`'s result, or the error that stopped the worker's part of `spec`;
        raises WorkerFailed when the worker ended without either."""
        def ready() -> MutationResult | str | None:
            part = worker.part(spec.id)
            if part is not None:
                done = next((m for m in part.mutations if m.mutation.index == index), None)
                if done is not None:
                    return done
                if part.error and not _running(part):
                    return part.error
            if worker.ended:
                worker.refresh(force=True)
                part = worker.part(spec.id)
                if part is None or not any(m.mutation.index == index for m in part.mutations):
                    raise WorkerFailed(worker.problem())
            return None
        found: MutationResult | str = self._wait(ready)
        return found

    def follow(self, specs: tuple[Spec, ...]) -> None:
        for spec in specs:
            owners = [w for w in self.workers if spec.id in w.job.assigned]
            if not owners:
                continue
            self.listener.baseline_started(spec)
            part = self._baseline(owners[0], spec)
            if part.error and not _running(part):  # its baseline was refused: as with -j 1
                self.listener.spec_failed(spec, RecordedError(part.error))
                if self.fail_fast:
                    self.stop = _Stop(spec, part, None)
                    return
                continue
            assert part.baseline is not None
            self.listener.baseline_finished(spec, part.baseline)
            shown: list[MutationResult] = []
            mine = [m for m in spec.mutations  # a shard's run (--shard -j) has only its part
                    if any(m.index in w.job.assigned[spec.id] for w in owners)]
            for mutation in mine:
                result = self._mutation(self._owner(spec, mutation.index), spec,
                                        mutation.index)
                if isinstance(result, str):
                    self.listener.spec_failed(spec, RecordedError(result))
                    if self.fail_fast:
                        self.stop = _Stop(spec, part, None)
                        return
                    break
                if result.verdict is Verdict.TIMEOUT:
                    self._wait(lambda: True if all(w.ended for w in self.workers) else None)
                    result = self.rerun(spec, result)
                    self.reruns[(spec.id, mutation.index)] = result
                self.listener.mutation_finished(spec, result)
                shown.append(result)
                if self.fail_fast and not result.as_expected:
                    self.stop = _Stop(spec, part, tuple(shown))
                    return


class Parallel:
    """One `verify -j N` after the lock: the workers, followed, merged; the results file."""

    def __init__(self, plan: Plan, jobs: list[WorkerJob], scratch: Path,
                 argv: Callable[[Path], list[str]], start: Path) -> None:
        self.plan = plan
        self.jobs = jobs
        self.scratch = scratch  # job files, workers' results and logs; removed at the end
        self.argv = argv  # the command line of a worker given its job file
        self.start = start  # the directory the command ran in (spec paths are relative to it)
        self.sharded = None if plan.shard is None else ShardPlan.of(plan.shard, plan.specs)

    def _empty(self, complete: bool, interrupted: int | None = None,
               error: MutharnessError | None = None) -> RunResult:
        plan = self.plan
        return RunResult(
            tool={}, commit=plan.source.head, dirty=bool(plan.changes),
            dirty_changes=plan.changes, command=plan.command, specs=(),
            interrupted=interrupted, results_path=str(plan.json_path),
            complete=complete and interrupted is None and error is None, error=error,
            shard=self.sharded,
        )

    def _rerun(self, environ: Mapping[str, str], temp_dir: Path
               ) -> Callable[[Spec, MutationResult], MutationResult]:
        def rerun(spec: Spec, result: MutationResult) -> MutationResult:
            index = result.mutation.index
            alone = replace(self.plan, only={spec.id: (index,)}, shard=None, fail_fast=False,
                            json_path=self.scratch / f"rerun-{spec.id}-{index}.json")
            run = Session(alone).execute(Silent(), environ, temp_dir)
            if run.interrupted is not None:
                raise Interrupted(run.interrupted)
            again = next((m for s in run.specs for m in s.mutations
                          if s.spec.id == spec.id and m.mutation.index == index), None)
            return result if again is None else again
        return rerun

    def execute(self, listener: Listener, environ: Mapping[str, str],
                temp_dir: Path) -> RunResult:
        """Start the workers, show their results in order, merge them; the results, always."""
        plan = self.plan
        workers: list[_Worker] = []
        ending = Ending()
        run: RunResult | None = None
        try:
            with recorded(ending, lambda: "running the workers"):
                run = self._run(workers, listener, environ, temp_dir)
        finally:
            self._stop(workers, ending.interrupted or signal.SIGTERM)
        if run is None:  # what the workers finished, in -j 1 order, up to the first they did not
            named = _named(workers)
            finished, _ = completed(named, self.plan.specs, self._wanted())
            run = replace(self._empty(complete=True, interrupted=ending.interrupted,
                                      error=ending.error),
                          specs=finished, tool=next(
                              (dict(run.tool) for _, run in named if run.tool), {}),
                          notes=notes_of(run for _, run in named))
        write_results(run, plan.json_path)
        return run

    def _run(self, workers: list[_Worker], listener: Listener, environ: Mapping[str, str],
             temp_dir: Path) -> RunResult:
        """The workers started (into `workers`), followed to their end, their results merged;
        raises WorkerFailed when one ended without its results."""
        plan = self.plan
        write_results(self._empty(complete=False), plan.json_path)
        listener.head(plan.source, plan.changes)
        if self.sharded is not None:
            listener.sharded(self.sharded)
        for job in self.jobs:
            job_file = self.scratch / f"job-{job.shard.index}.json"
            job_file.write_text(json.dumps(job.document), encoding="utf-8")
            workers.append(_Worker(job, process.Background(
                self.argv(job_file), cwd=self.start, env=environ,
                log_path=self.scratch / f"worker-{job.shard.index}.log")))
        follower = _Follower(workers, listener, self._rerun(environ, temp_dir),
                             plan.fail_fast)
        follower.follow(plan.specs)
        if follower.stop is not None:
            return self._stopped(workers, follower)
        for worker in workers:
            worker.process.wait()
            worker.refresh(force=True)
        follower.tell()
        failed = next((w for w in workers if w.seen is None or not w.seen.complete), None)
        if failed is not None:
            raise WorkerFailed(failed.problem())
        merged = merge(_named(workers), within=plan.shard)
        return replace(merged, specs=follower.rerun_into(merged.specs),
                       results_path=str(plan.json_path), notes=tuple(follower.told))

    def _stopped(self, workers: list[_Worker], follower: _Follower) -> RunResult:
        """The results of the `-j 1 --fail-fast` run that stops where `follower` stopped: the
        notes shown so far, the workers ended (each cleans up after itself), the specs before
        the stop as they finished (their parts checked to agree, as merge checks them), and
        the spec it stopped in with its results up to the one it stopped at."""
        stop = follower.stop
        assert stop is not None
        follower.tell()
        notes = tuple(follower.told)  # a note made past the stop is not the -j 1 run's
        self._stop(workers, signal.SIGTERM)  # their last results are read before it returns
        named = _named(workers)
        place = self.plan.specs.index(stop.spec) + (1 if stop.shown is None else 0)
        wanted = self._wanted()
        specs, problems = completed(named, self.plan.specs[:place], wanted)
        if problems:
            raise MergeError(problems)
        expected = [spec for spec in self.plan.specs[:place]
                    if wanted is None or spec.id in wanted]
        if len(specs) < len(expected):
            raise WorkerFailed(f"the workers' results of spec {expected[len(specs)].id} are "
                               "incomplete after they were stopped")
        specs = follower.rerun_into(specs)
        if stop.shown is not None:  # as -j 1 has it: up to the unexpected result
            total = len(stop.spec.mutations if wanted is None else wanted[stop.spec.id])
            specs = (*specs, replace(stop.part, mutations=stop.shown, error="",
                                     stopped=stopped_after(FAIL_FAST, len(stop.shown), total)))
        first = next(run for _, run in named if run.tool)
        return replace(first, specs=specs, shard=self.sharded,
                       results_path=str(self.plan.json_path), complete=True, error=None,
                       interrupted=None, notes=notes)

    def _wanted(self) -> Mapping[str, tuple[int, ...]] | None:
        """The mutations this run makes per spec id: a shard's, or (None) every one."""
        return None if self.sharded is None else self.sharded.assigned()

    def _stop(self, workers: list[_Worker], signal_number: int) -> None:
        """Every worker ended: each is passed the signal and cleans up after itself (puts its
        file back, removes its workspace); a second signal here kills them outright (the
        next run's sweep removes what they leave); the scratch directory removed."""
        try:
            for worker in workers:
                worker.process.interrupt(signal_number)
            for worker in workers:
                worker.process.wait()
                worker.refresh(force=True)
        except ForcedExit:
            for worker in workers:
                worker.process.kill()
            raise
        finally:
            shutil.rmtree(self.scratch, ignore_errors=True)


def scratch_directory(temp_dir: Path) -> Path:
    """A private directory for one parallel run's job files, results and logs (marked, so the
    next run's sweep removes it if this run is killed outright)."""
    return marked_directory(temp_dir, "mh-jobs-")


def worker_argv(job_file: Path) -> list[str]:
    """The command line of a worker (this interpreter, this mutharness)."""
    return [sys.executable, "-m", "mutharness.lab.worker", str(job_file)]


