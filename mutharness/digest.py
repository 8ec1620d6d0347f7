"""Content digests of files and whole trees, for restore, isolation and between-run checks."""

from __future__ import annotations

import hashlib
import os
import stat
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

# On POSIX st_ctime is the inode's change time, which no unprivileged process can set back:
# equal (inode, size, mtime, ctime) means unchanged content. On Windows it is the creation time,
# so every file is hashed there.
TRUSTED_CHANGE_TIME = sys.platform != "win32"


def file_digest(data: bytes) -> str:
    """The sha256 of some bytes, as hex."""
    return hashlib.sha256(data).hexdigest()


def _hash_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class Entry:
    """One entry of a tree: its kind and what identifies its content."""

    kind: str  # "file", "dir", "link" or "special"
    content: str = ""  # a file's sha256 (with its x bit and link count), a link's target
    signature: tuple[int, ...] = ()  # a file's (inode, size, mtime_ns, ctime_ns)

    def describe(self) -> str:
        """The entry as one string: kind and content (what `tree_digest` maps a path to)."""
        return f"{self.kind}:{self.content}" if self.content else self.kind


def _walk(root: Path, skip: frozenset[str]) -> Iterator[tuple[str, str, os.stat_result]]:
    """Every entry under `root` (relative `/` path, path, lstat), never following a link
    (the path a string: a `Path` per entry was half the time of a scan):
    a directory's entries (its subdirectories first), then each subdirectory's, as `os.walk`
    lists them, with one `scandir` per directory."""
    pending: list[tuple[str, str]] = [("", str(root))]
    while pending:
        prefix, directory = pending.pop(0)
        try:
            with os.scandir(directory) as found:
                entries = sorted(found, key=lambda entry: not _is_real_dir(entry))
        except OSError:
            continue  # gone or unreadable since its parent listed it (os.walk skips it too)
        below: list[tuple[str, str]] = []
        for entry in entries:
            if not prefix and entry.name in skip:
                continue
            key = f"{prefix}{entry.name}"
            yield key, entry.path, entry.stat(follow_symlinks=False)
            if _is_real_dir(entry):
                below.append((f"{key}/", entry.path))
        pending[:0] = below


def _is_real_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _entry(path: str, info: os.stat_result, known: Entry | None) -> Entry:
    if stat.S_ISLNK(info.st_mode):
        return Entry("link", os.readlink(path))
    if stat.S_ISDIR(info.st_mode):
        return Entry("dir")
    if not stat.S_ISREG(info.st_mode):
        return Entry("special", str(stat.S_IFMT(info.st_mode)))
    signature = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    executable = "x" if info.st_mode & stat.S_IXUSR else "-"
    linked = ":linked" if info.st_nlink > 1 else ""  # a hard link could reach out of the tree
    if TRUSTED_CHANGE_TIME and known is not None and known.signature == signature:
        return known
    return Entry("file", f"{executable}:{_hash_file(path)}{linked}", signature)


def stat_signatures(root: Path) -> dict[str, tuple[int, ...]]:
    """Every entry under `root` by its stat alone (type, inode, size, mtime, ctime; nothing
    read, no link followed): what tells a tree too large to hash changed, ctime included
    (no unprivileged process can set it back)."""
    return {key: (stat.S_IFMT(info.st_mode), info.st_ino, info.st_size, info.st_mtime_ns,
                  info.st_ctime_ns) for key, _, info in _walk(root, frozenset())}


def _parents(key: str) -> Iterator[str]:
    """`a/b/c` -> `a/b`, `a`."""
    while "/" in key:
        key = key.rsplit("/", 1)[0]
        yield key


@dataclass(frozen=True)
class TreeState:
    """Every entry under a directory; a rescan hashes only files whose stat changed."""

    entries: Mapping[str, Entry]

    @classmethod
    def scan(
        cls, root: Path, skip: frozenset[str] = frozenset(), reference: TreeState | None = None
    ) -> TreeState:
        """The tree under `root` now. Files unknown to `reference` are not hashed: they are
        new either way (a tree a test littered with a 1 GiB file costs a stat, not a read)."""
        entries: dict[str, Entry] = {}
        for key, path, info in _walk(root, skip):
            known = reference.entries.get(key) if reference is not None else None
            if reference is not None and known is None and stat.S_ISREG(info.st_mode):
                entries[key] = Entry("file", "new", ())
            else:
                entries[key] = _entry(path, info, known)
        return cls(entries)

    def compare(self, now: TreeState) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(paths added in `now`, paths changed or removed since this state), each sorted.

        An added path below another added directory is not listed (the directory is)."""
        added = {key for key in now.entries if key not in self.entries}
        top = sorted(
            key for key in added
            if not any(parent in added for parent in _parents(key))
        )
        changed = sorted(
            key for key, entry in self.entries.items()
            if key not in now.entries or now.entries[key].describe() != entry.describe()
        )
        return tuple(top), tuple(changed)


def tree_digest(root: Path, skip: frozenset[str] = frozenset()) -> dict[str, str]:
    """Map every entry under `root` (relative, `/`-separated) to its kind, mode and content digest.

    Top-level names in `skip` are left out. Symlinks are recorded by their target, never followed.
    """
    state = TreeState.scan(root, skip)
    return {key: entry.describe() for key, entry in state.entries.items()}


def changed_paths(before: Mapping[str, str], after: Mapping[str, str]) -> tuple[str, ...]:
    """Paths added, removed or changed between two tree digests, sorted."""
    keys = set(before) | set(after)
    return tuple(sorted(key for key in keys if before.get(key) != after.get(key)))
