"""git itself: resolved once from PATH (never the repository), every call hardened (no hooks,
fsmonitor, pager or gpg; never the repository's own filter drivers)."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mutharness.errors import GitError
from mutharness.signals import deferred as _signals_deferred

MIN_GIT = (2, 30)
# Every git call: never run hooks, an fsmonitor, a pager, or gpg (log.showSignature).
_SAFETY = (
    "--no-pager", "--no-optional-locks",
    "-c", f"core.hooksPath={os.devnull}",
    "-c", "core.fsmonitor=false",
    "-c", "log.showSignature=false",
)
_FILTER_KEYS = ("clean", "smudge", "process")
_REPOSITORY_SCOPES = ("local", "worktree")


def find_git(path_env: str, refuse: Iterable[Path] = ()) -> Path | None:
    """The first `git` on PATH, looked up only in absolute directories outside `refuse`.

    Relative PATH entries (``""``, ``.``) and the repository itself are never searched, so a
    ``git``/``git.exe`` planted in a checkout can never run.
    """
    refused = {Path(path).resolve() for path in refuse}
    names = ("git.exe", "git") if sys.platform == "win32" else ("git",)
    for entry in path_env.split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        directory = Path(entry)
        try:
            resolved = directory.resolve()
            if any(resolved.is_relative_to(bad) for bad in refused):  # the repo or below
                continue
        except OSError:
            continue
        for name in names:
            candidate = directory / name
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return candidate
    return None


def parse_git_version(text: str) -> tuple[int, ...]:
    """`git version 2.39.5.windows.1` -> (2, 39, 5); `2.39.3 (Apple Git-146)` -> (2, 39, 3)."""
    numbers: list[int] = []
    word = next((word for word in text.split() if word[:1].isdigit()), "")
    for part in word.split("."):
        if not part.isdigit():
            break
        numbers.append(int(part))
    return tuple(numbers)


def enclosing_worktrees(start: Path) -> tuple[Path, ...]:
    """`start` and every parent holding a `.git`: directories whose files must never run as git."""
    found = [start]
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            found.append(directory)
    return tuple(found)


@dataclass(frozen=True)
class GitInfo:
    """The git executable every git call uses, resolved once."""

    path: str
    version: str


def _point_gitpython_at(executable: str) -> None:
    """Make GitPython's import-time `git version` run `executable`, not a PATH search.

    Importing GitPython runs git at once, found by a PATH search when nothing says otherwise:
    with `.` or an empty entry on PATH, that is a `git` planted in the repository. So GitPython
    is imported only here, lazily, after git has been resolved to an absolute path.
    """
    os.environ["GIT_PYTHON_GIT_EXECUTABLE"] = executable
    os.environ.setdefault("GIT_PYTHON_REFRESH", "quiet")


def configure_git(path_env: str, refuse: Iterable[Path] = ()) -> GitInfo:
    """Resolve git to an absolute path once, point GitPython at it, and check its version."""
    found = find_git(path_env, refuse)
    if found is None:
        raise GitError("git was not found on PATH", remedy="install git 2.30 or newer")
    _point_gitpython_at(str(found))
    imported = "git" in sys.modules  # then pointed at another git before: refreshed below
    try:
        import git  # only now: see _point_gitpython_at
    except ImportError as error:
        raise GitError(f"git at {found} does not run", str(error)) from None
    try:
        if imported:
            git.refresh(str(found))
        output = git.Git().execute([str(found), "version"])
    except (git.GitCommandError, ImportError, OSError) as error:
        raise GitError(f"git at {found} does not run", str(error)) from None
    text = str(output)
    version = parse_git_version(text)
    if version < MIN_GIT:
        raise GitError(
            f"{text.strip()} at {found} is too old",
            remedy=f"mutharness needs git {'.'.join(map(str, MIN_GIT))} or newer",
        )
    return GitInfo(str(found), ".".join(map(str, version)))


def refused_directory(stderr: str) -> str | None:
    """The directory git refuses as owned by another user (CVE-2022-24765), from its message.

    git names the repository's top level, which is what `safe.directory` needs, whatever
    directory the command ran in. Both wordings: >= 2.36 and 2.35.2-2.35.x.
    """
    for pattern in (
        r"dubious ownership in repository at '(.+)'$",
        r"unsafe repository \('(.+)' is owned by someone else\)",
    ):
        found = re.search(pattern, stderr, re.MULTILINE)
        if found:
            return found.group(1)
    return None


def run_git(
    git_info: GitInfo, cwd: Path, args: list[str], neutral: tuple[str, ...] = (), **kwargs: Any
) -> str:
    """Run git with fixed argv (no shell, no hooks) in `cwd`, returning stdout.

    `--no-optional-locks` keeps read-only commands read-only: without it `git status` in the
    user's repository refreshes and rewrites `.git/index` whenever a file's stat data changed.
    Hooks, fsmonitor, pagers and signature checks are switched off for every call, whatever the
    repository or the user's global configuration says; `neutral` switches off the filter
    drivers the repository's own configuration names (see SourceRepo.neutral).
    """
    return str(call_git(git_info, cwd, args, neutral, **kwargs))


def call_git(
    git_info: GitInfo, cwd: Path, args: list[str], neutral: tuple[str, ...] = (), **kwargs: Any
) -> Any:
    """`run_git`, returning git's output as GitPython gives it (bytes when
    stdout_as_string=False)."""
    _point_gitpython_at(git_info.path)
    import git  # only now: see _point_gitpython_at

    try:
        with _signals_deferred():
            return git.Git(str(cwd)).execute(
                [git_info.path, *_SAFETY, *neutral, *args], **kwargs
            )
    except git.GitCommandError as error:
        stderr = str(error.stderr or "")
        refused = refused_directory(stderr)
        if refused is not None:
            raise GitError(
                f"git refuses {refused}: it is owned by another user (dubious ownership)",
                stderr,
                remedy=(
                    "if you trust this repository, run: git config --global --add "
                    f"safe.directory {refused} (mutharness never changes your git config)"
                ),
            ) from None
        status = error.status if isinstance(error.status, int) else None
        raise GitError(f"git {command_name(args)} failed in {cwd}", stderr or (
            f"git exited with status {status} and wrote nothing to stderr"
            if status not in (None, 1) else ""), status=status) from None
    except git.GitCommandNotFound as error:  # git could not be started (gone, out of handles)
        raise GitError(f"git {command_name(args)} could not be started in {cwd}",
                       str(error.stderr or error)) from None


def command_name(args: Sequence[str]) -> str:
    """What names a git command line in a message: its subcommand and the word after it, past
    the options before it (`-c NAME=VALUE`, `-C DIR`, `--git-dir=...`)."""
    rest = list(args)
    while rest and rest[0].startswith("-"):
        if rest.pop(0) in ("-c", "-C") and rest:
            rest.pop(0)
    return " ".join(rest[:2])


def repository_filters(git_info: GitInfo, root: Path) -> tuple[str, ...]:
    """The filter drivers the repository's own configuration (`.git/config`, a worktree's,
    what they include) defines: their clean, smudge or process commands would run on `git
    status`. Drivers of the user's global or system configuration (git-lfs) are the user's
    own tools and keep working."""
    try:
        output = run_git(git_info, root, [
            "config", "--null", "--show-scope", "--get-regexp", r"^filter\..*\.",
        ], strip_newline_in_stdout=False)
    except GitError:  # no filter configured at all: git config exits 1
        return ()
    names: list[str] = []
    fields = output.split("\0")
    for scope, pair in zip(fields[::2], fields[1::2], strict=False):
        key = pair.split("\n", 1)[0]
        if scope in _REPOSITORY_SCOPES and key.count(".") >= 2:
            name = key[len("filter."):].rsplit(".", 1)[0]
            if name not in names:
                names.append(name)
    return tuple(names)


def switched_off(filters: Iterable[str]) -> tuple[str, ...]:
    """`-c` pairs that make git run none of these filter drivers' commands."""
    pairs: list[str] = []
    for name in filters:
        for key in _FILTER_KEYS:
            pairs += ["-c", f"filter.{name}.{key}="]
        pairs += ["-c", f"filter.{name}.required=false"]
    return tuple(pairs)
