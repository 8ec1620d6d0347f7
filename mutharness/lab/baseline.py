"""A spec's baseline: the collect probe, N baseline runs, their judgement, the timeout."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mutharness.errors import BaselineError, MutharnessError, WorkspaceError
from mutharness.lab.scenario import Lab, Ran, Scenario, run_scenario
from mutharness.runners.base import RunFacts
from mutharness.spec import Spec
from mutharness.verdict import baseline_problem, run_problem, unstable_tests


@dataclass(frozen=True)
class Baseline:
    """A green, complete baseline: the run that sets the timeout, and that timeout."""

    facts: RunFacts  # the slowest of the baseline runs
    timeout_s: float


class SpecStopped(Exception):
    """A spec that cannot give any verdict: the error, and the run it is about."""

    def __init__(self, error: MutharnessError, facts: RunFacts | None) -> None:
        super().__init__(error, facts)
        self.error = error
        self.facts = facts


IsolationCheck = Callable[[RunFacts], MutharnessError | None]


def _settled(ran: Ran) -> RunFacts:
    """The run's facts; a run without any mutant that changed what the workspace tracks stops
    the spec (the suite itself does that, so no run of it can be evidence)."""
    if ran.drift:
        raise SpecStopped(WorkspaceError(
            f"spec {ran.scenario.spec.id}: running the tests without any mutant changed tracked "
            "files or the checkout's git state (the workspace was reset); every verdict would "
            "be meaningless", ran.drift,
        ), ran.facts)
    return ran.facts


def _numbered(number: int, count: int, reason: str) -> str:
    return reason if count == 1 else f"baseline run {number} of {count}: {reason}"


def measure(
    spec: Spec, lab: Lab, runs: int, timeout_s: float, isolation: IsolationCheck,
    mutation_timeout: Callable[[float], float],
) -> Baseline:
    """Collect, then run the baseline `runs` times and judge it (raises SpecStopped).

    The collect probe must load every test file and pass the runner's isolation check before
    any baseline runs. Then, in order: a run that cannot be believed (a timeout, a crash) is
    named with its number; tests whose outcome differs between runs are unstable; a run that
    is red or off the spec's count is named with its own failing tests."""
    if lab.runner_for(spec).collects:
        probe = _settled(run_scenario(Scenario.collect(spec, timeout_s), lab))
        if (problem := run_problem(probe, collect_only=True)) is not None:
            raise SpecStopped(BaselineError(spec.id, f"collection failed: {problem}"), probe)
        if (error := isolation(probe)) is not None:
            raise SpecStopped(error, probe)
    done = [
        _settled(run_scenario(Scenario.baseline(spec, number, timeout_s), lab))
        for number in range(1, runs + 1)
    ]
    for number, facts in enumerate(done, 1):
        if (problem := run_problem(facts)) is not None and not facts.failed:
            reason = baseline_problem(facts, spec.expect_baseline_pass) or problem
            raise SpecStopped(BaselineError(spec.id, _numbered(number, runs, reason)), facts)
    unstable = unstable_tests(done)
    if unstable:
        raise SpecStopped(BaselineError(
            spec.id,
            f"unstable: {len(unstable)} test(s) did not have the same outcome in all {runs} "
            "baseline runs; a kill by a flaky test is no evidence",
            unstable, label="unstable",
        ), done[0])
    for number, facts in enumerate(done, 1):
        if (found := baseline_problem(facts, spec.expect_baseline_pass)) is not None:
            raise SpecStopped(
                BaselineError(spec.id, _numbered(number, runs, found), facts.failing_ids),
                facts,
            )
        if (error := isolation(facts)) is not None:
            raise SpecStopped(error, facts)
    slowest = max(done, key=lambda facts: facts.duration_s)  # the slowest sets the timeout
    return Baseline(slowest, mutation_timeout(slowest.duration_s))
