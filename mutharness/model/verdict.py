"""Facts -> verdict: one ladder that says whether a run can be believed, then the verdict."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from mutharness.paths import shown
from mutharness.runners.base import Outcome, ReportState, RunExit, RunFacts

EXAMPLES = 3
LOW_SPACE_BYTES = 1 << 20  # less left where a run wrote than a report of a large suite
_NO_SPACE = re.compile(r"No space left on device|\[Errno 28\]|\bENOSPC\b")


class Verdict(Enum):
    """What one mutation run proves."""

    CAUGHT = "CAUGHT"  # the baseline's tests all ran (or up to one failing), one failed
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
    skipped_instead: tuple[str, ...] = ()  # the baseline's passing tests this run skipped


def _untrustworthy(reason: str) -> Classification:
    return Classification(Verdict.UNTRUSTWORTHY, reason)


def _said(facts: RunFacts) -> str:
    words = facts.said()
    return f"; {facts.runner} said: {words}" if words else ""


def _examples(ids: Sequence[str]) -> str:
    shown_ids = ", ".join(ids[:EXAMPLES])
    return shown_ids + (f" and {len(ids) - EXAMPLES} more" if len(ids) > EXAMPLES else "")


def collection_problem(facts: RunFacts) -> str | None:
    """Why a run that ended with a report did not load every test file (None when it did, or
    when it ended without one: `run_problem` names that)."""
    if facts.timed_out or facts.signal is not None or facts.report is not ReportState.OK:
        return None
    if not facts.collection_errors:
        return None
    return f"collection error in {', '.join(facts.collection_errors[:EXAMPLES])}{_said(facts)}"


def run_problem(facts: RunFacts, load_errors: bool = False) -> str | None:
    """Why a run's facts cannot be believed at all, baseline or mutant (None when they can).

    A crash is never a kill: no report, a report from another run, a session cut short, a
    test that "passed" without running its body, all make a run that proves nothing. With
    `load_errors` (red-first's reverted side) files that fail to load are facts, not a
    problem: the runner's exit then says so, whatever the tests that did load did.
    """
    if facts.timed_out:
        return f"exceeded {facts.timeout_s:g} s"
    if facts.signal is not None:
        return f"killed by signal {facts.signal}"
    if facts.report is not ReportState.OK:
        if _NO_SPACE.search(facts.log_tail) or (
                facts.free_bytes is not None and facts.free_bytes < LOW_SPACE_BYTES):
            return ("no space left on the device the run writes to (TMPDIR): the run could "
                    f"not write its report ({facts.report.value}); free some space, or set "
                    "TMPDIR to a larger file system")
        return f"report {facts.report.value} (exit status {facts.exit_status}){_said(facts)}"
    loaded_only = load_errors and bool(facts.collection_errors)
    if not loaded_only and (problem := collection_problem(facts)) is not None:
        return problem
    if facts.exit not in (RunExit.ALL_PASSED, RunExit.TESTS_FAILED):
        return f"{facts.runner} exit status {facts.exit_status}{_said(facts)}"
    if not facts.outcomes and not loaded_only:
        return "ran 0 tests: an empty run proves nothing"
    bodiless = [o.nodeid for o in facts.outcomes if o.outcome is Outcome.NO_CALL]
    if bodiless:
        return (
            f"{len(bodiless)} test(s) reported as passed never ran their body (pytest.exit() "
            f"or a plugin ended the session): {_examples(bodiless)}"
        )
    unknown = [o.nodeid for o in facts.outcomes if o.outcome is Outcome.UNKNOWN]
    if unknown:
        return (
            f"{len(unknown)} test(s) ended with an outcome {facts.runner} does not define: "
            + _examples(unknown)
        )
    cancelled = [o.nodeid for o in facts.outcomes if o.outcome is Outcome.CANCELLED]
    if cancelled:
        return (
            f"{len(cancelled)} test(s) cancelled before they finished (a failing hook, or the "
            f"file ended first): {_examples(cancelled)}"
        )
    if (facts.exit is RunExit.TESTS_FAILED) != bool(facts.failed) and not loaded_only:
        return (
            f"exit status {facts.exit_status} disagrees with {facts.failed} failing test(s)"
            f"{_said(facts)}"
        )
    return None


def baseline_problem(facts: RunFacts, expected_pass: int, approved: int = 0) -> str | None:
    """Why a baseline run is not green, complete and at the spec's count (None when it is).

    Skips and xfails are accepted (they must stay the same in every run, see inert_problem);
    `expectBaselinePass` counts passes plus the `approved` platform skips (see skips)."""
    counts = f"pass={facts.passed} fail={facts.failed} tests={len(facts.outcomes)}"
    if facts.timed_out:
        return f"timed out after {facts.timeout_s:g} s"
    problem = run_problem(facts)
    if facts.failed:
        said = facts.said()
        return f"not green: {facts.failed} test(s) failed ({counts})" + (
            f"; {facts.runner} said: {said}" if problem is not None and said else ""
        )
    if (problem is not None and facts.runner == "pytest" and facts.exit is RunExit.TESTS_FAILED
            and facts.passed and not facts.failed):
        return (f"every test passed but pytest exited {facts.exit_status}: an option of the "
                "project's (an addopts gate meant for the whole suite) or a plugin failed the "
                f"run{_said(facts)} ({counts}); in the project config (mutharness.toml), "
                "`pytest-drop-addopts = [\"--the-option\"]` removes such an option from "
                "mutharness's runs, `pytest-addopts` replaces the project's addopts")
    if problem is not None:
        return f"no trustworthy run: {problem} ({counts})"
    if facts.passed + approved != expected_pass:
        skips = f" + {approved} approved skip(s)" if approved else ""
        return (
            f"baseline pass={facts.passed}{skips} but the spec expects {expected_pass}; "
            "either the suite changed or the spec is stale"
        )
    return None


def unstable_tests(runs: Sequence[RunFacts]) -> tuple[str, ...]:
    """Tests whose outcome was not the same in every baseline run (or that some runs lacked)."""
    seen: dict[str, set[str]] = {}
    present: dict[str, int] = {}
    for run in runs:
        for outcome in run.outcomes:
            seen.setdefault(outcome.nodeid, set()).add(outcome.outcome)
        for nodeid in set(run.nodeids):
            present[nodeid] = present.get(nodeid, 0) + 1
    return tuple(
        nodeid for nodeid, kinds in seen.items() if len(kinds) > 1 or present[nodeid] != len(runs)
    )


def _repeated(facts: RunFacts) -> list[str]:
    return sorted(nodeid for nodeid, count in Counter(facts.nodeids).items() if count > 1)


def known_failures(facts: RunFacts, baseline: RunFacts) -> tuple[str, ...]:
    """The tests this run failed that the baseline ran and passed, by id."""
    passed = {outcome.nodeid for outcome in baseline.outcomes if outcome.outcome.is_pass}
    return tuple(nodeid for nodeid in facts.failing_ids if nodeid in passed)


def ids_problem(
    facts: RunFacts, baseline: RunFacts, stopped_at_first: bool = False
) -> str | None:
    """Why a run did not run exactly the baseline's tests (None when it did); a run that
    `stopped_at_first` failure may have run fewer, but none the baseline did not run."""
    repeated = _repeated(facts)
    if repeated:
        return (
            f"{len(repeated)} test id(s) reported more than once (subtests?): "
            f"{_examples(repeated)}"
        )
    ran, expected = set(facts.nodeids), set(baseline.nodeids)
    if ran == expected or (stopped_at_first and facts.failed and ran <= expected):
        return None
    missing = sorted(expected - ran)
    new = sorted(ran - expected)
    detail = "; ".join(
        part for part in (
            f"missing {_examples(missing)}" if missing else "",
            f"new {_examples(new)}" if new else "",
        ) if part
    )
    if len(ran) == len(expected):
        return (
            "test ids differ between runs (a parametrize id made from id() or a random "
            f"value, or from a value the mutant changes?): {detail}"
        )
    return f"ran {len(ran)} tests, not the baseline's {len(expected)}: {detail}"


def _differing(
    facts: RunFacts, baseline: RunFacts, stopped_at_first: bool, both_only: bool = False
) -> tuple[dict[str, Outcome], list[str]]:
    """The run's skipped/xfailed tests by id, and the tests whose skip or xfail differs from
    the baseline's (a run `stopped_at_first` failure compared on the tests it ran; with
    `both_only`, on the tests both runs ran). A test the baseline xfailed that fails now is no
    difference but a failure: pytest fails a run on it (a strict xfail that passes,
    XPASS(strict); one raising what its `raises=` does not name)."""
    ran = set(facts.nodeids)
    common = ran & set(baseline.nodeids) if both_only else ran
    now = {nodeid: test.outcome for nodeid, test in facts.inert.items()
           if not both_only or nodeid in common}
    before = {nodeid: test.outcome for nodeid, test in baseline.inert.items()
              if not (stopped_at_first or both_only) or nodeid in common}
    failing = set(facts.failing_ids)
    differ = sorted(
        nodeid for nodeid in set(now) | set(before) if now.get(nodeid) != before.get(nodeid)
        and not (before.get(nodeid) is Outcome.XFAILED and nodeid in failing)
    )
    return now, differ


def inert_problem(
    facts: RunFacts, baseline: RunFacts, stopped_at_first: bool = False,
    both_only: bool = False,
) -> str | None:
    """Why a run's skipped/xfailed tests are not exactly the baseline's (None when they are;
    with `both_only`, among the tests both ran).

    A skip in the baseline is accepted (the evidence lists it) as long as every run skips
    the same tests the same way; a test that starts or stops skipping under a mutant makes
    that run prove nothing."""
    _, differ = _differing(facts, baseline, stopped_at_first, both_only)
    if not differ:
        return None
    return (
        f"{len(differ)} test(s) skipped or xfailed differently from the baseline: "
        f"{_examples(differ)}"
    )


def skipped_instead(
    facts: RunFacts, baseline: RunFacts, stopped_at_first: bool = False
) -> tuple[str, ...]:
    """The baseline's passing tests this run skipped instead of running, when that is the
    only way its skips and xfails differ from the baseline's (else none: `inert_problem`)."""
    now, differ = _differing(facts, baseline, stopped_at_first)
    passed = {outcome.nodeid for outcome in baseline.outcomes if outcome.outcome.is_pass}
    if differ and all(now.get(nodeid) is Outcome.SKIPPED and nodeid in passed
                      for nodeid in differ):
        return tuple(differ)
    return ()


def skip_reasons(facts: RunFacts, nodeids: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """Each of `nodeids` with the reason it skipped for in this run (absent: not skipped)."""
    inert = facts.inert
    return tuple((nodeid, inert[nodeid].reason if nodeid in inert else "(ran)")
                 for nodeid in nodeids)


def classify(
    facts: RunFacts, baseline: RunFacts, drift: Sequence[str] = (),
    stopped_at_first: bool = False,
) -> Classification:
    """Derive the verdict of a mutation run from its facts alone. A crash is never a kill.
    A run asked to stop at its first failure (`--first-failure`) is CAUGHT with the part of
    the baseline's tests it ran; one that failed nothing must have run them all. A run that
    did not run the baseline's tests (the mutant changed a list tests are generated from) is
    CAUGHT when a test the baseline passed fails, by its id, the difference named; else it
    proves nothing. A run whose only difference from the baseline is tests that passed there
    and skip here survived (the tests do not catch it: they stopped asking), those tests
    named."""
    if facts.timed_out:
        return Classification(Verdict.TIMEOUT, f"exceeded {facts.timeout_s:g} s")
    problem = run_problem(facts)
    if problem is not None:
        return _untrustworthy(problem)
    ids = ids_problem(facts, baseline, stopped_at_first)
    changed_set = ids is not None and not _repeated(facts) and bool(
        known_failures(facts, baseline))
    if ids is not None and not changed_set:
        return _untrustworthy(ids)
    instead = () if changed_set else skipped_instead(facts, baseline, stopped_at_first)
    if not instead and (problem := inert_problem(
            facts, baseline, stopped_at_first, both_only=changed_set)) is not None:
        return _untrustworthy(problem)
    if drift:
        shown_drift = ", ".join(shown(path) for path in drift[:EXAMPLES])
        return _untrustworthy(f"workspace changed after restore: {shown_drift}")
    if facts.failed:
        return Classification(Verdict.CAUGHT, ids or "")
    if instead:
        return Classification(
            Verdict.SURVIVED, f"{len(instead)} test(s) skipped instead of running: "
            f"{_examples(instead)}", instead)
    return Classification(Verdict.SURVIVED)


def meets_expectation(
    verdict: Verdict, expect_caught: bool, failing: Sequence[str], killed_by: Sequence[str]
) -> bool:
    """CAUGHT (by every `killed_by` test, if named) meets true; SURVIVED meets false."""
    if expect_caught:
        return verdict is Verdict.CAUGHT and set(killed_by) <= set(failing)
    return verdict is Verdict.SURVIVED
