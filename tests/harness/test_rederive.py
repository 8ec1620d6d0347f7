"""The re-derivation rules as a table: which stored verdicts a record's own facts support."""

from __future__ import annotations

from dataclasses import replace

import pytest

from mutharness.model.rederive import verdict_problem
from mutharness.model.results import MutationResult
from mutharness.model.spec import Mutation
from mutharness.model.verdict import Verdict
from mutharness.runners.base import Outcome, ReportState, RunExit, RunFacts, TestOutcome

IDS = ("t::a", "t::b", "t::c")


def facts(failed: tuple[str, ...] = (), passed: int | None = None, *,
          timed_out: bool = False) -> RunFacts:
    """A run as a results file records a mutant's: failures named, passes counted."""
    count = len(IDS) - len(failed) if passed is None else passed
    outcomes = (*(TestOutcome(nodeid, Outcome.FAILED, 0.1) for nodeid in failed),
                *(TestOutcome("", Outcome.PASSED, 0.0) for _ in range(count)))
    return RunFacts("pytest", 1 if failed else 0, None, timed_out, 10.0, 0.5, ReportState.OK,
                    RunExit.TESTS_FAILED if failed else RunExit.ALL_PASSED, outcomes, (), "")


BASELINE = RunFacts("pytest", 0, None, False, 10.0, 0.5, ReportState.OK, RunExit.ALL_PASSED,
                    tuple(TestOutcome(nodeid, Outcome.PASSED, 0.1) for nodeid in IDS), (), "")


def record(verdict: Verdict, as_expected: bool, run: RunFacts, expect_caught: bool = True,
           killed_by: tuple[str, ...] = (), first_failure: bool = False) -> MutationResult:
    mutation = Mutation(0, "m", "f.py", "a", "b", expect_caught, killed_by)
    return MutationResult(mutation, 1, 1, False, "", run, verdict, "", as_expected,
                          first_failure=first_failure)


CAUGHT_RUN, SURVIVED_RUN = facts(("t::a",)), facts()
SKIPPED_RUN = replace(SURVIVED_RUN, outcomes=(
    TestOutcome("t::a", Outcome.SKIPPED, 0.0, "checker not found"),
    *(TestOutcome("", Outcome.PASSED, 0.0) for _ in range(2))))

TABLE = [  # (what, the record, whether its facts support it)
    ("a caught run recorded CAUGHT", record(Verdict.CAUGHT, True, CAUGHT_RUN), True),
    ("a surviving run recorded SURVIVED", record(Verdict.SURVIVED, False, SURVIVED_RUN), True),
    ("a documented survivor", record(Verdict.SURVIVED, True, SURVIVED_RUN, False), True),
    ("a surviving run recorded CAUGHT", record(Verdict.CAUGHT, True, SURVIVED_RUN), False),
    ("a caught run recorded SURVIVED", record(Verdict.SURVIVED, True, CAUGHT_RUN, False), False),
    ("an unexpected survivor recorded as expected",
     record(Verdict.SURVIVED, True, SURVIVED_RUN), False),
    ("a kill by a test other than killedBy recorded as expected",
     record(Verdict.CAUGHT, True, CAUGHT_RUN, killed_by=("t::b",)), False),
    ("a run with fewer tests than the baseline recorded CAUGHT",
     record(Verdict.CAUGHT, True, facts(("t::a",), passed=1)), False),
    ("a failure of a test the baseline never ran",
     record(Verdict.CAUGHT, True, facts(("t::z",), passed=2)), False),
    ("a timed-out run recorded CAUGHT",
     record(Verdict.CAUGHT, True, facts(("t::a",), timed_out=True)), False),
    ("a run that did not time out recorded TIMEOUT",
     record(Verdict.TIMEOUT, False, SURVIVED_RUN), False),
    ("a run recorded UNTRUSTWORTHY (it claims less than its facts)",
     record(Verdict.UNTRUSTWORTHY, False, CAUGHT_RUN), True),
    ("an UNTRUSTWORTHY run recorded as expected",
     record(Verdict.UNTRUSTWORTHY, True, CAUGHT_RUN), False),
    ("a survivor whose test skipped instead of running",
     record(Verdict.SURVIVED, False, SKIPPED_RUN), True),
    ("a survivor whose test skipped instead of running recorded CAUGHT",
     record(Verdict.CAUGHT, True, SKIPPED_RUN), False),
    ("a run whose tests were not the baseline's, each named, a baseline test failing",
     record(Verdict.CAUGHT, True, replace(CAUGHT_RUN, outcomes=(
         TestOutcome("t::a", Outcome.FAILED, 0.1), TestOutcome("t::b", Outcome.PASSED, 0.1)))),
     True),
    ("a run whose tests were not the baseline's, each named, only a new test failing",
     record(Verdict.CAUGHT, True, replace(CAUGHT_RUN, outcomes=(
         TestOutcome("t::z", Outcome.FAILED, 0.1), TestOutcome("t::b", Outcome.PASSED, 0.1)))),
     False),
    ("a run stopped at its first failure, as its settings allow",
     record(Verdict.CAUGHT, True, facts(("t::a",), passed=0), first_failure=True), True),
]


@pytest.mark.parametrize(("what", "result", "supported"), TABLE, ids=[row[0] for row in TABLE])
def test_a_stored_verdict_stands_only_where_its_facts_give_it(
    what: str, result: MutationResult, supported: bool
) -> None:
    assert (verdict_problem(result, BASELINE, first_failure_allowed=True) is None) is supported


def test_a_first_failure_run_stands_only_when_the_run_s_settings_allowed_one() -> None:
    stopped = record(Verdict.CAUGHT, True, facts(("t::a",), passed=0), first_failure=True)

    assert verdict_problem(stopped, BASELINE, first_failure_allowed=False) is not None
    # without the mode its facts name a partial run in which a baseline test failed: CAUGHT
    # too (an `-x` of the project's), so the record stands either way
    assert verdict_problem(replace(stopped, first_failure=False), BASELINE, True) is None
