"""The node load record: which files of the workspace each test file's processes loaded and
read, read from the logs the preloaded `_loads.mjs` (and its module hooks) wrote.

Each node process of a run writes `file`, `load`, `read`, `spawn` and `partial` lines (see the
preload). A test file's record is what its own process and the node processes it started
(workers, children, which inherit their test file) loaded and read; it speaks for every file
of the workspace unless one of them started a program that is not node (`spawned`) or could
not record its modules (`partial`): what those read no hook sees.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from mutharness.imports import unescape

MAX_LOG_BYTES = 16 * 1024 * 1024  # a log bigger than this is read no further
KINDS = ("load", "read", "spawn", "partial")


@dataclass(frozen=True)
class FileUse:
    """What one test file's processes did with the workspace."""

    loaded: frozenset[str] = frozenset()  # repo-relative modules
    read: frozenset[str] = frozenset()  # repo-relative files opened through fs
    spawned: tuple[str, ...] = ()  # programs that are not node
    partial: tuple[str, ...] = ()  # why a process could not record its modules

    @property
    def whole(self) -> bool:
        """Whether the record speaks for every file of the workspace (nothing it cannot see)."""
        return not self.spawned and not self.partial

    def used(self, path: str) -> bool:
        """Whether the file at `path` (repo-relative) was loaded or read."""
        return path in self.loaded or path in self.read


@dataclass(frozen=True)
class LoadRecord:
    """Every test file's use of the workspace in one run (by repo-relative test file)."""

    files: Mapping[str, FileUse] = field(default_factory=lambda: MappingProxyType({}))
    root: str = ""  # the workspace the paths are relative to

    @property
    def whole(self) -> bool:
        return bool(self.files) and all(use.whole for use in self.files.values())

    def used(self) -> frozenset[str]:
        """Every file of the workspace any test file's processes loaded or read."""
        return frozenset(path for use in self.files.values()
                         for path in (*use.loaded, *use.read))


def _relative(file: str, root: str) -> str | None:
    prefix = root.rstrip(os.sep) + os.sep
    return file[len(prefix):].replace(os.sep, "/") if file.startswith(prefix) else None


def log_lines(path: Path) -> Iterable[tuple[str, str]]:
    """A log's (kind, value) lines, each value unescaped (at most `MAX_LOG_BYTES` read)."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_LOG_BYTES)
    except OSError:
        return
    for raw in data.split(b"\n"):
        kind, _, value = os.fsdecode(raw).partition("\t")
        if kind and value:
            yield kind, unescape(value)


def read_loads(directory: Path, root: Path) -> LoadRecord:
    """The record the logs in `directory` hold, paths relative to the workspace at `root`."""
    real = os.path.realpath(root)
    uses: dict[str, dict[str, set[str]]] = {}
    logs = sorted(directory.iterdir()) if directory.is_dir() else []
    for log in logs:
        test_file: str | None = None
        for kind, value in log_lines(log):
            if kind == "file":
                test_file = _relative(os.path.realpath(value), real)
                if test_file is not None:
                    uses.setdefault(test_file, {name: set() for name in KINDS})
            elif test_file is not None and kind in KINDS:
                found = (value if kind in ("spawn", "partial")
                         else _relative(os.path.realpath(value), real))
                if found is not None:
                    uses[test_file][kind].add(found)
    return LoadRecord(MappingProxyType({
        test_file: FileUse(frozenset(use["load"]), frozenset(use["read"]),
                           tuple(sorted(use["spawn"])), tuple(sorted(use["partial"])))
        for test_file, use in sorted(uses.items())
    }), real)
