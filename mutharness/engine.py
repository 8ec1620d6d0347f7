"""The verify pipeline: specs -> anchors -> workspace -> baseline -> mutations -> results."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Protocol

from mutharness.anchors import Splice, locate, unified_diff
from mutharness.check import check_specs, tracked_with
from mutharness.digest import file_digest
from mutharness.environment import tool_versions
from mutharness.errors import (
    BaselineError,
    DirtyTreeError,
    ForcedExit,
    Interrupted,
    MutharnessError,
    ShadowedImportError,
    WorkspaceError,
)
from mutharness.lock import repository_lock
from mutharness.report import MutationResult, RunResult, SpecResult, write_results
from mutharness.runner import PytestRunner, ReportState, RunFacts, Runner, probe_interpreter
from mutharness.signals import deferred
from mutharness.spec import Mutation, Spec, display_name, load_specs
from mutharness.sweep import sweep_stale_workspaces
from mutharness.verdict import classify, meets_expectation
from mutharness.workspace import (
    SourceRepo,
    Workspace,
    configure_git,
    enclosing_worktrees,
    open_source,
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
    BASELINE = "baseline"  # the baseline's tests run
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
    """Why a baseline is not green, complete and at the spec's count (None when it is)."""
    counts = f"pass={facts.passed} fail={facts.failed} tests={len(facts.outcomes)}"
    said = f"; pytest said: {words}" if (words := facts.said()) else ""
    if facts.timed_out:
        return f"timed out after {facts.timeout_s:g} s"
    if facts.signal is not None:
        return f"pytest was killed by signal {facts.signal}"
    if facts.report is not ReportState.OK:
        return (
            f"no trustworthy report ({facts.report.value}, exit status {facts.exit_status})"
            f"{said}"
        )
    if facts.collection_errors:
        return f"collection errors in {', '.join(facts.collection_errors)} ({counts}){said}"
    if facts.exit_status != 0 or facts.failed:
        extra = said if facts.exit_status not in (0, 1) else ""
        return f"not green: pytest exit status {facts.exit_status} ({counts}){extra}"
    others = len(facts.outcomes) - facts.passed
    if others:
        return f"not complete: {others} test(s) skipped or xfailed ({counts})"
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


def shadowing(
    spec: Spec, facts: RunFacts, source: SourceRepo, workspace: Workspace, tracked: set[str]
) -> ShadowedImportError | None:
    """An import of a tracked file from the user's tree instead of the workspace, if any."""
    root = source.root
    for module, filename in sorted(facts.imported.items()):
        try:
            resolved = Path(filename).resolve()
            relative = resolved.relative_to(root).as_posix()
        except (ValueError, OSError):
            continue
        if resolved.is_relative_to(workspace.base.resolve()) or relative not in tracked:
            continue
        entries = [
            entry for entry in facts.sys_path
            if entry and resolved.is_relative_to(Path(entry).resolve())
        ]
        via = (
            f"the sys.path entry {max(entries, key=len)}" if entries
            else "an import hook (an editable install's finder)"
        )
        return ShadowedImportError(spec.id, module, str(resolved), via)
    return None


class _SpecRun:
    """Runs one spec's baseline and mutations in a workspace."""

    def __init__(
        self, spec: Spec, settings: Settings, runner: Runner, workspace: Workspace,
        source: SourceRepo, listener: Listener,
    ) -> None:
        self.spec = spec
        self.settings = settings
        self.runner = runner
        self.workspace = workspace
        self.source = source
        self.listener = listener
        self._measured: tuple[RunFacts, float] | None = None  # baseline and timeout, once green
        self._done: list[MutationResult] = []

    def interrupted(self) -> SpecResult | None:
        """What this spec had finished when a signal stopped it (None before a green baseline)."""
        if self._measured is None:
            return None
        baseline, timeout_s = self._measured
        return SpecResult(
            self.spec, baseline, timeout_s, tuple(self._done),
            f"interrupted after {len(self._done)} of {len(self.spec.mutations)} mutation(s)",
        )

    def _scratch(self, name: str) -> Path:
        return self.workspace.scratch(f"runs/{self.spec.id}/{name}")

    def dependencies(self) -> dict[str, str]:
        """Digests of the files the verdicts depend on: the spec, its targets, its tests."""
        digests: dict[str, str] = {}
        if not Path(self.spec.path).is_absolute():
            digests[self.spec.path] = self.spec.digest
        for mutation in self.spec.mutations:
            digests[mutation.file] = file_digest(self.workspace.path(mutation.file).read_bytes())
        for entry in self.spec.tests:
            relative = entry.split("::", 1)[0].rstrip("/")
            path = self.workspace.path(relative)
            files = sorted(path.rglob("*")) if path.is_dir() else [path]
            for file in files:
                if file.is_symlink():  # never read through a link (it may point anywhere)
                    continue
                if file.is_file() and "__pycache__" not in file.parts:
                    key = file.relative_to(self.workspace.root).as_posix()
                    digests[key] = file_digest(file.read_bytes())
        return digests

    def run(self, tracked: set[str]) -> SpecResult:
        depends_on = self.dependencies()
        source_commit = self.source.last_commit_touching(
            path for path in depends_on if path in tracked
        )
        result = self._run(tracked)
        return replace(result, depends_on=depends_on, source_commit=source_commit)

    def _run(self, tracked: set[str]) -> SpecResult:
        spec = self.spec
        self.listener.baseline_started(spec)
        self.listener.phase(Phase.BASELINE)
        self.workspace.capture_reference()
        runs = [
            self.runner.run(
                spec.tests, self.workspace.root, self._scratch(f"baseline-{number}"),
                self.settings.baseline_timeout_s,
            )
            for number in range(1, self.settings.baseline_runs + 1)
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
        if problem is None:
            shadow = shadowing(spec, baseline, self.source, self.workspace, tracked)
            if shadow is not None:
                return self._failed(baseline, shadow)
        else:
            return self._failed(baseline, BaselineError(spec.id, problem, baseline.failing_ids))
        drift = self.workspace.drift()
        altered = tuple(path for path in drift if path in tracked)
        if altered:
            return self._failed(baseline, WorkspaceError(
                f"spec {spec.id}: the baseline run changed tracked files", altered
            ))
        if drift:  # only additions (a plugin's cache dir...): the post-baseline state is the
            self.workspace.capture_reference()  # reference every restore returns to
        self.listener.baseline_finished(spec, baseline)
        timeout_s = self.settings.mutation_timeout(baseline.duration_s)
        results = self._done
        self._measured = (baseline, timeout_s)
        for mutation in spec.mutations:
            result = self._mutate(mutation, baseline, timeout_s)
            results.append(result)
            self.listener.mutation_finished(spec, result)
            if self.settings.fail_fast and not result.as_expected:
                break
        return SpecResult(spec, baseline, timeout_s, tuple(results))

    def _failed(self, baseline: RunFacts, error: MutharnessError) -> SpecResult:
        self.listener.spec_failed(self.spec, error)
        return SpecResult(self.spec, baseline, 0.0, (), error.message())

    def _mutate(self, mutation: Mutation, baseline: RunFacts, timeout_s: float) -> MutationResult:
        path = self.workspace.path(mutation.file)
        original = path.read_bytes()
        splice = locate(original, mutation.anchor, mutation.replacement)
        if not isinstance(splice, Splice):
            raise WorkspaceError(
                f"spec {self.spec.id}, mutation {mutation.index}: {splice.describe()} in the "
                f"workspace copy of {mutation.file}"
            )
        mutated = splice.apply(original)
        try:
            path.write_bytes(mutated)
            self.listener.phase(Phase.MUTANT_APPLIED)
            facts = self.runner.run(
                self.spec.tests, self.workspace.root, self._scratch(f"m{mutation.index}"),
                timeout_s,
            )
        finally:
            with deferred():  # a signal now is delivered once the original bytes are back
                self.listener.phase(Phase.RESTORING)
                intact = self.workspace.restore(mutation.file, original, mutated)
            self.listener.phase(Phase.RESTORED)
        drift = self.workspace.drift()
        if drift:
            self.workspace.reset()
        if not intact:  # restored now, but the run replaced or rewrote the mutated file
            drift = (f"{mutation.file} (replaced or rewritten during the run)", *drift)
        classification = classify(facts, baseline.nodeids, drift)
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
        )


def verify(settings: Settings, listener: Listener, environ: Mapping[str, str]) -> RunResult:
    """Run every spec end to end and write the results file; raises before anything runs."""
    start = settings.start.resolve()
    git_info = configure_git(environ.get("PATH", os.defpath), refuse=enclosing_worktrees(start))
    source = open_source(start, git_info)
    display = [display_name(path, source.root) for path in settings.spec_paths]
    specs = load_specs(settings.spec_paths, display)
    changes = source.changes()
    included = tuple(entry[3:] for entry in changes) if settings.allow_dirty else ()
    modes = tracked_with(source, included)
    check_specs(specs, source, modes)
    if changes and not settings.allow_dirty:
        raise DirtyTreeError(changes)
    tracked = set(modes)
    run_dir = source.ensure_run_dir()
    json_path = settings.json_path or run_dir / "results.json"
    with repository_lock(run_dir, settings.lock_timeout_s):
        sweep_stale_workspaces()  # what runs killed outright (or forced out) left behind
        listener.head(source, changes)
        interrupted: int | None = None
        spec_results: list[SpecResult] = []
        versions: dict[str, str] = {}
        workspace: Workspace | None = None
        current: _SpecRun | None = None
        try:
            listener.phase(Phase.MATERIALISING)
            workspace = Workspace.create(source, included)
            versions = probe_interpreter(settings.python, environ, workspace.scratch("probe"))
            runner = PytestRunner(
                settings.python, dict(environ), workspace.scratch("pycache")
            )
            for spec in specs:
                current = _SpecRun(spec, settings, runner, workspace, source, listener)
                result = current.run(tracked)
                current = None
                spec_results.append(result)
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
        finally:
            if workspace is not None:
                listener.phase(Phase.REMOVING)
                workspace.remove()
        if interrupted is not None and current is not None:
            partial = current.interrupted()
            if partial is not None:
                spec_results.append(partial)
        tool = {**tool_versions(), **versions, "git": git_info.version}
        run = RunResult(
            tool=tool, commit=source.head, dirty=bool(changes), dirty_changes=changes,
            command=settings.command, specs=tuple(spec_results), interrupted=interrupted,
            settings={
                "timeout_floor_s": settings.timeout_floor_s,
                "timeout_factor": settings.timeout_factor,
                "timeout_constant_s": settings.timeout_constant_s,
                "baseline_runs": settings.baseline_runs,
            },
            results_path=str(json_path),
        )
        write_results(run, json_path)
    return run
