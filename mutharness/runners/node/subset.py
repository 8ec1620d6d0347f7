"""A node mutant's run of only the test files it can change.

`node --test` runs each test file in a process of its own. The baseline's load record says
which test files' processes (their workers and node children included) loaded or read each file
of the workspace. A test file whose processes neither loaded nor read a mutated file was given
the same input under the mutant, by construction: its baseline outcomes stand, and it need not
run. The others run. Where the record cannot speak (no record, a test file that ran without one,
one whose processes started a program no hook sees or could not record their modules, a mutated
`package.json`, which node itself reads) every file runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import PurePosixPath

from mutharness.runners.base import RunFacts, TestOutcome
from mutharness.runners.node.loads import LoadRecord
from mutharness.runners.node.rules import split_id

NODE_READS = frozenset({"package.json"})  # read by node itself, never through a hook


@dataclass(frozen=True)
class Subset:
    """The test files a mutant's run runs, those whose baseline outcomes stand, and those
    outcomes (in the baseline's order)."""

    ran: tuple[str, ...]
    stood: tuple[str, ...]
    outcomes: tuple[TestOutcome, ...]

    def describe(self, mutated: Sequence[str]) -> str:
        """Why the files that did not run did not (the run's log, the evidence)."""
        return (f"ran the {len(self.ran)} test file(s) whose processes loaded or read "
                f"{', '.join(mutated)} in the baseline; the baseline's outcomes stand for the "
                f"{len(self.stood)} other(s), which neither loaded nor read it")


def choose(loads: LoadRecord | None, baseline: RunFacts, mutated: Sequence[str]) -> Subset | None:
    """The subset a mutant of `mutated` (repo-relative) runs, by the baseline's record `loads`;
    None where every file runs."""
    if loads is None or not mutated or any(
            PurePosixPath(path).name in NODE_READS for path in mutated):
        return None
    files = {split_id(outcome.nodeid)[0] for outcome in baseline.outcomes}
    if not files or not files <= set(loads.files):  # a file ran that no record speaks for
        return None
    ran = tuple(sorted(
        file for file in files
        if not loads.files[file].whole or any(loads.files[file].used(path) for path in mutated)))
    stood = tuple(sorted(files - set(ran)))
    if not stood:
        return None
    outcomes = tuple(outcome for outcome in baseline.outcomes
                     if split_id(outcome.nodeid)[0] in stood)
    return Subset(ran, stood, outcomes)


def with_stood(facts: RunFacts, subset: Subset) -> RunFacts:
    """A subset run's facts with the stood files' baseline outcomes added after its own."""
    return replace(facts, outcomes=(*facts.outcomes, *subset.outcomes))
