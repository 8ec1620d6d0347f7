"""Exactly-once anchors: locate an anchor in a file's bytes and splice its replacement literally."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

MAX_HIT_LINES = 10


@dataclass(frozen=True)
class Position:
    """A place in a text file: 1-based line, and 1-based column counted in characters."""

    line: int
    column: int


@dataclass(frozen=True)
class Location:
    """The text an anchor covers, `start` inclusive and `end` exclusive (an anchor that ends
    with its line's newline ends at column 1 of the next line), as mutation reports want it."""

    start: Position
    end: Position


@dataclass(frozen=True)
class Splice:
    """Where the single occurrence of an anchor sits, and the bytes that replace it."""

    start: int
    end: int
    line: int
    end_line: int
    crlf: bool  # matched with the anchor's "\n" read as "\r\n"
    replacement: bytes
    location: Location

    def apply(self, data: bytes) -> bytes:
        """The mutated bytes: everything outside [start, end) is untouched."""
        return data[: self.start] + self.replacement + data[self.end :]


@dataclass(frozen=True)
class AnchorMiss:
    """The anchor did not occur exactly once."""

    hits: int
    lines: tuple[int, ...]
    near_line: int | None = None
    near_text: str | None = None

    def describe(self) -> str:
        """A human sentence for this miss."""
        if self.hits == 0:
            text = "anchor not found (0 hits)"
            if self.near_line is not None:
                text += f"; nearest line {self.near_line}: {self.near_text!r}"
            return text
        shown = ", ".join(str(line) for line in self.lines[:MAX_HIT_LINES])
        more = "..." if len(self.lines) > MAX_HIT_LINES else ""
        return f"anchor matched {self.hits} times (need exactly 1), at lines {shown}{more}"


def _splits_crlf(data: bytes, start: int, end: int) -> bool:
    """True when [start, end) begins or ends between the CR and the LF of a CRLF."""
    return (start > 0 and data[start - 1 : start + 1] == b"\r\n") or (
        data[end - 1 : end + 1] == b"\r\n"
    )


def _occurrences(data: bytes, needle: bytes) -> tuple[int, list[int]]:
    """How many times `needle` occurs, overlapping occurrences included, and the start offsets
    of the first MAX_HIT_LINES + 1 (every one is counted, only those are kept).

    An occurrence that would cut a CRLF line ending in half is not one: splicing there would
    leave a lone CR or a bare LF behind.
    """
    found: list[int] = []
    count = 0
    index = data.find(needle)
    while index != -1:
        if not _splits_crlf(data, index, index + len(needle)):
            count += 1
            if len(found) <= MAX_HIT_LINES:
                found.append(index)
        index = data.find(needle, index + 1)
    return count, found


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def _position(data: bytes, offset: int) -> Position:
    """Where byte `offset` of `data` is, its column in characters (UTF-8, bad bytes one each)."""
    line_start = data.rfind(b"\n", 0, offset) + 1
    return Position(_line_of(data, offset),
                    len(data[line_start:offset].decode("utf-8", errors="replace")) + 1)


def uses_crlf(data: bytes) -> bool:
    """True when the file has line endings and every one of them is CRLF."""
    newlines = data.count(b"\n")
    return newlines > 0 and data.count(b"\r\n") == newlines


def uses_lf(data: bytes) -> bool:
    """True when the file has line endings and none of them is CRLF."""
    return b"\n" in data and b"\r\n" not in data


def _to_crlf(text: str) -> bytes:
    return text.replace("\r\n", "\n").replace("\n", "\r\n").encode("utf-8")


def _near_miss(data: bytes, anchor: str) -> tuple[int | None, str | None]:
    wanted = next((line.strip() for line in anchor.splitlines() if line.strip()), "")
    if not wanted:
        return None, None
    lines = data.decode("utf-8", errors="replace").splitlines()
    stripped = [line.strip() for line in lines]
    best = difflib.get_close_matches(wanted, stripped, n=1, cutoff=0.6)
    if not best:
        return None, None
    number = stripped.index(best[0])
    return number + 1, lines[number]


def locate(data: bytes, anchor: str, replacement: str) -> Splice | AnchorMiss:
    """Find the anchor exactly once: exact bytes first, then CRLF-translated for CRLF files."""
    needle = anchor.encode("utf-8")
    count, hits = _occurrences(data, needle)
    crlf = False
    if not count and "\n" in anchor and uses_crlf(data):
        needle = _to_crlf(anchor)
        count, hits = _occurrences(data, needle)
        crlf = bool(count)
    if count != 1:
        lines = tuple(_line_of(data, offset) for offset in hits)
        if count:
            return AnchorMiss(count, lines)
        near_line, near_text = _near_miss(data, anchor)
        return AnchorMiss(0, (), near_line, near_text)
    start = hits[0]
    end = start + len(needle)
    spliced = replacement.encode("utf-8")
    if uses_crlf(data) and _to_crlf(replacement) != spliced:
        spliced = _to_crlf(replacement)  # never leave bare LFs in a CRLF file
        crlf = True
    elif uses_lf(data):
        spliced = replacement.replace("\r\n", "\n").encode("utf-8")  # nor CRLFs in an LF file
    return Splice(start, end, _line_of(data, start), _line_of(data, end - 1), crlf, spliced,
                  Location(_position(data, start), _position(data, end)))


def _lines(data: bytes) -> list[str]:
    """The file's lines, split at LF only (form feeds, U+2028... stay inside their line)."""
    parts = data.decode("utf-8", errors="replace").split("\n")
    return [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def unified_diff(data: bytes, splice: Splice, path: str) -> str:
    """A unified diff of the splice, with three lines of context, labelled with `path`."""
    before = _lines(data)
    after = _lines(splice.apply(data))
    lines = difflib.unified_diff(before, after, f"a/{path}", f"b/{path}", n=3)
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
        for line in lines
    )
