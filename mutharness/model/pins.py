"""A spec's baseline pin judged against a measurement: the `baseline` line, in one vocabulary."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from mutharness.errors import ExitCode


class PinState(StrEnum):
    """What a measurement says about a spec's `expectBaselinePass`."""

    OK = "ok"
    DRIFT = "DRIFT"
    UNTRUSTWORTHY = "UNTRUSTWORTHY"


class Disposition(StrEnum):
    """How an `ok` count was reached, in the words the line says it."""

    MEASURED_NO_SKIPS = "every counted test passed"
    COUNT_COMPATIBLE_WITH_APPROVED_SKIPS = "approved platform skips counted"


@dataclass(frozen=True)
class Pin:
    """One spec's pin against one measurement (a trustworthy one, or the reason it is not)."""

    spec: str  # the spec file as the user names it
    expected: int
    passed: int = 0
    approved: tuple[str, ...] = ()  # approved platform skips: counted
    unlisted: tuple[str, ...] = ()  # other skips: accepted, never counted
    reason: str = ""  # why the measurement cannot be believed (UNTRUSTWORTHY)
    tests: tuple[str, ...] = ()  # the tests the reason is about (failing, unstable)
    detail: tuple[str, ...] = ()  # its error's lines after the reason: its remedy, its files

    @property
    def total(self) -> int:
        """Passes plus approved skips: what the pin counts."""
        return self.passed + len(self.approved)

    @property
    def state(self) -> PinState:
        """ok, DRIFT or UNTRUSTWORTHY."""
        if self.reason:
            return PinState.UNTRUSTWORTHY
        return PinState.OK if self.total == self.expected else PinState.DRIFT

    @property
    def disposition(self) -> Disposition:
        """Whether approved skips made up part of the count."""
        return (Disposition.COUNT_COMPATIBLE_WITH_APPROVED_SKIPS if self.approved
                else Disposition.MEASURED_NO_SKIPS)

    def _measured(self) -> str:
        return f"{self.passed} pass + {len(self.approved)} approved skips = {self.total}"

    def line(self) -> str:
        """The line `mutharness baseline` prints (and the evidence repeats)."""
        state = self.state
        if state is PinState.UNTRUSTWORTHY:
            return f"UNTRUSTWORTHY {self.spec}: {self.reason}"
        if state is PinState.DRIFT:
            return (f"DRIFT {self.spec}: expected={self.expected}, measured={self._measured()}; "
                    "inspect changes before editing the pin")
        note = (f"; {len(self.unlisted)} unlisted skip(s) accepted, not counted"
                if self.unlisted else "")
        return f"ok {self.spec}: {self._measured()} ({self.disposition.value}){note}"

    def to_json(self) -> dict[str, Any]:
        """The results' record of the pin."""
        return {
            "line": self.line(), "state": self.state.value, "spec": self.spec,
            "expected": self.expected, "passed": self.passed, "approved": list(self.approved),
            "unlisted": list(self.unlisted), "total": self.total, "reason": self.reason,
            "tests": list(self.tests), "detail": list(self.detail),
        }


def summary(pins: Sequence[Pin]) -> str:
    """`N spec(s) measured, D drift, U untrustworthy`."""
    drift = sum(1 for pin in pins if pin.state is PinState.DRIFT)
    untrustworthy = sum(1 for pin in pins if pin.state is PinState.UNTRUSTWORTHY)
    return f"{len(pins)} spec(s) measured, {drift} drift, {untrustworthy} untrustworthy"


def exit_code(pins: Sequence[Pin]) -> ExitCode:
    """3 (the baseline could not be trusted) if any untrustworthy, else 1 if any drift,
    else 0."""
    states = {pin.state for pin in pins}
    if PinState.UNTRUSTWORTHY in states:
        return ExitCode.BASELINE
    return ExitCode.UNEXPECTED if PinState.DRIFT in states else ExitCode.OK
