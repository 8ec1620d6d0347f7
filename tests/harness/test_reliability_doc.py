"""docs/RELIABILITY.md is generated from reliability_rows.py and cannot drift from the tests.

Regenerate with: MUTHARNESS_WRITE_DOCS=1 python -m pytest tests/harness/test_reliability_doc.py
"""

from __future__ import annotations

import ast
import os
from collections import Counter
from pathlib import Path

import pytest
from reliability_rows import ROWS, Row

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "RELIABILITY.md"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render(rows: tuple[Row, ...]) -> str:
    """The whole document for `rows`."""
    areas = Counter(row.area for row in rows)
    lines = [
        "# Reliability: faults and bad inputs tried",
        "",
        "Generated from `tests/harness/reliability_rows.py` by",
        "`tests/harness/test_reliability_doc.py`; do not edit by hand. Every row names the test",
        "that proves it with real git repositories, real child processes, real files and real",
        "signals; the suite fails if a named test disappears or this file differs from the rows.",
        "'Observed' is what that test asserts and saw when it last passed.",
        "",
        f"{len(rows)} rows: " + ", ".join(f"{count} {area}" for area, count in areas.items()) + ".",
    ]
    for area in areas:
        lines += [
            "",
            f"## {area}",
            "",
            "| fault or input | expected | observed | test |",
            "| --- | --- | --- | --- |",
        ]
        lines += [
            f"| {_cell(row.fault)} | {_cell(row.expected)} | {_cell(row.observed)} | "
            f"`{row.test.removeprefix('tests/harness/')}` |"
            for row in rows
            if row.area == area
        ]
    return "\n".join(lines) + "\n"


def _test_functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.name for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    }


@pytest.mark.parametrize("row", ROWS, ids=[row.test.split("::")[-1][:60] for row in ROWS])
def test_every_row_names_a_test_that_exists(row: Row) -> None:
    file, _, name = row.test.partition("::")
    path = ROOT / file
    assert path.is_file(), f"{file} does not exist"
    assert name in _test_functions(path), f"{name} is not a test function in {file}"


def test_no_two_rows_name_the_same_fault() -> None:
    faults = Counter((row.area, row.fault) for row in ROWS)
    assert [fault for fault, count in faults.items() if count > 1] == []


def test_the_reliability_document_is_generated_from_the_rows() -> None:
    expected = render(ROWS)
    if os.environ.get("MUTHARNESS_WRITE_DOCS") == "1":
        DOC.parent.mkdir(exist_ok=True)
        DOC.write_text(expected, encoding="utf-8", newline="\n")
    assert DOC.read_text(encoding="utf-8") == expected, (
        "docs/RELIABILITY.md is stale; regenerate: "
        "MUTHARNESS_WRITE_DOCS=1 python -m pytest tests/harness/test_reliability_doc.py"
    )
