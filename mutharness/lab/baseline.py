"""A spec's baseline: N baseline runs, their judgement, the pin, the timeout."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mutharness.errors import BaselineError, MutharnessError, WorkspaceError
from mutharness.lab.scenario import Lab, Ran, Scenario, prove, run_scenario
from mutharness.model.pins import Pin
from mutharness.model.skips import SkipCount, SkipRules
from mutharness.model.spec import Spec
from mutharness.model.verdict import (
    baseline_problem,
    collection_problem,
    run_problem,
    unstable_tests,
)
from mutharness.runners.base import RunFacts


@dataclass(frozen=True)
class Baseline:
    """A green, complete baseline: the run that sets the timeout, that timeout, the pin."""

    facts: RunFacts  # the slowest of the baseline runs
    timeout_s: float
    pin: Pin
    last: RunFacts  # the last of them, which the runner's proof run repeats

    def prove(self, spec: Spec, lab: Lab, timeout_s: float) -> None:
        """The runner's proof run against the last baseline run (`scenario.prove`)."""
        prove(Scenario.proof(spec, timeout_s), lab, self.last)


class SpecStopped(Exception):
    """A spec that cannot give any verdict: the error, the run it is about, and the pin as
    measured when the measurement itself could be believed (a drifted count)."""

    def __init__(
        self, error: MutharnessError, facts: RunFacts | None, pin: Pin | None = None
    ) -> None:
        super().__init__(error, facts, pin)
        self.error = error
        self.facts = facts
        self.pin = pin

    def pin_of(self, spec: Spec) -> Pin:
        """The pin line this stop gives: the drift measured, else the reason untrustworthy."""
        if self.pin is not None:
            return self.pin
        error = self.error
        if isinstance(error, BaselineError):
            return Pin(spec.path, spec.expect_baseline_pass, reason=error.reason,
                       tests=error.tests)
        first, *rest = error.message().splitlines()
        return Pin(spec.path, spec.expect_baseline_pass, reason=first,
                   detail=tuple(line.strip() for line in rest if line.strip()))


@dataclass(frozen=True)
class Observed:
    """Baseline runs that can be believed: green, complete, stable; and their skips."""

    runs: tuple[RunFacts, ...]
    skips: SkipCount

    def pin(self, spec: Spec) -> Pin:
        """The spec's pin against this measurement."""
        return Pin(spec.path, spec.expect_baseline_pass, self.runs[0].passed,
                   self.skips.approved, self.skips.unlisted)


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


def _written(spec: Spec, paths: list[str]) -> str:
    """The note that names what a spec's baseline wrote into the workspace."""
    shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
    return (f"the baseline of {spec.id} wrote into the workspace: {shown} (deleted before "
            "each next run; data a test writes into the checkout is often the sign of a "
            "missing preload or setting that points it elsewhere)")


def _numbered(number: int, count: int, reason: str) -> str:
    return reason if count == 1 else f"baseline run {number} of {count}: {reason}"


def observe(
    spec: Spec, lab: Lab, runs: int, timeout_s: float, isolation: IsolationCheck,
    rules: SkipRules,
) -> Observed:
    """Run the baseline `runs` times; raise SpecStopped unless every run can be believed.

    Each run, as it ends, must have loaded every test file and pass the runner's isolation
    check (its code came from the workspace), before the next run starts. Then, in order: a
    run that cannot be believed (a timeout, a crash) is named with its number; tests whose
    outcome differs between runs are unstable; a red run is named with its own failing tests;
    skips the platform skip policy does not allow stop the spec. The count is not judged here.
    """
    done = []
    written: set[str] = set()
    for number in range(1, runs + 1):
        lab.listener.baseline_run(spec, number, runs)
        ran = run_scenario(Scenario.baseline(spec, number, timeout_s), lab)
        facts = _settled(ran)
        # a tool's hidden cache (.coverage, .hypothesis, .benchmarks) is a tool's business
        written.update(path for path in ran.removed if not path.startswith("."))
        if (problem := collection_problem(facts)) is not None:
            raise SpecStopped(BaselineError(spec.id, f"collection failed: {problem}"), facts)
        if (error := isolation(facts)) is not None:
            raise SpecStopped(error, facts)
        done.append(facts)
    if written:
        lab.listener.note(_written(spec, sorted(written)))
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
        if facts.failed:
            reason = baseline_problem(facts, spec.expect_baseline_pass) or "not green"
            raise SpecStopped(
                BaselineError(spec.id, _numbered(number, runs, reason), facts.failing_ids),
                facts,
            )
    skips = rules.count(done[0], spec.runner, spec.tests)
    if skips.problem is not None:
        raise SpecStopped(BaselineError(spec.id, skips.problem), done[0])
    return Observed(tuple(done), skips)


def measure(
    spec: Spec, lab: Lab, runs: int, timeout_s: float, isolation: IsolationCheck,
    mutation_timeout: Callable[[float], float], rules: SkipRules,
) -> Baseline:
    """`observe`, then the count: passes plus approved skips must be the spec's pin (a
    drifted count stops the spec, with the pin it measured). The runner's proof run comes
    after every baseline run, so that it never shifts what they observe (`Baseline.prove`,
    once the results show the baseline: a `-j` worker joining the spec reads it there)."""
    observed = observe(spec, lab, runs, timeout_s, isolation, rules)
    approved = len(observed.skips.approved)
    for number, facts in enumerate(observed.runs, 1):
        if (found := baseline_problem(facts, spec.expect_baseline_pass, approved)) is not None:
            raise SpecStopped(
                BaselineError(spec.id, _numbered(number, runs, found), facts.failing_ids),
                facts, observed.pin(spec),
            )
    slowest = max(observed.runs, key=lambda facts: facts.duration_s)  # sets the timeout
    return Baseline(slowest, mutation_timeout(slowest.duration_s), observed.pin(spec),
                    observed.runs[-1])
