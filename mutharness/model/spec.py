"""Spec files: strict JSON -> validated frozen dataclasses, every problem reported at once."""

from __future__ import annotations

import hashlib
import json
import math
import os
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mutharness.errors import SpecError, SpecProblem
from mutharness.paths import path_problem
from mutharness.runners.registry import RUNNERS, detected

MAX_SPEC_BYTES = 1024 * 1024
MAX_DEPTH = 32
MAX_MUTATIONS = 1000
MAX_TESTS = 1000
MAX_TEXT_CHARS = 64 * 1024
MAX_NAME_CHARS = 1000
MAX_SAFE_INTEGER = 2**53 - 1  # as the Node-project tools: a "positive safe integer"
MAX_PROBLEMS = 50  # per spec file; the rest are counted, so a hostile file cannot flood a log

_TOP_KEYS = frozenset({"tests", "expectBaselinePass", "mutations", "runner"})
_MUTATION_KEYS = frozenset(
    {"name", "file", "anchor", "replacement", "expectCaught", "killedBy"}
)


@dataclass(frozen=True)
class Mutation:
    """One hand-picked defect: replace the single occurrence of `anchor` in `file`."""

    index: int
    name: str
    file: str
    anchor: str
    replacement: str
    expect_caught: bool
    killed_by: tuple[str, ...]

    @property
    def number(self) -> int:
        """Its 1-based position in the spec, as every message and document names it."""
        return self.index + 1


@dataclass(frozen=True)
class Spec:
    """A validated spec file; its id is the file stem."""

    id: str
    path: str
    digest: str
    tests: tuple[str, ...]
    expect_baseline_pass: int
    mutations: tuple[Mutation, ...]
    runner: str


class _Pairs:
    """A JSON object as parsed: its key/value pairs in order, duplicates kept.

    Deliberately not a list, so that an object is never mistaken for an array.
    """

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        self.pairs = pairs

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        return iter(self.pairs)

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{key!r}: {value!r}" for key, value in self.pairs) + "}"


@dataclass(frozen=True)
class _BadNumber:
    """A number JSON cannot carry faithfully, kept so that it is reported with its pointer."""

    literal: str
    why: str


def _non_finite(literal: str) -> _BadNumber:
    return _BadNumber(literal, f"{literal} is not valid JSON")


def _float(literal: str) -> float | _BadNumber:
    value = float(literal)
    if not math.isfinite(value):
        return _BadNumber(literal[:20], f"{literal[:20]} is not a finite number")
    return value


def _int(literal: str) -> int | _BadNumber:
    # decided on the digit count before int() so that no literal can be costly to convert
    if len(literal.lstrip("-")) > len(str(MAX_SAFE_INTEGER)) or abs(int(literal)) > (
        MAX_SAFE_INTEGER
    ):
        shown = literal if len(literal) <= 20 else f"{literal[:12]}... ({len(literal)} digits)"
        return _BadNumber(shown, f"{shown} is too large (the limit is {MAX_SAFE_INTEGER})")
    return int(literal)


# C0 and C1 controls, DEL, and the bidirectional overrides that make text read other than it is
_CONTROL = frozenset(
    [chr(code) for code in (*range(0x20), *range(0x7F, 0xA0))]
    + ["\u061c", "\u200e", "\u200f", *map(chr, range(0x202A, 0x202F)),
       *map(chr, range(0x2066, 0x206A))]
)
_NAME_WHITESPACE = frozenset("\t\n\r")  # a name may be wrapped over lines


def _printable(text: str) -> str:
    """`text` with lone surrogates and control characters escaped: safe to print anywhere."""
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    if _CONTROL.isdisjoint(text):
        return text
    return "".join(
        char.encode("unicode_escape").decode("ascii") if char in _CONTROL else char
        for char in text
    )


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= char <= "\udfff" for char in text)


def _control_in(text: str) -> str | None:
    """The first control character of a name (tab, newline and CR allowed), escaped."""
    found = next((char for char in text if char in _CONTROL - _NAME_WHITESPACE), None)
    return None if found is None else found.encode("unicode_escape").decode("ascii")


def _pointer(*parts: str | int) -> str:
    escaped = (_printable(str(part)).replace("~", "~0").replace("/", "~1") for part in parts)
    return "".join(f"/{part}" for part in escaped)


def _max_depth(text: str) -> int:
    """Deepest nesting of arrays/objects in JSON text (strings skipped)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


class _Collector:
    """Accumulates problems for one spec file: the first problem found at each pointer."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.problems: list[SpecProblem] = []
        self.more = 0  # problems found beyond MAX_PROBLEMS, counted, not kept
        self._pointers: set[str] = set()

    def add(self, pointer: str, text: str) -> None:
        if pointer in self._pointers:
            return  # e.g. a NaN reported as such is not also "not a positive integer"
        self._pointers.add(pointer)
        if len(self.problems) >= MAX_PROBLEMS:
            self.more += 1
            return
        self.problems.append(SpecProblem(self.path, pointer, text))

    @property
    def count(self) -> int:
        """Every problem found so far, kept or not."""
        return len(self.problems) + self.more

    def report(self) -> tuple[SpecProblem, ...]:
        """The problems kept, and a last one counting the rest."""
        if not self.more:
            return tuple(self.problems)
        more = SpecProblem(self.path, "", f"... and {self.more} more problem(s) in this file")
        return (*self.problems, more)


def _object(value: Any, pointer: str, keys: frozenset[str], out: _Collector) -> dict[str, Any]:
    """Check an object: no duplicate, unknown or non-finite members; `_` keys are metadata."""
    if not isinstance(value, _Pairs):
        out.add(pointer, f"must be an object, not {_type_name(value)}")
        return {}
    result: dict[str, Any] = {}
    seen: set[str] = set()
    for key, member in value:
        if key in seen:
            out.add(_join(pointer, key), "duplicate key")
            continue
        seen.add(key)
        if not key.startswith("_") and key not in keys:
            allowed = ", ".join(sorted(keys))
            out.add(_join(pointer, key), f"unknown key (allowed: {allowed}, or _-prefixed notes)")
            continue
        result[key] = member
    return result


def _join(pointer: str, key: str | int) -> str:
    return pointer + _pointer(key)


def _type_name(value: Any) -> str:
    if isinstance(value, _Pairs):
        return "an object"
    if isinstance(value, _BadNumber):
        return value.literal
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__


def _describe(value: Any) -> str:
    """The type of a JSON value, and the value itself when it is a scalar."""
    if value is None or isinstance(value, _BadNumber):
        return _type_name(value)
    if isinstance(value, bool | int | float | str):
        shown = json.dumps(value)
        return f"{_type_name(value)} {shown if len(shown) <= 40 else shown[:37] + '...'}"
    return _type_name(value)


def _string(
    value: Any, pointer: str, out: _Collector, *, empty_ok: bool, limit: int = MAX_TEXT_CHARS
) -> str | None:
    if not isinstance(value, str):
        out.add(pointer, f"must be a string, not {_type_name(value)}")
        return None
    if not value and not empty_ok:
        out.add(pointer, "must not be empty")
        return None
    if len(value) > limit:
        out.add(pointer, f"is {len(value)} characters; the limit is {limit}")
        return None
    return value


def _string_list(value: Any, pointer: str, out: _Collector, limit: int) -> list[str] | None:
    if not isinstance(value, list):
        out.add(pointer, f"must be an array of strings, not {_type_name(value)}")
        return None
    if len(value) > limit:
        out.add(pointer, f"has {len(value)} entries; the limit is {limit}")
        return None
    return [
        item
        for index, item in enumerate(value)
        if _string(item, _join(pointer, index), out, empty_ok=False, limit=MAX_NAME_CHARS)
        is not None
    ]


def _mutation(index: int, value: Any, out: _Collector) -> Mutation | None:
    pointer = _pointer("mutations", index)
    members = _object(value, pointer, _MUTATION_KEYS, out)
    if not isinstance(value, _Pairs):
        return None
    before = out.count
    for key in ("name", "file", "anchor", "replacement"):
        if key not in members:
            out.add(_join(pointer, key), "is required")
    name = _string(members.get("name", ""), _join(pointer, "name"), out, empty_ok=False,
                   limit=MAX_NAME_CHARS) if "name" in members else None
    if name is not None and (control := _control_in(name)) is not None:
        out.add(_join(pointer, "name"),
                f"contains the control character {control} (names are shown on terminals)")
    file = _string(members["file"], _join(pointer, "file"), out, empty_ok=False,
                   limit=MAX_NAME_CHARS) if "file" in members else None
    if file is not None and (problem := path_problem(file)) is not None:
        out.add(_join(pointer, "file"), f"{file!r} {problem}")
    anchor = _string(members["anchor"], _join(pointer, "anchor"), out,
                     empty_ok=False) if "anchor" in members else None
    replacement = _string(members["replacement"], _join(pointer, "replacement"), out,
                          empty_ok=True) if "replacement" in members else None
    if anchor is not None and anchor == replacement:
        out.add(_join(pointer, "replacement"), "equals the anchor: the mutation changes nothing")
    expect_caught = members.get("expectCaught", True)
    if not isinstance(expect_caught, bool):
        out.add(_join(pointer, "expectCaught"),
                f"must be true or false, not {_type_name(expect_caught)}")
    killed_by: list[str] | None = []
    if "killedBy" in members:
        killed_by = _string_list(members["killedBy"], _join(pointer, "killedBy"), out, MAX_TESTS)
    if out.count > before:
        return None
    assert name is not None and file is not None and anchor is not None
    assert replacement is not None and killed_by is not None
    return Mutation(index, name, file, anchor, replacement, expect_caught, tuple(killed_by))


def _validate(document: Any, path: str, out: _Collector) -> tuple[Any, ...] | None:
    _reject_unfaithful(document, "", out)
    members = _object(document, "", _TOP_KEYS, out)
    if not isinstance(document, _Pairs):
        return None
    for key in ("tests", "expectBaselinePass", "mutations"):
        if key not in members:
            out.add(_pointer(key), "is required")
    tests: list[str] | None = None
    if "tests" in members:
        tests = _string_list(members["tests"], _pointer("tests"), out, MAX_TESTS)
        if tests is not None and not members["tests"]:
            out.add(_pointer("tests"), "must not be empty")
    expected = members.get("expectBaselinePass")
    if "expectBaselinePass" in members and (
        isinstance(expected, bool) or not isinstance(expected, int) or expected < 1
    ):
        out.add(_pointer("expectBaselinePass"),
                f"must be a positive integer, not {_describe(expected)}")
    runner = members.get("runner", detected(tests or ()))
    if runner not in RUNNERS:
        out.add(_pointer("runner"),
                f"{runner!r} is not a supported runner (supported: {', '.join(RUNNERS)})")
    else:
        for index, entry in enumerate(tests or ()):
            if (problem := RUNNERS[runner].entry_problem(entry)) is not None:
                out.add(_pointer("tests", index), f"{entry!r} {problem}")
    mutations: list[Mutation] = []
    raw = members.get("mutations")
    if "mutations" in members:
        if not isinstance(raw, list):
            out.add(_pointer("mutations"), f"must be an array, not {_type_name(raw)}")
        elif not raw:
            out.add(_pointer("mutations"), "must not be empty")
        elif len(raw) > MAX_MUTATIONS:
            out.add(_pointer("mutations"),
                    f"has {len(raw)} mutations; the limit is {MAX_MUTATIONS}")
        else:
            for index, value in enumerate(raw):
                mutation = _mutation(index, value, out)
                if mutation is not None:
                    mutations.append(mutation)
    if out.problems:
        return None
    return (tuple(tests or ()), expected, tuple(mutations), runner)


def _reject_unfaithful(value: Any, pointer: str, out: _Collector) -> None:
    """Anywhere, metadata included: NaN, Infinity, unsafe integers, lone surrogates."""
    if isinstance(value, _BadNumber):
        out.add(pointer, value.why)
    elif isinstance(value, str) and _has_surrogate(value):
        out.add(pointer, "contains a lone UTF-16 surrogate escape (not a Unicode character)")
    elif isinstance(value, _Pairs):
        for key, member in value:
            if _has_surrogate(key):
                out.add(_join(pointer, key),
                        "the key contains a lone UTF-16 surrogate escape (not a Unicode character)")
            else:
                _reject_unfaithful(member, _join(pointer, key), out)
    elif isinstance(value, list):
        for index, member in enumerate(value):
            _reject_unfaithful(member, _join(pointer, index), out)


def parse_spec(data: bytes, path: str) -> tuple[Spec | None, tuple[SpecProblem, ...]]:
    """Parse and validate one spec's bytes; returns the spec or its problems."""
    out = _Collector(path)
    if len(data) > MAX_SPEC_BYTES:
        out.add("", f"is {len(data)} bytes; the limit is {MAX_SPEC_BYTES}")
        return None, out.report()
    if data.startswith(b"\xef\xbb\xbf"):
        out.add("", "starts with a UTF-8 byte order mark; save it as UTF-8 without a BOM")
        return None, out.report()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        utf16 = data.startswith((b"\xff\xfe", b"\xfe\xff"))
        hint = "; it looks like UTF-16: save it as UTF-8" if utf16 else ""
        out.add("", f"is not valid UTF-8 (byte {error.start}){hint}")
        return None, out.report()
    if (depth := _max_depth(text)) > MAX_DEPTH:
        out.add("", f"nests {depth} levels deep; the limit is {MAX_DEPTH}")
        return None, out.report()
    try:
        document = json.loads(
            text, object_pairs_hook=_Pairs, parse_constant=_non_finite, parse_float=_float,
            parse_int=_int,
        )
    except json.JSONDecodeError as error:
        out.add("", f"is not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})")
        return None, out.report()
    except ValueError as error:  # e.g. an integer with too many digits
        out.add("", f"is not valid JSON: {error}")
        return None, out.report()
    fields = _validate(document, path, out)
    if fields is None:
        return None, out.report()
    tests, expected, mutations, runner = fields
    spec_id = Path(path).stem
    digest = hashlib.sha256(data).hexdigest()
    return Spec(spec_id, path, digest, tests, expected, mutations, runner), ()


def _read_bounded(path: Path) -> bytes | str:
    """A spec file's bytes, or why they were not read: never more than MAX_SPEC_BYTES + 1.

    The size is checked on the open file before reading, and the read is capped anyway, so a
    spec that is (or links to) /dev/zero, a FIFO or a file still growing cannot exhaust memory
    or block.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    descriptor = os.open(path, flags)
    with os.fdopen(descriptor, "rb") as handle:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            return "cannot be read: it is not a regular file"
        if info.st_size > MAX_SPEC_BYTES:
            return f"is larger than {MAX_SPEC_BYTES} bytes"
        data = handle.read(MAX_SPEC_BYTES + 1)
    if len(data) > MAX_SPEC_BYTES:
        return f"is larger than {MAX_SPEC_BYTES} bytes"
    return data


def display_name(path: Path, root: Path) -> str:
    """How a spec path is named in messages and results: relative to the repository root."""
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return str(path)


def read_specs(
    paths: Sequence[Path], display: Iterable[str] | None = None
) -> tuple[tuple[Spec, ...], tuple[SpecProblem, ...]]:
    """Every valid spec, and every problem in every file (two files sharing an id included)."""
    names = list(display) if display is not None else [str(path) for path in paths]
    specs: list[Spec] = []
    problems: list[SpecProblem] = []
    seen_ids: dict[str, str] = {}
    for path, name in zip(paths, names, strict=True):
        try:
            data = _read_bounded(path)
        except OSError as error:
            problems.append(SpecProblem(name, "", f"cannot be read: {error.strerror}"))
            continue
        if isinstance(data, str):
            problems.append(SpecProblem(name, "", data))
            continue
        spec, found = parse_spec(data, name)
        problems.extend(found)
        if spec is not None:
            if spec.id in seen_ids:
                problems.append(SpecProblem(name, "", f"has the same id as {seen_ids[spec.id]}"))
                continue
            seen_ids[spec.id] = name
            specs.append(spec)
    return tuple(specs), tuple(problems)


def load_specs(paths: Sequence[Path], display: Iterable[str] | None = None) -> tuple[Spec, ...]:
    """Load every spec; raise one SpecError listing every problem in every file."""
    specs, problems = read_specs(paths, display)
    if problems:
        raise SpecError(problems)
    return specs
