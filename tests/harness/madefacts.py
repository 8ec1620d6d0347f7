"""RunFacts of a pytest run written by hand, for the tests of the rules that judge them."""

from __future__ import annotations

import dataclasses
from typing import Any

from mutharness.runners.base import ReportState, RunFacts
from mutharness.runners.pytest.rules import NAME
from mutharness.runners.pytest.runner import PytestFacts, exit_meaning


def pytest_facts(**changes: Any) -> RunFacts:
    """A clean pytest run's facts with `changes`; `exit` follows `exit_status`, and
    `pytest_exit` (pytest's code in its report) goes to the runner's extension."""
    pytest_exit = changes.pop("pytest_exit", changes.get("exit_status", 0))
    base = RunFacts(
        runner=NAME, exit_status=0, signal=None, timed_out=False, timeout_s=30.0,
        duration_s=1.5, report=ReportState.OK, exit=exit_meaning(0), outcomes=(),
        collection_errors=(), log_path="pytest.log",
    )
    made = dataclasses.replace(base, **changes)
    return dataclasses.replace(
        made, exit=changes.get("exit", exit_meaning(made.exit_status)),
        extension=PytestFacts(pytest_exit=pytest_exit),
    )
