"""node_events.read_events on records written by hand, shaped as node writes them: the reader's
rules without a node process (test_node_events.py runs the real reporter under real node)."""

from __future__ import annotations

import json
from pathlib import Path

from mutharness.runners.node.events import NodeTest, read_events


def test_a_missing_events_file_is_reported_as_missing(tmp_path: Path) -> None:
    events = read_events(tmp_path / "nothing.jsonl", tmp_path)
    assert events.state == "missing"
    assert events.tests == ()


def test_records_become_tests_without_node_when_written_by_hand(tmp_path: Path) -> None:
    """The reader itself, on records shaped like node 20's (suites last, absolute file names)."""
    cwd = tmp_path / "proj"
    file = str(cwd / "test" / "x.test.js")

    def result(type_: str, name: str, nesting: int, **extra: object) -> dict[str, object]:
        record: dict[str, object] = {
            "type": type_,
            "name": name,
            "nesting": nesting,
            "file": file,
            "line": 1,
            "column": 1,
            "kind": None,
            "duration_ms": 1500.0,
            "skip": False,
            "todo": False,
            "failureType": None,
            "error": None,
            "cause": None,
        }
        record.update(extra)
        return record

    records = [
        {"type": "start", "node": "v20.20.2", "pid": 1, "cwd": str(cwd)},
        result("pass", "leaf", 1),
        result("pass", "suite", 0, kind="suite"),
        result("fail", file, 0, failureType="testCodeFailure", error="test failed"),
        {"type": "diagnostic", "message": "tests 2", "nesting": 0, "file": None},
        {"type": "diagnostic", "message": "duration_ms 3.5", "nesting": 0, "file": None},
        {"type": "end"},
    ]
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    events = read_events(path, cwd)
    assert events.tests == (NodeTest("test/x.test.js > suite > leaf", "passed", 1.5, ""),)
    assert events.file_failures == ("test/x.test.js",)
    assert events.diagnostics == {"tests": 2}
