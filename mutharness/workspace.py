"""The only git user: the source repository (read-only) and the disposable workspace."""

from __future__ import annotations

import os
import re
import shutil
import socket
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mutharness.atomic import copy_file, copy_tree, write_atomic
from mutharness.digest import TreeState
from mutharness.errors import EnvironmentProblem, GitError, WorkspaceError
from mutharness.paths import WORKSPACE_PREFIX, linked_parent, shown
from mutharness.signals import deferred as _signals_deferred

MIN_GIT = (2, 30)
RUN_DIR = ".mutharness"
MARKER = "mutharness-workspace"
REGULAR_MODES = ("100644", "100755")
_EOL_KEYS = ("core.autocrlf", "core.eol", "core.safecrlf")
# Every git call: never run hooks, an fsmonitor, a pager, or gpg (log.showSignature).
_SAFETY = (
    "--no-pager", "--no-optional-locks",
    "-c", f"core.hooksPath={os.devnull}",
    "-c", "core.fsmonitor=false",
    "-c", "log.showSignature=false",
)
_FILTER_KEYS = ("clean", "smudge", "process")
_REPOSITORY_SCOPES = ("local", "worktree")
# Above the checkout, pytest finds this and stops looking (never /tmp/pytest.ini, /conftest.py).
SENTINEL_CONFIG = "pytest.ini"
_SENTINEL_TEXT = (
    "# mutharness: pytest's search for a configuration file stops here, inside the workspace.\n"
    "[pytest]\n"
)
_PYTEST_CONFIG_NAMES = frozenset({
    "pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini",
    "setup.cfg", "conftest.py",
})


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
    try:
        import git  # only now: see _point_gitpython_at
    except ImportError as error:
        raise GitError(f"git at {found} does not run", str(error)) from None
    try:
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


def _run(
    git_info: GitInfo, cwd: Path, args: list[str], neutral: tuple[str, ...] = (), **kwargs: Any
) -> str:
    """Run git with fixed argv (no shell, no hooks) in `cwd`, returning stdout.

    `--no-optional-locks` keeps read-only commands read-only: without it `git status` in the
    user's repository refreshes and rewrites `.git/index` whenever a file's stat data changed.
    Hooks, fsmonitor, pagers and signature checks are switched off for every call, whatever the
    repository or the user's global configuration says; `neutral` switches off the filter
    drivers the repository's own configuration names (see SourceRepo.neutral).
    """
    return str(_call(git_info, cwd, args, neutral, **kwargs))


def _call(
    git_info: GitInfo, cwd: Path, args: list[str], neutral: tuple[str, ...] = (), **kwargs: Any
) -> Any:
    """`_run`, returning git's output as GitPython gives it (bytes with stdout_as_string=False)."""
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
        raise GitError(f"git {' '.join(args[:2])} failed in {cwd}", stderr) from None
    except git.GitCommandNotFound as error:  # git could not be started (gone, out of handles)
        raise GitError(f"git {' '.join(args[:2])} could not be started in {cwd}",
                       str(error.stderr or error)) from None


def marked_directory(temp_dir: Path, prefix: str) -> Path:
    """A new directory under `temp_dir` whose marker names this process and host, so that the
    next run's sweep removes it if this process dies without removing it (see sweep)."""
    base = Path(tempfile.mkdtemp(prefix=prefix, dir=temp_dir))
    (base / MARKER).write_text(f"{os.getpid()}\n{socket.gethostname()}\n")
    return base


def repository_filters(git_info: GitInfo, root: Path) -> tuple[str, ...]:
    """The filter drivers the repository's own configuration (`.git/config`, a worktree's,
    what they include) defines: their clean, smudge or process commands would run on `git
    status`. Drivers of the user's global or system configuration (git-lfs) are the user's
    own tools and keep working."""
    try:
        output = _run(git_info, root, [
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


@dataclass(frozen=True)
class SourceRepo:
    """The user's repository: read, never written (except the self-ignoring run directory)."""

    root: Path
    head: str  # fixed when the run starts: a commit made meanwhile never enters its results
    git: GitInfo
    filters: tuple[str, ...] = ()  # the repository's own filter drivers: never run

    @property
    def neutral(self) -> tuple[str, ...]:
        """The `-c` pairs that keep the repository's own filter drivers from running."""
        return switched_off(self.filters)

    @property
    def short(self) -> str:
        """The abbreviated HEAD commit."""
        return self.head[:12]

    @property
    def run_dir(self) -> Path:
        """The self-ignoring `.mutharness/` directory at the repository root."""
        return self.root / RUN_DIR

    def run_dir_problem(self, tracked: Iterable[str]) -> str | None:
        """Why `.mutharness/` cannot be used as the run directory (None when it can)."""
        committed = sorted(path for path in tracked if path == RUN_DIR or path.startswith(
            f"{RUN_DIR}/"))
        if committed:
            return f"{RUN_DIR} is committed to the repository ({shown(committed[0])})"
        try:
            info = self.run_dir.lstat()
        except FileNotFoundError:
            return None
        except OSError as error:
            return f"{self.run_dir} cannot be examined: {error.strerror}"
        if stat.S_ISLNK(info.st_mode):
            return f"{self.run_dir} is a symlink (mutharness never writes through one)"
        if not stat.S_ISDIR(info.st_mode):
            return f"{self.run_dir} is not a directory"
        for name in (".gitignore", "lock", "lock-holder.json", "results.json",
                     "results.previous.json"):
            inside = self.run_dir / name
            if inside.is_symlink() or (inside.exists() and not inside.is_file()):
                return f"{inside} is not a regular file (mutharness never writes through a link)"
        runs = self.run_dir / "runs"  # the scenarios' logs (lab.logs)
        if runs.is_symlink() or (runs.exists() and not runs.is_dir()):
            return f"{runs} is not a directory (mutharness never writes through a link)"
        return None

    def ensure_run_dir(self) -> Path:
        """Create `.mutharness/` with its own `.gitignore` of `*` (like .pytest_cache)."""
        self.run_dir.mkdir(exist_ok=True)
        ignore = self.run_dir / ".gitignore"
        if not ignore.exists():
            write_atomic(ignore, "# created by mutharness; ignores this directory\n*\n")
        return self.run_dir

    def changes(self) -> tuple[str, ...]:
        """Uncommitted changes as `git status --porcelain` lines (untracked files included)."""
        output = _run(
            self.git, self.root,
            ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"],
            self.neutral, strip_newline_in_stdout=False,
        )
        entries = [entry for entry in output.split("\0") if entry]
        return tuple(
            entry for entry in entries if not entry[3:].startswith(f"{RUN_DIR}/")
        )

    def tracked(self) -> dict[str, str]:
        """Every path in HEAD's tree mapped to its git mode (exact case)."""
        output = _run(
            self.git, self.root, ["ls-tree", "-r", "-z", "--full-tree", self.head],
            strip_newline_in_stdout=False,
        )
        modes: dict[str, str] = {}
        for entry in output.split("\0"):
            if entry:
                meta, path = entry.split("\t", 1)
                modes[path] = meta.split()[0]
        return modes

    def committed_size(self, path: str) -> int | None:
        """The size of `path`'s blob at HEAD (None when HEAD holds no such blob)."""
        try:
            return int(_run(self.git, self.root, ["cat-file", "-s", f"{self.head}:{path}"]))
        except (GitError, ValueError):
            return None

    def committed_bytes(self, path: str) -> bytes | None:
        """`path` as a checkout of HEAD writes it, line endings and filters applied (the
        repository's own filter drivers never run): the bytes a workspace holds."""
        return self.bytes_at(self.head, path)

    def base_commit(self, rev: str) -> str:
        """The commit `rev` names (for `--since` / `--base`); a clear error when this clone
        does not hold it (a shallow CI clone fetched without the base)."""
        if not rev or rev.startswith("-"):
            raise GitError(f"{rev!r} is not a revision", remedy="name a commit, branch or tag")
        try:
            found = _run(self.git, self.root, ["rev-parse", "--verify", "--quiet",
                                               "--end-of-options", f"{rev}^{{commit}}"])
        except GitError:
            found = ""
        if not found.strip():
            if self.is_shallow():
                raise GitError(
                    f"{rev} is not a commit this clone holds (it is a shallow clone)",
                    remedy=(
                        f"fetch it as well as HEAD, e.g. git fetch --depth=1 origin {rev} (in "
                        "GitHub Actions: the pull request's base sha); --since compares the "
                        "two trees and needs no history between them"
                    ),
                )
            raise GitError(f"{rev} names no commit in this repository",
                           remedy="check the name: a commit, branch or tag (git log --oneline)")
        return found.strip()

    def is_shallow(self) -> bool:
        """Whether this clone lacks history (`git clone --depth`)."""
        return _run(self.git, self.root, ["rev-parse", "--is-shallow-repository"]).strip() \
            == "true"

    def fork_point(self, base: str) -> str | None:
        """`base` when it is an ancestor of HEAD, else the commit HEAD's history left it at
        (their merge base); None when this clone's history cannot tell."""
        try:
            _run(self.git, self.root, ["merge-base", "--is-ancestor", base, self.head])
            return base
        except GitError:
            pass
        try:
            found = _run(self.git, self.root, ["merge-base", base, self.head]).strip()
        except GitError:
            return None
        return found or None

    def committed_since(self, base: str) -> tuple[str, ...]:
        """The paths whose blobs differ between `base` and HEAD (both sides of a rename)."""
        output = _run(self.git, self.root, [
            "diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", "--no-textconv",
            base, self.head, "--",
        ], self.neutral, strip_newline_in_stdout=False)
        return tuple(sorted(path for path in output.split("\0") if path))

    def changed_since(self, base: str) -> tuple[str, ...]:
        """Every path changed since `base`: committed since, uncommitted, and untracked."""
        return tuple(sorted(
            set(self.committed_since(base)) | set(status_paths(self.changes()))
        ))

    def bytes_at(self, commit: str, path: str) -> bytes | None:
        """`path` as a checkout of `commit` writes it (None when that commit lacks it)."""
        try:
            output = _call(
                self.git, self.root, ["cat-file", "--filters", f"{commit}:{path}"],
                self.neutral, stdout_as_string=False, strip_newline_in_stdout=False,
            )
        except GitError:
            return None
        return bytes(output)

    def mode_at(self, commit: str, path: str) -> str | None:
        """`path`'s git mode in `commit`'s tree (None when it holds no such entry)."""
        output = _run(self.git, self.root, ["ls-tree", "-z", commit, "--", path],
                      strip_newline_in_stdout=False)
        for entry in output.split("\0"):
            if entry and entry.split("\t", 1)[-1] == path:
                return entry.split()[0]
        return None

    def last_commit_touching(self, paths: Iterable[str]) -> str:
        """The newest commit at or before HEAD that changed any of `paths` (HEAD if none did)."""
        wanted = sorted(set(paths))
        if not wanted:
            return self.head
        found = _run(self.git, self.root, ["log", "-1", "--format=%H", self.head, "--", *wanted])
        return found.strip() or self.head

    def commits_touching_since(self, commit: str, paths: Iterable[str]) -> int | None:
        """How many commits after `commit` up to HEAD changed any of `paths` (None: unknown)."""
        try:
            counted = _run(self.git, self.root, [
                "rev-list", "--count", f"{commit}..HEAD", "--", *sorted(set(paths)),
            ])
        except GitError:
            return None
        return int(counted.strip() or 0)

    def info_attributes(self) -> bytes | None:
        """The repository's own `info/attributes` (uncommitted EOL rules...), if it has one."""
        found = Path(_run(self.git, self.root, ["rev-parse", "--git-path", "info/attributes"])
                     .strip())
        path = found if found.is_absolute() else self.root / found
        if path.is_symlink() or not path.is_file():
            return None
        return path.read_bytes()

    def eol_config(self) -> tuple[str, ...]:
        """`-c key=value` pairs for the EOL settings in force here, for the workspace checkout."""
        pairs: list[str] = []
        for key in _EOL_KEYS:
            try:
                value = _run(self.git, self.root, ["config", "--get", key]).strip()
            except GitError:
                continue
            pairs += ["-c", f"{key}={value}"]
        return tuple(pairs)


def status_paths(changes: Iterable[str]) -> tuple[str, ...]:
    """The paths of `git status --porcelain=v1` lines (`XY path`)."""
    return tuple(entry[3:] for entry in changes)


def open_source(start: Path, git_info: GitInfo) -> SourceRepo:
    """The repository containing `start`, with a born HEAD."""
    if not start.is_dir():
        raise GitError(f"{start} is not a directory")
    try:
        root = _run(git_info, start, ["rev-parse", "--show-toplevel"]).strip()
    except GitError as error:
        if "not a git repository" in error.detail:
            raise GitError(f"{start} is not inside a git repository") from None
        raise
    if not root:
        raise GitError(f"{start} is inside a git directory, not a working tree")
    root_path = Path(root).resolve()
    try:
        head = _run(git_info, root_path, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])
    except GitError:
        raise GitError(
            f"{root_path} has no commits yet (unborn HEAD)", remedy="commit first"
        ) from None
    return SourceRepo(root_path, head.strip(), git_info, repository_filters(git_info, root_path))


def _make_deletable(path: str) -> None:
    """Give the owner write access to `path`'s directory and to `path` itself (a read-only
    file, as git's objects on Windows; a read-only directory a test left behind)."""
    parent = os.path.dirname(path) or os.curdir
    os.chmod(parent, stat.S_IMODE(os.lstat(parent).st_mode) | stat.S_IRWXU)
    info = os.lstat(path)
    if stat.S_ISDIR(info.st_mode):
        os.chmod(path, stat.S_IMODE(info.st_mode) | stat.S_IRWXU)
    elif not stat.S_ISLNK(info.st_mode):
        os.chmod(path, stat.S_IMODE(info.st_mode) | stat.S_IREAD | stat.S_IWRITE)


_EXTENDED = "\\\\?\\"  # Windows' prefix that turns off name parsing (reserved names)


def _onerror(func: Callable[..., Any], path: str, _info: Any) -> None:
    """Make `path` deletable, then delete it (a directory: whole, now that it can be read).

    On Windows a file a test named after a device (`nul`, `con`...) is reached only through
    the extended path prefix."""
    try:
        _make_deletable(path)
    except FileNotFoundError:
        return  # already gone (removed whole by an earlier retry)
    if os.path.isdir(path) and not os.path.islink(path):
        remove_tree(Path(path))
        return
    try:
        func(path)
    except OSError:
        # `nul` in any directory names the device on Windows: lstat and chmod quietly act
        # on it, the unlink fails; the extended prefix names the file itself
        if sys.platform != "win32" or path.startswith(_EXTENDED):
            raise
        parent, name = os.path.split(path)  # abspath() itself turns `...\\nul` into the device
        func(_EXTENDED + os.path.join(os.path.abspath(parent), name))


def _real_directories(root: Path, relative: str) -> None:
    """Make every directory on the way to `relative` a real directory inside `root`.

    A symlink (or file) in the way is removed first, so a write below it stays in `root`.
    """
    current = root
    for part in relative.split("/")[:-1]:
        current = current / part
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            current.unlink()
        current.mkdir(exist_ok=True)


def remove_tree(path: Path) -> None:
    """Delete a directory tree, read-only files and directories included; never follows a link."""
    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=_onerror)
    else:  # pragma: no cover - Python 3.11
        shutil.rmtree(path, onerror=_onerror)


def remove_path(path: Path) -> None:
    """Delete a file, link or directory tree (never what a link points to)."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        remove_tree(path)
        return
    try:
        path.unlink()
    except OSError:
        _onerror(os.unlink, str(path), None)  # read-only, or a Windows device name


def _file_mode(path: Path, default: int = 0o644) -> int:
    try:
        return stat.S_IMODE(path.lstat().st_mode)
    except OSError:
        return default


def remove_workspace_dir(base: Path) -> None:
    """Delete a workspace directory, its marker last: one whose removal is cut short (a second
    signal, a crash) still carries the marker, so the next run's sweep finds it."""
    for child in base.iterdir():
        if child.name == MARKER:
            continue
        remove_path(child)
    remove_tree(base)


def temp_directory(environ: Mapping[str, str], repository: Path) -> Path:
    """Where workspaces are made: the system temp directory, honouring TMPDIR (TEMP, TMP).

    A configured one that does not exist or cannot be written is an error, not a silent
    fallback; so is one inside the repository, or one whose path holds the PYTHONPATH separator
    (a workspace path must fit in PYTHONPATH)."""
    named = next(
        ((name, environ[name]) for name in ("TMPDIR", "TEMP", "TMP") if environ.get(name)), None
    )
    if named is not None:
        name, value = named
        what = f"the temporary directory {name}={value}"
        candidate = Path(value)
        if not candidate.is_dir():
            raise EnvironmentProblem(
                f"{what} does not exist or is not a directory",
                remedy=f"create it, or set {name} to an existing directory",
            )
        candidate = candidate.resolve()
    else:
        candidate = Path(tempfile.gettempdir()).resolve()
        what = f"the temporary directory {candidate}"
    if os.pathsep in str(candidate):
        raise EnvironmentProblem(
            f"{what} contains {os.pathsep!r}, which separates PYTHONPATH entries; the tests' "
            "start-up directory lives there",
            remedy="set TMPDIR to a directory whose path has no " + repr(os.pathsep),
        )
    if not os.access(candidate, os.W_OK | os.X_OK):
        raise EnvironmentProblem(f"{what} is not writable",
                                 remedy="set TMPDIR to a writable directory")
    if candidate.is_relative_to(repository):
        raise EnvironmentProblem(
            f"{what} is inside the repository {repository}; a workspace must not be",
            remedy="set TMPDIR to a directory outside the repository",
        )
    return candidate


_MEANING_STORES = ("packed-refs", "refs/", "logs/", "objects/", "index", "config")


def _stores_meaning(path: str) -> bool:
    """A `.git` path whose bytes store what `_git_meaning` compares (refs, their logs, the
    objects, the index, the config), not a state of its own (a hook, `info/`, `shallow`)."""
    return any(path == store or (store.endswith("/") and path.startswith(store))
               for store in _MEANING_STORES)


@dataclass(frozen=True)
class _Look:
    """One scan of a workspace against its checkout state."""

    tree: TreeState  # the checkout now
    git: TreeState  # its .git now
    added: tuple[str, ...]  # untracked paths the tests wrote
    changed: tuple[str, ...]  # tracked paths changed or removed
    git_drift: tuple[str, ...]  # `.git/...` paths changed (an index only refreshed excepted)


@dataclass(frozen=True)
class Settled:
    """What a run left in the workspace, and what that means."""

    removed: tuple[str, ...] = ()  # untracked paths the tests wrote: deleted, never drift
    drift: tuple[str, ...] = ()  # tracked files or git state the run changed: the run proves
    #                              nothing, and the workspace was reset


class Workspace:
    """A disposable checkout of one commit under the system temp directory.

    Every run starts from the checkout state and nothing else: after each run, what the tests
    added is deleted and any other change is undone (`settle`).
    """

    def __init__(self, base: Path, root: Path) -> None:
        self.base = base  # holds the checkout, reports, logs and pycache dirs
        self.root = root  # the checkout the tests run in
        self._checkout = TreeState({})  # the tree right after materialising (+ overlays)
        self._git = TreeState({})  # the checkout's .git right after materialising
        self._index = ""  # what its index holds (entries and flags, not the stat cache)
        self._meaning = ""  # its refs, HEAD and config values (`_git_meaning`)
        self._source: SourceRepo | None = None
        self._include: tuple[str, ...] = ()

    @classmethod
    def create(
        cls, source: SourceRepo, temp_dir: Path, include: tuple[str, ...] = ()
    ) -> Workspace:
        """Check `source.head` out under `temp_dir`; overlay `include`d uncommitted paths."""
        base = marked_directory(temp_dir, WORKSPACE_PREFIX)
        workspace = cls(base, base / "repo")
        try:
            workspace._materialise(source, include)
            workspace._snapshot()
        except BaseException:
            workspace.remove()
            raise
        return workspace

    @property
    def _pristine_git(self) -> Path:
        return self.base / "pristine.git"

    def _materialise(self, source: SourceRepo, include: tuple[str, ...]) -> None:
        empty = self.base / "empty"
        empty.mkdir(exist_ok=True)  # exists when a reset builds the checkout again
        self._source, self._include = source, include
        gitinfo = source.git
        _run(gitinfo, self.base, ["init", "-q", f"--template={empty}", str(self.root)])
        _run(gitinfo, self.root, [
            "fetch", "-q", "--no-tags", "--no-write-fetch-head", "--depth=1",
            source.root.as_uri(), source.head,
        ])
        if (attributes := source.info_attributes()) is not None:  # they shape the checkout too
            (self.root / ".git/info").mkdir(parents=True, exist_ok=True)
            (self.root / ".git/info/attributes").write_bytes(attributes)
        _run(gitinfo, self.root, [
            *source.eol_config(), "-c", "advice.detachedHead=false",
            "checkout", "-q", "--detach", source.head,
        ])
        for path in include:
            self._overlay(source.root, path)

    def _snapshot(self) -> None:
        """Record the checkout and its .git as the state every run starts from."""
        self._guard_above()
        git_dir = self.root / ".git"
        copy_tree(git_dir, self._pristine_git)
        self._git = TreeState.scan(git_dir)
        self._index = self._index_entries()
        self._meaning = self._git_meaning()
        self._checkout = TreeState.scan(self.root, frozenset({".git"}))

    def _index_entries(self) -> str:
        """The checkout's index as git reads it: every entry's mode, blob, stage, path and
        flags (assume-unchanged, skip-worktree), not the stat data git caches beside them."""
        if self._source is None:
            return ""
        git_dir = self.root / ".git"
        try:
            return _run(self._source.git, self.root, [
                f"--git-dir={git_dir}", f"--work-tree={self.root}",
                "ls-files", "--stage", "-v", "-z",
            ], strip_newline_in_stdout=False)
        except GitError:
            return "unreadable"

    def _git_meaning(self) -> str:
        """What the checkout's git state means, not how git stored it: every ref and its
        target, HEAD, the repository's own config values and the index's entries. A test that
        makes and deletes a tag leaves `packed-refs` rewritten and an object no ref reaches:
        the same meaning."""
        if self._source is None:
            return ""
        git_dir = self.root / ".git"
        pinned = [f"--git-dir={git_dir}", f"--work-tree={self.root}"]
        try:
            return "\0\0".join((
                _run(self._source.git, self.root, [
                    *pinned, "for-each-ref", "--format=%(refname)%00%(objectname)"],
                    strip_newline_in_stdout=False),
                (git_dir / "HEAD").read_text(encoding="utf-8", errors="replace"),
                _run(self._source.git, self.root, [*pinned, "config", "--local", "--list", "-z"],
                     strip_newline_in_stdout=False),
                self._index_entries(),
            ))
        except (GitError, OSError):
            return "unreadable"

    def _look(self) -> _Look:
        """The checkout and its .git now, against their checkout state (one scan of each).

        An index that git only refreshed (a test's `git describe --dirty`, as pytest-benchmark
        runs in every session, rewrites the stat data of a file restored since) is no change:
        it is put back as it was."""
        tree = TreeState.scan(self.root, frozenset({".git"}), self._checkout)
        added, changed = self._checkout.compare(tree)
        git_dir = self.root / ".git"
        if not self._git_dir_intact():
            return _Look(tree, self._git, added, changed, (".git",))
        git = TreeState.scan(git_dir, reference=self._git)
        git_added, git_changed = self._git.compare(git)
        paths = [*git_added, *git_changed]
        if "index" in git_changed and self._index_entries() == self._index:
            paths.remove("index")
            copy_file(self._pristine_git / "index", git_dir / "index")
            git = TreeState.scan(git_dir, reference=self._git)
        if paths and all(_stores_meaning(path) for path in paths) and (
                self._git_meaning() == self._meaning):  # stored anew, meaning the same
            self._restore_git_dir()
            git, paths = TreeState.scan(git_dir, reference=self._git), []
        return _Look(tree, git, added, changed, tuple(sorted(f".git/{path}" for path in paths)))

    def _adopt(self, look: _Look) -> None:
        """Keep the stat data of an unchanged state, so the next scan hashes nothing again."""
        self._checkout = TreeState({key: look.tree.entries[key] for key in self._checkout.entries})
        self._git = look.git

    def _guard_above(self) -> None:
        """Nothing between the checkout and the temp directory can configure pytest: the
        sentinel config stops pytest's upward search, and no other config or conftest.py
        sits beside it (a test could have planted one for the next run)."""
        for child in self.base.iterdir():
            if child.name in _PYTEST_CONFIG_NAMES and child.name != SENTINEL_CONFIG:
                remove_path(child)
        sentinel = self.base / SENTINEL_CONFIG
        if sentinel.is_symlink() or not sentinel.is_file() or (
            sentinel.read_text(encoding="utf-8", errors="replace") != _SENTINEL_TEXT
        ):
            remove_path(sentinel)
            write_atomic(sentinel, _SENTINEL_TEXT)

    def _overlay(self, source_root: Path, path: str) -> None:
        """Copy one uncommitted path's bytes from the user's tree (or delete it here).

        No symlinked directory is followed on either side: under one in the user's tree a path
        counts as absent (as git sees it); in the workspace one is replaced by a real directory
        before writing. Nothing outside either tree is read, written or deleted.
        """
        origin = source_root / path
        target = self.root / path
        if linked_parent(source_root, path) is not None or (
            origin.is_symlink() or not origin.exists()
        ):
            if linked_parent(self.root, path) is None and (target.is_file() or target.is_symlink()):
                target.unlink()
            return
        if origin.is_file():
            _real_directories(self.root, path)
            if target.is_dir() and not target.is_symlink():
                remove_tree(target)
            write_atomic(target, origin.read_bytes(), _file_mode(origin))

    def _restore_git_dir(self) -> None:
        git_dir = self.root / ".git"
        remove_path(git_dir)
        copy_tree(self._pristine_git, git_dir)

    def settle(self) -> Settled:
        """After a run: delete what the tests added, and reset what else they changed.

        Returns the added paths (deleted: untracked output such as coverage files is no
        drift) and the drift: tracked files or the checkout's git state (refs, tags, config,
        index) that the run changed; the workspace was then reset to its checkout state.
        """
        self._guard_above()
        look = self._look()
        for path in look.added:
            remove_path(self.path(path))
        drift = (*look.changed, *look.git_drift)
        if drift:
            self.reset()
        else:
            self._adopt(look)
        return Settled(look.added, drift)

    def reset(self) -> None:
        """Return the checkout to its checkout state after a run changed it; raise if it won't."""
        if self._source is None:
            raise WorkspaceError("the workspace was never materialised")
        gitinfo = self._source.git
        git_dir = self.root / ".git"
        # Named explicitly: with the checkout's .git deleted or emptied by a run, git would
        # otherwise search upwards and reset and clean whatever repository encloses TMPDIR.
        pinned = [f"--git-dir={git_dir}", f"--work-tree={self.root}"]
        try:
            self._restore_git_dir()
            _run(gitinfo, self.root, [*pinned, *self._source.eol_config(), "reset", "-q", "--hard"])
            _run(gitinfo, self.root, [*pinned, "clean", "-q", "-ffdx"])
        except (GitError, OSError):  # a run broke the checkout beyond git's repair: build again
            remove_tree(self.root)
            self._materialise(self._source, self._include)
        self._restore_git_dir()  # as materialised: drops the index git just refreshed
        for path in self._include:
            self._overlay(self._source.root, path)
        look = self._look()
        left = (*look.added, *look.changed, *look.git_drift)
        if left:
            raise WorkspaceError(
                "the workspace could not be returned to its checkout state:",
                tuple(shown(path) for path in left),
            )
        self._adopt(look)

    def _git_dir_intact(self) -> bool:
        """Whether the checkout's `.git` is still a real directory holding a HEAD."""
        git_dir = self.root / ".git"
        try:
            return stat.S_ISDIR(git_dir.lstat().st_mode) and stat.S_ISREG(
                (git_dir / "HEAD").lstat().st_mode
            )
        except OSError:
            return False

    def write_mutant(self, relative: str, data: bytes) -> int:
        """Put a mutated file's bytes in place (a new file: never an existing inode); returns
        the file's mode, for `restore`."""
        target = self.path(relative)
        mode = _file_mode(target)
        write_atomic(target, data, mode)
        return mode

    def restore(self, relative: str, original: bytes, mutated: bytes, mode: int) -> bool:
        """Write a mutated file's original bytes back; never through a link a run planted.

        False when the run changed the file, or replaced it or a directory above it (with a
        symlink, a hard link, a directory...): such a run proves nothing. Whatever was planted
        is removed, never followed or written through, so nothing outside the checkout is
        written.
        """
        target = self.path(relative)
        intact = linked_parent(self.root, relative) is None
        _real_directories(self.root, relative)
        try:
            info: os.stat_result | None = target.lstat()
        except FileNotFoundError:
            info = None
        if info is None:
            intact = False
        elif not stat.S_ISREG(info.st_mode):
            intact = False
            remove_path(target)
        elif info.st_nlink > 1 or target.read_bytes() != mutated:
            intact = False  # a hard link planted in its place, or rewritten during the run
        write_atomic(target, original, mode)
        return intact

    def path(self, relative: str) -> Path:
        """A spec path inside the checkout."""
        return self.root.joinpath(*relative.split("/"))

    def scratch(self, name: str) -> Path:
        """A fresh directory beside the checkout (reports, logs, bytecode caches)."""
        path = self.base / name
        if path.exists():
            remove_tree(path)
        path.mkdir(parents=True)
        return path

    def remove(self) -> None:
        """Delete the whole workspace (its marker last, so a cut-short removal is swept)."""
        if self.base.exists():
            remove_workspace_dir(self.base)
