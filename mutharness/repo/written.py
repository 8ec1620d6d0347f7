"""What mutharness wrote into the working tree (evidence, reports), each file by the digest of
its bytes, kept in the self-ignoring run directory: while a file holds the bytes a run wrote,
it is that run's output, not a change of the user's, and the next run leaves it out of the
uncommitted changes it refuses (a file edited since is a change again). A run always measures
HEAD's tree, so the record can only ever leave out what no run reads."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from mutharness.digest import file_digest
from mutharness.repo.files import write_atomic

RECORD = "written.json"  # in the run directory
MAX_RECORD_BYTES = 1 << 20  # a record larger than this is no record of ours: none is read
_DIGEST = re.compile(r"[0-9a-f]{64}")


def recorded(run_dir: Path) -> dict[str, str]:
    """The record (repo-relative `/`-separated path -> sha256), empty where there is none or
    it is not one of ours: it is read back, so anyone may have edited it."""
    path = run_dir / RECORD
    try:
        if path.is_symlink() or path.stat().st_size > MAX_RECORD_BYTES:
            return {}
        document = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(document, dict):
        return {}
    return {key: value for key, value in document.items()
            if isinstance(key, str) and isinstance(value, str) and _DIGEST.fullmatch(value)}


def as_written(root: Path, path: str, record: Mapping[str, str]) -> bool:
    """Whether `path` (repo-relative) holds the bytes a run of mutharness wrote there."""
    digest = record.get(path)
    if digest is None:
        return False
    try:
        return (root / path).is_file() and file_digest((root / path).read_bytes()) == digest
    except OSError:
        return False


def remember(root: Path, run_dir: Path, written: Iterable[Path]) -> tuple[str, ...]:
    """Add the files a run `written` inside the repository at `root` to the record; their
    repo-relative paths (files outside the repository are no concern of its tree)."""
    record = recorded(run_dir)
    inside: list[str] = []
    top = root.resolve()
    for path in written:
        try:
            relative = path.resolve().relative_to(top).as_posix()
            record[relative] = file_digest(path.read_bytes())
        except (ValueError, OSError):
            continue
        inside.append(relative)
    if inside:
        write_atomic(run_dir / RECORD, json.dumps(dict(sorted(record.items())), indent=1) + "\n")
    return tuple(inside)
