"""Evidence freshness: a document is stale when a file whose digest it records has changed."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from mutharness.digest import file_digest
from mutharness.workspace import SourceRepo

DEPENDS_HEADING = "## Files this evidence depends on"
_COMMIT = re.compile(r"^\| commit measured \| `([0-9a-f]{7,64})`", re.MULTILINE)
_ROW = re.compile(r"^\| `((?:[^`\\]|\\.)+)` \| `([0-9a-f]{64})` \|$")


@dataclass(frozen=True)
class StaleFile:
    """One recorded file whose content differs now (or that is gone)."""

    path: str
    missing: bool


@dataclass(frozen=True)
class Freshness:
    """The verdict on one evidence document."""

    document: str
    commit: str
    stale: tuple[StaleFile, ...]
    commits_since: int | None  # commits after the measured one touching the stale files
    problem: str = ""  # the document could not be read as evidence

    @property
    def is_stale(self) -> bool:
        """True when any recorded file changed, or the document is unreadable as evidence."""
        return bool(self.stale or self.problem)


def parse_document(text: str) -> tuple[str, dict[str, str]] | None:
    """(commit measured, path -> sha256) from an evidence document, or None if it has none."""
    commit = _COMMIT.search(text)
    if commit is None or DEPENDS_HEADING not in text:
        return None
    digests: dict[str, str] = {}
    for line in text.split(DEPENDS_HEADING, 1)[1].splitlines():
        row = _ROW.match(line)
        if row is not None:
            digests[row.group(1).replace("\\|", "|")] = row.group(2)
    return (commit.group(1), digests) if digests else None


def check_document(path: Path, source: SourceRepo) -> Freshness:
    """Compare every digest recorded in one document with the working tree's bytes."""
    name = path.name
    parsed = parse_document(path.read_text(encoding="utf-8"))
    if parsed is None:
        return Freshness(name, "", (), None, "no commit or file digests found")
    commit, digests = parsed
    stale: list[StaleFile] = []
    for relative, digest in sorted(digests.items()):
        current = source.root.joinpath(*relative.split("/"))
        if not current.is_file():
            stale.append(StaleFile(relative, True))
        elif file_digest(current.read_bytes()) != digest:
            stale.append(StaleFile(relative, False))
    since = (
        source.commits_touching_since(commit, [item.path for item in stale]) if stale else 0
    )
    return Freshness(name, commit, tuple(stale), since)


def check_evidence(directory: Path, source: SourceRepo) -> tuple[Freshness, ...]:
    """Freshness of every per-spec document in `directory` (index.md is not evidence)."""
    return tuple(
        check_document(path, source)
        for path in sorted(directory.glob("*.md"))
        if path.name != "index.md"
    )
