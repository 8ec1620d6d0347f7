"""The private places every runner's child gets: temp, home, profile folders, the run mark."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Mapping
from pathlib import Path

from mutharness import process
from mutharness.repo.files import remove_tree
from mutharness.runners.base import Isolation


def private_home(scratch: Path) -> dict[str, str]:
    """A fresh, empty home for one run: HOME, the XDG directories, Windows' profile folders."""
    home = scratch / "home"
    places = {
        "HOME": home,
        "XDG_CONFIG_HOME": home / ".config",
        "XDG_CACHE_HOME": home / ".cache",
        "XDG_DATA_HOME": home / ".local" / "share",
        "XDG_STATE_HOME": home / ".local" / "state",
        "XDG_RUNTIME_DIR": scratch / "runtime",
    }
    if sys.platform == "win32":  # pragma: no cover - exercised by the Windows CI job
        places |= {
            "USERPROFILE": home,
            "APPDATA": home / "AppData" / "Roaming",
            "LOCALAPPDATA": home / "AppData" / "Local",
        }
    for path in places.values():
        path.mkdir(parents=True, exist_ok=True)
    (scratch / "runtime").chmod(stat.S_IRWXU)  # as XDG_RUNTIME_DIR must be
    env = {name: str(path) for name, path in places.items()}
    if sys.platform == "win32":  # pragma: no cover - exercised by the Windows CI job
        drive, rest = os.path.splitdrive(str(home))
        env |= {"HOMEDRIVE": drive, "HOMEPATH": rest}
    return env


def sandboxed(
    env: Mapping[str, str], scratch: Path, isolation: Isolation | None
) -> dict[str, str]:
    """`env` with a private temp directory and home made in `scratch`, and every process of
    the run marked with its workspace (so a timeout or a sweep finds them all)."""
    out = dict(env)
    private_tmp = scratch / "tmp"  # the tests' temp files go away with the workspace
    private_tmp.mkdir()
    for name in ("TMPDIR", "TEMP", "TMP"):
        out[name] = str(private_tmp)
    out |= private_home(scratch)
    out["GIT_OPTIONAL_LOCKS"] = "0"  # a test's `git status` never rewrites the index
    if isolation is not None:
        out[process.WORKSPACE_MARK] = str(isolation.workspace_base)
    return out


PRIVATE = ("tmp", "home", "runtime")  # what `sandboxed` makes in a run's scratch directory


Places = frozenset[tuple[str, int]]  # each entry under the private places: path, lstat mode


def places(scratch: Path) -> Places:
    """What the private places in `scratch` hold: every entry's path (relative to `scratch`)
    with its type and permissions; a link is an entry, never followed."""
    found: set[tuple[str, int]] = set()
    pending = [str(scratch / place) for place in PRIVATE]
    while pending:
        path = pending.pop()
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            continue
        found.add((os.path.relpath(path, scratch), mode))
        if stat.S_ISDIR(mode):
            with os.scandir(path) as entries:
                pending.extend(entry.path for entry in entries)
    return frozenset(found)


def untouched(scratch: Path) -> bool:
    """Whether the private places `sandboxed` made in `scratch` still hold nothing but
    directories (a link counts as a file)."""
    return all(stat.S_ISDIR(mode) for _, mode in places(scratch))


def reset(scratch: Path, made: Places = frozenset()) -> Places:
    """The private places `sandboxed` made in `scratch` emptied and made again, at the same
    paths (a warm child inherits them from the server that collected the tests), unless they
    hold just what `made` says they held once made (nine directories rebuilt cost more than
    looking); what they hold now."""
    if made and places(scratch) == made:
        return made
    for place in PRIVATE:
        if (scratch / place).exists():
            remove_tree(scratch / place)
    (scratch / "tmp").mkdir()
    private_home(scratch)
    return places(scratch)
