"""One verify after the lock: workspace, runners' lifecycle, each spec's runs, results file."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mutharness.digest import file_digest
from mutharness.environment import tool_versions
from mutharness.errors import ForcedExit, Interrupted, MutharnessError, OSProblem
from mutharness.lab.baseline import Baseline, SpecStopped, measure
from mutharness.lab.events import Listener, Phase
from mutharness.lab.scenario import Lab, Scenario, run_scenario
from mutharness.options import Options
from mutharness.results import MutationResult, RunResult, SpecResult, write_results
from mutharness.runners import RunnerSetup, runner_kind
from mutharness.runners.base import Isolation, RunFacts, Runner, SpecFiles
from mutharness.spec import Mutation, Spec
from mutharness.verdict import classify, meets_expectation
from mutharness.workspace import SourceRepo, Workspace


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


class _Runners:
    """One runner per runner name, started when a spec first needs it, all closed at the end."""

    def __init__(self, setup: RunnerSetup) -> None:
        self.setup = setup
        self.started: dict[str, Runner] = {}
        self.versions: dict[str, str] = {}

    def __call__(self, spec: Spec) -> Runner:
        runner = self.started.get(spec.runner)
        if runner is None:
            runner = runner_kind(spec.runner).create(self.setup)
            self.started[spec.runner] = runner  # closed even if start fails
            self.versions |= runner.start()
        return runner

    def start(self, specs: tuple[Spec, ...]) -> None:
        """Start every runner the specs need, before any spec runs (a missing tool is one
        error up front, not one after some specs have run)."""
        for spec in specs:
            self(spec)

    def close(self) -> None:
        for runner in self.started.values():
            runner.close()


class _SpecRun:
    """One spec's baseline and mutations; what it has finished, if it is stopped."""

    def __init__(self, spec: Spec, session: Session, lab: Lab) -> None:
        self.spec = spec
        self.session = session
        self.lab = lab
        self.baseline: Baseline | None = None
        self.done: list[MutationResult] = []
        self.depends_on: dict[str, str] = {}
        self.source_commit = ""

    def result(
        self, why: str = "", error: str = "", facts: RunFacts | None = None
    ) -> SpecResult:
        """What this spec has: its baseline and finished mutations, `why` it stopped early,
        the `error` that leaves it without any verdict."""
        baseline = self.baseline
        total = len(self.spec.mutations)
        stopped = f"{why} after {len(self.done)} of {total} mutation(s)" if why else ""
        return SpecResult(
            self.spec, baseline.facts if baseline else facts,
            baseline.timeout_s if baseline else 0.0, tuple(self.done), error,
            self.depends_on, self.source_commit, stopped, self.session.tools_of(self.spec),
        )

    def partial(self, why: str) -> SpecResult | None:
        """What a stopped spec had finished (None before it had a green baseline); a partial
        result is no verdict: its `error` says how far it got."""
        if self.baseline is None:
            return None
        result = self.result(why)
        return replace(result, error=result.stopped)

    def dependencies(self) -> dict[str, str]:
        """Digests of the files the verdicts depend on: the spec, its targets, its tests."""
        workspace = self.lab.workspace
        kind = runner_kind(self.spec.runner)
        digests: dict[str, str] = {}
        if not Path(self.spec.path).is_absolute():
            digests[self.spec.path] = self.spec.digest
        for mutation in self.spec.mutations:
            digests[mutation.file] = file_digest(workspace.path(mutation.file).read_bytes())
        for entry in self.spec.tests:
            path = workspace.path(kind.entry_path(entry))
            files = sorted(path.rglob("*")) if path.is_dir() else [path]
            for file in files:
                if file.is_symlink():  # never read through a link (it may point anywhere)
                    continue
                if file.is_file() and "__pycache__" not in file.parts:
                    key = file.relative_to(workspace.root).as_posix()
                    digests[key] = file_digest(file.read_bytes())
        return digests

    def run(self) -> SpecResult:
        session = self.session
        self.depends_on = self.dependencies()
        self.source_commit = session.plan.source.last_commit_touching(
            path for path in self.depends_on if path in session.plan.tracked
        )
        listener = self.lab.listener
        listener.baseline_started(self.spec)
        listener.phase(Phase.BASELINE)
        options = session.plan.options
        try:
            self.baseline = measure(
                self.spec, self.lab, options["baseline-runs"], options["baseline-timeout"],
                self._isolation, options.mutation_timeout,
            )
        except SpecStopped as stopped:
            listener.spec_failed(self.spec, stopped.error)
            return self.result(error=stopped.error.message(), facts=stopped.facts)
        listener.baseline_finished(self.spec, self.baseline.facts)
        for mutation in self.spec.mutations:
            result = self._mutate(mutation, self.baseline)
            self.done.append(result)
            session.save()
            listener.mutation_finished(self.spec, result)
            if session.plan.fail_fast and not result.as_expected:
                return self.result("stopped at the first unexpected result (--fail-fast)")
        return self.result()

    def _isolation(self, facts: RunFacts) -> MutharnessError | None:
        workspace, plan = self.lab.workspace, self.session.plan
        files = SpecFiles(
            self.spec.id, tuple(m.file for m in self.spec.mutations), plan.source.root,
            workspace.root.resolve(), plan.tracked,
        )
        return self.lab.runner_for(self.spec).isolation_problem(facts, files)

    def _mutate(self, mutation: Mutation, baseline: Baseline) -> MutationResult:
        ran = run_scenario(Scenario.mutant(self.spec, mutation, baseline.timeout_s), self.lab)
        assert ran.applied is not None and ran.target is not None
        facts = ran.facts
        classification = classify(facts, baseline.facts, ran.drift)
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
        )


class Session:
    """One verify after the lock is taken: its state, and the results file it keeps current."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.tools = {**tool_versions(), "git": plan.git_version}  # read once, not per save
        self.finished: list[SpecResult] = []
        self.current: _SpecRun | None = None
        self.runners: _Runners | None = None
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
            error=error,
        )

    def save(self) -> None:
        """Rewrite the results file (atomically) with what has finished so far."""
        write_results(self.result(complete=False), self.plan.json_path)

    def _specs(self, lab: Lab) -> None:
        for spec in self.plan.specs:
            self.doing = f"running spec {spec.id}"
            self.current = _SpecRun(spec, self, lab)
            result = self.current.run()
            self.current = None
            self.finished.append(result)
            self.save()
            if self.plan.fail_fast and (
                result.error or any(not m.as_expected for m in result.mutations)
            ):
                break

    def execute(self, listener: Listener, environ: Mapping[str, str], temp_dir: Path) -> RunResult:
        """Build the workspace, run every spec, remove the workspace; the results, always."""
        plan = self.plan
        interrupted: int | None = None
        error: MutharnessError | None = None
        workspace: Workspace | None = None
        try:
            self.doing = "writing the results file"
            self.save()  # from now on the file is this run's, never an earlier one's
            listener.head(plan.source, plan.changes)
            self.doing = "building the workspace"
            listener.phase(Phase.MATERIALISING)
            workspace = Workspace.create(plan.source, temp_dir, plan.included)
            isolation = Isolation(plan.source.root, workspace.base, workspace.root.resolve())
            self.runners = _Runners(RunnerSetup(
                plan.options, dict(environ), isolation, workspace.scratch,
            ))
            self.doing = "probing the runners' tools"
            self.runners.start(plan.specs)
            self._specs(Lab(self.runners, workspace, listener))
        except KeyboardInterrupt:
            interrupted = 2
        except Interrupted as signal_error:
            interrupted = signal_error.signal_number
        except ForcedExit:
            workspace = None  # exit at once: the next run's sweep removes it
            raise
        except MutharnessError as failure:
            error = failure
        except OSError as failure:
            error = OSProblem.from_error(failure, self.doing)
        finally:
            if self.runners is not None:
                self.runners.close()
            if workspace is not None:
                listener.phase(Phase.REMOVING)
                workspace.remove()
        run = self.result(complete=True, interrupted=interrupted, error=error)
        write_results(run, plan.json_path)
        return run
