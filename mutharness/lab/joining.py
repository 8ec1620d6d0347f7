"""What the `-j` workers' results make between them: each spec joined from its parts, in
the run's order, as far as they finished it (all of it, or up to where the run stopped)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import replace

from mutharness.model.merging import joined
from mutharness.model.results import RunResult, SpecResult
from mutharness.model.spec import Spec

Given = Mapping[str, Mapping[str, Set[int]]]  # per worker's file: spec id -> indices


def _covers(part: SpecResult, given: Set[int]) -> bool:
    """A worker's part of a spec holds every mutation of the spec it was given."""
    return given <= {result.mutation.index for result in part.mutations}


def _settled(part: SpecResult, given: Set[int]) -> SpecResult:
    """A part stopped after its last mutation, as it would have been saved a moment later."""
    if not part.in_progress or not _covers(part, given):
        return part
    return replace(part, error="", stopped="")


def completed(
    named: Sequence[tuple[str, RunResult]], specs: Sequence[Spec],
    wanted: Mapping[str, tuple[int, ...]], given: Given,
) -> tuple[tuple[SpecResult, ...], tuple[str, ...]]:
    """What the workers (`named`: their results, each named by its file) finished between
    them: `specs` in order, each joined from its parts, up to the first with a mutation of
    the run (`wanted`) that no part finished, or whose parts disagree (the problems found).
    A spec stopped by its own error counts as finished, and so does a part that had finished
    every mutation its worker was `given` when the worker stopped."""
    done_specs: list[SpecResult] = []
    problems: list[str] = []
    for spec in specs:
        runs_here = set(wanted.get(spec.id, ()))
        if not runs_here:
            continue
        parts: list[tuple[str, SpecResult]] = []
        for name, run in named:
            mine = given.get(name, {}).get(spec.id, frozenset())
            parts.extend((name, _settled(part, mine)) for part in run.specs if part.spec.id
                         == spec.id and (not part.in_progress or _covers(part, mine)))
        done = {result.mutation.index for _, part in parts for result in part.mutations}
        if not parts or not (any(part.error for _, part in parts) or done >= runs_here):
            break
        result = joined(spec.id, parts, problems)
        if problems:
            break
        done_specs.append(result)
    return tuple(done_specs), tuple(problems)
