"""What one mutation's result means against its spec, in the words every report uses."""

from __future__ import annotations

from enum import Enum

from mutharness.model.results import MutationResult
from mutharness.model.verdict import Verdict


class Outcome(Enum):
    """A mutation's result against what its spec expects."""

    AS_EXPECTED = "as expected"  # a trustworthy verdict, the one the spec documents
    UNEXPECTED = "unexpected"  # a trustworthy verdict, not the one the spec documents
    NO_VERDICT = "no verdict"  # the run proves nothing (UNTRUSTWORTHY, TIMEOUT)

    @classmethod
    def of(cls, result: MutationResult) -> Outcome:
        if not result.verdict.is_evidence:
            return cls.NO_VERDICT
        return cls.AS_EXPECTED if result.as_expected else cls.UNEXPECTED


def mismatch(result: MutationResult) -> str:
    """What was expected and what came (`expected CAUGHT, got SURVIVED`)."""
    wanted = "CAUGHT" if result.mutation.expect_caught else "SURVIVED"
    extra = ""
    if wanted == "CAUGHT" and result.verdict is Verdict.CAUGHT:
        extra = f" but not by {', '.join(result.mutation.killed_by)}"
    return f"expected {wanted}, got {result.verdict.value}{extra}"


def described(result: MutationResult) -> str:
    """One sentence on the result: its verdict against the spec, and why."""
    outcome = Outcome.of(result)
    if outcome is Outcome.NO_VERDICT:
        return f"{result.verdict.value}, no verdict: {result.reason}"
    if outcome is Outcome.UNEXPECTED:
        return mismatch(result)
    if result.verdict is Verdict.CAUGHT:
        return f"CAUGHT as expected, by {result.facts.failed} failing test(s)"
    return "SURVIVED, a documented survivor"
