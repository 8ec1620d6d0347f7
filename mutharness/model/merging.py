"""`mutharness merge`: shards' results checked to make exactly one run, then joined into it.

The shards must be of one run (the same commit, plan, settings, command, tools and
uncommitted changes), each shard exactly once, every mutation of the plan exactly once, and a
spec measured by several shards must have run the same tests on the same bytes. Nothing is
trusted: each record is re-derived from its facts (`rederive.run_problems`) and each shard
checked against the tree it is merged into (`rederive.against_tree`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from mutharness.errors import MergeError
from mutharness.model.rederive import Tree, against_tree, run_problems
from mutharness.model.results import RunResult, SpecResult
from mutharness.model.shards import Planned, ShardPlan
from mutharness.runners.base import RunFacts

MAX_NAMED = 20  # missing or doubled mutations named, per kind


def _of_one_run(named: Sequence[tuple[str, RunResult]]) -> list[str]:
    problems: list[str] = []
    for name, run in named:
        if run.shard is None:
            problems.append(f"{name} is not a shard's results (verify --shard k/n writes those)")
        elif not run.complete or run.error is not None or run.interrupted is not None:
            problems.append(f"{name}: shard {run.shard.shard}'s run did not complete "
                            "(interrupted or stopped by an error): run that shard again")
    if problems:
        return problems
    first_name, first = named[0]
    assert first.shard is not None
    for name, run in named[1:]:
        assert run.shard is not None
        if run.commit != first.commit:
            problems.append(f"{name} is at commit {run.commit}, {first_name} at {first.commit}")
        if run.shard.shard.count != first.shard.shard.count:
            problems.append(f"{name} is a shard of {run.shard.shard.count}, {first_name} of "
                            f"{first.shard.shard.count}")
        elif sorted(run.shard.plan, key=_by_id) != sorted(first.shard.plan, key=_by_id):
            problems.append(f"{name} plans another run than {first_name} (its specs, their "
                            "bytes or their mutations differ)")
        for what, mine, theirs in (
            ("settings", run.settings, first.settings), ("command", run.command, first.command),
            ("uncommitted changes", run.dirty_changes, first.dirty_changes),
        ):
            if mine != theirs:
                problems.append(f"{name} was run with other {what} than {first_name}")
        versions = _versions_differ(run.tool, first.tool)
        if versions:
            problems.append(f"{name} was run with other tools than {first_name}: {versions}")
    return problems


def _by_id(planned: Planned) -> str:
    return planned.spec


def _versions_differ(mine: Mapping[str, str], theirs: Mapping[str, str]) -> str:
    """The tool versions that differ (`pytest 9.2.0 vs 8.3.5`); where the interpreters are
    installed (`*_executable`) may differ between CI machines and is not compared."""
    keys = sorted(key for key in set(mine) | set(theirs)
                  if not key.endswith("_executable") and mine.get(key) != theirs.get(key))
    return ", ".join(f"{key} {mine.get(key, 'absent')} vs {theirs.get(key, 'absent')}"
                     for key in keys)


def _each_shard_once(named: Sequence[tuple[str, RunResult]], count: int) -> list[str]:
    by_index: dict[int, list[str]] = {}
    for name, run in named:
        assert run.shard is not None
        by_index.setdefault(run.shard.shard.index, []).append(name)
    problems = []
    for index in range(1, count + 1):
        names = by_index.get(index, [])
        if not names:
            problems.append(f"shard {index}/{count} is missing")
        elif len(names) > 1:
            problems.append(f"shard {index}/{count} is given twice: {' and '.join(names)}"
                            if len(names) == 2 else
                            f"shard {index}/{count} is given {len(names)} times: "
                            f"{', '.join(names)}")
    return problems


def _listed(kind: str, lines: list[str]) -> list[str]:
    shown = lines[:MAX_NAMED]
    more = len(lines) - len(shown)
    return [*shown, *([f"{kind}: and {more} more"] if more else [])]


def _coverage(named: Sequence[tuple[str, RunResult]], plan: ShardPlan) -> list[str]:
    """Every mutation of the plan in exactly one shard (a spec that stopped before its
    mutations, as its error says, answers for the mutations its shard was given)."""
    seen: dict[tuple[str, int], list[str]] = {}
    for name, run in named:
        assert run.shard is not None
        assigned = run.shard.assigned()
        for spec in run.specs:
            done = {result.mutation.index for result in spec.mutations}
            if spec.error:
                done |= set(assigned.get(spec.spec.id, ()))
            for index in sorted(done):
                seen.setdefault((spec.spec.id, index), []).append(name)
    missing, doubled = [], []
    for planned in plan.plan:
        for index, mutation in enumerate(planned.names):
            where = seen.get((planned.spec, index), [])
            label = f"{planned.spec} #{index + 1} {mutation!r}"
            if not where:
                missing.append(f"missing: {label}")
            elif len(where) > 1:
                doubled.append(f"doubled: {label} in {' and '.join(where)}")
    return [*_listed("missing", missing), *_listed("doubled", doubled)]


def _tests(facts: RunFacts) -> list[tuple[str, str]]:
    return sorted((outcome.nodeid, outcome.outcome.value) for outcome in facts.outcomes)


def joined(spec_id: str, parts: list[tuple[str, SpecResult]], problems: list[str]) -> SpecResult:
    """One spec's parts (each named by its file) as one result; `problems` gets each way
    they disagree (other tests in the baseline, other files the verdicts depend on). A
    baseline refused in one part and measured in another leaves the spec without verdicts:
    runs of the same tests on the same bytes disagreed (a flaky or load-bound suite)."""
    measured = [(name, part) for name, part in parts if part.baseline is not None
                and not part.error]
    refused = next(((name, part) for name, part in parts if part.refused), None)
    if refused is not None and measured:
        name, part = refused
        text = (f"its baseline was refused in {name} but measured in {measured[0][0]}: the "
                f"same tests disagreed, so no verdict holds; in {name}: {part.error}")
        return replace(part, mutations=(), error=text, stopped="")
    for name, part in measured[1:]:
        first_name, first = measured[0]
        assert part.baseline is not None and first.baseline is not None
        if _tests(part.baseline) != _tests(first.baseline):
            problems.append(f"{spec_id}: the baseline in {name} ran other tests than in "
                            f"{first_name}")
        if part.depends_on != first.depends_on:
            problems.append(f"{spec_id}: the files its verdicts depend on differ between "
                            f"{name} and {first_name}")
    base = (measured or parts)[0][1]
    failed = next((part for _, part in parts if part.error), None)
    mutations = sorted((result for _, part in parts for result in part.mutations),
                       key=lambda result: result.mutation.index)
    return replace(
        base, mutations=tuple(mutations),
        error=failed.error if failed else base.error,
        stopped=failed.stopped if failed else base.stopped,
    )


def merge(named: Sequence[tuple[str, RunResult]], tree: Tree) -> RunResult:
    """The one run of `tree` that `named` (file name, shard's results) are the shards of;
    raises MergeError with every problem found when they are not exactly that."""
    if not named:
        raise MergeError(("no shard's results were given",))
    problems = _of_one_run(named)
    if problems:
        raise MergeError(tuple(problems))
    first = named[0][1]
    assert first.shard is not None
    problems = [*dict.fromkeys(problem for name, run in named
                               for problem in against_tree(name, run, tree)),
                *(f"{name}: {problem}" for name, run in named for problem in run_problems(run)),
                *_each_shard_once(named, first.shard.shard.count),
                *_coverage(named, first.shard)]
    specs = []
    for planned in first.shard.plan:
        parts = [(name, spec) for name, run in named for spec in run.specs
                 if spec.spec.id == planned.spec]
        if parts:
            specs.append(joined(planned.spec, parts, problems))
    if problems:
        raise MergeError(tuple(problems))
    return replace(first, specs=tuple(specs), results_path="", complete=True, shard=None,
                   notes=notes_of(run for _, run in named))


def notes_of(runs: Iterable[RunResult]) -> tuple[str, ...]:
    """Every note the runs made, once, in the order they first appear."""
    return tuple(dict.fromkeys(note for run in runs for note in run.notes))
