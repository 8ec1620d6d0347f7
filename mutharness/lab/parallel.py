"""`verify -j N`: N worker processes in their own workspaces, handed mutations one at a time.

The workers are `verify` runs under this run's lock (`lab.workers`: forked from this process
once the run is prepared, on Linux; else `commands.worker`); each is its own process,
so each is the subreaper of its own tests and kills only their trees. Each is handed its
next mutation when it is idle (`lab.schedule` chooses it, longest first; `lab.feed` carries
it). Their results files, rewritten after every mutation, are followed here and shown as a
`-j 1` run shows them, spec by spec and mutation by mutation in the spec's order; at the end
`lab.joining` joins them into the one results file a `-j 1` run writes. A TIMEOUT is re-run
alone (with every worker finished) before it is shown: load from the other workers must not
make one.
With `--fail-fast` the run stops where a `-j 1` run stops, and keeps only what that run has.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from mutharness.errors import (
    ForcedExit,
    Interrupted,
    MergeError,
    MutharnessError,
    RecordedError,
    ResultsError,
    WorkerFailed,
)
from mutharness.lab.ending import Ending, recorded
from mutharness.lab.events import Listener, Silent
from mutharness.lab.feed import Feed
from mutharness.lab.joining import Given, completed
from mutharness.lab.logs import RUNS, RunLogs
from mutharness.lab.order import Again
from mutharness.lab.schedule import Item, Schedule, Timings, previous_timings, timings_of
from mutharness.lab.session import FAIL_FAST, Plan, Session, stopped_after
from mutharness.lab.workers import Child, start_worker
from mutharness.model.merging import notes_of
from mutharness.model.results import (
    MutationResult,
    RunResult,
    SpecResult,
    keep_previous,
    read_results,
    write_results,
)
from mutharness.model.shards import Shard, ShardPlan
from mutharness.model.spec import Spec
from mutharness.model.verdict import Verdict
from mutharness.paths import plain_name
from mutharness.repo.workspace import marked_directory
from mutharness.signals import deferred
from mutharness.sweep import sweep_stale_workspaces

POLL_S = 0.01  # how often the workers' results files are looked at (a stat each; read when new):
# an idle worker waits for this look (0.05 s cost 0.03-0.04 s per mutation handed out)
LOG_TAIL_CHARS = 2000


@dataclass(frozen=True)
class WorkerJob:
    """Worker `index` of `count`: its job document, where it writes, where it is fed."""

    index: int
    count: int
    document: Mapping[str, Any]  # the worker's settings_json (with its parent's pid)
    results: Path
    feed: Path

    def __str__(self) -> str:
        return f"{self.index} of {self.count}"


class _Worker:
    """One running worker and the latest results it wrote."""

    def __init__(self, job: WorkerJob, started: Child) -> None:
        self.job = job
        self.process = started
        self.feed = Feed(job.feed)
        self.seen: RunResult | None = None
        self.stamp: tuple[int, int, int] | None = None
        self.reads = 0  # how many times its results were read (each a new version)

    @property
    def name(self) -> str:
        """What names it in messages about its results (`worker 2 of 3`)."""
        return f"worker {self.job}"

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
                self.reads += 1
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
            return f"{self.name}: {seen.error.message()}"
        status = self.process.poll()
        how = (f"was killed by signal {-status} ({_signal_name(-status)})"
               if status is not None and status < 0 else f"exited with status {status}")
        try:
            said = self.process.log_path.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            said = ""
        return (f"{self.name} {how} before its results were complete; its output: "
                + (said[-LOG_TAIL_CHARS:] if said else "(none)"))


def _named(workers: list[_Worker]) -> list[tuple[str, RunResult]]:
    """The workers' latest results, each named by its file (for merge and its messages)."""
    return [(w.name, w.seen) for w in workers if w.seen is not None]


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return "unknown"


class _Dispatch:
    """Hands each idle worker its next mutation (`Schedule` chooses it) and keeps who was
    given what; a worker with nothing left to run is told so, and exits."""

    def __init__(self, workers: list[_Worker], schedule: Schedule) -> None:
        self.workers = workers
        self.schedule = schedule
        self.owners: dict[Item, _Worker] = {}
        self.given: dict[str, dict[str, set[int]]] = {w.name: {} for w in workers}
        self.ended: set[int] = set()  # the workers told that nothing more comes
        self.taken: dict[int, int] = {}  # per worker, the version of its results taken in

    def holders(self, spec_id: str) -> list[_Worker]:
        return [w for w in self.workers if spec_id in self.given[w.name]]

    def step(self) -> None:
        """Take in what the workers finished; hand the idle ones their next mutation."""
        schedule = self.schedule
        for number, worker in enumerate(self.workers):
            fresh = self.taken.get(number) != worker.reads  # new results since the last look
            self.taken[number] = worker.reads
            for item in list(schedule.outstanding[number]) if fresh else []:
                part = worker.part(item.spec)
                if part is None:
                    continue
                schedule.learn(item.spec, timings_of(part))
                if any(m.mutation.index == item.index for m in part.mutations):
                    schedule.done(number, item)
                elif part.refused:
                    schedule.fail(item.spec, number)
            if worker.ended and number not in self.ended:  # died: the run cannot be whole
                worker.refresh(force=True)
                raise WorkerFailed(worker.problem())
            if schedule.outstanding[number] or number in self.ended:
                continue
            given = schedule.next_for(number)
            if given is None:
                worker.feed.end()
                self.ended.add(number)
                continue
            self.owners[given] = worker
            joins = given.spec not in self.given[worker.name]
            self.given[worker.name].setdefault(given.spec, set()).add(given.index)
            others = [self.workers[held] for held in schedule.holders[given.spec]
                      if held != number]
            # joining a spec another worker holds: its baseline may be read from that worker
            worker.feed.give(given, others[0].job.results if joins and others else None)


@dataclass(frozen=True)
class _Stop:
    """Where `--fail-fast` stopped a `-j` run, as a `-j 1` run would have: spec `spec`'s
    baseline part, and its results shown up to the first unexpected one (`shown`), or none
    when the spec itself failed (its error is the workers' to record)."""

    spec: Spec
    part: SpecResult
    shown: tuple[MutationResult, ...] | None


class _Follower:
    """Keeps the workers fed, and shows their results in the order of a `-j 1` run as they
    arrive; with `fail_fast`, only up to the first unexpected result or failed spec."""

    def __init__(self, dispatch: _Dispatch, listener: Listener,
                 rerun: Callable[[Spec, MutationResult], MutationResult],
                 fail_fast: bool) -> None:
        self.dispatch = dispatch
        self.workers = dispatch.workers
        self.listener = listener
        self.rerun = rerun
        self.fail_fast = fail_fast
        self.reruns: dict[tuple[str, int], MutationResult] = {}
        self.stop: _Stop | None = None
        self.told: dict[str, None] = {}  # the workers' notes shown, in order, each once
        self.current: tuple[Spec, SpecResult, list[MutationResult]] | None = None  # showing

    def partial(self, done: tuple[SpecResult, ...], wanted: Mapping[str, tuple[int, ...]],
                why: str) -> tuple[SpecResult, ...]:
        """The spec being shown when the run stopped (`why`), as a `-j 1` run that stopped
        there keeps it: its baseline and the results shown, no verdict; none when it is not
        the one after `done`."""
        if self.current is None:
            return ()
        spec, part, shown = self.current
        after = [s for s in wanted if s not in {d.spec.id for d in done}]
        if not after or after[0] != spec.id:
            return ()
        text = stopped_after(why, len(shown), len(wanted[spec.id]))
        return (replace(part, mutations=tuple(shown), error=text, stopped=text),)

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

    def wait(self, ready: Callable[[], Any]) -> Any:
        """What `ready` finds, the workers kept fed while it looks."""
        while True:
            for worker in self.workers:
                worker.refresh()
            self.dispatch.step()
            self.tell()
            found = ready()
            if found is not None:
                return found
            time.sleep(POLL_S)

    def _none_left(self, what: str) -> None:
        """Raises WorkerFailed when every worker has ended and `what` was never run."""
        if all(worker.ended for worker in self.workers):
            ended = next((w for w in self.workers if w.seen is None or not w.seen.complete),
                         None)
            raise WorkerFailed(ended.problem() if ended is not None else
                               f"the workers ended without running {what}")

    def _baseline(self, spec: Spec) -> SpecResult:
        """The first worker's part of `spec` once its baseline is measured (or the spec
        stopped); raises WorkerFailed when the workers given it ended first."""
        def ready() -> SpecResult | None:
            for worker in self.workers:
                part = worker.part(spec.id)
                if part is not None:
                    return part
            for worker in self.dispatch.holders(spec.id):
                if worker.ended:
                    worker.refresh(force=True)  # its last write may have come after the refresh
                    part = worker.part(spec.id)
                    if part is None:
                        raise WorkerFailed(worker.problem())
                    return part
            self._none_left(f"spec {spec.id}")
            return None
        found: SpecResult = self.wait(ready)
        return found

    def _refusal(self, spec: Spec) -> SpecResult | None:
        """A worker's part of `spec` that ended with an error (its baseline refused it)."""
        for worker in self.workers:
            part = worker.part(spec.id)
            if part is not None and part.refused:
                return part
        return None

    def _mutation(self, spec: Spec, index: int) -> MutationResult | SpecResult:
        """Mutation `index`'s result, or the part of `spec` whose error stopped its worker;
        raises WorkerFailed when its worker ended without either."""
        def ready() -> MutationResult | SpecResult | None:
            worker = self.dispatch.owners.get(Item(spec.id, index))
            if worker is None:  # not handed out: none is while a part of the spec refused it
                refused = self._refusal(spec)
                if refused is None:
                    self._none_left(f"{spec.id} #{index + 1}")
                return refused
            part = worker.part(spec.id)
            if part is not None:
                done = next((m for m in part.mutations if m.mutation.index == index), None)
                if done is not None:
                    return done
                if part.refused:
                    return part
            if worker.ended:
                worker.refresh(force=True)
                part = worker.part(spec.id)
                if part is None or not any(m.mutation.index == index for m in part.mutations):
                    raise WorkerFailed(worker.problem())
            return None
        found: MutationResult | SpecResult = self.wait(ready)
        return found

    def follow(self, specs: tuple[Spec, ...], wanted: Mapping[str, tuple[int, ...]]) -> None:
        for spec in specs:
            indices = wanted.get(spec.id, ())  # a shard's run (--shard -j) has only its part
            if not indices:
                continue
            self.listener.baseline_started(spec)
            part = self._baseline(spec)
            if part.refused:  # its baseline was refused: as with -j 1
                self.listener.spec_failed(spec, RecordedError(part.error, recorded=part.error_kind))
                if self.fail_fast:
                    self.stop = _Stop(spec, part, None)
                    return
                continue
            assert part.baseline is not None
            self.listener.baseline_finished(spec, part.baseline, part.timeout_s)
            shown: list[MutationResult] = []
            self.current = (spec, part, shown)
            for index in indices:
                self.listener.mutation_started(spec, spec.mutations[index])
                result = self._mutation(spec, index)
                if isinstance(result, SpecResult):
                    self.listener.spec_failed(
                        spec, RecordedError(result.error, recorded=result.error_kind))
                    if self.fail_fast:
                        self.stop = _Stop(spec, part, None)
                        return
                    break
                if result.verdict is Verdict.TIMEOUT:
                    self.wait(lambda: True if all(w.ended for w in self.workers) else None)
                    result = self.rerun(spec, result)
                    self.reruns[(spec.id, index)] = result
                self.listener.mutation_finished(spec, result)
                shown.append(result)
                if self.fail_fast and not result.as_expected:
                    self.stop = _Stop(spec, part, tuple(shown))
                    return
            self.current = None


class Parallel:
    """One `verify -j N` after the lock: the workers, fed and followed, their results joined;
    the results file."""

    def __init__(self, plan: Plan, jobs: list[WorkerJob], scratch: Path,
                 argv: Callable[[Path], list[str]], start: Path,
                 shard: ShardPlan | None = None) -> None:
        self.plan = plan
        self.jobs = jobs
        self.scratch = scratch  # job files, feeds, workers' results and logs; removed at the end
        self.argv = argv  # the command line of a worker given its job file
        self.start = start  # the directory the command ran in (spec paths are relative to it)
        self.sharded = shard  # --shard k/n: only this shard's mutations are handed out
        assigned = (shard or ShardPlan.of(Shard(1, 1), plan.specs)).assigned()
        self.wanted = {spec.id: assigned[spec.id] for spec in plan.specs if spec.id in assigned}
        self.given: Given = {}  # what each worker was handed, once they run
        self.follower: _Follower | None = None  # what was shown, once they run

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
            alone = replace(self.plan, fail_fast=False,
                            json_path=self.scratch / f"rerun-{plain_name(spec.id)}-{index}.json")
            run = Session(alone, Again({spec.id: (index,)})).execute(Silent(), environ, temp_dir)
            if run.interrupted is not None:
                raise Interrupted(run.interrupted)
            again = next((m for s in run.specs for m in s.mutations
                          if s.spec.id == spec.id and m.mutation.index == index), None)
            return result if again is None else again
        return rerun

    def execute(self, listener: Listener, environ: Mapping[str, str],
                temp_dir: Path) -> RunResult:
        """Start the workers, show their results in order, join them; the results, always."""
        plan = self.plan
        workers: list[_Worker] = []
        ending = Ending()
        run: RunResult | None = None
        timings = previous_timings(plan.json_path, plan.specs)  # before it is overwritten
        try:
            with recorded(ending, lambda: "running the workers"):
                run = self._run(workers, listener, environ, temp_dir, timings)
        finally:
            self._stop(workers, ending.interrupted or signal.SIGTERM)
            # a worker killed outright left its workspace, its fork server and its tests'
            # processes: ended and removed now, as its creator is dead, not at the next run
            sweep_stale_workspaces(temp_dir)
        if run is None:  # what the workers finished, in -j 1 order, up to the first they did not
            named = _named(workers)
            finished, _ = completed(named, plan.specs, self.wanted, self.given)
            notes = notes_of(run for _, run in named)
            if self.follower is not None:  # as shown: re-runs in place, no note made after
                why = "interrupted" if ending.interrupted is not None else "stopped by an error"
                finished = self.follower.rerun_into(finished)
                finished += self.follower.partial(finished, self.wanted, why)
                notes = tuple(self.follower.told)
            run = replace(self._empty(complete=True, interrupted=ending.interrupted,
                                      error=ending.error),
                          specs=finished, tool=next(
                              (dict(run.tool) for _, run in named if run.tool), {}),
                          notes=notes)
        run = replace(run, logs_path=str(plan.source.run_dir / RUNS))
        write_results(run, plan.json_path)
        return run

    def _spawned(self, job: WorkerJob) -> list[str]:
        """The command line of `job`'s worker started as a new process, its job document
        written for it (a forked worker has its parent's plan instead)."""
        job_file = self.scratch / f"job-{job.index}.json"
        job_file.write_text(json.dumps(job.document), encoding="utf-8")
        return self.argv(job_file)

    def _run(self, workers: list[_Worker], listener: Listener, environ: Mapping[str, str],
             temp_dir: Path, timings: Mapping[str, Timings]) -> RunResult:
        """The workers started (into `workers`), fed and followed to their end, their
        results joined; raises WorkerFailed when one ended without its results."""
        plan = self.plan
        keep_previous(plan.json_path)  # the last complete results outlive this run
        write_results(self._empty(complete=False), plan.json_path)
        logs = RunLogs(plan.source.run_dir)  # cleared once here: the workers only add
        for spec in plan.specs:
            if spec.id in self.wanted:
                logs.clear(spec.id, None if self.sharded is None
                           else [spec.mutations[index].number for index in self.wanted[spec.id]])
        listener.head(plan.source, plan.changes)
        if self.sharded is not None:
            listener.sharded(self.sharded)
        listener.planned({spec: len(indices) for spec, indices in self.wanted.items()})
        for job in self.jobs:
            job.feed.touch()
            with deferred():  # a signal meanwhile waits until the worker is recorded
                workers.append(_Worker(job, start_worker(
                    plan, job.results, job.feed, name=f"mutharness-w{job.index}",
                    argv=partial(self._spawned, job), cwd=self.start, environ=environ,
                    temp_dir=temp_dir, log_path=self.scratch / f"worker-{job.index}.log")))
        dispatch = _Dispatch(workers, Schedule(self.wanted, timings, len(workers)))
        self.given = dispatch.given
        follower = _Follower(dispatch, listener, self._rerun(environ, temp_dir),
                             plan.fail_fast)
        self.follower = follower
        follower.follow(plan.specs, self.wanted)
        if follower.stop is not None:
            return self._stopped(workers, follower)
        follower.wait(lambda: True if all(w.ended for w in workers) else None)
        for worker in workers:
            worker.refresh(force=True)
        follower.tell()
        failed = next((w for w in workers if w.seen is None or not w.seen.complete), None)
        if failed is not None:
            raise WorkerFailed(failed.problem())
        return self._joined(workers, follower, self.plan.specs, tuple(follower.told))

    def _joined(self, workers: list[_Worker], follower: _Follower, specs: tuple[Spec, ...],
                notes: tuple[str, ...]) -> RunResult:
        """The results of `specs` as the workers finished them between them (their parts
        checked to agree, as merge checks shards), each TIMEOUT's re-run in its place."""
        named = _named(workers)
        done, problems = completed(named, specs, self.wanted, self.given)
        if problems:
            raise MergeError(problems)
        expected = [spec for spec in specs if spec.id in self.wanted]
        if len(done) < len(expected):
            raise WorkerFailed(f"the workers' results of spec {expected[len(done)].id} are "
                               "incomplete")
        first = next(run for _, run in named if run.tool)
        return replace(first, specs=follower.rerun_into(done), shard=self.sharded,
                       results_path=str(self.plan.json_path), complete=True, error=None,
                       interrupted=None, notes=notes)

    def _stopped(self, workers: list[_Worker], follower: _Follower) -> RunResult:
        """The results of the `-j 1 --fail-fast` run that stops where `follower` stopped: the
        notes shown so far, the workers ended (each cleans up after itself), the specs before
        the stop as they finished, and the spec it stopped in with its results up to the one
        it stopped at."""
        stop = follower.stop
        assert stop is not None
        follower.tell()
        notes = tuple(follower.told)  # a note made past the stop is not the -j 1 run's
        self._stop(workers, signal.SIGTERM)  # their last results are read before it returns
        place = self.plan.specs.index(stop.spec) + (1 if stop.shown is None else 0)
        run = self._joined(workers, follower, self.plan.specs[:place], notes)
        if stop.shown is None:
            return run
        total = len(self.wanted[stop.spec.id])  # as -j 1 has it: up to the unexpected result
        return replace(run, specs=(*run.specs, replace(
            stop.part, mutations=stop.shown, error="",
            stopped=stopped_after(FAIL_FAST, len(stop.shown), total))))

    def _stop(self, workers: list[_Worker], signal_number: int) -> None:
        """Every worker ended: each is passed the signal and cleans up after itself (puts its
        file back, removes its workspace); a second signal here kills them outright (the
        next run's sweep removes what they leave); the scratch directory removed."""
        try:
            for worker in workers:
                with contextlib.suppress(OSError):  # an idle worker ends even unsignalled
                    worker.feed.end()
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
