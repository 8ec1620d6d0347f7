"""`verify -j`: which mutation an idle worker runs next, longest first by baseline timings.

Work is handed out one mutation at a time. A worker stays with its spec while the spec has
mutations left (each spec a worker joins costs it that spec's baseline). Then it starts the
spec not yet started with the most estimated work left, so the long specs run first and the
short ones fill in at the end; when none is left, it joins the spec whose remaining
mutations it would finish sooner than that spec's workers would get to them. The estimates
are the timings of the last results file at the same spec bytes, replaced by this run's as
its workers measure them; without any, every run counts as the same length.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import mean

from mutharness.errors import ResultsError
from mutharness.model.results import SpecResult, read_results
from mutharness.model.spec import Spec

UNKNOWN_S = 1.0  # the length of a run when no run of this run's specs has been timed


@dataclass(frozen=True, order=True)
class Item:
    """Mutation `index` (0-based, its place in the spec) of spec `spec`."""

    spec: str
    index: int


@dataclass
class Timings:
    """What one spec's runs take: its baseline, and each mutation's run where known."""

    baseline_s: float | None = None
    mutations_s: dict[int, float] = field(default_factory=dict)

    def mutation(self, index: int, otherwise: float) -> float:
        known = self.mutations_s.get(index)
        if known is not None:
            return known
        return self.baseline_s if self.baseline_s is not None else otherwise


def timings_of(part: SpecResult) -> Timings:
    """The timings a spec's results hold."""
    return Timings(
        part.baseline.duration_s if part.baseline is not None else None,
        {result.mutation.index: result.facts.duration_s for result in part.mutations},
    )


def previous_timings(path: Path, specs: Sequence[Spec]) -> dict[str, Timings]:
    """The timings the results file at `path` holds for the specs whose bytes are the same
    (none when there is no readable file: they are estimates, never facts)."""
    try:
        previous = read_results(path)
    except (ResultsError, OSError):
        return {}
    digests = {spec.id: spec.digest for spec in specs}
    return {part.spec.id: timings_of(part) for part in previous.specs
            if digests.get(part.spec.id) == part.spec.digest}


class Schedule:
    """The mutations of one `-j` run not yet handed out, and who holds what."""

    def __init__(self, wanted: Mapping[str, Sequence[int]], timings: Mapping[str, Timings],
                 workers: int) -> None:
        self.order = [spec for spec, indices in wanted.items() if indices]  # the plan's order
        self.pool = {spec: list(wanted[spec]) for spec in self.order}  # not handed out yet
        self.timings = {spec: Timings(known.baseline_s, dict(known.mutations_s))
                        for spec in self.order for known in [timings.get(spec, Timings())]}
        self.holders: dict[str, list[int]] = {spec: [] for spec in self.order}
        self.current: dict[int, str] = {}  # each worker's spec: what it last was given
        self.measured: dict[int, set[str]] = {worker: set() for worker in range(workers)}
        self.outstanding: dict[int, list[Item]] = {worker: [] for worker in range(workers)}
        self.failed: set[str] = set()

    def _typical(self) -> float:
        known = [t.baseline_s for t in self.timings.values() if t.baseline_s is not None]
        return mean(known) if known else UNKNOWN_S

    def _baseline(self, spec: str) -> float:
        baseline = self.timings[spec].baseline_s
        return baseline if baseline is not None else self._typical()

    def _cost(self, item: Item) -> float:
        return self.timings[item.spec].mutation(item.index, self._typical())

    def _left(self, spec: str) -> float:
        """The estimated time of the spec's mutations not handed out yet."""
        return sum(self._cost(Item(spec, index)) for index in self.pool[spec])

    def _busy(self, worker: int) -> float:
        """How long `worker` is estimated to take over what it holds."""
        baselines = {item.spec for item in self.outstanding[worker]} - self.measured[worker]
        return (sum(map(self._cost, self.outstanding[worker]))
                + sum(map(self._baseline, baselines)))

    def learn(self, spec: str, timings: Timings) -> None:
        """A worker measured `spec`: its timings replace the estimates."""
        known = self.timings[spec]
        if timings.baseline_s is not None:
            known.baseline_s = timings.baseline_s
        known.mutations_s.update(timings.mutations_s)

    def done(self, worker: int, item: Item) -> None:
        """`worker` finished `item` (so it has `item.spec`'s baseline too)."""
        self.outstanding[worker].remove(item)
        self.measured[worker].add(item.spec)

    def fail(self, spec: str, worker: int) -> None:
        """`worker` found `spec` unable to give verdicts: no more of it is handed out, and
        what it held of it is answered for by its error."""
        self.failed.add(spec)
        self.outstanding[worker] = [i for i in self.outstanding[worker] if i.spec != spec]

    def _give(self, worker: int, spec: str) -> Item:
        item = Item(spec, self.pool[spec].pop(0))
        self.outstanding[worker].append(item)
        self.current[worker] = spec
        if worker not in self.holders[spec]:
            self.holders[spec].append(worker)
        return item

    def _open(self, spec: str) -> bool:
        return bool(self.pool[spec]) and spec not in self.failed

    def next_for(self, worker: int) -> Item | None:
        """The mutation `worker` runs next, or None: nothing is left that it should run."""
        spec = self.current.get(worker)
        if spec is not None and self._open(spec):
            return self._give(worker, spec)
        unstarted = [s for s in self.order if self._open(s) and not self.holders[s]]
        if unstarted:
            return self._give(worker, max(unstarted, key=self._left))  # first of equals
        best: tuple[float, str] | None = None
        for spec in (s for s in self.order if self._open(s)):
            alone = min(map(self._busy, self.holders[spec])) + self._left(spec)
            baseline = 0.0 if spec in self.measured[worker] else self._baseline(spec)
            joined = baseline + self._cost(Item(spec, self.pool[spec][0]))
            if joined < alone and (best is None or alone - joined > best[0]):
                best = (alone - joined, spec)
        return None if best is None else self._give(worker, best[1])
