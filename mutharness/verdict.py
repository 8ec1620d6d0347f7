"""Facts -> verdict: one pure function, and whether a verdict meets the spec's expectation."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from mutharness.runner import ReportState, RunFacts

PYTEST_OK = 0
PYTEST_TESTS_FAILED = 1


class Verdict(Enum):
    """What one mutation run proves."""

    CAUGHT = "CAUGHT"  # the baseline's tests all ran, at least one failed
    SURVIVED = "SURVIVED"  # the baseline's tests all ran and passed
    UNTRUSTWORTHY = "UNTRUSTWORTHY"  # the run proves nothing (crash, partial run, ...)
    TIMEOUT = "TIMEOUT"  # exceeded its limit; the process tree was killed

    @property
    def is_evidence(self) -> bool:
        """CAUGHT and SURVIVED are evidence; the others are not."""
        return self in (Verdict.CAUGHT, Verdict.SURVIVED)


@dataclass(frozen=True)
class Classification:
    """A verdict and, when it is not evidence, the reason."""

    verdict: Verdict
    reason: str = ""


def _untrustworthy(reason: str) -> Classification:
    return Classification(Verdict.UNTRUSTWORTHY, reason)


def classify(
    facts: RunFacts, baseline_nodeids: Sequence[str], drift: Sequence[str] = ()
) -> Classification:
    """Derive the verdict of a mutation run from its facts alone. A crash is never a kill."""
    if facts.timed_out:
        return Classification(Verdict.TIMEOUT, f"exceeded {facts.timeout_s:g} s")
    if facts.signal is not None:
        return _untrustworthy(f"killed by signal {facts.signal}")
    if facts.report is not ReportState.OK:
        return _untrustworthy(f"report {facts.report.value} (exit status {facts.exit_status})")
    if facts.collection_errors:
        return _untrustworthy(f"collection error in {', '.join(facts.collection_errors[:3])}")
    if facts.exit_status not in (PYTEST_OK, PYTEST_TESTS_FAILED):
        return _untrustworthy(f"pytest exit status {facts.exit_status}")
    if not facts.outcomes:
        return _untrustworthy("ran 0 tests: an empty run proves nothing")
    if sorted(facts.nodeids) != sorted(baseline_nodeids):
        return _untrustworthy(
            f"ran {len(facts.nodeids)} tests, not the baseline's {len(baseline_nodeids)}"
        )
    unfinished = len(facts.outcomes) - facts.passed - facts.failed
    if unfinished:
        return _untrustworthy(f"{unfinished} test(s) neither passed nor failed (skip/xfail)")
    if drift:
        return _untrustworthy(f"workspace changed after restore: {', '.join(drift[:3])}")
    if facts.exit_status == PYTEST_TESTS_FAILED and facts.failed:
        return Classification(Verdict.CAUGHT)
    if facts.exit_status == PYTEST_OK and not facts.failed:
        return Classification(Verdict.SURVIVED)
    return _untrustworthy(
        f"exit status {facts.exit_status} disagrees with {facts.failed} failing test(s)"
    )


def meets_expectation(
    verdict: Verdict, expect_caught: bool, failing: Sequence[str], killed_by: Sequence[str]
) -> bool:
    """CAUGHT (by every `killed_by` test, if named) meets true; SURVIVED meets false."""
    if expect_caught:
        return verdict is Verdict.CAUGHT and set(killed_by) <= set(failing)
    return verdict is Verdict.SURVIVED
