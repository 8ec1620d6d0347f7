"""Evidence freshness: a document is stale when a file whose digest it records has changed."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Final

from mutharness.digest import file_digest
from mutharness.workspace import SourceRepo

INDEX = "index.md"
DEPENDS_HEADING = "## Files this evidence depends on"
_COMMIT = re.compile(r"^\| commit measured \| `([0-9a-f]{7,64})`", re.MULTILINE)
_FENCE_OPEN = re.compile(r"^(`{3,})[^`]*$")
_SUM_LINE = re.compile(r"^([0-9a-f]{64}) [ *](.+)$")
_DRIVE = re.compile(r"^[A-Za-z]:")
_UNESCAPE: Final = MappingProxyType({"\\": "\\", "n": "\n", "r": "\r"})


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


def _unescape(text: str) -> str | None:
    """Undo the GNU `sha256sum` escaping of a file name (None if it is not valid)."""
    out: list[str] = []
    chars = iter(text)
    for char in chars:
        if char == "\\":
            decoded = _UNESCAPE.get(next(chars, ""))
            if decoded is None:
                return None
            out.append(decoded)
        else:
            out.append(char)
    return "".join(out)


def _sum_lines(section: str) -> list[str] | None:
    """The lines of the first fenced block in `section` (None when there is none)."""
    lines = section.splitlines()
    for start, line in enumerate(lines):
        opener = _FENCE_OPEN.match(line)
        if opener is None:
            continue
        closer = re.compile(rf"^`{{{len(opener.group(1))},}}[ \t]*$")
        body: list[str] = []
        for inner in lines[start + 1:]:
            if closer.match(inner):
                return body
            body.append(inner)
        return None
    return None


def parse_digests(lines: list[str]) -> dict[str, str] | None:
    """path -> sha256 from `sha256sum` output lines (None if any line is not one)."""
    digests: dict[str, str] = {}
    for line in lines:
        escaped = line.startswith("\\")
        match = _SUM_LINE.match(line[1:] if escaped else line)
        if match is None:
            return None
        path = _unescape(match.group(2)) if escaped else match.group(2)
        if path is None:
            return None
        digests[path] = match.group(1)
    return digests


def parse_document(text: str) -> tuple[str, dict[str, str]] | None:
    """(commit measured, path -> sha256) from an evidence document, or None if it has none."""
    commit = _COMMIT.search(text)
    if commit is None or DEPENDS_HEADING not in text:
        return None
    lines = _sum_lines(text.split(DEPENDS_HEADING, 1)[1])
    digests = parse_digests(lines) if lines is not None else None
    return (commit.group(1), digests) if digests else None


def _outside(relative: str) -> bool:
    """True when a recorded path would lead out of the repository (absolute, drive, `..`)."""
    return relative.startswith("/") or bool(_DRIVE.match(relative)) or any(
        part in ("", ".", "..") for part in relative.split("/")
    )


def check_document(path: Path, source: SourceRepo) -> Freshness:
    """Compare every digest recorded in one document with the working tree's bytes."""
    name = path.name
    try:
        parsed = parse_document(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        return Freshness(name, "", (), None, f"cannot be read: {error}")
    if parsed is None:
        return Freshness(name, "", (), None, "no commit or file digests found")
    commit, digests = parsed
    outside = sorted(relative for relative in digests if _outside(relative))
    if outside:
        return Freshness(name, commit, (), None,
                         f"records a path outside the repository: {outside[0]!r}")
    stale: list[StaleFile] = []
    for relative, digest in sorted(digests.items()):
        current = source.root.joinpath(*relative.split("/"))
        if current.is_symlink():  # recorded as a regular file: replaced by a link is a change
            stale.append(StaleFile(relative, False))
        elif not current.is_file():
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
        if path.name != INDEX
    )
