"""Static spec check: schema and exactly-once anchors on the working tree, no tests run."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from mutharness.anchors import AnchorMiss, Splice, locate
from mutharness.errors import SpecError, SpecProblem
from mutharness.spec import Mutation, Spec, load_specs
from mutharness.workspace import REGULAR_MODES, SourceRepo


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


def _check_mutation(
    spec: Spec, mutation: Mutation, source: SourceRepo, tracked: dict[str, str], suggest: bool,
) -> tuple[list[SpecProblem], list[Suggestion]]:
    pointer = f"/mutations/{mutation.index}"
    where = f"mutation {mutation.index} ({mutation.name[:60]!r}), file {mutation.file}"
    mode = tracked.get(mutation.file)
    if mode is None:
        twin = next((p for p in tracked if p.lower() == mutation.file.lower()), None)
        hint = f" (the tracked path is {twin!r}: case differs)" if twin else ""
        return [SpecProblem(spec.path, f"{pointer}/file",
                            f"{where}: not a file tracked at HEAD{hint}")], []
    if mode not in REGULAR_MODES:
        kind = {"120000": "a symlink", "160000": "a submodule"}.get(mode, f"mode {mode}")
        return [SpecProblem(spec.path, f"{pointer}/file",
                            f"{where}: is {kind}, not a regular file")], []
    target = source.root.joinpath(*mutation.file.split("/"))
    if target.is_symlink() or not target.is_file():
        return [SpecProblem(spec.path, f"{pointer}/file",
                            f"{where}: missing from the working tree")], []
    data = target.read_bytes()
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


def check_specs(
    specs: Sequence[Spec], source: SourceRepo, included: Sequence[str] = (),
    suggest: bool = False,
) -> None:
    """Raise one SpecError with every target and anchor problem (and, on request, repairs).

    `included` names uncommitted paths that --allow-dirty brings into the workspace.
    """
    tracked = source.tracked()
    for path in included:
        tracked.setdefault(path, "100644")
    problems: list[SpecProblem] = []
    suggestions: list[Suggestion] = []
    for spec in specs:
        for mutation in spec.mutations:
            found, suggested = _check_mutation(spec, mutation, source, tracked, suggest)
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
    specs: list[Spec] = []
    problems: list[SpecProblem] = []
    seen: dict[str, str] = {}
    for path, name in zip(paths, display, strict=True):
        try:
            [spec] = load_specs([path], [name])
        except SpecError as error:
            problems += error.problems
            continue
        if spec.id in seen:
            problems.append(SpecProblem(name, "", f"has the same id as {seen[spec.id]}"))
            continue
        seen[spec.id] = name
        specs.append(spec)
    included = tuple(entry[3:] for entry in source.changes())
    notes: tuple[str, ...] = ()
    try:
        check_specs(specs, source, included, suggest)
    except SpecError as error:
        problems += error.problems
        notes = error.notes
    if problems:
        raise SpecError(tuple(problems), notes)
    return tuple(specs)
