"""The node line record (`LineAsk`, suggest's baseline only): V8's block coverage of the asked
files, which every node process of the run writes where NODE_V8_COVERAGE names
(`coverage-PID-TIME-THREAD.json`, as it exits), turned into the lines where code ran and each
function's lines.

V8 gives each function of a script its ranges: the first is the function itself and its call
count, the others blocks inside it (a branch, the code after a `return`) with their counts; the
innermost range that holds a character says whether it ran (`count > 0`). Offsets count UTF-16
code units of the source V8 compiled (node drops a byte order mark first), not bytes: a file
whose top-level range is not its own length in them was changed before it ran (a loader, a
transpiler), and the record does not speak for it. Nor for a file a process loaded or read
without writing coverage of it, nor for any file when a process started a program that is not
node (the load record's `spawned`, `partial`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from mutharness.runners.node.loads import LoadRecord, log_lines

MAX_COVERAGE_BYTES = 256 * 1024 * 1024  # a coverage file bigger than this is not read
BLANK = frozenset(" \t\r\n\f\v\ufeff")


@dataclass(frozen=True)
class Block:
    """One V8 range: `[start, end)` in UTF-16 code units, its count, and whether it is a
    function's own range (the first of its ranges) rather than a block inside one."""

    start: int
    end: int
    count: int
    function: bool = False


def utf16_length(text: str) -> int:
    """`text`'s length in UTF-16 code units (a character beyond the BMP is two)."""
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


def ranges_to_lines(text: str, blocks: Sequence[Block]) -> tuple[
        frozenset[int], tuple[tuple[int, int, bool], ...]]:
    """V8's ranges over `text` (offsets in UTF-16 code units) as lines: those with a
    non-blank character whose innermost range counted more than 0 (the code that ran), and
    each function's first and last line with a non-blank character of it, and whether it was
    called (its count above 0). The script's own range is a function like any other."""
    lines: list[int] = []  # each UTF-16 unit's line (1-based)
    blank = bytearray()
    line = 1
    for char in text:
        units = 2 if ord(char) > 0xFFFF else 1
        lines.extend([line] * units)
        blank.extend([char in BLANK] * units)
        if char == "\n":
            line += 1
    size = len(lines)
    ran = bytearray(size)
    # outer ranges first, so an inner one paints over them (V8's ranges nest or are apart)
    for block in sorted(blocks, key=lambda block: (block.start, -block.end)):
        start, end = max(0, block.start), min(size, block.end)
        if start < end:
            ran[start:end] = (b"\x01" if block.count > 0 else b"\x00") * (end - start)
    executed = frozenset(lines[unit] for unit in range(size) if ran[unit] and not blank[unit])
    functions = []
    for block in blocks:
        if not block.function:
            continue
        inside = [unit for unit in range(max(0, block.start), min(size, block.end))
                  if not blank[unit]]
        if inside:
            functions.append((lines[inside[0]], lines[inside[-1]], block.count > 0))
    return executed, tuple(functions)


def _blocks(functions: object) -> list[Block]:
    """A script's V8 `functions` as blocks (a malformed entry: ValueError)."""
    if not isinstance(functions, list):
        raise ValueError("no functions")
    found: list[Block] = []
    for function in functions:
        ranges = function["ranges"] if isinstance(function, Mapping) else None
        if not isinstance(ranges, list):
            raise ValueError("a function without ranges")
        for place, entry in enumerate(ranges):
            start, end, count = entry["startOffset"], entry["endOffset"], entry["count"]
            if not all(type(value) is int for value in (start, end, count)):
                raise ValueError("a range that is not integers")
            found.append(Block(start, end, count, function=place == 0))
    return found


def _path(url: object) -> str | None:
    """The file a script's url names (a `file:` URL, or a path), else None."""
    if not isinstance(url, str) or not url:
        return None
    if url.startswith("file:"):
        path = unquote(urlsplit(url).path)
        if os.name == "nt" and len(path) > 2 and path[0] == "/" and path[2] == ":":
            path = path[1:]  # file:///C:/x is C:/x
        return path or None
    return url if os.path.isabs(url) else None


def _key(path: str) -> str:
    return os.path.normcase(os.path.realpath(path))


@dataclass
class _Seen:
    """What the coverage files say of the asked files."""

    scripts: dict[str, list[list[Block]]]  # by repo-relative file: each script's blocks
    by_pid: dict[int, set[str]]  # the asked files each process's coverage holds
    unreadable: list[str]


def _coverage(directory: Path, asked: Mapping[str, str]) -> _Seen:
    """The asked files' scripts in every coverage file of `directory` (`asked`: real path ->
    repo-relative file)."""
    seen = _Seen({}, {}, [])
    # a process's coverage is parsed only when it names an asked file's base name (as is, or
    # as a URL spells it): most processes of a big suite load none of them
    names = {form.encode() for file in asked.values() for name in [file.rpartition("/")[2]]
             for form in (name, quote(name))}
    for path in sorted(directory.glob("coverage-*.json")) if directory.is_dir() else ():
        try:
            pid = int(path.name.split("-")[1])
            if path.stat().st_size > MAX_COVERAGE_BYTES:
                raise ValueError(f"over {MAX_COVERAGE_BYTES} bytes")
            data = path.read_bytes()
            if not any(name in data for name in names):
                seen.by_pid.setdefault(pid, set())
                continue
            document = json.loads(data.decode("utf-8"))
            scripts = document["result"]
            if not isinstance(scripts, list):
                raise ValueError("no result")
        except (OSError, ValueError, KeyError, IndexError, TypeError) as error:
            seen.unreadable.append(f"{path.name}: {error}")
            continue
        held = seen.by_pid.setdefault(pid, set())
        for script in scripts:
            named = _path(script.get("url")) if isinstance(script, Mapping) else None
            file = asked.get(_key(named)) if named is not None else None
            if file is None:
                continue
            held.add(file)
            try:
                seen.scripts.setdefault(file, []).append(_blocks(script.get("functions")))
            except (ValueError, KeyError, TypeError) as error:
                seen.unreadable.append(f"{path.name}, {file}: {error}")
    return seen


def _used(loads: Path, asked: Mapping[str, str]) -> dict[str, set[int]]:
    """The processes (pids) whose load logs say they loaded or read each asked file (the
    logs are named `PID-RANDOM.log`, `PID-RANDOM.log.hooks`)."""
    used: dict[str, set[int]] = {file: set() for file in asked.values()}
    names = {file.rpartition("/")[2] for file in asked.values()}
    for log in sorted(loads.iterdir()) if loads.is_dir() else ():
        try:
            pid = int(log.name.split("-", 1)[0])
        except ValueError:
            continue
        for kind, value in log_lines(log):  # the load record's own reading: unescaped
            if (kind in ("load", "read") and os.path.basename(value) in names
                    and (file := asked.get(_key(value)))):
                used[file].add(pid)
    return used


def _facts(text: str, scripts: Iterable[list[Block]]) -> dict[str, Any] | str:
    """One file's facts from its scripts' blocks, or why they do not fit its text."""
    length = utf16_length(text)
    ran: set[int] = set()
    functions: dict[tuple[int, int], bool] = {}
    for blocks in scripts:
        top = max((block.end for block in blocks if block.start == 0), default=None)
        if top != length or any(block.end > length for block in blocks):
            return (f"node ran another text than the file's (its coverage spans {top} UTF-16 "
                    f"units, the file {length}): a loader or transpiler changed it, and its "
                    "coverage cannot be placed on the file's lines")
        executed, spans = ranges_to_lines(text, blocks)
        ran |= executed
        for first, last, called in spans:
            functions[(first, last)] = functions.get((first, last), False) or called
    return {"ran": sorted(ran),
            "functions": [[first, last, called] for (first, last), called in
                          sorted(functions.items())]}


def coverage_record(coverage: Path, loads: Path, record: LoadRecord, root: Path,
                    files: Sequence[str]) -> dict[str, Any]:
    """The line record (`LineAsk`) of a run whose node processes wrote V8 coverage into
    `coverage` and their load logs into `loads` (`record`, as the run read them), for the
    asked `files` (repo-relative, in the workspace at `root`)."""
    asked = {_key(str(root.joinpath(*file.split("/")))): file for file in files}
    whole = ""
    if not record.whole:
        said = sorted({why for use in record.files.values()
                       for why in (*use.spawned, *use.partial)})
        whole = (f"a test file's processes did what no record sees ({'; '.join(said)})"
                 if said else "no test file's process kept a load record")
    seen = _coverage(coverage, asked)
    if seen.unreadable and not whole:
        whole = f"a coverage file does not read ({'; '.join(seen.unreadable[:3])})"
    used = _used(loads, asked)
    facts: dict[str, Any] = {"files": {}, "silent": {}}
    for file in files:
        uncovered = sorted(pid for pid in used.get(file, ())
                           if file not in seen.by_pid.get(pid, set()))
        why = whole or (
            f"a node process that loaded or read it (pid {', '.join(map(str, uncovered))}) "
            "wrote no coverage of it (it ended by a signal, dropped NODE_V8_COVERAGE, or ran "
            "its text another way than as a module)" if uncovered else "")
        if not why:
            try:
                text = root.joinpath(*file.split("/")).read_bytes().decode("utf-8")
            except (OSError, UnicodeDecodeError) as error:
                text, why = "", f"its text does not read as node reads it: {error}"
            found = _facts(text.removeprefix("\ufeff"), seen.scripts.get(file, ()))
            if isinstance(found, str):
                why = found
            elif not why:
                facts["files"][file] = found
        if why:
            facts["silent"][file] = why
    return facts
