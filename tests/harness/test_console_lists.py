"""How many test entries a console line names: a long suite's files are counted, not listed."""

from __future__ import annotations

import pytest

from mutharness.reports.console import listed

LISTS = [  # (entries, the console's words)
    ((), ""),
    (("tests",), "tests"),
    (tuple(f"t/{n}.test.js" for n in range(6)),
     "t/0.test.js t/1.test.js t/2.test.js t/3.test.js t/4.test.js t/5.test.js"),
    (tuple(f"t/{n}.test.js" for n in range(105)),
     "t/0.test.js t/1.test.js t/2.test.js and 102 more (105 in all)"),
    (("t/\x1b[31mred.test.js",), "t/\\x1b[31mred.test.js"),  # inert, as every test entry
]


@pytest.mark.parametrize(("entries", "words"), LISTS)
def test_up_to_six_entries_are_named_and_more_are_counted(
    entries: tuple[str, ...], words: str
) -> None:
    assert listed(entries) == words
