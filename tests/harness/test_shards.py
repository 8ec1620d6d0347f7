"""`--shard k/n`: 1-based parsing, every mutation assigned to exactly one shard, stably."""

from __future__ import annotations

import pytest

from mutharness.errors import ShardError
from mutharness.model.shards import Planned, Shard, assignment


def planned(spec: str, count: int) -> Planned:
    return Planned(spec, f"digest of {spec}", tuple(f"{spec} {n}" for n in range(count)))


PLAN = (planned("zeta", 5), planned("alpha", 3), planned("mid", 4))


def test_a_shard_is_parsed_as_one_based_k_of_n() -> None:
    assert Shard.parse("1/3") == Shard(1, 3)
    assert Shard.parse(" 3/3 ") == Shard(3, 3)
    assert str(Shard(2, 5)) == "2/5"


@pytest.mark.parametrize(("text", "problem"), [
    ("0/2", "shards are numbered from 1: the first of 2 is 1/2"),
    ("3/2", "there is no shard 3 of 2: the last is 2/2"),
    ("1/0", "the shard count must be at least 1"),
    ("1-2", "write it as k/n, e.g. 1/4"),
    ("a/b", "write it as k/n, e.g. 1/4"),
    ("-1/2", "write it as k/n, e.g. 1/4"),
    ("", "write it as k/n, e.g. 1/4"),
])
def test_a_shard_outside_one_to_n_or_malformed_is_refused_naming_the_rule(
    text: str, problem: str
) -> None:
    with pytest.raises(ShardError) as raised:
        Shard.parse(text)
    assert raised.value.message() == f"--shard {text!r}: {problem}"


@pytest.mark.parametrize("count", [1, 2, 3, 5, 12, 13])
def test_every_mutation_lands_in_exactly_one_shard(count: int) -> None:
    seen: list[tuple[str, int]] = []
    for k in range(1, count + 1):
        for spec, indices in assignment(PLAN, Shard(k, count)).items():
            seen += [(spec, index) for index in indices]
    everything = [(p.spec, i) for p in PLAN for i in range(p.mutations)]
    assert sorted(seen) == sorted(everything)


def test_shards_differ_in_size_by_at_most_one_mutation() -> None:
    sizes = [sum(len(v) for v in assignment(PLAN, Shard(k, 5)).values()) for k in range(1, 6)]
    assert max(sizes) - min(sizes) <= 1
    assert sum(sizes) == 12


def test_the_assignment_does_not_depend_on_the_order_specs_are_named() -> None:
    for k in (1, 2, 3):
        assert assignment(PLAN, Shard(k, 3)) == assignment(tuple(reversed(PLAN)), Shard(k, 3))


def test_a_shard_holds_runs_of_consecutive_mutations_so_few_baselines_repeat() -> None:
    # 12 mutations over 3 shards: each shard touches at most 2 specs, so 3 specs are
    # measured 5 times in all, not 9 (round-robin would make every shard run every baseline)
    touched = [assignment(PLAN, Shard(k, 3)) for k in (1, 2, 3)]
    assert sum(len(shard) for shard in touched) <= 5
    assert touched[0] == {"alpha": (0, 1, 2), "mid": (0,)}


def test_more_shards_than_mutations_leaves_some_shards_empty() -> None:
    plan = (planned("only", 2),)
    assert [assignment(plan, Shard(k, 4)) for k in (1, 2, 3, 4)] == [
        {}, {"only": (0,)}, {}, {"only": (1,)},
    ]
