"""One scenario path: baseline runs, mutant runs and every other run all go through here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path

from mutharness.errors import WorkspaceError
from mutharness.lab.events import Listener, Phase
from mutharness.lab.logs import RunLogs, mutant_scenario
from mutharness.model.anchors import Splice, locate, unified_diff
from mutharness.model.spec import Mutation, Spec
from mutharness.paths import plain_name
from mutharness.repo.workspace import Settled, Workspace
from mutharness.runners.base import RunFacts, Runner, RunRequest
from mutharness.signals import deferred


class Kind(StrEnum):
    """What a scenario runs."""

    BASELINE = "baseline"  # the tests as committed
    MUTANT = "mutant"  # the tests with one mutation in place
    REVERTED = "reverted"  # the tests with a fix's files put back as they were (red-first)
    PROOF = "proof"  # the tests as committed again, after a green baseline (Runner.prove)


@dataclass(frozen=True)
class Scenario:
    """One run of a spec's tests in the workspace."""

    spec: Spec
    kind: Kind
    name: str  # unique within the spec: its scratch directory, and its kept log's name
    timeout_s: float
    mutation: Mutation | None = None
    first_failure: bool = False  # stop at the first failing test (--first-failure)
    fresh: str = ""  # why it never takes a fast route (a fast run's confirmation)

    @classmethod
    def baseline(cls, spec: Spec, number: int, timeout_s: float) -> Scenario:
        """Baseline run `number` (1-based)."""
        return cls(spec, Kind.BASELINE, f"baseline-{number}", timeout_s)

    @classmethod
    def proof(cls, spec: Spec, timeout_s: float) -> Scenario:
        """The runner's proof run after a green baseline."""
        return cls(spec, Kind.PROOF, "proof", timeout_s)

    @classmethod
    def adoption(cls, spec: Spec, timeout_s: float) -> Scenario:
        """The run that proves another workspace's baseline here (`adopt`)."""
        return cls(spec, Kind.PROOF, "adoption", timeout_s)

    @classmethod
    def reverted(cls, spec: Spec, timeout_s: float) -> Scenario:
        """The run with the fix reverted: files that fail to load do not stop the others."""
        return cls(spec, Kind.REVERTED, "reverted", timeout_s)

    @classmethod
    def mutant(
        cls, spec: Spec, mutation: Mutation, timeout_s: float, first_failure: bool = False,
        fresh: str = "",
    ) -> Scenario:
        """The run of one mutant; with `first_failure` it stops at its first failing test,
        with `fresh` (why) it never takes a fast route."""
        return cls(spec, Kind.MUTANT, mutant_scenario(mutation.number), timeout_s, mutation,
                   first_failure, fresh)

    def again(self) -> Scenario:
        """The same run once more, under its own name (its log kept beside the first's)."""
        return replace(self, name=f"{self.name}-again")

    def confirmed(self) -> Scenario:
        """The same run off the fast route, under its own name (a fast run's confirmation)."""
        return replace(self, name=f"{self.name}-fresh",
                       fresh="its fast run gave no verdict: a run as the baseline ran gives it")


@dataclass(frozen=True)
class Applied:
    """Where a mutant landed and what it changed."""

    splice: Splice
    diff: str


@dataclass(frozen=True)
class Ran:
    """A scenario's facts and what its run left in the workspace."""

    scenario: Scenario
    facts: RunFacts
    removed: tuple[str, ...]  # untracked files the run wrote (deleted)
    drift: tuple[str, ...]  # tracked files or git state the run changed (reset)
    applied: Applied | None = None
    target: Path | None = None  # the mutated file, in the workspace


@dataclass(frozen=True)
class Lab:
    """What every scenario of one verify shares."""

    runner_for: Callable[[Spec], Runner]
    workspace: Workspace
    listener: Listener
    logs: RunLogs | None = None  # where each scenario's log is kept (verify), if anywhere

    def kept(self, scenario: Scenario, facts: RunFacts) -> RunFacts:
        """`facts` with the run's log kept (`logs`): `log_path` names the kept file."""
        if self.logs is None:
            return facts
        kept = self.logs.keep(scenario.spec.id, scenario.name, Path(facts.log_path))
        return facts if kept is None else replace(facts, log_path=str(kept))


def _splice(scenario: Scenario, mutation: Mutation, original: bytes) -> Splice:
    splice = locate(original, mutation.anchor, mutation.replacement)
    if not isinstance(splice, Splice):
        raise WorkspaceError(
            f"spec {scenario.spec.id}, mutation {mutation.number}: {splice.describe()} in the "
            f"workspace copy of {mutation.file}"
        )
    return splice


def _request(scenario: Scenario, workspace: Workspace) -> RunRequest:
    return RunRequest(
        scenario.spec.tests, workspace.root,
        workspace.scratch(f"runs/{plain_name(scenario.spec.id)}/{scenario.name}"),
        scenario.timeout_s,
        keep_going=scenario.kind is Kind.REVERTED,
        first_failure=scenario.first_failure, mutant=scenario.kind is Kind.MUTANT,
        fresh=scenario.fresh,
        mutants=len(scenario.spec.mutations) if scenario.kind is Kind.PROOF else 0,
        mutated=(scenario.mutation.file,) if scenario.mutation is not None else (),
    )


def settle(lab: Lab, runner: Runner) -> Settled:
    """The workspace settled after a run (`Workspace.settle`), and the runner told which of
    its files the run changed or added, now put back (any, when it changed tracked files or
    git's state: the checkout was reset)."""
    settled = lab.workspace.settle()
    if settled.drift:
        runner.forget(None)
    elif settled.removed:
        runner.forget(tuple(lab.workspace.path(path) for path in settled.removed))
    return settled


def prove(scenario: Scenario, lab: Lab, baseline: RunFacts) -> None:
    """Let the runner prove its faster runs against a green `baseline`, then settle the
    workspace (what the proof run changed is reset, as after every run)."""
    runner = lab.runner_for(scenario.spec)
    runner.prove(_request(scenario, lab.workspace), baseline)
    settle(lab, runner)


def adopt(scenario: Scenario, lab: Lab,
          measured: Callable[[], RunFacts | None]) -> RunFacts | None:
    """Let the runner take another workspace's baseline (`measured`) as this one's, proven by
    a run here (`Runner.adopt`), then settle the workspace; None: measure one here."""
    runner = lab.runner_for(scenario.spec)
    facts = runner.adopt(_request(scenario, lab.workspace), measured)
    settle(lab, runner)
    return facts


def run_scenario(scenario: Scenario, lab: Lab) -> Ran:
    """Run one scenario: put its mutant in place (if any), run the tests, put the original
    bytes back (signals held meanwhile), then settle the workspace."""
    workspace, listener = lab.workspace, lab.listener
    runner = lab.runner_for(scenario.spec)
    request = _request(scenario, workspace)
    mutation = scenario.mutation
    if mutation is None:
        facts = lab.kept(scenario, runner.run(request))
        settled = settle(lab, runner)
        return Ran(scenario, facts, settled.removed, settled.drift)
    target = workspace.path(mutation.file)
    original = target.read_bytes()
    splice = _splice(scenario, mutation, original)
    mutated = splice.apply(original)
    mode = workspace.write_mutant(mutation.file, mutated)
    try:
        runner.forget((target,))
        listener.phase(Phase.MUTANT_APPLIED)
        facts = lab.kept(scenario, runner.run(request))
    finally:
        with deferred():  # a signal now is delivered once the original bytes are back
            listener.phase(Phase.RESTORING)
            intact = workspace.restore(mutation.file, original, mutated, mode)
        listener.phase(Phase.RESTORED)
    runner.forget((target,))
    settled = settle(lab, runner)
    drift = settled.drift
    if not intact:  # restored now, but the run replaced or rewrote the mutated file
        drift = (f"{mutation.file} (replaced or rewritten during the run)", *drift)
    applied = Applied(splice, unified_diff(original, splice, mutation.file))
    return Ran(scenario, facts, settled.removed, drift, applied, target)
