"""One verify after the lock: workspace, runners' lifecycle, each spec's runs, results file."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mutharness.digest import file_digest
from mutharness.environment import tool_versions
from mutharness.errors import BaselineError, MutharnessError
from mutharness.lab.baseline import Baseline, SpecStopped, measure
from mutharness.lab.bench import Notes, Runners, opened
from mutharness.lab.ending import Ending, recorded
from mutharness.lab.events import Listener, Phase
from mutharness.lab.logs import RUNS, RunLogs, shown
from mutharness.lab.order import Order, Whole
from mutharness.lab.scenario import Lab, Scenario, adopt, run_scenario
from mutharness.model.pins import Pin
from mutharness.model.results import (
    MutationResult,
    RunResult,
    SpecResult,
    keep_previous,
    write_results,
)
from mutharness.model.skips import SkipRules
from mutharness.model.spec import Mutation, Spec
from mutharness.model.verdict import (
    Classification,
    Verdict,
    baseline_problem,
    classify,
    meets_expectation,
    skip_reasons,
)
from mutharness.options import (
    BASELINE_RUNS,
    BASELINE_TIMEOUT,
    CONFIG_FILE,
    FIRST_FAILURE,
    PLATFORM_SKIPS,
    Options,
    found_notes,
    project_inputs,
)
from mutharness.repo.source import SourceRepo
from mutharness.runners.base import RunFacts, SpecFiles
from mutharness.runners.registry import runner_kind

FAIL_FAST = "stopped at the first unexpected result (--fail-fast)"


def stopped_after(why: str, done: int, total: int) -> str:
    """Why a spec's mutations were not all run, and how far it got."""
    return f"{why} after {done} of {total} mutation(s)"


@dataclass(frozen=True)
class Plan:
    """Everything one verify decided before its lock: the specs, the options, the tree."""

    source: SourceRepo
    specs: tuple[Spec, ...]
    options: Options
    tracked: frozenset[str]  # the paths the workspace tracks
    changes: tuple[str, ...]  # uncommitted changes (git status lines)
    included: tuple[str, ...]  # the uncommitted paths the workspace carries (--allow-dirty)
    fail_fast: bool
    json_path: Path
    command: tuple[str, ...]
    git_version: str
    skip_rules: SkipRules = field(default_factory=SkipRules)


class _SpecRun:
    """One spec's baseline and mutations; what it has finished, if it is stopped."""

    def __init__(
        self, spec: Spec, session: Session, lab: Lab, mutations: tuple[Mutation, ...]
    ) -> None:
        self.spec = spec
        self.mutations = mutations  # the spec's mutations this run makes (a shard's part)
        self.session = session
        self.lab = lab
        self.baseline: Baseline | None = None
        self.done: list[MutationResult] = []
        self.depends_on: dict[str, str] = {}
        self.pin_depends_on: dict[str, str] = {}
        self.pin: Pin | None = None
        self.absent: tuple[str, ...] = ()  # where a new file would configure the run
        self.recorded: tuple[str, ...] = ()  # what `depends_on` lists of the run's own use
        self.source_commit = ""
        self.sources: dict[str, str] = {}  # the spec's targets' texts, before any mutation

    def result(
        self, why: str = "", error: MutharnessError | None = None,
        facts: RunFacts | None = None,
    ) -> SpecResult:
        """What this spec has: its baseline and finished mutations, `why` it stopped early,
        the `error` that leaves it without any verdict."""
        baseline = self.baseline
        total = len(self.mutations)
        stopped = stopped_after(why, len(self.done), total) if why else ""
        return SpecResult(
            self.spec, baseline.facts if baseline else facts,
            baseline.timeout_s if baseline else 0.0, tuple(self.done),
            error.message() if error else "",
            self.depends_on, self.source_commit, stopped, self.session.tools_of(self.spec),
            self.pin, self.pin_depends_on, absent=self.absent, sources=self.sources,
            error_kind=error.kind if error else "",
            recorded=self.recorded,
        )

    def partial(self, why: str) -> SpecResult | None:
        """What a stopped spec had finished (None before it had a green baseline); a partial
        result is no verdict: its `error` says how far it got."""
        if self.baseline is None:
            return None
        result = self.result(why)
        return replace(result, error=result.stopped)

    def dependencies(self, facts: RunFacts | None) -> tuple[dict[str, str], dict[str, str]]:
        """Digests of the files the verdicts depend on, and of those the baseline's count
        depends on: the spec, its tests, what configures their run (every conftest.py or
        package.json on the way to them, the config file the runner read, node preloads, the
        project config, the platform skip policy); the verdicts also on the targets and on
        every file of the checkout the baseline imported (what `--since` reads back)."""
        workspace, plan = self.lab.workspace, self.session.plan
        kind = runner_kind(self.spec.runner)
        counted: dict[str, str] = {}

        def add(relative: str, into: dict[str, str]) -> None:
            file = workspace.path(relative)
            if file.is_symlink() or not file.is_file():  # never read through a link
                return
            into[relative] = file_digest(file.read_bytes())

        if not Path(self.spec.path).is_absolute():
            counted[self.spec.path] = self.spec.digest
        for entry in self.spec.tests:
            path = workspace.path(kind.entry_path(entry))
            files = sorted(path.rglob("*")) if path.is_dir() else [path]
            for file in files:
                if "__pycache__" not in file.parts:
                    add(file.relative_to(workspace.root).as_posix(), counted)
        inputs = [
            *kind.config_inputs(self.spec.tests, plan.tracked),
            *(facts.extension.inputs() if facts is not None else ()),
            *project_inputs(plan.options, self.spec.runner),
            *((plan.skip_rules.policy.path,) if plan.skip_rules.policy.path else ()),
        ]
        for relative in inputs:
            if relative in plan.tracked or relative in plan.included:
                add(relative, counted)
        verdicts = dict(counted)
        for mutation in self.spec.mutations:
            add(mutation.file, verdicts)
        if facts is not None:  # what the tests imported: a helper a target imports, say
            for relative in self.lab.runner_for(self.spec).imported(facts, workspace.root):
                if relative in plan.tracked or relative in plan.included:
                    add(relative, verdicts)
        candidates = (*kind.config_candidates(self.spec.tests, plan.tracked), CONFIG_FILE,
                      *((plan.skip_rules.policy.path or plan.options[PLATFORM_SKIPS],)))
        self.absent = tuple(sorted({
            path for path in candidates
            if path not in plan.tracked and path not in plan.included
        }))
        return verdicts, counted

    def _depend(self, facts: RunFacts | None) -> None:
        self.depends_on, self.pin_depends_on = self.dependencies(facts)
        self.recorded = (() if facts is None else
                         tuple(sorted(self.lab.runner_for(self.spec).records(facts))))
        self.source_commit = self.session.plan.source.last_commit_touching(
            path for path in self.depends_on if path in self.session.plan.tracked
        )

    def _read_sources(self) -> None:
        """The texts of the files the spec mutates, as the workspace holds them unmutated
        (a report that shows each mutant in its file needs them; never through a link)."""
        for relative in dict.fromkeys(m.file for m in self.spec.mutations):
            file = self.lab.workspace.path(relative)
            if file.is_file() and not file.is_symlink():
                self.sources[relative] = file.read_bytes().decode("utf-8", errors="replace")

    def start(self) -> SpecResult | None:
        """Measure the baseline; the spec's result when it leaves the spec without verdicts."""
        session = self.session
        self._read_sources()
        self._depend(None)
        listener = self.lab.listener
        listener.baseline_started(self.spec)
        listener.phase(Phase.BASELINE)
        options = session.plan.options
        if self._adopted():
            assert self.baseline is not None
            session.save()
            listener.baseline_finished(self.spec, self.baseline.facts, self.baseline.timeout_s)
            return None
        try:
            self.baseline = measure(
                self.spec, self.lab, options[BASELINE_RUNS], options[BASELINE_TIMEOUT],
                self._isolation, options.mutation_timeout, session.plan.skip_rules,
            )
        except SpecStopped as stopped:
            self._depend(stopped.facts)
            self.pin = stopped.pin_of(self.spec)
            error = self._logged(stopped)
            listener.spec_failed(self.spec, error)
            return self.result(error=error, facts=stopped.facts)
        self._depend(self.baseline.facts)
        self.pin = self.baseline.pin
        session.save()  # the results show the baseline (a -j parent shows it from there)
        listener.baseline_finished(self.spec, self.baseline.facts, self.baseline.timeout_s)
        self.baseline.prove(self.spec, self.lab, options[BASELINE_TIMEOUT])  # its note after
        return None

    def _adopted(self) -> bool:
        """Whether this spec's baseline is another `-j` worker's, which holds the spec too:
        once that worker has measured it, this workspace's runner proves it here
        (`scenario.adopt`). The count is judged again and the timeout checked against the
        facts proven; the skips it approved and the files its verdicts depend on come with
        it (facts of the same commit's bytes). False: measure one here."""
        session = self.session
        sibling = session.order.measured_by(self.spec.id)
        if sibling is None:
            return False
        options = session.plan.options
        parts: list[SpecResult] = []
        # as long as its baseline runs may take, and a minute: then this worker measures
        patience_s = options[BASELINE_TIMEOUT] * options[BASELINE_RUNS] + 60.0

        def measured() -> RunFacts | None:
            part = sibling.baseline(self.spec, session.plan.source.head, patience_s)
            if part is None or part.pin is None:
                return None
            parts.append(part)
            return part.baseline

        facts = adopt(Scenario.adoption(self.spec, options[BASELINE_TIMEOUT]), self.lab, measured)
        if facts is None or not parts:
            return False
        part, measured_pin = parts[0], parts[0].pin
        assert measured_pin is not None
        pin = Pin(self.spec.path, self.spec.expect_baseline_pass, facts.passed,
                  measured_pin.approved, measured_pin.unlisted)
        # the timeout its sibling uses (its unrounded duration), when the facts proven give it
        if baseline_problem(facts, self.spec.expect_baseline_pass, len(pin.approved)) or (
                abs(options.mutation_timeout(facts.duration_s) - part.timeout_s) > 0.1 + 1e-9):
            return False
        self.baseline = Baseline(facts, part.timeout_s, pin, facts)
        self.pin = pin
        self.depends_on, self.pin_depends_on = dict(part.depends_on), dict(part.pin_depends_on)
        self.source_commit, self.absent = part.source_commit, part.absent
        self.recorded = part.recorded or ()
        return True

    def _logged(self, stopped: SpecStopped) -> MutharnessError:
        """The error that stopped the baseline, naming the kept log of the run it is about."""
        error, facts, logs = stopped.error, stopped.facts, self.lab.logs
        if not isinstance(error, BaselineError) or facts is None or logs is None or (
                not logs.holds(facts.log_path)):
            return error
        return BaselineError(error.spec_id, error.reason, error.tests, error.label,
                             log=shown(Path(facts.log_path)))

    def step(self, mutation: Mutation) -> MutationResult:
        """Run one mutation against the measured baseline; the results file shows it."""
        assert self.baseline is not None
        self.lab.listener.mutation_started(self.spec, mutation)
        result = self._mutate(mutation, self.baseline)
        self.done.append(result)
        self.session.save()
        self.lab.listener.mutation_finished(self.spec, result)
        return result

    def _isolation(self, facts: RunFacts) -> MutharnessError | None:
        workspace, plan = self.lab.workspace, self.session.plan
        files = SpecFiles(
            self.spec.id, tuple(m.file for m in self.spec.mutations), plan.source.root,
            workspace.root.resolve(), plan.tracked,
        )
        return self.lab.runner_for(self.spec).isolation_problem(facts, files)

    def _first_failure(self, mutation: Mutation, baseline: Baseline) -> bool:
        """Whether this mutant's run stops at its first failing test: asked for, the runner
        can for these tests, and the mutation names no killing tests (those need every
        test's outcome). The tests keep their order: a test run ahead of the tests it
        depends on could fail for that alone, a kill the mutant did not make."""
        return (self.session.plan.options[FIRST_FAILURE] and not mutation.killed_by
                and self.lab.runner_for(self.spec).stops_at_first_failure(self.spec.tests,
                                                                           baseline.facts))

    def _skips_again(self, scenario: Scenario, found: Classification,
                     facts: RunFacts) -> Classification:
        """A survivor whose tests skipped instead of running, run once more: the same tests
        must skip for the same reasons, or the skips depend on the run and prove nothing."""
        again = run_scenario(scenario.again(), self.lab)
        first = skip_reasons(facts, found.skipped_instead)
        if again.drift or skip_reasons(again.facts, found.skipped_instead) != first or (
                set(again.facts.inert) != set(facts.inert)):
            return Classification(
                Verdict.UNTRUSTWORTHY, "the tests it skips instead of running did not skip "
                f"the same way in a second run of it: {found.reason}")
        return found

    def _mutate(self, mutation: Mutation, baseline: Baseline) -> MutationResult:
        first_failure = self._first_failure(mutation, baseline)
        scenario = Scenario.mutant(self.spec, mutation, baseline.timeout_s, first_failure)
        ran = run_scenario(scenario, self.lab)
        classification = classify(ran.facts, baseline.facts, ran.drift, first_failure)
        if ran.facts.took_a_fast_route and not classification.verdict.is_evidence:
            # a concurrent run gives a verdict by a whole run of the tests that failed
            # one or passed them all; a timeout, a crash or a partial run is judged again as
            # the baseline ran
            scenario = scenario.confirmed()
            ran = run_scenario(scenario, self.lab)
            classification = classify(ran.facts, baseline.facts, ran.drift, first_failure)
        assert ran.applied is not None and ran.target is not None
        facts = ran.facts
        if classification.skipped_instead:  # a survivor by skips: the same skips once more
            classification = self._skips_again(scenario, classification, facts)
        return MutationResult(
            mutation=mutation,
            line=ran.applied.splice.line,
            end_line=ran.applied.splice.end_line,
            crlf=ran.applied.splice.crlf,
            diff=ran.applied.diff,
            facts=facts,
            verdict=classification.verdict,
            reason=classification.reason,
            as_expected=meets_expectation(
                classification.verdict, mutation.expect_caught, facts.failing_ids,
                mutation.killed_by,
            ),
            loaded=self.lab.runner_for(self.spec).loaded(facts, ran.target),
            removed=ran.removed,
            first_failure=first_failure,
            location=ran.applied.splice.location,
        )


class Session:
    """One verify after the lock is taken: its state, and the results file it keeps current."""

    def __init__(self, plan: Plan, order: Order | None = None) -> None:
        self.plan = plan
        self.order: Order = order if order is not None else Whole()  # the caller's choice
        self.tools = {**tool_versions(), "git": plan.git_version}  # read once, not per save
        self.finished: list[SpecResult] = []
        self.current: _SpecRun | None = None
        self.runners: Runners | None = None
        self.notes: Notes | None = None
        self.doing = "starting"

    def tools_of(self, spec: Spec) -> tuple[tuple[str, str], ...]:
        """The versions of the tools that ran `spec`'s tests, as its evidence shows them."""
        versions = self.runners.versions if self.runners is not None else {}
        return runner_kind(spec.runner).describe(versions)

    def settings(self) -> dict[str, Any]:
        """The effective options as the results record them, and the re-derive flags."""
        options = self.plan.options
        return {**options.recorded(), "changed": options.changed(),
                "rederive_flags": options.flags()}

    def result(
        self, complete: bool, interrupted: int | None = None,
        error: MutharnessError | None = None,
    ) -> RunResult:
        """The run so far, with what the spec still running (or stopped) has finished."""
        specs = list(self.finished)
        if self.current is not None:
            why = (
                "interrupted" if interrupted is not None
                else "stopped by an error" if error is not None or complete
                else "still running"
            )
            partial = self.current.partial(why)
            if partial is not None:
                specs.append(partial)
        plan = self.plan
        versions = self.runners.versions if self.runners is not None else {}
        return RunResult(
            tool={**self.tools, **versions},
            commit=plan.source.head, dirty=bool(plan.changes), dirty_changes=plan.changes,
            command=plan.command, specs=tuple(specs), interrupted=interrupted,
            settings=self.settings(),
            results_path=str(plan.json_path),
            complete=complete and interrupted is None and error is None,
            error=error, shard=self.order.shard,
            notes=tuple(self.notes.told) if self.notes is not None else (),
        )

    def save(self) -> None:
        """Rewrite the results file (atomically) with what has finished so far."""
        write_results(self.result(complete=False), self.plan.json_path)

    def _finish(self, result: SpecResult) -> None:
        self.current = None
        self.finished.append(result)
        self.save()

    def _specs(self, lab: Lab) -> None:
        """The order's mutations, a spec at a time: its baseline first (a spec whose baseline
        leaves it without verdicts runs none of them), then each mutation; a batch of the
        spec already running (a fed one) joins it. `--fail-fast` stops at the first spec
        with an error or an unexpected result."""
        failed: set[str] = set()
        for spec, mutations in self.order.batches(self.plan.specs):
            if self.current is not None and self.current.spec is not spec:
                self._finish(self.current.result())
            if spec.id in failed:  # its baseline left it without verdicts: the error says so
                continue
            if self.current is None:
                self.doing = f"running spec {spec.id}"
                self.current = _SpecRun(spec, self, lab, () if self.order.fed else mutations)
                refused = self.current.start()
                if refused is not None:
                    failed.add(spec.id)
                    self._finish(refused)
                    if self.plan.fail_fast:
                        return
                    continue
            if self.order.fed:
                self.current.mutations += mutations
            for mutation in mutations:
                if not self.current.step(mutation).as_expected and self.plan.fail_fast:
                    self._finish(self.current.result(FAIL_FAST))
                    return
        if self.current is not None:
            self._finish(self.current.result())

    def logs(self) -> RunLogs:
        """Where this run keeps its scenarios' logs; a run of its own (neither a -j worker
        nor a TIMEOUT's re-run alone) first clears what its specs' earlier runs kept there."""
        plan, order = self.plan, self.order
        logs = RunLogs(plan.source.run_dir, replace=not order.fed)
        if order.own_run:
            for spec, mutations in order.planned(plan.specs):
                logs.clear(spec.id, None if order.shard is None
                           else [mutation.number for mutation in mutations])
        return logs

    def execute(self, listener: Listener, environ: Mapping[str, str], temp_dir: Path) -> RunResult:
        """Build the workspace, run every spec, remove the workspace; the results, always."""
        plan = self.plan
        ending = Ending()
        with recorded(ending, lambda: self.doing):
            self.doing = "writing the results file"
            if self.order.own_run:
                keep_previous(plan.json_path)  # the last complete results outlive this run
            self.save()  # from now on the file is this run's, never an earlier one's
            self.doing = "clearing the logs of the specs' earlier runs"
            logs = self.logs()
            listener.head(plan.source, plan.changes)
            if self.order.shard is not None:
                listener.sharded(self.order.shard)
            listener.planned({spec.id: len(mutations)
                              for spec, mutations in self.order.planned(plan.specs)})
            self.doing = "building the workspace and probing the runners' tools"
            with opened(plan.source, plan.included, plan.options, plan.specs, listener,
                        environ, temp_dir, logs) as bench:
                self.runners, self.notes = bench.runners, bench.notes
                for text in found_notes(plan.options):
                    self.notes(text)
                self._specs(bench.lab)
        run = replace(self.result(complete=True, interrupted=ending.interrupted,
                                  error=ending.error), logs_path=str(plan.source.run_dir / RUNS))
        write_results(run, plan.json_path)
        return run
