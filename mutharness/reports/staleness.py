"""Evidence freshness: a document is stale when a file whose digest its facts record has changed.

Each `<spec-id>.md` has its facts beside it, `<spec-id>.json` (the results schema, read with
`results.from_json`): the commit measured and, for each fact the document states (the
verdicts, the baseline line, a red-first proof), the digest of every file it depends on.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from mutharness.digest import file_digest
from mutharness.errors import ResultsError
from mutharness.model.results import from_json
from mutharness.repo.source import SourceRepo
from mutharness.reports.evidence import FACTS_SUFFIX, INDEX

_DRIVE = re.compile(r"^[A-Za-z]:")


VERDICTS = "verdicts"
BASELINE = "baseline line"
RED_FIRST = "red first"


@dataclass(frozen=True)
class StaleFile:
    """One recorded file whose content differs now (or that is gone), and the facts it
    makes stale."""

    path: str
    missing: bool
    facts: tuple[str, ...] = (VERDICTS,)
    added: bool = False  # none was there when measured: a new file that configures the run


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


def _outside(relative: str) -> bool:
    """True when a recorded path would lead out of the repository (absolute, drive, `..`)."""
    return relative.startswith("/") or bool(_DRIVE.match(relative)) or any(
        part in ("", ".", "..") for part in relative.split("/")
    )


Facts = tuple[str, dict[str, dict[str, str]], tuple[str, ...]]  # commit, digests, absent


def read_facts(path: Path) -> Facts | str:
    """(commit measured, fact -> {path: sha256}, paths absent then) from a document's facts
    file, or why not."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return f"its facts file {path.name} is missing (re-render the evidence)"
    except (OSError, UnicodeDecodeError) as error:
        return f"its facts file {path.name} cannot be read: {error}"
    return parse_facts(text, path.name)


def parse_facts(text: str, name: str) -> Facts | str:
    """(commit measured, fact -> {path: sha256}, absent paths) from the text of the facts
    file `name`."""
    parsed = parse_record(text, name)
    return parsed if isinstance(parsed, str) else parsed[0]


def parse_record(text: str, name: str) -> tuple[Facts, tuple[str, ...] | None] | str:
    """`parse_facts`'s facts, and what the spec's record lists beyond its own files
    (`SpecResult.recorded`; None: a record older than that field), from one reading."""
    try:
        run = from_json(json.loads(text), name)
    except ValueError as error:
        return f"its facts file {name} is not JSON: {error}"
    except ResultsError as error:
        return error.message()
    stem = name.removesuffix(FACTS_SUFFIX)
    specs = [spec for spec in run.specs if spec.spec.id == stem]
    if len(specs) != 1:
        return f"its facts file {name} does not hold the spec {stem!r}"
    spec = specs[0]
    commit = spec.source_commit or run.commit
    if not re.fullmatch(r"[0-9a-f]{7,64}", commit) or not spec.depends_on:
        return f"its facts file {name} records no commit or no file digests"
    facts = {VERDICTS: dict(spec.depends_on)}
    if spec.pin is not None and spec.pin_depends_on:
        facts[BASELINE] = dict(spec.pin_depends_on)
    if spec.red_first is not None:
        facts[RED_FIRST] = dict(spec.red_first.depends_on)
    return (commit, facts, tuple(spec.absent)), spec.recorded


def check_document(path: Path, source: SourceRepo) -> Freshness:
    """Compare every digest recorded in one document with the working tree's bytes."""
    name = path.name
    parsed = read_facts(path.with_suffix(FACTS_SUFFIX))
    if isinstance(parsed, str):
        return Freshness(name, "", (), None, parsed)
    commit, facts, absent = parsed
    paths = sorted({relative for recorded in facts.values() for relative in recorded})
    outside = [relative for relative in (*paths, *absent) if _outside(relative)]
    if outside:
        return Freshness(name, commit, (), None,
                         f"records a path outside the repository: {outside[0]!r}")
    stale: list[StaleFile] = []
    for relative in paths:
        current = source.root.joinpath(*relative.split("/"))
        if current.is_symlink():  # recorded as a regular file: replaced by a link is a change
            now: str | None = "a symlink"
        elif not current.is_file():
            now = None
        else:
            now = file_digest(current.read_bytes())
        which = tuple(fact for fact, recorded in facts.items()
                      if relative in recorded and recorded[relative] != now)
        if which:  # each fact against its own digest: a kept older fact may differ alone
            stale.append(StaleFile(relative, now is None, which))
    configured = tuple(fact for fact in (VERDICTS, BASELINE) if fact in facts)
    for relative in absent:
        current = source.root.joinpath(*relative.split("/"))
        if current.is_file() or current.is_symlink():
            stale.append(StaleFile(relative, False, configured, added=True))
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
