"""Which of a plan's mutations a session runs, in what order: the caller's choice (the whole
run, one CI shard's part, one mutation again, or what a `-j` parent feeds a worker)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mutharness.errors import FeedError
from mutharness.lab.feed import Feed
from mutharness.lab.handover import Sibling
from mutharness.model.shards import ShardPlan
from mutharness.model.spec import Mutation, Spec

Batch = tuple[Spec, tuple[Mutation, ...]]


def _chosen(specs: Sequence[Spec], chosen: Mapping[str, tuple[int, ...]] | None) -> list[Batch]:
    """Each spec with the mutations `chosen` names (every mutation when None), in the
    plan's order; a spec with none is left out (its baseline is not measured)."""
    batches = [(spec, spec.mutations if chosen is None else tuple(
        spec.mutations[index] for index in chosen.get(spec.id, ()))) for spec in specs]
    return [(spec, mutations) for spec, mutations in batches if mutations]


@dataclass(frozen=True)
class Whole:
    """Every mutation of every spec: a run of its own."""

    own_run = True  # it keeps the previous complete results and clears its specs' old logs
    fed = False  # every batch is known before the run starts
    shard: ShardPlan | None = None

    def planned(self, specs: Sequence[Spec]) -> list[Batch]:
        """Each spec's mutations, known up front."""
        return _chosen(specs, None if self.shard is None else self.shard.assigned())

    def batches(self, specs: Sequence[Spec]) -> Iterator[Batch]:
        """Each spec's mutations, one batch per spec."""
        yield from self.planned(specs)

    def measured_by(self, spec_id: str) -> Sibling | None:
        """None: the run measures every baseline it needs."""
        del spec_id
        return None


@dataclass(frozen=True)
class Again:
    """Some mutations run again on their own (a `-j` TIMEOUT's re-run): part of another run,
    which keeps its own results and logs."""

    chosen: Mapping[str, tuple[int, ...]]
    own_run = False
    fed = False
    shard = None

    def planned(self, specs: Sequence[Spec]) -> list[Batch]:
        """The chosen mutations, by spec."""
        return _chosen(specs, self.chosen)

    def batches(self, specs: Sequence[Spec]) -> Iterator[Batch]:
        """The chosen mutations, one batch per spec."""
        yield from self.planned(specs)

    def measured_by(self, spec_id: str) -> Sibling | None:
        """None: a re-run alone measures its own baseline."""
        del spec_id
        return None


@dataclass(frozen=True)
class Fed:
    """A `-j` worker's mutations, each as its parent hands it over (a worker is never handed
    a spec twice, so a spec ends when the next mutation is another spec's)."""

    feed: Feed
    own_run = False
    fed = True
    shard = None
    # per spec, the results file of the worker that holds it too (as the feed named it)
    sources: dict[str, Path] = field(default_factory=dict, compare=False)

    def planned(self, specs: Sequence[Spec]) -> list[Batch]:
        """Nothing is known up front."""
        del specs
        return []

    def batches(self, specs: Sequence[Spec]) -> Iterator[Batch]:
        """One mutation at a time, as it is fed; one the plan lacks is refused."""
        by_id = {spec.id: spec for spec in specs}
        for handed in self.feed.items():
            item = handed.item
            spec = by_id.get(item.spec)
            if spec is None or not 0 <= item.index < len(spec.mutations):
                raise FeedError(f"{item.spec} #{item.index + 1}", "not a mutation of this "
                                "worker's plan (its specs differ from its parent's)")
            if handed.measured_by is not None:
                self.sources.setdefault(item.spec, handed.measured_by)
            yield spec, (spec.mutations[item.index],)

    def measured_by(self, spec_id: str) -> Sibling | None:
        """The worker that measures `spec_id`'s baseline too, when the parent named its
        results file with this worker's first mutation of it."""
        source = self.sources.get(spec_id)
        return None if source is None else Sibling(source, self.feed.parent)


Order = Whole | Again | Fed
