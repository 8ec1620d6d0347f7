"""CI shards: `k/n` parsed 1-based, and each run's mutations assigned to exactly one shard.

The assignment orders every mutation of the run by spec id, then by its place in the spec,
and gives shard k the k-th of n near-equal runs of consecutive mutations: deterministic, the
same for the same specs however they are named, and a spec's baseline is measured by as few
shards as its mutations span.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mutharness.errors import ShardError

if TYPE_CHECKING:
    from mutharness.model.spec import Spec

_SHAPE = re.compile(r"(\d+)/(\d+)")
SHAPE_HINT = "write it as k/n, e.g. 1/4"


@dataclass(frozen=True, order=True)
class Shard:
    """Shard `index` (1-based) of `count`."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """`k/n` with 1 <= k <= n (raises ShardError naming the rule broken)."""
        match = _SHAPE.fullmatch(text.strip())
        if match is None:
            raise ShardError(text, SHAPE_HINT)
        index, count = int(match[1]), int(match[2])
        if count < 1:
            raise ShardError(text, "the shard count must be at least 1")
        if index == 0:
            raise ShardError(text, f"shards are numbered from 1: the first of {count} is "
                                   f"1/{count}")
        if index > count:
            raise ShardError(text, f"there is no shard {index} of {count}: the last is "
                                   f"{count}/{count}")
        return cls(index, count)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


@dataclass(frozen=True)
class Planned:
    """One spec of a sharded run, as every shard must see it: id, digest, mutation names."""

    spec: str
    digest: str
    names: tuple[str, ...]

    @property
    def mutations(self) -> int:
        return len(self.names)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.spec, "sha256": self.digest, "mutations": list(self.names)}


@dataclass(frozen=True)
class ShardPlan:
    """A shard and the whole run it is part of (the specs in the order they were named)."""

    shard: Shard
    plan: tuple[Planned, ...]

    @classmethod
    def of(cls, shard: Shard, specs: Sequence[Spec]) -> ShardPlan:
        """Shard `shard` of a run of `specs` (in the order they were named)."""
        return cls(shard, tuple(
            Planned(spec.id, spec.digest, tuple(m.name for m in spec.mutations))
            for spec in specs
        ))

    def assigned(self) -> dict[str, tuple[int, ...]]:
        """This shard's mutation indices per spec id."""
        return assignment(self.plan, self.shard)

    @property
    def size(self) -> int:
        """How many mutations this shard runs."""
        return sum(map(len, self.assigned().values()))

    def to_json(self) -> dict[str, Any]:
        return {"index": self.shard.index, "count": self.shard.count,
                "plan": [planned.to_json() for planned in self.plan]}


def assignment(plan: Sequence[Planned], shard: Shard) -> dict[str, tuple[int, ...]]:
    """Shard `shard`'s mutation indices per spec id (specs with none are left out)."""
    every = [(planned.spec, index)
             for planned in sorted(plan, key=lambda planned: planned.spec)
             for index in range(planned.mutations)]
    low = (shard.index - 1) * len(every) // shard.count
    high = shard.index * len(every) // shard.count
    assigned: dict[str, list[int]] = {}
    for spec, index in every[low:high]:
        assigned.setdefault(spec, []).append(index)
    return {spec: tuple(indices) for spec, indices in assigned.items()}
