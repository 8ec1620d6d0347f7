"""A results record re-derived from its facts: verdicts, expectations and identities checked.

`merge` and `render` read results files that anyone with write access to a CI artefact may
have edited. Nothing they report is taken from a stored verdict: each mutation's verdict is
derived again from its recorded facts with `verify`'s own ladder (`verdict.classify`), its
`as_expected` from the spec's declared mutation (`verdict.meets_expectation`), each record is
matched to the spec's mutation by identity (position, name, file, anchor, replacement), and a
spec with verdicts must have a green baseline at its pinned count. A stored verdict may claim
less than its facts (UNTRUSTWORTHY or TIMEOUT: the record can hold causes its facts do not,
such as drift, and neither passes a gate); it may never claim more.

`against_tree` checks a run against the checkout it is merged into: the commit, each spec's
bytes and declared mutations, and the digest of every file its verdicts depend on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Protocol

from mutharness.digest import file_digest
from mutharness.model.results import MutationResult, RunResult, SpecResult
from mutharness.model.spec import Spec, parse_spec
from mutharness.model.verdict import Verdict, baseline_problem, classify, meets_expectation
from mutharness.runners.base import RunFacts, TestOutcome

MAX_NAMED = 20  # problems named per file before "and N more"


def _filled(facts: RunFacts, baseline: RunFacts, first_failure: bool) -> RunFacts | str:
    """A mutant's recorded facts with its passing tests named again, or why they cannot be.

    A mutant's record names the tests that did not pass and counts the others. When the count
    is the rest of the baseline's tests (or, stopped at its first failure, no more than that),
    the passing tests are those."""
    anonymous = [outcome for outcome in facts.outcomes if not outcome.nodeid]
    if not anonymous:
        return facts
    named = [outcome for outcome in facts.outcomes if outcome.nodeid]
    taken = {outcome.nodeid for outcome in named}
    rest = [nodeid for nodeid in baseline.nodeids if nodeid not in taken]
    if len(rest) < len(anonymous) or (len(rest) != len(anonymous) and not first_failure):
        return (f"its run counts {len(anonymous)} passing test(s) where the baseline leaves "
                f"{len(rest)}")
    passes = tuple(TestOutcome(nodeid, outcome.outcome, outcome.duration_s)
                   for nodeid, outcome in zip(rest, anonymous, strict=False))
    return replace(facts, outcomes=(*named, *passes))


def verdict_problem(result: MutationResult, baseline: RunFacts | None,
                    first_failure_allowed: bool) -> str | None:
    """Why one mutation's stored verdict or expectation is not what its facts give (None
    when they are)."""
    mutation = result.mutation
    if result.first_failure and (not first_failure_allowed or mutation.killed_by):
        return ("it claims a run stopped at its first failure, which its run's settings (or "
                "its killedBy) do not allow")
    if baseline is None:
        return "it has a verdict but its spec has no baseline"
    if result.verdict.is_evidence:
        filled = _filled(result.facts, baseline, result.first_failure)
        if isinstance(filled, str):
            return f"it records {result.verdict.value} but {filled}"
        derived = classify(filled, baseline, (), result.first_failure)
        if derived.verdict is not result.verdict:
            because = f" ({derived.reason})" if derived.reason else ""
            return (f"it records {result.verdict.value} but its facts give "
                    f"{derived.verdict.value}{because}")
    elif result.verdict is Verdict.TIMEOUT and not result.facts.timed_out:
        return "it records TIMEOUT but its facts say the run did not time out"
    expected = meets_expectation(result.verdict, mutation.expect_caught,
                                 result.facts.failing_ids, mutation.killed_by)
    if expected is not result.as_expected:
        return (f"it records as_expected {str(result.as_expected).lower()} but its verdict "
                f"{result.verdict.value} against the spec's expectation gives "
                f"{str(expected).lower()}")
    return None


def _baseline_problem(spec: SpecResult) -> str | None:
    baseline = spec.baseline
    if baseline is None:
        return None
    approved = spec.pin.approved if spec.pin is not None else ()
    skipped = set(baseline.inert)
    unknown = [nodeid for nodeid in approved if nodeid not in skipped]
    if unknown:
        return f"its pin counts {unknown[0]!r} as an approved skip, but its baseline ran it"
    problem = baseline_problem(baseline, spec.spec.expect_baseline_pass, len(approved))
    return None if problem is None else f"its baseline is not one verdicts can rest on: {problem}"


def spec_problems(spec: SpecResult, first_failure_allowed: bool) -> list[str]:
    """Every way one spec's record is not what its own facts and declared mutations give."""
    problems: list[str] = []
    declared = spec.spec.mutations
    if spec.mutations:
        found = _baseline_problem(spec)
        if found is not None:
            problems.append(f"{spec.spec.id}: {found}")
    seen: set[int] = set()
    for result in spec.mutations:
        mutation = result.mutation
        label = f"{spec.spec.id} #{mutation.number} {mutation.name!r}"
        if mutation.index in seen:
            problems.append(f"{label}: recorded twice")
            continue
        seen.add(mutation.index)
        if declared[mutation.index] != mutation:
            problems.append(f"{label}: is not the spec's mutation #{mutation.number} (its "
                            "name, file, anchor, replacement or expectation differ)")
            continue
        found = verdict_problem(result, spec.baseline, first_failure_allowed)
        if found is not None:
            problems.append(f"{label}: {found}")
    return problems


def _listed(problems: list[str]) -> list[str]:
    shown = problems[:MAX_NAMED]
    more = len(problems) - len(shown)
    return [*shown, *([f"and {more} more"] if more else [])]


def run_problems(run: RunResult) -> list[str]:
    """Every way `run`'s records are not what their own facts give (empty when none)."""
    values = run.settings.get("values", {})
    first_failure = isinstance(values, Mapping) and values.get("first-failure") is True
    return _listed([problem for spec in run.specs
                    for problem in spec_problems(spec, first_failure)])


class Tree(Protocol):
    """The checkout a merge is checked against: the commit's bytes of any path."""

    @property
    def commit(self) -> str:
        """The commit the tree is of."""
        ...

    def read(self, path: str) -> bytes | None:
        """`path` as the checked-against tree holds it (None when it has no such file)."""
        ...


@dataclass(frozen=True)
class TreeBytes:
    """A `Tree` from a commit and a reader of its paths' bytes."""

    commit: str
    reader: Callable[[str], bytes | None]

    def read(self, path: str) -> bytes | None:
        """The reader's bytes of `path`."""
        return self.reader(path)


def _spec_at(spec: Spec, tree: Tree) -> str | None:
    data = tree.read(spec.path)
    if data is None:
        return f"{spec.path} is not in the tree at {tree.commit[:12]}"
    if file_digest(data) != spec.digest:
        return f"{spec.path} has other bytes at {tree.commit[:12]} than the run read"
    parsed, problems = parse_spec(data, spec.path)
    if parsed is None:
        return f"{spec.path} at {tree.commit[:12]} is not a valid spec ({problems[0]})"
    if (parsed.id, parsed.tests, parsed.expect_baseline_pass, parsed.mutations) != (
            spec.id, spec.tests, spec.expect_baseline_pass, spec.mutations):
        return (f"the record of {spec.path} differs from its bytes at {tree.commit[:12]} "
                "(its tests, count or mutations)")
    return None


def _digests_problem(label: str, digests: Mapping[str, str], tree: Tree) -> str | None:
    for path, digest in sorted(digests.items()):
        data = tree.read(path)
        if data is None or file_digest(data) != digest:
            now = "absent" if data is None else "other bytes"
            return (f"{label}: {path}, which its verdicts depend on, has {now} at "
                    f"{tree.commit[:12]} than the run measured")
    return None


def against_tree(name: str, run: RunResult, tree: Tree) -> list[str]:
    """Every way the run `name` is not a run of `tree` (empty when it is)."""
    if run.commit != tree.commit:
        return [f"{name} is a run of commit {run.commit or '(none)'}, not of {tree.commit} "
                "that this checkout is at (check out that commit, or name it with --commit)"]
    problems: list[str] = []
    for spec in run.specs:
        found = _spec_at(spec.spec, tree)
        if found is None:
            found = _digests_problem(spec.spec.id, spec.depends_on, tree)
        if found is not None:
            problems.append(f"{name}: {found}")
    return _listed(problems)
