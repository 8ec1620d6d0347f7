"""Where pytest runs keep bytecode: one cache per user, shared by every run (the interpreter's
and its packages' modules compiled once), that holds a workspace's modules only while it
exists, each module's forgotten whenever its file is written again (a mutant, a restore, a
file the tests changed)."""

from __future__ import annotations

import glob
import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

from mutharness.paths import WORKSPACE_PREFIX


def user_cache_root(environ: Mapping[str, str], platform: str = sys.platform) -> Path | None:
    """This user's cache directory for mutharness, as the platform places caches:
    `%LOCALAPPDATA%\\mutharness\\Cache`, `~/Library/Caches/mutharness`, else
    `$XDG_CACHE_HOME/mutharness` (an absolute one) or `~/.cache/mutharness`."""
    if platform == "win32":
        local = environ.get("LOCALAPPDATA")
        return Path(local, "mutharness", "Cache") if local else None
    home = environ.get("HOME")
    if platform == "darwin":
        return Path(home, "Library", "Caches", "mutharness") if home else None
    xdg = environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg, "mutharness")
    return Path(home, ".cache", "mutharness") if home else None


def shared_pycache(environ: Mapping[str, str]) -> Path | None:
    """The user's shared bytecode cache (`<cache>/pycache`), made if new; None when it
    cannot be made, or when it or the cache directory holding it is not this user's own or
    another user could write into it (bytecode there runs as the tests' code)."""
    root = user_cache_root(environ)
    if root is None:
        return None
    directory = root / "pycache"
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        return directory if all(_private(path) for path in (root, directory)) else None
    except OSError:
        return None


def _private(path: Path) -> bool:
    """Whether only this user can write into `path` (always, where there are no POSIX owners)."""
    if os.name != "posix":
        return True
    info = path.stat()
    return info.st_uid == os.getuid() and not info.st_mode & 0o022


def mirror(prefix: Path, path: Path) -> Path:
    """Where an interpreter given `prefix` as its pycache prefix keeps the bytecode of the
    modules under the absolute `path` (its drive dropped, as the interpreter drops it)."""
    return prefix / path.relative_to(path.anchor)


def forget(prefix: Path, path: Path) -> None:
    """Remove the bytecode of every module under `path`, as imported and with links resolved
    (an error is raised: bytecode left behind could be a mutant's, stale)."""
    for each in {path.absolute(), path.resolve()}:
        kept = mirror(prefix, each)
        if kept.exists():
            shutil.rmtree(kept)


def forget_module(prefix: Path, path: Path) -> None:
    """Remove the bytecode of the one module at `path` (the interpreter's, pytest's rewritten
    one, every optimisation level), as imported and with links resolved: a file written
    again with the same size within the same second would otherwise pass for it."""
    for each in {path.absolute(), path.resolve()}:
        kept = mirror(prefix, each.parent)
        for compiled in kept.glob(f"{glob.escape(each.stem)}.*.pyc"):
            compiled.unlink(missing_ok=True)


def prune(prefix: Path, temp_dir: Path) -> None:
    """Remove the bytecode kept for workspaces under `temp_dir` that no longer exist (a run
    killed outright leaves its part behind)."""
    for each in {temp_dir.absolute(), temp_dir.resolve()}:
        try:
            entries = list(mirror(prefix, each).iterdir())
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(WORKSPACE_PREFIX) and not (each / entry.name).exists():
                shutil.rmtree(entry, ignore_errors=True)
