"""Static spec check: schema and exactly-once anchors on the working tree, no tests run."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Final

from mutharness.anchors import AnchorMiss, Splice, locate
from mutharness.errors import SpecError, SpecProblem
from mutharness.paths import linked_parent
from mutharness.spec import Mutation, Spec, read_specs
from mutharness.workspace import REGULAR_MODES, SourceRepo

MAX_TARGET_BYTES = 16 * 1024 * 1024  # a target is source text, read whole: bounded
_KINDS: Final = MappingProxyType({"120000": "a symlink", "160000": "a submodule"})


class _Tree:
    """The paths tracked at HEAD (plus included uncommitted ones), indexed once per check."""

    def __init__(self, modes: dict[str, str]) -> None:
        self.modes = modes
        self.directories = {
            path.rsplit("/", depth)[0]
            for path in modes for depth in range(1, path.count("/") + 1)
        }
        self._folded: dict[str, str] | None = None

    def twin(self, path: str) -> str | None:
        """The tracked path that differs from `path` only by case."""
        if self._folded is None:
            self._folded = {}
            for tracked in self.modes:
                self._folded.setdefault(tracked.casefold(), tracked)
        return self._folded.get(path.casefold())

    def why_not_tracked(self, path: str, what: str = "not a file tracked at HEAD") -> str:
        """Why `path`, which is not a tracked blob, cannot be used; `what` says it plainly."""
        parts = path.split("/")
        for depth in range(1, len(parts)):
            prefix = "/".join(parts[:depth])
            if self.modes.get(prefix) == "160000":
                return f"is inside the submodule {prefix}; only the repository's own files count"
            if self.modes.get(prefix) == "120000":
                return f"is under {prefix}, a symlink tracked at HEAD (never followed)"
        twin = self.twin(path)
        return what + (f" (the tracked path is {twin!r}: case differs)" if twin else "")

    def test_entry_problem(self, entry: str) -> str | None:
        """Why a `tests` entry names nothing the workspace holds as a real file or directory."""
        path = entry.split("::", 1)[0].rstrip("/")
        mode = self.modes.get(path)
        if mode is not None:
            return None if mode in REGULAR_MODES else f"is {_KINDS.get(mode, f'mode {mode}')}"
        if path in self.directories:
            return None
        return self.why_not_tracked(path, "names nothing tracked at HEAD")


def _linked(root: Path, relative: str) -> str | None:
    """Why a path in the working tree sits under a symlinked directory (None if it does not)."""
    found = linked_parent(root, relative)
    if found is None:
        return None
    kind = "a symlink" if root.joinpath(*found.split("/")).is_symlink() else "not a directory"
    return f"is under {found}, {kind} in the working tree (never followed)"


@dataclass(frozen=True)
class Suggestion:
    """A repaired anchor for a drifted one: the same text, re-indented or re-flowed."""

    spec_path: str
    pointer: str
    line: int
    anchor: str

    def note(self) -> str:
        """The suggestion as a line for the terminal; the anchor is a JSON string to paste."""
        where = f"{self.spec_path}#{self.pointer}"
        anchor = json.dumps(self.anchor, ensure_ascii=False)
        return f"{where}: suggested anchor (text now at line {self.line}): {anchor}"


def repaired_anchor(data: bytes, anchor: str) -> tuple[int, str] | None:
    """The file's text that matches `anchor` up to whitespace, if it does so exactly once."""
    words = anchor.split()
    if not words:
        return None
    pattern = r"[ \t]*" + r"\s+".join(re.escape(word) for word in words)
    if anchor.endswith("\n"):
        pattern += r"[ \t]*\r?\n"
    text = data.decode("utf-8", errors="replace")
    matches = list(re.finditer(pattern, text))
    if len(matches) != 1:
        return None
    match = matches[0]
    start = match.start()
    if anchor[:1] not in (" ", "\t"):  # the anchor began mid-line: don't swallow indentation
        start += len(match.group()) - len(match.group().lstrip(" \t"))
    found = text[start : match.end()]
    # LF first: locate reads it as CRLF in a CRLF file, so it works on either kind of checkout.
    for repaired in dict.fromkeys((found.replace("\r\n", "\n"), found)):
        if isinstance(locate(data, repaired, ""), Splice):  # must itself occur exactly once
            return text.count("\n", 0, start) + 1, repaired
    return None


def _target_problem(mutation: Mutation, source: SourceRepo, tree: _Tree) -> str | None:
    """Why `mutation.file` is not a tracked regular text file of a sane size (None if it is)."""
    mode = tree.modes.get(mutation.file)
    if mode is None:
        if mutation.file in tree.directories:
            return "is a directory, not a file"
        return tree.why_not_tracked(mutation.file)
    if mode not in REGULAR_MODES:
        return f"is {_KINDS.get(mode, f'mode {mode}')}, not a regular file"
    if (linked := _linked(source.root, mutation.file)) is not None:
        return linked
    target = source.root.joinpath(*mutation.file.split("/"))
    if target.is_symlink() or not target.is_file():
        return "missing from the working tree"
    if (size := target.stat().st_size) > MAX_TARGET_BYTES:
        return f"is {size} bytes; the limit for a target is {MAX_TARGET_BYTES}"
    return None


def _check_mutation(
    spec: Spec, mutation: Mutation, source: SourceRepo, tree: _Tree, suggest: bool,
) -> tuple[list[SpecProblem], list[Suggestion]]:
    pointer = f"/mutations/{mutation.index}"
    where = f"mutation {mutation.index} ({mutation.name[:60]!r}), file {mutation.file}"
    if (problem := _target_problem(mutation, source, tree)) is not None:
        return [SpecProblem(spec.path, f"{pointer}/file", f"{where}: {problem}")], []
    data = source.root.joinpath(*mutation.file.split("/")).read_bytes()
    if (nul := data.find(b"\0")) != -1:
        return [SpecProblem(spec.path, f"{pointer}/file",
                            f"{where}: is binary (a NUL byte at offset {nul}; UTF-16 text is "
                            "binary here): mutharness splices text")], []
    found = locate(data, mutation.anchor, mutation.replacement)
    if not isinstance(found, AnchorMiss):
        return [], []
    problems = [SpecProblem(spec.path, f"{pointer}/anchor", f"{where}: {found.describe()}")]
    suggestions: list[Suggestion] = []
    if suggest and found.hits == 0:
        repaired = repaired_anchor(data, mutation.anchor)
        if repaired is not None:
            suggestions.append(Suggestion(spec.path, f"{pointer}/anchor", *repaired))
    return problems, suggestions


def tracked_with(source: SourceRepo, included: Sequence[str]) -> dict[str, str]:
    """HEAD's paths and modes, plus the uncommitted paths a run includes (as regular files)."""
    tracked = source.tracked()
    for path in included:
        tracked.setdefault(path, "100644")
    return tracked


def check_specs(
    specs: Sequence[Spec], source: SourceRepo, tracked: Mapping[str, str], suggest: bool = False,
) -> None:
    """Raise one SpecError with every target and anchor problem (and, on request, repairs).

    `tracked` is `tracked_with(source, included)`: the paths a run's workspace holds.
    """
    tree = _Tree(dict(tracked))
    problems: list[SpecProblem] = []
    suggestions: list[Suggestion] = []
    for spec in specs:
        for index, entry in enumerate(spec.tests):
            if (problem := tree.test_entry_problem(entry)) is not None:
                problems.append(SpecProblem(spec.path, f"/tests/{index}", f"{entry!r} {problem}"))
        for mutation in spec.mutations:
            found, suggested = _check_mutation(spec, mutation, source, tree, suggest)
            problems += found
            suggestions += suggested
    if problems:
        raise SpecError(tuple(problems), tuple(suggestion.note() for suggestion in suggestions))


def check_spec_files(
    paths: Sequence[Path], display: Sequence[str], source: SourceRepo, suggest: bool = False,
) -> tuple[Spec, ...]:
    """`mutharness check`: every spec's schema, then every valid spec's anchors, on the
    working tree (uncommitted files included, as a pre-commit hook sees them).

    Raises one SpecError listing every problem in every file; returns the specs otherwise.
    """
    specs, found = read_specs(paths, display)
    problems = list(found)
    tracked = tracked_with(source, tuple(entry[3:] for entry in source.changes()))
    notes: tuple[str, ...] = ()
    try:
        check_specs(specs, source, tracked, suggest)
    except SpecError as error:
        problems += error.problems
        notes = error.notes
    if problems:
        raise SpecError(tuple(problems), notes)
    return specs
