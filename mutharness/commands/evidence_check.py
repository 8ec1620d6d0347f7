"""`mutharness evidence-check`: whether each evidence document is still true of the tree."""

from __future__ import annotations

from pathlib import Path

from mutharness.commands.prepare import open_repository
from mutharness.errors import InputProblem
from mutharness.reports.console import Console, printable
from mutharness.reports.staleness import check_evidence


def run(console: Console, evidence_dir: Path | None) -> int:
    """The command line's evidence-check: a line per document; 1 when one is stale."""
    source = open_repository()
    directory = evidence_dir or source.root / "evidence"
    if not directory.is_dir():
        raise InputProblem(f"{directory} is not a directory of evidence")
    verdicts = check_evidence(directory, source)
    stale = [verdict for verdict in verdicts if verdict.is_stale]
    for verdict in verdicts:
        if verdict.problem:
            console.line(f"{verdict.document}: UNREADABLE ({verdict.problem})", "red")
        elif verdict.stale:
            if verdict.commits_since == 0:
                since = "the files below differ from it in the working tree, not yet committed"
            else:
                count = verdict.commits_since
                number = "an unknown number of" if count is None else str(count)
                since = f"{number} commit(s) since touched these files"
            console.line(
                f"{verdict.document}: STALE (measured at {verdict.commit[:12]}; {since})", "red"
            )
            for item in verdict.stale:
                state = "missing" if item.missing else "added" if item.added else "changed"
                console.line(f"    {printable(item.path)} {state} (stales: "
                             f"{', '.join(item.facts)})", "red")
        else:
            console.line(f"{verdict.document}: fresh")
    console.line(
        f"{len(stale)} of {len(verdicts)} evidence document(s) stale",
        "red" if stale else "green",
    )
    return 1 if stale else 0
