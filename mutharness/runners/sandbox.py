"""The private places every runner's child gets: temp, home, profile folders, the run mark."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Mapping
from pathlib import Path

from mutharness import process
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
