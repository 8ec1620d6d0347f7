"""verdict.classify / verdict.meets_expectation: facts first, verdict second."""

from __future__ import annotations

from typing import Any

import pytest
from madefacts import pytest_facts

from mutharness.model.verdict import Classification, Verdict, classify, meets_expectation
from mutharness.runners.base import Outcome, ReportState, RunFacts, TestOutcome

BASELINE = tuple(f"tests/test_calc.py::test_{name}" for name in "abc")


def outcomes(*kinds: str, ids: tuple[str, ...] = BASELINE) -> tuple[TestOutcome, ...]:
    return tuple(
        TestOutcome(nodeid, Outcome(kind), 0.01) for nodeid, kind in zip(ids, kinds, strict=True)
    )


ALL_PASSED = outcomes("passed", "passed", "passed")
ONE_FAILED = outcomes("passed", "failed", "passed")


def facts(**changes: Any) -> RunFacts:
    """The facts of a clean run in which every baseline test passed, with `changes`."""
    return pytest_facts(**{"outcomes": ALL_PASSED, "log_path": "/tmp/run/pytest.log",
                           **changes})


def caught(**changes: Any) -> RunFacts:
    """A clean run in which one baseline test failed, with `changes`."""
    return facts(**{"exit_status": 1, "pytest_exit": 1, "outcomes": ONE_FAILED, **changes})


CAUGHT, SURVIVED = Verdict.CAUGHT, Verdict.SURVIVED
UNTRUSTWORTHY, TIMEOUT = Verdict.UNTRUSTWORTHY, Verdict.TIMEOUT

# (facts, drift, verdict, a phrase of the reason)
TABLE = [
    # evidence
    pytest.param(caught(), (), CAUGHT, "", id="exit-1-with-a-failure-is-caught"),
    pytest.param(caught(outcomes=outcomes("failed", "failed", "failed")), (), CAUGHT, "",
                 id="exit-1-all-failed-is-caught"),
    pytest.param(caught(outcomes=outcomes("passed", "error", "passed")), (), CAUGHT, "",
                 id="exit-1-with-an-error-is-caught"),
    pytest.param(facts(), (), SURVIVED, "", id="exit-0-all-passed-survived"),
    pytest.param(facts(outcomes=tuple(reversed(ALL_PASSED))), (), SURVIVED, "",
                 id="same-tests-in-another-order-survived"),
    # timeouts first: a killed tree proves nothing, whatever else it left behind
    pytest.param(facts(timed_out=True, exit_status=None, signal=9, report=ReportState.MISSING,
                       outcomes=()), (), TIMEOUT, "exceeded 30 s", id="timed-out"),
    pytest.param(caught(timed_out=True), (), TIMEOUT, "exceeded", id="timed-out-after-failing"),
    pytest.param(facts(timed_out=True), (), TIMEOUT, "exceeded", id="timed-out-after-passing"),
    # signals
    pytest.param(facts(exit_status=None, signal=9, report=ReportState.MISSING, outcomes=()), (),
                 UNTRUSTWORTHY, "signal 9", id="killed-by-sigkill"),
    pytest.param(caught(exit_status=-11, signal=11), (), UNTRUSTWORTHY, "signal 11",
                 id="segfault-after-failures-is-not-caught"),
    # the report: how os._exit(0) and friends are caught
    pytest.param(facts(report=ReportState.MISSING, pytest_exit=None, outcomes=()), (),
                 UNTRUSTWORTHY, "missing", id="os-exit-0-no-report-is-never-survived"),
    pytest.param(facts(exit_status=1, report=ReportState.MISSING, pytest_exit=None, outcomes=()),
                 (), UNTRUSTWORTHY, "missing", id="exit-1-no-report-is-never-caught"),
    pytest.param(facts(report=ReportState.UNREADABLE, outcomes=()), (), UNTRUSTWORTHY,
                 "unreadable", id="report-unreadable"),
    pytest.param(facts(report=ReportState.STALE), (), UNTRUSTWORTHY, "stale",
                 id="report-stale-from-an-earlier-run"),
    pytest.param(caught(report=ReportState.STALE), (), UNTRUSTWORTHY, "stale",
                 id="stale-report-with-failures-is-not-caught"),
    pytest.param(facts(exit_status=1, report=ReportState.MISMATCH), (), UNTRUSTWORTHY,
                 "exit-status-mismatch", id="report-disagrees-with-the-exit-status"),
    # collection
    pytest.param(caught(exit_status=2, pytest_exit=2,
                        collection_errors=("tests/test_calc.py",)), (),
                 UNTRUSTWORTHY, "collection error in tests/test_calc.py",
                 id="collection-error"),
    pytest.param(caught(collection_errors=("tests/test_calc.py",)), (), UNTRUSTWORTHY,
                 "collection error", id="collection-error-with-exit-1"),
    # exit statuses pytest does not use for a completed run
    pytest.param(facts(exit_status=2, pytest_exit=2), (), UNTRUSTWORTHY, "exit status 2",
                 id="interrupted-exit-2"),
    pytest.param(caught(exit_status=3, pytest_exit=3), (), UNTRUSTWORTHY, "exit status 3",
                 id="internal-error-exit-3"),
    pytest.param(facts(exit_status=4, pytest_exit=4), (), UNTRUSTWORTHY, "exit status 4",
                 id="usage-error-exit-4"),
    pytest.param(facts(exit_status=5, pytest_exit=5, outcomes=()), (), UNTRUSTWORTHY,
                 "exit status 5", id="no-tests-collected-exit-5"),
    pytest.param(facts(exit_status=None, pytest_exit=None), (), UNTRUSTWORTHY, "exit status None",
                 id="no-exit-status"),
    # not the baseline's tests
    # a test the baseline passed fails: CAUGHT, whatever else the mutant did to the test set
    # (tests generated from a list the mutant changed), the difference named
    pytest.param(caught(outcomes=ONE_FAILED[:2]), (), CAUGHT, "ran 2 tests, not the "
                 "baseline's 3: missing tests/test_calc.py::test_c",
                 id="fewer-tests-with-a-baseline-test-failing-is-caught"),
    pytest.param(caught(outcomes=outcomes("passed", "failed", ids=(BASELINE[0], "t.py::new"))),
                 (), UNTRUSTWORTHY, "ran 2 tests, not the baseline's 3",
                 id="fewer-tests-whose-only-failure-is-new-is-not-caught"),
    pytest.param(caught(outcomes=outcomes("passed", "failed", "failed",
                                          ids=(BASELINE[0], BASELINE[1], BASELINE[1]))),
                 (), UNTRUSTWORTHY, "reported more than once",
                 id="a-failure-beside-a-repeated-id-is-not-caught"),
    pytest.param(facts(outcomes=ALL_PASSED[:2]), (), UNTRUSTWORTHY, "ran 2 tests",
                 id="fewer-tests-than-baseline-is-not-survived"),
    pytest.param(facts(outcomes=(*ALL_PASSED, TestOutcome("tests/test_calc.py::test_d",
                                                          Outcome.PASSED, 0.0))),
                 (), UNTRUSTWORTHY, "ran 4 tests, not the baseline's 3: new "
                 "tests/test_calc.py::test_d", id="more-tests-than-baseline"),
    pytest.param(caught(outcomes=outcomes("passed", "passed", "failed",
                                          ids=(*BASELINE[:2], "tests/test_calc.py::test_z"))),
                 (), UNTRUSTWORTHY, "test ids differ between runs (a parametrize id made from "
                 "id() or a random value, or from a value the mutant changes?)",
                 id="different-tests-same-count"),
    pytest.param(caught(outcomes=outcomes("passed", "failed", "passed",
                                          ids=(*BASELINE[:2], "tests/test_calc.py::test_z"))),
                 (), CAUGHT, "test ids differ between runs", id="different-tests-beside-a-failure"),
    pytest.param(facts(outcomes=outcomes("passed", "passed", "passed",
                                         ids=(BASELINE[0], BASELINE[0], BASELINE[1]))),
                 (), UNTRUSTWORTHY, "reported more than once", id="a-test-ran-twice-another-never"),
    pytest.param(facts(outcomes=()), (), UNTRUSTWORTHY, "ran 0 tests", id="nothing-ran"),
    # tests that neither passed nor failed, where the baseline passed them
    pytest.param(facts(outcomes=outcomes("passed", "skipped", "passed")), (), SURVIVED,
                 "1 test(s) skipped instead of running: tests/test_calc.py::test_b",
                 id="a-skipped-test"),
    pytest.param(caught(outcomes=outcomes("failed", "skipped", "passed")), (), CAUGHT,
                 "", id="a-skipped-test-next-to-a-failure"),
    pytest.param(facts(outcomes=outcomes("passed", "xfailed", "passed")), (), UNTRUSTWORTHY,
                 "skipped or xfailed differently", id="a-passing-test-that-now-xfails"),
    pytest.param(facts(outcomes=outcomes("passed", "xfailed", "passed")), (), UNTRUSTWORTHY,
                 "skipped or xfailed differently", id="an-xfailed-test"),
    pytest.param(facts(outcomes=outcomes("passed", "xpassed", "passed")), (), UNTRUSTWORTHY,
                 "skipped or xfailed differently", id="an-xpassed-test"),
    pytest.param(facts(outcomes=outcomes("passed", "unknown", "passed")), (), UNTRUSTWORTHY,
                 "an outcome pytest does not define", id="an-unknown-outcome"),
    # "passed" with no call phase: pytest.exit(returncode=0) inside the last test
    pytest.param(facts(outcomes=outcomes("passed", "passed", "passed-without-call")), (),
                 UNTRUSTWORTHY, "never ran their body", id="pytest-exit-0-is-never-survived"),
    # the workspace changed after restore
    pytest.param(caught(), ("src/calc.py",), UNTRUSTWORTHY, "workspace changed after restore: "
                 "src/calc.py", id="drift-after-a-catch"),
    pytest.param(facts(), ("tests/conftest.py", ".git/config"), UNTRUSTWORTHY,
                 "tests/conftest.py, .git/config", id="drift-after-a-survival"),
    # the exit status and the outcomes disagree: a crash is never a kill
    pytest.param(facts(exit_status=1, pytest_exit=1), (), UNTRUSTWORTHY, "disagrees",
                 id="exit-1-without-a-failing-test-is-a-crash-not-caught"),
    pytest.param(caught(exit_status=0, pytest_exit=0), (), UNTRUSTWORTHY, "disagrees",
                 id="exit-0-with-a-failing-test-is-not-survived"),
]


@pytest.mark.parametrize(("run", "drift", "verdict", "reason"), TABLE)
def test_the_verdict_follows_from_the_facts_alone(
    run: RunFacts, drift: tuple[str, ...], verdict: Verdict, reason: str
) -> None:
    result = classify(run, facts(), drift)

    assert result.verdict is verdict
    assert reason in result.reason
    if verdict.is_evidence and not reason:
        assert result == Classification(verdict)
    else:
        assert result.reason


def test_an_empty_run_against_an_empty_baseline_is_never_survived() -> None:
    run = facts(outcomes=())

    assert classify(run, run).verdict is Verdict.UNTRUSTWORTHY


def test_the_baseline_order_does_not_matter() -> None:
    baseline = facts(outcomes=tuple(reversed(ALL_PASSED)))
    assert classify(caught(), baseline).verdict is Verdict.CAUGHT


WITH_A_SKIP = facts(outcomes=outcomes("passed", "skipped", "passed"))
WITH_AN_XFAIL = facts(outcomes=outcomes("passed", "xfailed", "passed"))

# (facts, baseline, verdict, a phrase of the reason): skips that are the baseline's own
SKIPS = [
    pytest.param(facts(outcomes=outcomes("passed", "skipped", "passed")), WITH_A_SKIP, SURVIVED,
                 "", id="the-baselines-skip-again-survived"),
    pytest.param(caught(outcomes=outcomes("failed", "skipped", "passed")), WITH_A_SKIP, CAUGHT,
                 "", id="the-baselines-skip-again-caught"),
    pytest.param(facts(), WITH_A_SKIP, UNTRUSTWORTHY, "skipped or xfailed differently from the "
                 "baseline: tests/test_calc.py::test_b", id="a-baseline-skip-that-now-runs"),
    pytest.param(facts(outcomes=outcomes("passed", "xfailed", "passed")), WITH_A_SKIP,
                 UNTRUSTWORTHY, "differently", id="a-baseline-skip-that-now-xfails"),
    pytest.param(facts(outcomes=outcomes("skipped", "skipped", "passed")), WITH_A_SKIP,
                 SURVIVED, "1 test(s) skipped instead of running: tests/test_calc.py::test_a",
                 id="one-more-skip-than-the-baseline"),
    # an xfail the baseline xfailed that now fails (a strict xfail that passes, XPASS(strict),
    # or one that raises what its `raises=` does not name): pytest fails the run on it
    pytest.param(caught(outcomes=outcomes("passed", "failed", "passed")), WITH_AN_XFAIL, CAUGHT,
                 "", id="a-strict-xfail-that-now-passes-alone"),
    pytest.param(caught(outcomes=outcomes("failed", "failed", "passed")), WITH_AN_XFAIL, CAUGHT,
                 "", id="a-strict-xfail-that-now-passes-beside-a-failure"),
    pytest.param(caught(outcomes=outcomes("failed", "xfailed", "passed")), WITH_AN_XFAIL,
                 CAUGHT, "", id="the-baselines-xfail-again-beside-a-failure"),
    pytest.param(facts(outcomes=outcomes("passed", "xpassed", "passed")), WITH_AN_XFAIL,
                 UNTRUSTWORTHY, "differently", id="a-lax-xfail-that-now-passes"),
    pytest.param(caught(outcomes=outcomes("failed", "failed", "passed")), WITH_A_SKIP,
                 UNTRUSTWORTHY, "differently", id="a-baseline-skip-that-now-runs-and-fails"),
]


@pytest.mark.parametrize(("run", "baseline", "verdict", "reason"), SKIPS)
def test_a_mutant_run_must_skip_exactly_what_the_baseline_skipped(
    run: RunFacts, baseline: RunFacts, verdict: Verdict, reason: str
) -> None:
    result = classify(run, baseline)

    assert result.verdict is verdict
    assert reason in result.reason




FAILING = ("tests/test_calc.py::test_b", "tests/test_calc.py::test_c")

EXPECTATIONS = [
    # (verdict, expectCaught, failing, killedBy, met)
    pytest.param(CAUGHT, True, FAILING, (), True, id="caught-as-expected"),
    pytest.param(SURVIVED, True, (), (), False, id="survived-but-expected-caught"),
    pytest.param(SURVIVED, False, (), (), True, id="documented-survivor-survived"),
    pytest.param(CAUGHT, False, FAILING, (), False, id="documented-survivor-was-caught"),
    pytest.param(CAUGHT, True, FAILING, FAILING[:1], True, id="killed-by-the-named-test"),
    pytest.param(CAUGHT, True, FAILING, FAILING, True, id="killed-by-every-named-test"),
    pytest.param(CAUGHT, True, FAILING[:1], FAILING, False, id="one-named-killer-passed"),
    pytest.param(CAUGHT, True, FAILING, ("tests/test_calc.py::test_a",), False,
                 id="caught-by-the-wrong-test"),
    pytest.param(CAUGHT, True, ("tests/test_calc.py::test_b[1]",), ("tests/test_calc.py::test_b",),
                 False, id="killed-by-matches-whole-node-ids-only"),
    pytest.param(SURVIVED, False, (), FAILING, True, id="killed-by-is-irrelevant-to-a-survivor"),
    pytest.param(UNTRUSTWORTHY, True, FAILING, (), False, id="untrustworthy-never-meets-caught"),
    pytest.param(UNTRUSTWORTHY, False, (), (), False, id="untrustworthy-never-meets-survived"),
    pytest.param(TIMEOUT, True, (), (), False, id="timeout-never-meets-caught"),
    pytest.param(TIMEOUT, False, (), (), False, id="timeout-never-meets-survived"),
]


@pytest.mark.parametrize(("verdict", "expect_caught", "failing", "killed_by", "met"),
                         EXPECTATIONS)
def test_meets_expectation_pairs_verdicts_with_expect_caught_and_killed_by(
    verdict: Verdict, expect_caught: bool, failing: tuple[str, ...],
    killed_by: tuple[str, ...], met: bool,
) -> None:
    assert meets_expectation(verdict, expect_caught, failing, killed_by) is met


# --first-failure: a run that stopped at its first failing test ran only a part of the tests
STOPPED_AT_B = outcomes("passed", "failed", ids=BASELINE[:2])


def test_a_run_stopped_at_its_first_failure_is_caught_with_the_tests_it_ran() -> None:
    run = caught(outcomes=STOPPED_AT_B)
    assert classify(run, facts(), stopped_at_first=True) == Classification(CAUGHT)
    # without the mode (an `-x` in the project's addopts): caught, the tests it lacks named
    assert classify(run, facts()) == Classification(
        CAUGHT, "ran 2 tests, not the baseline's 3: missing tests/test_calc.py::test_c")


def test_a_first_failure_run_that_failed_nothing_must_have_run_every_test() -> None:
    partial = facts(outcomes=outcomes("passed", "passed", ids=BASELINE[:2]))
    result = classify(partial, facts(), stopped_at_first=True)
    assert result.verdict is UNTRUSTWORTHY
    assert "missing tests/test_calc.py::test_c" in result.reason


def test_a_first_failure_run_with_a_test_the_baseline_lacks_is_untrustworthy() -> None:
    stranger = caught(outcomes=outcomes("passed", "failed", ids=(BASELINE[0], "t.py::new")))
    result = classify(stranger, facts(), stopped_at_first=True)
    assert result.verdict is UNTRUSTWORTHY
    assert "new t.py::new" in result.reason


def test_a_first_failure_run_with_a_new_test_before_a_known_failure_is_caught() -> None:
    run = caught(outcomes=outcomes("passed", "failed", ids=("t.py::new", BASELINE[1])))
    result = classify(run, facts(), stopped_at_first=True)
    assert result.verdict is CAUGHT
    assert "new t.py::new" in result.reason


def test_a_changed_test_set_compares_skips_only_among_the_tests_both_ran() -> None:
    new_skip = caught(outcomes=outcomes("failed", "skipped", ids=(BASELINE[0], "t.py::new")))
    assert classify(new_skip, facts()).verdict is CAUGHT
    baseline = facts(outcomes=outcomes("passed", "passed", "skipped"))
    common_skip_runs = caught(outcomes=outcomes("failed", "passed", "passed",
                                                ids=(BASELINE[0], "t.py::new", BASELINE[2])))
    assert classify(common_skip_runs, baseline).verdict is UNTRUSTWORTHY


def test_a_first_failure_run_compares_skips_only_among_the_tests_it_ran() -> None:
    baseline = facts(outcomes=outcomes("passed", "passed", "skipped"))
    assert classify(caught(outcomes=STOPPED_AT_B), baseline, stopped_at_first=True).verdict \
        is CAUGHT
    skipped_now = caught(outcomes=outcomes("skipped", "failed", ids=BASELINE[:2]))
    assert classify(skipped_now, baseline, stopped_at_first=True).verdict is CAUGHT
    runs_now = caught(outcomes=outcomes("passed", "failed", "failed"))
    assert classify(runs_now, baseline, stopped_at_first=True).verdict is UNTRUSTWORTHY
