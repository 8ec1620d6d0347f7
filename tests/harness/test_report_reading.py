"""Reading pytest-json-report documents: outcomes in a closed vocabulary, skip reasons, and a
"passed" test that never ran its body (pytest.exit) told apart from a pass."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from mutharness.runners.base import Outcome, ReportState
from mutharness.runners.pytest.runner import _outcomes, read_report


def report(tmp_path: Path, *tests: dict[str, Any], exitcode: int = 0) -> Path:
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"created": time.time(), "exitcode": exitcode, "tests": tests}))
    return path


def stage(outcome: str = "passed", **extra: Any) -> dict[str, Any]:
    return {"duration": 0.001, "outcome": outcome, **extra}


def outcomes_of(path: Path) -> list[tuple[str, Outcome, str]]:
    state, document = read_report(path, 0.0, 0)
    assert state is ReportState.OK
    return [(o.nodeid, o.outcome, o.reason) for o in _outcomes(document)]


def test_a_passed_test_without_a_call_phase_never_ran_its_body(tmp_path: Path) -> None:
    path = report(
        tmp_path,
        {"nodeid": "t.py::a", "outcome": "passed", "setup": stage(), "call": stage(),
         "teardown": stage()},
        {"nodeid": "t.py::b", "outcome": "passed", "setup": stage()},  # pytest.exit(0) here
    )

    assert outcomes_of(path) == [
        ("t.py::a", Outcome.PASSED, ""), ("t.py::b", Outcome.NO_CALL, ""),
    ]


def test_skip_reasons_are_read_and_unknown_outcome_words_are_unknown(tmp_path: Path) -> None:
    path = report(
        tmp_path,
        {"nodeid": "t.py::s", "outcome": "skipped",
         "setup": stage("skipped", longrepr="('/w/t.py', 3, 'Skipped: needs numpy')")},
        {"nodeid": "t.py::c", "outcome": "skipped", "setup": stage(),
         "call": stage("skipped", longrepr="('/w/t.py', 9, 'Skipped: inside the test')")},
        {"nodeid": "t.py::x", "outcome": "xfailed", "setup": stage(), "call": stage("skipped")},
        {"nodeid": "t.py::r", "outcome": "rerun", "setup": stage(), "call": stage()},
        {"nodeid": "t.py::f", "outcome": "passed-without-call", "setup": stage(),
         "call": stage()},  # our own words never come from a report
    )

    assert outcomes_of(path) == [
        ("t.py::s", Outcome.SKIPPED, "needs numpy"),
        ("t.py::c", Outcome.SKIPPED, "inside the test"),
        ("t.py::x", Outcome.XFAILED, ""),
        ("t.py::r", Outcome.UNKNOWN, ""),
        ("t.py::f", Outcome.UNKNOWN, ""),
    ]


def test_a_report_older_than_the_run_or_disagreeing_with_its_exit_status_is_not_believed(
    tmp_path: Path,
) -> None:
    path = report(tmp_path, exitcode=1)

    assert read_report(path, time.time() + 60, 1)[0] is ReportState.STALE
    assert read_report(path, 0.0, 0)[0] is ReportState.MISMATCH
    assert read_report(tmp_path / "absent.json", 0.0, 0)[0] is ReportState.MISSING
    (tmp_path / "half.json").write_text('{"created": 1, "exitco')
    assert read_report(tmp_path / "half.json", 0.0, 0)[0] is ReportState.UNREADABLE
