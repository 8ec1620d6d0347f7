"""The verify pipeline: specs -> anchors -> workspace -> baseline -> mutations -> results."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Protocol

from mutharness.anchors import Splice, locate, unified_diff
from mutharness.check import Committed, check_specs, tracked_with
from mutharness.digest import file_digest
from mutharness.environment import tool_versions
from mutharness.errors import (
    BaselineError,
    DirtyTreeError,
    ForcedExit,
    InstalledCopyError,
    Interrupted,
    MutharnessError,
    OSProblem,
    ShadowedImportError,
    WorkspaceError,
)
from mutharness.imports import copies, loaded_file, shadowed
from mutharness.lock import repository_lock
from mutharness.project import ProjectConfig, read_project_config
from mutharness.report import MutationResult, RunResult, SpecResult, write_results
from mutharness.runner import Isolation, PytestRunner, RunFacts, Runner, probe_interpreter
from mutharness.signals import deferred
from mutharness.spec import Mutation, Spec, display_name, load_specs
from mutharness.sweep import sweep_stale_workspaces
from mutharness.verdict import classify, meets_expectation, run_problem
from mutharness.workspace import (
    SourceRepo,
    Workspace,
    configure_git,
    enclosing_worktrees,
    open_source,
    status_paths,
    temp_directory,
)


@dataclass(frozen=True)
class Settings:
    """Everything one verify run needs to know, decided before it starts."""

    spec_paths: tuple[Path, ...]
    start: Path
    python: str
    allow_dirty: bool = False
    fail_fast: bool = False
    json_path: Path | None = None
    lock_timeout_s: float = 60.0
    timeout_floor_s: float = 20.0
    timeout_factor: float = 3.0
    timeout_constant_s: float = 10.0
    baseline_timeout_s: float = 900.0
    baseline_runs: int = 1  # >1 detects flaky tests: any test whose outcome varies aborts
    command: tuple[str, ...] = ()

    def mutation_timeout(self, baseline_s: float) -> float:
        """max(floor, factor x baseline + constant), to a tenth of a second."""
        scaled = self.timeout_factor * baseline_s + self.timeout_constant_s
        limit = max(self.timeout_floor_s, scaled)
        return float(round(limit, 1))


class Phase(StrEnum):
    """Where a run is, announced at each transition (interrupt tests gate their signals on it)."""

    MATERIALISING = "materialising"  # building the workspace (git commands)
    BASELINE = "baseline"  # the baseline's tests run (the collect-only probe first)
    MUTANT_APPLIED = "mutant-applied"  # a mutant is in the workspace; its tests run
    RESTORING = "restoring"  # writing the original bytes back (signals held meanwhile)
    RESTORED = "restored"
    REMOVING = "removing"  # deleting the workspace


class Listener(Protocol):
    """Receives progress as it happens (the console implements it)."""

    def phase(self, phase: Phase) -> None: ...
    def head(self, source: SourceRepo, changes: Sequence[str]) -> None: ...
    def baseline_started(self, spec: Spec) -> None: ...
    def baseline_finished(self, spec: Spec, facts: RunFacts) -> None: ...
    def mutation_finished(self, spec: Spec, result: MutationResult) -> None: ...
    def spec_failed(self, spec: Spec, error: MutharnessError) -> None: ...


def baseline_problem(spec: Spec, facts: RunFacts) -> str | None:
    """Why a baseline is not green, complete and at the spec's count (None when it is).

    Skips and xfails are accepted (they must stay the same in every run, see verdict);
    `expectBaselinePass` counts passes only."""
    counts = f"pass={facts.passed} fail={facts.failed} tests={len(facts.outcomes)}"
    if facts.timed_out:
        return f"timed out after {facts.timeout_s:g} s"
    if (problem := run_problem(facts)) is not None and not facts.failed:
        return f"no trustworthy run: {problem} ({counts})"
    if facts.failed:
        said = facts.said()
        return f"not green: {facts.failed} test(s) failed ({counts})" + (
            f"; pytest said: {said}" if problem is not None and said else ""
        )
    if facts.passed != spec.expect_baseline_pass:
        return (
            f"baseline pass={facts.passed} but the spec expects {spec.expect_baseline_pass}; "
            "either the suite changed or the spec is stale"
        )
    return None


def unstable_tests(runs: Sequence[RunFacts]) -> tuple[str, ...]:
    """Tests whose outcome was not the same in every baseline run (or that some runs lacked)."""
    seen: dict[str, set[str]] = {}
    present: dict[str, int] = {}
    for run in runs:
        for outcome in run.outcomes:
            seen.setdefault(outcome.nodeid, set()).add(outcome.outcome)
        for nodeid in set(run.nodeids):
            present[nodeid] = present.get(nodeid, 0) + 1
    return tuple(
        nodeid for nodeid, kinds in seen.items() if len(kinds) > 1 or present[nodeid] != len(runs)
    )


@dataclass(frozen=True)
class _Context:
    """What every spec of one verify shares."""

    settings: Settings
    runner: Runner
    workspace: Workspace
    source: SourceRepo
    tracked: frozenset[str]
    listener: Listener
    saved: Callable[[], None]  # rewrites the results file with what has finished


def import_problem(spec: Spec, facts: RunFacts, context: _Context) -> MutharnessError | None:
    """Why a run's imports make its mutants' verdicts meaningless (None when they do not)."""
    record = facts.imports
    workspace_root = context.workspace.root.resolve()
    shadow = shadowed(record, context.source.root, workspace_root, context.tracked)
    if shadow is not None:
        via = (
            "a .pth file run while Python started, before mutharness's start-up hook"
            if shadow.loaded.early else
            "a load by file path (importlib.util.spec_from_file_location, runpy, exec)"
        )
        return ShadowedImportError(
            spec.id, shadow.loaded.module, shadow.loaded.file, via, shadow.where
        )
    targets = [mutation.file for mutation in spec.mutations]
    found = next(iter(copies(record, workspace_root, targets, context.tracked)), None)
    if found is None:
        return None
    return InstalledCopyError(
        spec.id, found.target, found.loaded.module, found.loaded.file, found.where
    )


class _Drift(Exception):
    """A run without any mutant changed what the workspace tracks."""

    def __init__(self, facts: RunFacts, paths: tuple[str, ...]) -> None:
        super().__init__(facts, paths)
        self.facts = facts
        self.paths = paths


class _SpecRun:
    """Runs one spec's probe, baseline and mutations in a workspace."""

    def __init__(self, spec: Spec, context: _Context) -> None:
        self.spec = spec
        self.context = context
        self._measured: tuple[RunFacts, float] | None = None  # baseline and timeout, once green
        self._done: list[MutationResult] = []
        self._depends_on: dict[str, str] = {}
        self._source_commit = ""

    def partial(self, why: str) -> SpecResult | None:
        """What this spec had finished when it was stopped (None before a green baseline)."""
        if self._measured is None:
            return None
        baseline, timeout_s = self._measured
        return SpecResult(
            self.spec, baseline, timeout_s, tuple(self._done),
            f"{why} after {len(self._done)} of {len(self.spec.mutations)} mutation(s)",
            self._depends_on, self._source_commit,
        )

    def _scratch(self, name: str) -> Path:
        return self.context.workspace.scratch(f"runs/{self.spec.id}/{name}")

    def dependencies(self) -> dict[str, str]:
        """Digests of the files the verdicts depend on: the spec, its targets, its tests."""
        workspace = self.context.workspace
        digests: dict[str, str] = {}
        if not Path(self.spec.path).is_absolute():
            digests[self.spec.path] = self.spec.digest
        for mutation in self.spec.mutations:
            digests[mutation.file] = file_digest(workspace.path(mutation.file).read_bytes())
        for entry in self.spec.tests:
            relative = entry.split("::", 1)[0].rstrip("/")
            path = workspace.path(relative)
            files = sorted(path.rglob("*")) if path.is_dir() else [path]
            for file in files:
                if file.is_symlink():  # never read through a link (it may point anywhere)
                    continue
                if file.is_file() and "__pycache__" not in file.parts:
                    key = file.relative_to(workspace.root).as_posix()
                    digests[key] = file_digest(file.read_bytes())
        return digests

    def run(self) -> SpecResult:
        self._depends_on = self.dependencies()
        self._source_commit = self.context.source.last_commit_touching(
            path for path in self._depends_on if path in self.context.tracked
        )
        result = self._run()
        return replace(result, depends_on=self._depends_on, source_commit=self._source_commit)

    def _tests(self, name: str, timeout_s: float, collect_only: bool = False) -> RunFacts:
        """One run of the spec's tests, then the workspace back to its checkout state.

        Raises _Drift when the run changed tracked files or the checkout's git state: the
        suite itself does that (no mutant is in place), so no run of it can be evidence."""
        facts = self.context.runner.run(
            self.spec.tests, self.context.workspace.root, self._scratch(name), timeout_s,
            collect_only,
        )
        settled = self.context.workspace.settle()
        if settled.drift:
            raise _Drift(facts, settled.drift)
        return facts

    def _run(self) -> SpecResult:
        try:
            return self._measure()
        except _Drift as drift:
            return self._failed(drift.facts, WorkspaceError(
                f"spec {self.spec.id}: running the tests without any mutant changed tracked "
                "files or the checkout's git state (the workspace was reset); every verdict "
                "would be meaningless", drift.paths,
            ))

    def _measure(self) -> SpecResult:
        spec, context = self.spec, self.context
        settings = context.settings
        context.listener.baseline_started(spec)
        context.listener.phase(Phase.BASELINE)
        probe = self._tests("collect", settings.baseline_timeout_s, collect_only=True)
        if (problem := run_problem(probe, collect_only=True)) is not None:
            return self._failed(probe, BaselineError(spec.id, f"collection failed: {problem}"))
        if (imports := import_problem(spec, probe, context)) is not None:
            return self._failed(probe, imports)
        runs = [
            self._tests(f"baseline-{number}", settings.baseline_timeout_s)
            for number in range(1, settings.baseline_runs + 1)
        ]
        baseline = max(runs, key=lambda run: run.duration_s)  # the slowest sets the timeout
        unstable = unstable_tests(runs)
        if unstable:
            return self._failed(baseline, BaselineError(
                spec.id,
                f"unstable: {len(unstable)} test(s) did not have the same outcome in all "
                f"{len(runs)} baseline runs; a kill by a flaky test is no evidence",
                unstable,
            ))
        problem = next(
            (found for run in runs if (found := baseline_problem(spec, run)) is not None), None
        )
        if problem is not None:
            return self._failed(baseline, BaselineError(spec.id, problem, baseline.failing_ids))
        for run in runs:
            if (imports := import_problem(spec, run, context)) is not None:
                return self._failed(baseline, imports)
        context.listener.baseline_finished(spec, baseline)
        timeout_s = settings.mutation_timeout(baseline.duration_s)
        self._measured = (baseline, timeout_s)
        for mutation in spec.mutations:
            result = self._mutate(mutation, baseline, timeout_s)
            self._done.append(result)
            context.saved()
            context.listener.mutation_finished(spec, result)
            if settings.fail_fast and not result.as_expected:
                break
        return SpecResult(spec, baseline, timeout_s, tuple(self._done))

    def _failed(self, baseline: RunFacts, error: MutharnessError) -> SpecResult:
        self.context.listener.spec_failed(self.spec, error)
        return SpecResult(self.spec, baseline, 0.0, (), error.message())

    def _mutate(self, mutation: Mutation, baseline: RunFacts, timeout_s: float) -> MutationResult:
        workspace, listener = self.context.workspace, self.context.listener
        path = workspace.path(mutation.file)
        original = path.read_bytes()
        splice = locate(original, mutation.anchor, mutation.replacement)
        if not isinstance(splice, Splice):
            raise WorkspaceError(
                f"spec {self.spec.id}, mutation {mutation.index}: {splice.describe()} in the "
                f"workspace copy of {mutation.file}"
            )
        mutated = splice.apply(original)
        mode = workspace.write_mutant(mutation.file, mutated)
        try:
            listener.phase(Phase.MUTANT_APPLIED)
            facts = self.context.runner.run(
                self.spec.tests, workspace.root, self._scratch(f"m{mutation.index}"), timeout_s,
            )
        finally:
            with deferred():  # a signal now is delivered once the original bytes are back
                listener.phase(Phase.RESTORING)
                intact = workspace.restore(mutation.file, original, mutated, mode)
            listener.phase(Phase.RESTORED)
        settled = workspace.settle()
        drift = settled.drift
        if not intact:  # restored now, but the run replaced or rewrote the mutated file
            drift = (f"{mutation.file} (replaced or rewritten during the run)", *drift)
        classification = classify(facts, baseline, drift)
        return MutationResult(
            mutation=mutation,
            line=splice.line,
            end_line=splice.end_line,
            crlf=splice.crlf,
            diff=unified_diff(original, splice, mutation.file),
            facts=facts,
            verdict=classification.verdict,
            reason=classification.reason,
            as_expected=meets_expectation(
                classification.verdict, mutation.expect_caught, facts.failing_ids,
                mutation.killed_by,
            ),
            loaded=loaded_file(facts.imports, path) if mutation.file.endswith(".py") else None,
            removed=settled.removed,
        )


class _Run:
    """One verify after the lock is taken: its state, and the results file it keeps current."""

    def __init__(
        self, settings: Settings, source: SourceRepo, specs: tuple[Spec, ...],
        tracked: frozenset[str], changes: tuple[str, ...], included: tuple[str, ...],
        json_path: Path, git_version: str,
    ) -> None:
        self.settings = settings
        self.source = source
        self.specs = specs
        self.tracked = tracked
        self.changes = changes
        self.included = included  # the uncommitted paths the workspace carries (--allow-dirty)
        self.json_path = json_path
        self.tools = {**tool_versions(), "git": git_version}  # read once, not at every save
        self.finished: list[SpecResult] = []
        self.current: _SpecRun | None = None
        self.versions: dict[str, str] = {}
        self.project = ProjectConfig()
        self.doing = "starting"

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
        settings = self.settings
        return RunResult(
            tool={**self.tools, **self.versions},
            commit=self.source.head, dirty=bool(self.changes), dirty_changes=self.changes,
            command=settings.command, specs=tuple(specs), interrupted=interrupted,
            settings={
                "timeout_floor_s": settings.timeout_floor_s,
                "timeout_factor": settings.timeout_factor,
                "timeout_constant_s": settings.timeout_constant_s,
                "baseline_runs": settings.baseline_runs,
                "project": self.project.recorded(),
            },
            results_path=str(self.json_path),
            complete=complete and interrupted is None and error is None,
            error=error,
        )

    def save(self) -> None:
        """Rewrite the results file (atomically) with what has finished so far."""
        write_results(self.result(complete=False), self.json_path)

    def execute(self, listener: Listener, environ: Mapping[str, str], temp_dir: Path) -> RunResult:
        settings, source = self.settings, self.source
        interrupted: int | None = None
        error: MutharnessError | None = None
        workspace: Workspace | None = None
        try:
            self.doing = "writing the results file"
            self.save()  # from now on the file is this run's, never an earlier one's
            listener.head(source, self.changes)
            self.doing = "building the workspace"
            listener.phase(Phase.MATERIALISING)
            workspace = Workspace.create(source, temp_dir, self.included)
            self.project = read_project_config(workspace.root)
            self.doing = "probing the interpreter"
            found = probe_interpreter(settings.python, environ, workspace.scratch("probe"))
            user_base = found.pop("user_base", None)
            self.versions = found
            runner = PytestRunner(
                settings.python, dict(environ), workspace.scratch("pycache"),
                Isolation(source.root, workspace.base, workspace.root.resolve()),
                self.project.pytest_addopts, user_base,
            )
            context = _Context(
                settings, runner, workspace, source, self.tracked, listener, self.save
            )
            for spec in self.specs:
                self.doing = f"running spec {spec.id}"
                self.current = _SpecRun(spec, context)
                result = self.current.run()
                self.current = None
                self.finished.append(result)
                self.save()
                if settings.fail_fast and (
                    result.error or any(not m.as_expected for m in result.mutations)
                ):
                    break
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
            if workspace is not None:
                listener.phase(Phase.REMOVING)
                workspace.remove()
        run = self.result(complete=True, interrupted=interrupted, error=error)
        write_results(run, self.json_path)
        return run


def verify(settings: Settings, listener: Listener, environ: Mapping[str, str]) -> RunResult:
    """Run every spec end to end and write the results file; raises before anything runs.

    After the lock is taken every failure (disk full, a git error, a closed stdout...) ends
    the run with its results written and the error in them, never a traceback."""
    start = settings.start.resolve()
    git_info = configure_git(environ.get("PATH", os.defpath), refuse=enclosing_worktrees(start))
    source = open_source(start, git_info)
    display = [display_name(path, source.root) for path in settings.spec_paths]
    specs = load_specs(settings.spec_paths, display)
    changes = source.changes()
    included = status_paths(changes) if settings.allow_dirty else ()
    modes = tracked_with(source, included)
    check_specs(specs, source, modes, Committed(source, frozenset(included)))
    if (problem := source.run_dir_problem(source.tracked())) is not None:
        raise WorkspaceError(f"{problem}; mutharness keeps its lock and results there")
    if changes and not settings.allow_dirty:
        raise DirtyTreeError(changes, source.filters)
    temp_dir = temp_directory(environ, source.root)
    run_dir = source.ensure_run_dir()
    json_path = settings.json_path or run_dir / "results.json"
    with repository_lock(run_dir, settings.lock_timeout_s):
        sweep_stale_workspaces(temp_dir)  # what runs killed outright (or forced out) left behind
        run = _Run(
            settings, source, specs, frozenset(modes), changes, included, json_path,
            git_info.version,
        )
        return run.execute(listener, environ, temp_dir)
