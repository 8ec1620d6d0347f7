"""Static spec checks: tracked targets and exactly-once anchors, on the working tree (`check`)
or on the workspace's bytes (`verify`); no tests run."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Final, Protocol

from mutharness.errors import SpecError, SpecProblem
from mutharness.model.anchors import Splice, locate
from mutharness.model.spec import Mutation, Spec, read_specs
from mutharness.paths import linked_parent
from mutharness.repo.source import REGULAR_MODES, SourceRepo, status_paths
from mutharness.runners.registry import runner_kind

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

    def test_entry_problem(self, path: str) -> str | None:
        """Why a `tests` entry's path names nothing the workspace holds as a real file or
        directory."""
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
    """Why `mutation.file` is not a tracked regular file reached through real directories."""
    mode = tree.modes.get(mutation.file)
    if mode is None:
        if mutation.file in tree.directories:
            return "is a directory, not a file"
        return tree.why_not_tracked(mutation.file)
    if mode not in REGULAR_MODES:
        return f"is {_KINDS.get(mode, f'mode {mode}')}, not a regular file"
    return _linked(source.root, mutation.file)


class Contents(Protocol):
    """Where the bytes of the files a spec mutates are read from."""

    def size(self, path: str) -> int | None:
        """The file's size, None when it is missing."""

    def read(self, path: str) -> bytes:
        """The file's bytes."""


@dataclass(frozen=True)
class WorkingTree:
    """The files as they are in the working tree: what `check` (a pre-commit hook) sees."""

    root: Path

    def _path(self, path: str) -> Path:
        return self.root.joinpath(*path.split("/"))

    def size(self, path: str) -> int | None:
        target = self._path(path)
        if target.is_symlink() or not target.is_file():
            return None
        return target.stat().st_size

    def read(self, path: str) -> bytes:
        return self._path(path).read_bytes()


@dataclass(frozen=True)
class Committed:
    """The files as a checkout of HEAD writes them (line endings and filters applied): what
    a workspace holds. Uncommitted paths a run includes (`--allow-dirty`) are read from the
    working tree, as the workspace copies them."""

    source: SourceRepo
    included: frozenset[str] = frozenset()

    def size(self, path: str) -> int | None:
        if path in self.included:
            return WorkingTree(self.source.root).size(path)
        return self.source.committed_size(path)

    def read(self, path: str) -> bytes:
        if path in self.included:
            return WorkingTree(self.source.root).read(path)
        data = self.source.committed_bytes(path)
        if data is None:
            raise OSError(f"HEAD holds no blob at {path}")
        return data


def _check_anchor(
    spec: Spec, mutation: Mutation, contents: Contents, suggest: bool,
) -> tuple[list[SpecProblem], list[Suggestion]]:
    """The anchor of `mutation` against the bytes of its file in `contents`."""
    pointer = f"/mutations/{mutation.index}"
    where = f"mutation {mutation.number} ({mutation.name[:60]!r}), file {mutation.file}"
    size = contents.size(mutation.file)
    if size is None:
        return [SpecProblem(spec.path, f"{pointer}/file", f"{where}: missing from the tree")], []
    if size > MAX_TARGET_BYTES:
        return [SpecProblem(spec.path, f"{pointer}/file", f"{where}: is {size} bytes; the limit "
                            f"for a target is {MAX_TARGET_BYTES}")], []
    data = contents.read(mutation.file)
    if (nul := data.find(b"\0")) != -1:
        return [SpecProblem(spec.path, f"{pointer}/file",
                            f"{where}: is binary (a NUL byte at offset {nul}; UTF-16 text is "
                            "binary here): mutharness splices text")], []
    found = locate(data, mutation.anchor, mutation.replacement)
    if isinstance(found, Splice):
        if found.apply(data) == data:
            return [SpecProblem(
                spec.path, f"{pointer}/replacement",
                f"{where}: the splice at line {found.line} leaves the file's bytes unchanged"
                + (" once line endings are translated" if found.crlf else "")
                + ": the mutation would mutate nothing",
            )], []
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


def _static_problems(
    specs: Sequence[Spec], source: SourceRepo, tree: _Tree
) -> tuple[list[SpecProblem], set[tuple[str, int]]]:
    """Problems visible from the tree listing alone, and the mutations they rule out."""
    problems: list[SpecProblem] = []
    ruled_out: set[tuple[str, int]] = set()
    for spec in specs:
        for index, entry in enumerate(spec.tests):
            path = runner_kind(spec.runner).entry_path(entry)
            if (problem := tree.test_entry_problem(path)) is not None:
                problems.append(SpecProblem(spec.path, f"/tests/{index}", f"{entry!r} {problem}"))
        for mutation in spec.mutations:
            if (problem := _target_problem(mutation, source, tree)) is not None:
                where = f"mutation {mutation.number} ({mutation.name[:60]!r}), file {mutation.file}"
                problems.append(SpecProblem(
                    spec.path, f"/mutations/{mutation.index}/file", f"{where}: {problem}"
                ))
                ruled_out.add((spec.path, mutation.index))
    return problems, ruled_out


def _anchor_problems(
    specs: Sequence[Spec], contents: Contents, suggest: bool, ruled_out: set[tuple[str, int]],
) -> tuple[list[SpecProblem], list[Suggestion]]:
    problems: list[SpecProblem] = []
    suggestions: list[Suggestion] = []
    for spec in specs:
        for mutation in spec.mutations:
            if (spec.path, mutation.index) in ruled_out:
                continue
            found, suggested = _check_anchor(spec, mutation, contents, suggest)
            problems += found
            suggestions += suggested
    return problems, suggestions


def check_specs(
    specs: Sequence[Spec], source: SourceRepo, tracked: Mapping[str, str],
    contents: Contents | None = None, suggest: bool = False,
) -> None:
    """Raise one SpecError with every `tests` entry, target and anchor problem (and, on
    request, repaired anchors). `tracked` is `tracked_with(source, included)`: the paths the
    workspace holds. Anchors are checked in `contents`: `verify` gives `Committed`, the bytes
    the workspace will hold; `check` the working tree (the default)."""
    static, ruled_out = _static_problems(specs, source, _Tree(dict(tracked)))
    anchors, suggestions = _anchor_problems(
        specs, contents or WorkingTree(source.root), suggest, ruled_out
    )
    problems = static + anchors
    if problems:
        raise SpecError(tuple(problems), tuple(suggestion.note() for suggestion in suggestions))


def check_spec_files(
    paths: Sequence[Path], display: Sequence[str], source: SourceRepo, suggest: bool = False,
    tracked: Mapping[str, str] | None = None, contents: Contents | None = None,
) -> tuple[Spec, ...]:
    """Every spec's schema, then every valid spec's targets and anchors: by default on the
    working tree (uncommitted files included, as a pre-commit hook sees them: `check`), or in
    the given `tracked` paths and `contents` (`verify`: the bytes the workspace will hold).

    Raises one SpecError listing every problem in every file; returns the specs otherwise.
    """
    specs, found = read_specs(paths, display)
    problems = list(found)
    if tracked is None:
        tracked = tracked_with(source, status_paths(source.changes()))
    notes: tuple[str, ...] = ()
    try:
        check_specs(specs, source, tracked, contents, suggest=suggest)
    except SpecError as error:
        problems += error.problems
        notes = error.notes
    if problems:
        raise SpecError(tuple(problems), notes)
    return specs
