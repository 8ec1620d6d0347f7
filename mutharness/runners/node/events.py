"""Read the JSONL events file that the node test reporter `_reporter.mjs` writes."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

SEPARATOR = " > "
# failureType values that node counts as "cancelled" (measured on 20.20.2, 22.23.5, 24.22.3):
# a parent that failed or a before hook that failed, the event loop that drained while a test
# was still pending, and a test's own timeout.
CANCELLED_FAILURES = frozenset({"cancelledByParent", "testTimeoutFailure"})
# A suite whose failure is only its children's (or its parent's) is not a failure of its own.
NOT_A_SUITE_FAILURE = frozenset({"subtestsFailed", "cancelledByParent"})
_TOTAL = re.compile(r"([A-Za-z_]+) (\d+)")
# node's diagnostic for an error that asynchronous activity raised after a test had ended (a
# timer's, a rejection's): "Test "NAME" at FILE:LINE:COLUMN generated ...", or "A resource
# generated ..." when no test made it (node 20: no file on the record; 22 and later: the file)
_LATE = re.compile(r"^\w*Error: (?:(?P<what>[A-Z][a-z]*(?: hook)?) \"(?P<name>.*)\" at "
                   r"(?P<file>.+):(?P<line>\d+):(?P<column>\d+) |A resource )generated "
                   r"asynchronous activity after the test ended")


@dataclass(frozen=True)
class NodeTest:
    """One test as node reported it."""

    id: str  # "<file relative to cwd, posix> > <ancestor names> > <test name>"
    outcome: str  # "passed", "failed", "skipped", "todo" or "cancelled"
    duration_s: float
    reason: str  # the skip/todo reason, or the failure's short message ("" if none)


@dataclass(frozen=True)
class NodeEvents:
    """What one `node --test` run reported through the events file."""

    state: str  # "ok", "missing", "unreadable" or "unfinished"
    node_version: str
    tests: tuple[NodeTest, ...]  # tests only: no suites, no file-level entries; report order
    file_failures: tuple[str, ...]  # files that failed at file level (load error, exit code)
    suite_failures: tuple[str, ...]  # suites that failed by themselves (hook, body threw)
    summary: dict[str, int] | None  # the file-less test:summary counts (node 22+), else None
    diagnostics: dict[str, int]  # run totals from node's own diagnostics ("tests 5")
    # files node reported as one passing file-level entry: the child exited 0 without
    # reporting any test of its own (process.exit(0) before the report, or a file without tests)
    silent_files: tuple[str, ...] = ()
    # tests/suites node enqueued that never got a pass or fail: "<file>:<line>:<column> <name>"
    # (a file that called process.exit() while they were still pending)
    unreported: tuple[str, ...] = ()
    files: tuple[str, ...] = ()  # test files node started, in its order (relative posix paths)
    # files whose every test was reported and which then failed (node: one more test failed):
    # an error after a test had ended; each failed the test node named, else its last test
    late: tuple[str, ...] = ()
    # the first test file that failed, where the run stopped once it ended (a mutant's run
    # with --first-failure: the files after it never started); "" when it ran every file
    stopped: str = ""


class _Unreadable(Exception):
    """A record that is not what the reporter writes."""


@dataclass(frozen=True)
class _Result:
    """One pass/fail record and the records reported as its children."""

    seq: int
    record: dict[str, Any]
    children: tuple[_Result, ...]


def _empty(state: str, version: str = "") -> NodeEvents:
    return NodeEvents(state, version, (), (), (), None, {})


def _records(data: bytes) -> tuple[list[dict[str, Any]], bool]:
    """The records in order, and whether the last line was cut off mid-write."""
    text = data.decode("utf-8")
    lines = text.split("\n")
    tail = lines.pop()  # "" when the file ends with a newline
    records: list[dict[str, Any]] = []
    for line in lines:
        records.append(_parse(line))
    if tail:
        try:
            records.append(_parse(tail))
        except _Unreadable:
            return records, True
    return records, False


def _parse(line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except ValueError as exc:
        raise _Unreadable(str(exc)) from exc
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        raise _Unreadable("not a record")
    return value


def _text(record: dict[str, Any], key: str) -> str:
    value = record.get(key)
    if not isinstance(value, str):
        raise _Unreadable(f"{key} is not a string")
    return value


def _int(record: dict[str, Any], key: str) -> int:
    value = record.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise _Unreadable(f"{key} is not a count")
    return value


def _check_result(record: dict[str, Any]) -> None:
    _text(record, "name")
    _text(record, "file")
    _int(record, "nesting")
    for key in ("skip", "todo"):
        if not isinstance(record.get(key), str | bool):
            raise _Unreadable(f"{key} is neither a reason nor a flag")


def _same_path(a: str, b: str) -> bool:
    return os.path.normpath(a) == os.path.normpath(b)


def _is_file_entry(record: dict[str, Any], bases: tuple[str, ...]) -> bool:
    """Node names a test file's own entry after the file: absolute (20) or as given (22+)."""
    if record.get("nesting") != 0:
        return False
    name, file = record.get("name"), record.get("file")
    if not isinstance(name, str) or not isinstance(file, str) or not name:
        return False
    if os.path.isabs(name):
        return _same_path(name, file)
    return any(_same_path(os.path.join(base, name), file) for base in bases)


def _relative(file: str, bases: tuple[str, ...]) -> str:
    path = PurePath(file)
    for base in bases:
        try:
            return path.relative_to(base).as_posix()
        except ValueError:
            continue
    return path.as_posix()


def _flag_reason(value: object) -> str:
    return value if isinstance(value, str) else ""


def _failure_reason(record: dict[str, Any]) -> str:
    error, cause = record.get("error"), record.get("cause")
    error = error if isinstance(error, str) else ""
    cause = cause if isinstance(cause, str) else ""
    if cause and cause != error:
        return f"{error}: {cause}" if error else cause
    return error


def _outcome(record: dict[str, Any]) -> tuple[str, str]:
    """Node's own order: skip, then todo, then cancelled, then failed, else passed."""
    if record["skip"] is not False:
        return "skipped", _flag_reason(record["skip"])
    if record["todo"] is not False:
        return "todo", _flag_reason(record["todo"])
    if record["type"] == "fail":
        if record.get("failureType") in CANCELLED_FAILURES:
            return "cancelled", _failure_reason(record)
        return "failed", _failure_reason(record)
    return "passed", ""


def _duration(record: dict[str, Any]) -> float:
    value = record.get("duration_ms")
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value) / 1000.0
    return 0.0


def _unique(names: list[str]) -> list[str]:
    """Siblings that share a name get " #2", " #3"... in report order."""
    seen: Counter[str] = Counter()
    out = []
    for name in names:
        seen[name] += 1
        out.append(name if seen[name] == 1 else f"{name} #{seen[name]}")
    return out


def _walk(
    results: list[_Result],
    prefix: tuple[str, ...],
    tests: list[tuple[int, NodeTest]],
    suites: list[tuple[int, str]],
    located: dict[tuple[str, int, int], str],
) -> None:
    names = _unique([str(result.record["name"]) for result in results])
    for result, name in zip(results, names, strict=True):
        parts = (*prefix, name)
        ident = SEPARATOR.join(parts)
        record = result.record
        if record.get("kind") == "suite":
            if record["type"] == "fail" and record.get("failureType") not in NOT_A_SUITE_FAILURE:
                suites.append((result.seq, ident))
        else:
            outcome, reason = _outcome(record)
            tests.append((result.seq, NodeTest(ident, outcome, _duration(record), reason)))
            line, column = record.get("line"), record.get("column")
            if isinstance(line, int) and isinstance(column, int):
                located[(os.path.normpath(str(record["file"])), line, column)] = ident
        _walk(list(result.children), parts, tests, suites, located)


def _failed_late(
    tests: list[tuple[int, NodeTest]], file: str, messages: list[str], bases: tuple[str, ...],
    located: dict[tuple[str, int, int], str],
) -> bool:
    """Fail, in `tests`, the tests of `file` (relative) that node's `messages` name as having
    raised an error after they ended, else the file's last test that ran; False when node
    said no such thing (an exit code of its own) or the file ran no test (its failure stays
    the file's)."""
    if not messages:
        return False
    named = set()
    for message in messages:
        late = _LATE.match(message)
        if late is None or late["what"] != "Test":
            continue
        where = (late["file"], int(late["line"]), int(late["column"]))
        for base in bases:
            ident = located.get((os.path.normpath(os.path.join(base, where[0])), *where[1:]))
            if ident is not None:
                named.add(ident)
                break
    ran = [test.id for _seq, test in tests if test.id.startswith(f"{file}{SEPARATOR}")
           and test.outcome in ("passed", "failed")]
    targets = named or set(ran[-1:])
    if not targets:
        return False
    reason = " ".join(messages)[:2000]
    for at, (seq, test) in enumerate(tests):
        if test.id in targets and test.outcome == "passed":
            tests[at] = (seq, NodeTest(test.id, "failed", test.duration_s, reason))
    return True


def _counts(value: object) -> dict[str, int] | None:
    if not isinstance(value, dict):
        return None
    return {
        str(key): count
        for key, count in value.items()
        if isinstance(count, int) and not isinstance(count, bool)
    }


def _location(record: dict[str, Any], bases: tuple[str, ...]) -> tuple[str, int, int, int, str]:
    line, column = record.get("line"), record.get("column")
    return (
        _relative(str(record.get("file")), bases),
        line if isinstance(line, int) else 0,
        column if isinstance(column, int) else 0,
        _int(record, "nesting"),
        _text(record, "name"),
    )


def _dedupe(items: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def read_events(path: Path, cwd: Path) -> NodeEvents:
    """Read the events file of one run whose test files live under ``cwd``.

    ``tests`` holds every test node counted (a ``t.test`` parent counts like node counts it),
    never a suite nor a file-level entry. Node's own totals (``diagnostics``, ``summary``) also
    count each file-level entry (``file_failures`` and ``silent_files``) as one test; they are
    returned as reported, not reconciled.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return _empty("missing")
    except OSError:
        return _empty("unreadable")
    try:
        records, cut = _records(data)
    except (UnicodeDecodeError, _Unreadable):
        return _empty("unreadable")
    if not records or records[0]["type"] != "start":
        return _empty("unreadable")
    start = records[0]
    node, node_cwd = start.get("node"), start.get("cwd")
    version = node if isinstance(node, str) else ""
    # the cwd given, its real path, and the cwd node ran in (names of file entries are relative
    # to that one on node 22+)
    bases = _dedupe(
        [str(cwd), str(cwd.resolve()), *([node_cwd] if isinstance(node_cwd, str) else [])]
    )
    finished = False
    interrupted = False
    pending: dict[tuple[str, int], list[_Result]] = {}
    roots: dict[str, list[_Result]] = {}
    file_failures: list[str] = []
    silent: list[str] = []
    files: list[str] = []
    enqueued: Counter[tuple[str, int, int, int, str]] = Counter()
    reported: Counter[tuple[str, int, int, int, str]] = Counter()
    summary: dict[str, int] | None = None
    diagnostics: dict[str, int] = {}
    late_messages: dict[str, list[str]] = {}  # a test file (absolute) -> node's late errors
    unclaimed: list[str] = []  # late errors of no named file: the next file entry's (node 20)
    ran_tests: set[str] = set()  # test files (absolute) that reported a test of their own
    stopped = ""
    try:
        for seq, record in enumerate(records[1:], start=1):
            kind = record["type"]
            if finished or kind == "start" or (stopped and kind != "end"):
                raise _Unreadable("a record after the end or the stop, or a second start")
            if kind == "end":
                finished = True
            elif kind == "interrupted":
                interrupted = True
            elif kind == "stopped":
                stopped = _relative(_text(record, "file"), bases)
            elif kind == "enqueue":
                if _is_file_entry(record, bases):
                    files.append(_relative(_text(record, "file"), bases))
                elif isinstance(record.get("file"), str):
                    enqueued[_location(record, bases)] += 1
            elif kind in ("pass", "fail"):
                _check_result(record)
                file = _text(record, "file")
                if _is_file_entry(record, bases):
                    (file_failures if kind == "fail" else silent).append(_relative(file, bases))
                    late_messages.setdefault(os.path.normpath(file), []).extend(unclaimed)
                    unclaimed.clear()
                    continue
                ran_tests.add(os.path.normpath(file))
                reported[_location(record, bases)] += 1
                nesting = _int(record, "nesting")
                children = pending.pop((file, nesting + 1), [])
                result = _Result(seq, record, tuple(children))
                pending.setdefault((file, nesting), []).append(result)
            elif kind == "diagnostic":
                message = record.get("message")
                after = _LATE.match(message) if isinstance(message, str) else None
                if after is not None and isinstance(message, str):
                    named = record.get("file") or (after["file"] and os.path.join(
                        node_cwd if isinstance(node_cwd, str) else str(cwd), after["file"]))
                    if isinstance(named, str) and named:
                        late_messages.setdefault(os.path.normpath(named), []).append(message)
                    else:
                        unclaimed.append(message)
                elif record.get("file") is None and isinstance(message, str):
                    total = _TOTAL.fullmatch(message.strip())
                    if total:
                        diagnostics[total.group(1)] = int(total.group(2))
            elif kind == "summary" and record.get("file") is None:
                summary = _counts(record.get("counts"))
    except _Unreadable:
        return _empty("unreadable", version)
    # Whatever no parent claimed: the top level of each file, then orphans of a cut-off run.
    for (file, _nesting), results in sorted(pending.items(), key=lambda item: item[0][1]):
        roots.setdefault(file, []).extend(results)
    tests: list[tuple[int, NodeTest]] = []
    suites: list[tuple[int, str]] = []
    located: dict[tuple[str, int, int], str] = {}
    for file, results in roots.items():
        _walk(sorted(results, key=lambda r: r.seq), (_relative(file, bases),), tests, suites,
              located)
    unreported = sorted((enqueued - reported).elements())
    # a file that reported every test it queued and then failed (node counts one more failed
    # test): an error after a test ended, the failure of the test node names
    cut_short = {entry[0] for entry in unreported}
    late: list[str] = []
    for file in sorted(ran_tests):
        relative = _relative(file, bases)
        if relative in file_failures and relative not in cut_short and _failed_late(
                tests, relative, late_messages.get(file, []), bases, located):
            late.append(relative)
    file_failures = [file for file in file_failures if file not in late]
    state = "ok" if finished and not interrupted and not cut else "unfinished"
    return NodeEvents(
        state=state,
        node_version=version,
        tests=tuple(test for _seq, test in sorted(tests, key=lambda item: item[0])),
        file_failures=_dedupe(file_failures),
        suite_failures=tuple(ident for _seq, ident in sorted(suites)),
        summary=summary,
        diagnostics=diagnostics,
        silent_files=_dedupe(silent),
        unreported=tuple(f"{f}:{line}:{col} {name}" for f, line, col, _n, name in unreported),
        files=_dedupe(files),
        late=tuple(late),
        stopped=stopped,
    )
