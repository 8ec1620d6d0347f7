"""Content digests of files and whole directory trees, for restore and isolation checks."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path


def file_digest(data: bytes) -> str:
    """The sha256 of some bytes, as hex."""
    return hashlib.sha256(data).hexdigest()


def tree_digest(root: Path, skip: frozenset[str] = frozenset()) -> dict[str, str]:
    """Map every entry under `root` (relative, `/`-separated) to its kind, mode and content digest.

    Top-level names in `skip` are left out. Symlinks are recorded by their target, never followed.
    """
    entries: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        relative_dir = Path(dirpath).relative_to(root).as_posix()
        if relative_dir == ".":
            dirnames[:] = [name for name in dirnames if name not in skip]
            filenames = [name for name in filenames if name not in skip]
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            key = name if relative_dir == "." else f"{relative_dir}/{name}"
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                entries[key] = f"link:{os.readlink(path)}"
            elif stat.S_ISDIR(info.st_mode):
                entries[key] = "dir"
            elif stat.S_ISREG(info.st_mode):
                executable = "x" if info.st_mode & stat.S_IXUSR else "-"
                entries[key] = f"file:{executable}:{file_digest(path.read_bytes())}"
            else:
                entries[key] = f"special:{stat.S_IFMT(info.st_mode)}"
        dirnames[:] = [name for name in dirnames if not Path(dirpath, name).is_symlink()]
    return entries


def changed_paths(before: Mapping[str, str], after: Mapping[str, str]) -> tuple[str, ...]:
    """Paths added, removed or changed between two tree digests, sorted."""
    keys = set(before) | set(after)
    return tuple(sorted(key for key in keys if before.get(key) != after.get(key)))
