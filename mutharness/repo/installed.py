"""The user's installed packages (untracked `node_modules`) made visible in the workspace."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from mutharness.digest import file_digest, stat_signatures

NODE_MODULES = "node_modules"
# the bookkeeping an installer keeps at the top of `node_modules`, linked as the packages are;
# any other dot-entry is a tool's cache (`.cache`, `.vite`): the workspace starts without it,
# so what a run writes there stays in the workspace
BOOKKEEPING = frozenset({
    ".bin", ".pnpm", ".package-lock.json", ".modules.yaml", ".yarn-integrity",
    ".yarn-state.yml",
})
LINKS_WORK = sys.platform != "win32"  # a link to a directory needs no privilege here


@dataclass(frozen=True)
class Installed:
    """One `node_modules` directory of the user's tree (`where`: the directory holding it,
    repo-relative, "" at the root) and what its packages' files were when linked."""

    where: str
    signatures: Mapping[str, tuple[int, ...]]  # (relative path) -> stat signature
    # a link (relative path) there to a directory outside the repository -> that directory,
    # whose entries `signatures` holds below the link's path (a run writes through it too)
    outside: Mapping[str, str] = field(default_factory=dict)

    @property
    def relative(self) -> str:
        return _beside(self.where)


def _beside(where: str) -> str:
    """`node_modules` beside the repo-relative directory `where` ("" at the root)."""
    return f"{where}/{NODE_MODULES}" if where else NODE_MODULES


def _outside(user_root: Path, directory: Path,
             signatures: Mapping[str, tuple[int, ...]]) -> dict[str, str]:
    """The links among `signatures` (under `directory`) to a directory outside the user's
    repository (`npm link`, a `file:` dependency beside it): link -> its real path. One that
    holds the repository itself (a link to a directory above it) is left out: the repository
    is checked as a tree of its own."""
    root = Path(os.path.realpath(user_root))
    found: dict[str, str] = {}
    for key, signature in signatures.items():
        if signature[0] != stat.S_IFLNK:
            continue
        link = directory.joinpath(*key.split("/"))
        try:  # one into `directory` (pnpm's) reaches what is recorded there, or another link
            if Path(os.path.normpath(link.parent / os.readlink(link))).is_relative_to(directory):
                continue
        except OSError:
            continue
        target = Path(os.path.realpath(link))
        if (target.is_dir() and not target.is_relative_to(root)
                and not root.is_relative_to(target)):
            found[key] = str(target)
    return found


def _signatures(user_root: Path, where: str, outside: Mapping[str, str],
                walked: dict[str, tuple[int, ...]] | None = None) -> dict[str, tuple[int, ...]]:
    """Every entry of the user's `node_modules` beside `where` by its stat (`walked`, when
    already taken), and every entry of each directory outside the repository a link there
    points at, below the link's path."""
    signatures = (stat_signatures(user_root.joinpath(*_beside(where).split("/")))
                  if walked is None else dict(walked))
    for key, target in outside.items():
        signatures.update((f"{key}/{below}", signature)
                          for below, signature in stat_signatures(Path(target)).items())
    return signatures


def record(user_root: Path, where: str) -> Installed:
    """What the user's packages beside `where` are now (`stat_signatures`: a run's writes
    through a link show there), with the packages linked there from outside the repository,
    taken once, when first linked."""
    directory = user_root.joinpath(*_beside(where).split("/"))
    walked = stat_signatures(directory)  # once: the links among it, then the signatures
    outside = _outside(user_root, directory, walked)
    return Installed(where, _signatures(user_root, where, outside, walked), outside)


def _manifest_directories(paths: Iterable[str]) -> list[str]:
    """The directories (repo-relative, "" first) that hold a `package.json` among `paths`:
    where an installer leaves a `node_modules` (the root always)."""
    found = {path.rsplit("/", 1)[0] if "/" in path else "" for path in paths
             if path.rsplit("/", 1)[-1] == "package.json"
             and NODE_MODULES not in path.split("/")}
    return sorted(found | {""})


def found(user_root: Path, checkout: Path, paths: Iterable[str]) -> tuple[str, ...]:
    """The directories of the checkout (repo-relative) holding a `package.json` among `paths`
    (and the root) beside which the user's tree holds a real `node_modules` directory that
    the checkout lacks (untracked, as installers leave it)."""
    if not LINKS_WORK:
        return ()
    where = []
    for relative in _manifest_directories(paths):
        mine, theirs = (root.joinpath(*_beside(relative).split("/"))
                        for root in (user_root, checkout))
        try:
            real = stat.S_ISDIR(mine.lstat().st_mode)
        except OSError:
            continue
        if real and not os.path.lexists(theirs):
            where.append(relative)
    return tuple(where)


def _target(entry: Path, user_root: Path, checkout: Path) -> Path:
    """Where the workspace's link for `entry` (an entry of a user's `node_modules`, of a
    scope or of `.bin` there) points: a package of the user's repository itself (a workspace
    member, a `file:` dependency, a member's program: a link into the tree, outside any
    `node_modules`) at the checkout's copy, so a mutant in it runs; anything else at the
    user's entry."""
    if entry.is_symlink():
        resolved = Path(os.path.realpath(entry))
        try:
            inside = resolved.relative_to(user_root)
        except ValueError:
            return entry
        if NODE_MODULES not in inside.parts and (checkout / inside).exists():
            return checkout / inside
    return entry


def _by_entry(name: str, entry: Path) -> bool:
    """Whether a top-level entry is linked entry by entry: a scope directory (`@name`) or the
    programs' directory (`.bin`: a member's program must run the checkout's copy too)."""
    return (name.startswith("@") or name == ".bin") and entry.is_dir() and not entry.is_symlink()


def link(user_root: Path, checkout: Path, where: str) -> None:
    """Make `where/node_modules` in the checkout a real directory of links to the entries of
    the user's (a scope directory, `@name`, and `.bin` each one of links to its own
    entries)."""
    mine, theirs = (root.joinpath(*_beside(where).split("/")) for root in (user_root, checkout))
    resolved_root = Path(os.path.realpath(user_root))
    theirs.mkdir()
    for entry in sorted(mine.iterdir()):
        name = entry.name
        if name.startswith(".") and name not in BOOKKEEPING:
            continue
        if _by_entry(name, entry):
            (theirs / name).mkdir()
            for scoped in sorted(entry.iterdir()):
                os.symlink(_target(scoped, resolved_root, checkout), theirs / name / scoped.name)
            continue
        os.symlink(_target(entry, resolved_root, checkout), theirs / name)


def describe(checkout: Path) -> str:
    """Which installed packages a run of the checkout's root imports, for the evidence: the
    record its installer keeps in `node_modules` (npm's hidden lockfile, pnpm's, yarn's), by
    digest; else whether there is any `node_modules` at all."""
    directory = checkout / NODE_MODULES
    for name in (".package-lock.json", ".modules.yaml", ".yarn-state.yml", ".yarn-integrity"):
        record = directory / name
        if record.is_file():
            return f"node_modules/{name} sha256:{file_digest(record.read_bytes())[:16]}"
    return "node_modules (no installer's record)" if directory.is_dir() else "none"


def changed(user_root: Path, installed: Installed) -> tuple[str, ...]:
    """The paths (repo-relative) under the user's `node_modules` that differ from when it was
    linked: written through a link by a run, or by anything else meanwhile (a directory only
    when nothing below it is named: it changed with its entries); one in a package linked from
    outside the repository with the directory it is in."""
    now = _signatures(user_root, installed.where, installed.outside)
    before = installed.signatures
    keys = {key for key in {*before, *now} if before.get(key) != now.get(key)}
    above = {key.rsplit("/", depth)[0] for key in keys for depth in range(1, key.count("/") + 1)}

    def named(key: str) -> str:
        link = next((link for link in installed.outside if key.startswith(f"{link}/")), None)
        where = "" if link is None else f" (in {installed.outside[link]}, outside the repository)"
        return f"{installed.relative}/{key}{where}"

    return tuple(sorted(named(key) for key in keys if key not in above))
