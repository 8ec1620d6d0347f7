"""verdict.baseline_problem: a baseline is green, complete and at the spec's count, or refused."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from madefacts import pytest_facts

from mutharness.model.spec import Mutation, Spec
from mutharness.model.verdict import baseline_problem
from mutharness.options import defaults
from mutharness.runners.base import Outcome, ReportState, RunFacts, TestOutcome

IDS = tuple(f"tests/test_calc.py::test_{name}" for name in "abcd")
SPEC = Spec(
    id="calc", path="specs/calc.json", digest="0" * 64, tests=("tests/test_calc.py",),
    expect_baseline_pass=4,
    mutations=(Mutation(0, "m", "src/calc.py", "a", "b", True, ()),), runner="pytest",
)


def outcomes(*kinds: str) -> tuple[TestOutcome, ...]:
    return tuple(
        TestOutcome(nodeid, Outcome(kind), 0.01) for nodeid, kind in zip(IDS, kinds, strict=False)
    )


def facts(**changes: Any) -> RunFacts:
    return pytest_facts(**{"timeout_s": 900.0, "duration_s": 0.5,
                           "outcomes": outcomes(*["passed"] * 4), **changes})


def test_a_green_complete_baseline_at_the_expected_count_is_accepted() -> None:
    assert baseline_problem(facts(), 4) is None


@pytest.mark.parametrize(
    ("changes", "phrase"),
    [
        pytest.param({"timed_out": True}, "timed out after 900", id="timeout"),
        pytest.param({"signal": 9, "exit_status": -9}, "signal 9", id="signal"),
        pytest.param({"report": ReportState.MISSING}, "no trustworthy run: report missing",
                     id="no-report"),
        pytest.param({"collection_errors": ("tests/test_calc.py",)}, "collection error",
                     id="collection-error"),
        pytest.param({"exit_status": 1, "outcomes": outcomes("passed", "failed", "passed",
                                                             "passed")},
                     "not green: 1 test(s) failed (pass=3 fail=1 tests=4)", id="red"),
        pytest.param({"outcomes": outcomes("passed", "passed-without-call", "passed", "passed")},
                     "never ran their body", id="pytest-exit"),
        pytest.param({"outcomes": outcomes("passed", "skipped", "passed", "passed")},
                     "baseline pass=3 but the spec expects 4", id="a-skip-is-no-pass"),
        pytest.param({"outcomes": outcomes("passed", "passed", "passed")},
                     "baseline pass=3 but the spec expects 4", id="count-drifted-down"),
    ],
)
def test_a_baseline_that_is_not_green_complete_and_counted_is_refused(
    changes: dict[str, Any], phrase: str
) -> None:
    problem = baseline_problem(facts(**changes), 4)
    assert problem is not None
    assert phrase in problem


@pytest.mark.parametrize("kind", ["skipped", "xfailed"])
def test_a_baseline_with_skipped_or_xfailed_tests_is_accepted_counting_passes_only(
    kind: str
) -> None:
    spec = dataclasses.replace(SPEC, expect_baseline_pass=3)
    assert baseline_problem(facts(outcomes=outcomes("passed", kind, "passed", "passed")),
                            spec.expect_baseline_pass) \
        is None


def test_a_baseline_exit_1_with_every_test_passing_shows_pytests_own_reason() -> None:
    run = facts(exit_status=1, pytest_exit=1, log_tail=(
        "....\nFAIL Required test coverage of 99% not reached. Total coverage: 60.00%\n"
        "4 passed in 0.10s"
    ))
    problem = baseline_problem(run, 4)
    assert problem is not None
    assert "pytest said: FAIL Required test coverage of 99% not reached" in problem


def test_more_passing_tests_than_expected_is_refused_too() -> None:
    spec = dataclasses.replace(SPEC, expect_baseline_pass=3)
    problem = baseline_problem(facts(), spec.expect_baseline_pass)
    assert problem is not None
    assert "baseline pass=4 but the spec expects 3" in problem


@pytest.mark.parametrize(
    ("baseline_s", "expected"),
    [(0.1, 20.0), (5.0, 25.0), (100.0, 310.0)],
    ids=["floor-wins", "scaled-wins", "slow-suite"],
)
def test_the_mutation_timeout_is_the_floor_or_factor_times_baseline_plus_constant(
    baseline_s: float, expected: float
) -> None:
    assert defaults().mutation_timeout(baseline_s) == expected
