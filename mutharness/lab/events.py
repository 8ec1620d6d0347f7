"""What the lab announces as it goes: `Phase`, and the `Listener` the console implements."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from mutharness.errors import MutharnessError
    from mutharness.model.affected import Selection
    from mutharness.model.redfirst import Proof
    from mutharness.model.results import MutationResult
    from mutharness.model.shards import ShardPlan
    from mutharness.model.spec import Mutation, Spec
    from mutharness.repo.source import SourceRepo
    from mutharness.runners.base import RunFacts


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
    def baseline_run(self, spec: Spec, number: int, runs: int) -> None:
        """Run `number` of `runs` of `spec`'s baseline starts (1-based)."""
        ...
    def baseline_finished(self, spec: Spec, facts: RunFacts, timeout_s: float) -> None:
        """`spec`'s baseline is measured: `facts` its slowest run, `timeout_s` the limit of
        each of its mutants' runs."""
        ...
    def planned(self, mutations: Mapping[str, int]) -> None: ...
    def mutation_started(self, spec: Spec, mutation: Mutation) -> None: ...
    def mutation_finished(self, spec: Spec, result: MutationResult) -> None: ...
    def spec_failed(self, spec: Spec, error: MutharnessError) -> None: ...
    def selected(self, selection: Selection) -> None: ...
    def proving(self, proof: Proof) -> None: ...
    def sharded(self, plan: ShardPlan) -> None: ...
    def note(self, text: str) -> None: ...


class Silent:
    """A listener that shows nothing: a `verify -j` worker, a TIMEOUT's re-run alone."""

    def phase(self, phase: Phase) -> None:
        """Nothing to show."""

    def head(self, source: SourceRepo, changes: Sequence[str]) -> None:
        """Nothing to show."""

    def baseline_started(self, spec: Spec) -> None:
        """Nothing to show."""

    def baseline_run(self, spec: Spec, number: int, runs: int) -> None:
        """Nothing to show."""

    def baseline_finished(self, spec: Spec, facts: RunFacts, timeout_s: float) -> None:
        """Nothing to show."""

    def planned(self, mutations: Mapping[str, int]) -> None:
        """Nothing to show."""

    def mutation_started(self, spec: Spec, mutation: Mutation) -> None:
        """Nothing to show."""

    def mutation_finished(self, spec: Spec, result: MutationResult) -> None:
        """Nothing to show."""

    def spec_failed(self, spec: Spec, error: MutharnessError) -> None:
        """Nothing to show."""

    def selected(self, selection: Selection) -> None:
        """Nothing to show."""

    def proving(self, proof: Proof) -> None:
        """Nothing to show."""

    def sharded(self, plan: ShardPlan) -> None:
        """Nothing to show."""

    def note(self, text: str) -> None:
        """Nothing to show."""
