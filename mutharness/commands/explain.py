"""`mutharness explain`: an error's entry (what it says, why, the next step), where the
command runs; every error's last line names this command."""

from __future__ import annotations

import difflib

from mutharness.explanations import EXPLANATIONS, as_text
from mutharness.reports.console import Console


def known(name: str) -> str | None:
    """The entry's name `name` means (its case aside), None when there is none."""
    by_case = {entry.lower(): entry for entry in EXPLANATIONS}
    return by_case.get(name.lower())


def nearest(name: str) -> list[str]:
    """The names `name` may have meant, nearest first."""
    return difflib.get_close_matches(name, list(EXPLANATIONS), n=3, cutoff=0.6)


def run(console: Console, name: str | None) -> int:
    """The entry of `name`, or with no name a line per entry: its name and heading."""
    if name is None:
        width = max(map(len, EXPLANATIONS))
        for entry, explanation in EXPLANATIONS.items():
            console.line(f"{entry.ljust(width)}  {explanation.title}")
        return 0
    found = known(name)
    assert found is not None  # the command line refused any other name
    console.line(as_text(found))
    return 0
