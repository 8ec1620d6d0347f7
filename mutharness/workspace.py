"""The only git user: the source repository (read-only) and the disposable workspace."""

from __future__ import annotations

import os
import re
import shutil
import socket
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mutharness.digest import changed_paths, tree_digest
from mutharness.errors import GitError, WorkspaceError
from mutharness.paths import linked_parent
from mutharness.signals import deferred as _signals_deferred

MIN_GIT = (2, 30)
RUN_DIR = ".mutharness"
MARKER = "mutharness-workspace"
REGULAR_MODES = ("100644", "100755")
_EOL_KEYS = ("core.autocrlf", "core.eol", "core.safecrlf")


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


def _run(git_info: GitInfo, cwd: Path, args: list[str], **kwargs: Any) -> str:
    """Run git with fixed argv (no shell, no hooks) in `cwd`, returning stdout.

    `--no-optional-locks` keeps read-only commands read-only: without it `git status` in the
    user's repository refreshes and rewrites `.git/index` whenever a file's stat data changed.
    Hooks and fsmonitor are switched off for every call, whatever the repository or the user's
    global configuration says.
    """
    safety = [
        "--no-optional-locks",
        "-c", f"core.hooksPath={os.devnull}",
        "-c", "core.fsmonitor=false",  # a configured fsmonitor is a program `git status` runs
    ]
    _point_gitpython_at(git_info.path)
    import git  # only now: see _point_gitpython_at

    try:
        with _signals_deferred():
            output = git.Git(str(cwd)).execute([git_info.path, *safety, *args], **kwargs)
        return str(output)
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


@dataclass(frozen=True)
class SourceRepo:
    """The user's repository: read, never written (except the self-ignoring run directory)."""

    root: Path
    head: str
    git: GitInfo

    @property
    def short(self) -> str:
        """The abbreviated HEAD commit."""
        return self.head[:12]

    @property
    def run_dir(self) -> Path:
        """The self-ignoring `.mutharness/` directory at the repository root."""
        return self.root / RUN_DIR

    def ensure_run_dir(self) -> Path:
        """Create `.mutharness/` with its own `.gitignore` of `*` (like .pytest_cache)."""
        self.run_dir.mkdir(exist_ok=True)
        ignore = self.run_dir / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# created by mutharness; ignores this directory\n*\n")
        return self.run_dir

    def changes(self) -> tuple[str, ...]:
        """Uncommitted changes as `git status --porcelain` lines (untracked files included)."""
        output = _run(
            self.git, self.root,
            ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"],
            strip_newline_in_stdout=False,
        )
        entries = [entry for entry in output.split("\0") if entry]
        return tuple(
            entry for entry in entries if not entry[3:].startswith(f"{RUN_DIR}/")
        )

    def tracked(self) -> dict[str, str]:
        """Every path in HEAD's tree mapped to its git mode (exact case)."""
        output = _run(
            self.git, self.root, ["ls-tree", "-r", "-z", "--full-tree", "HEAD"],
            strip_newline_in_stdout=False,
        )
        modes: dict[str, str] = {}
        for entry in output.split("\0"):
            if entry:
                meta, path = entry.split("\t", 1)
                modes[path] = meta.split()[0]
        return modes

    def last_commit_touching(self, paths: Iterable[str]) -> str:
        """The newest commit at or before HEAD that changed any of `paths` (HEAD if none did)."""
        wanted = sorted(set(paths))
        if not wanted:
            return self.head
        found = _run(self.git, self.root, ["log", "-1", "--format=%H", "HEAD", "--", *wanted])
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
    return SourceRepo(root_path, head.strip(), git_info)


def _onerror(func: Callable[..., Any], path: str, _info: Any) -> None:
    """Make read-only files (git objects on Windows) writable and retry once."""
    os.chmod(path, stat.S_IWRITE | stat.S_IREAD)
    func(path)


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
    """Delete a directory tree, read-only files included."""
    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=_onerror)
    else:  # pragma: no cover - Python 3.11
        shutil.rmtree(path, onerror=_onerror)


def remove_workspace_dir(base: Path) -> None:
    """Delete a workspace directory, its marker last: one whose removal is cut short (a second
    signal, a crash) still carries the marker, so the next run's sweep finds it."""
    for child in base.iterdir():
        if child.name == MARKER:
            continue
        if child.is_dir() and not child.is_symlink():
            remove_tree(child)
        else:
            child.unlink()
    remove_tree(base)


class Workspace:
    """A disposable checkout of one commit under the system temp directory."""

    def __init__(self, base: Path, root: Path) -> None:
        self.base = base  # holds the checkout, reports, logs and pycache dirs
        self.root = root  # the checkout the tests run in
        self._reference: dict[str, str] = {}
        self._checkout: dict[str, str] | None = None  # the state right after materialising
        self._extras: dict[str, bytes] = {}  # reference files that differ from the checkout
        self._source: SourceRepo | None = None
        self._include: tuple[str, ...] = ()

    @classmethod
    def create(cls, source: SourceRepo, include: tuple[str, ...] = ()) -> Workspace:
        """Check `source.head` out under the temp dir; overlay `include`d uncommitted paths."""
        base = Path(tempfile.mkdtemp(prefix="mh-"))
        (base / MARKER).write_text(f"{os.getpid()}\n{socket.gethostname()}\n")  # see sweep
        workspace = cls(base, base / "repo")
        try:
            workspace._materialise(source, include)
        except BaseException:
            workspace.remove()
            raise
        return workspace

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
            if target.is_symlink():
                target.unlink()  # write_bytes would write through it
            target.write_bytes(origin.read_bytes())
            shutil.copymode(origin, target)

    def reset(self) -> None:
        """Return the checkout to its reference state after a run changed it; raise if it won't."""
        if self._source is None:
            raise WorkspaceError("the workspace was never materialised")
        gitinfo = self._source.git
        git_dir = self.root / ".git"
        # Named explicitly: with the checkout's .git deleted or emptied by a run, git would
        # otherwise search upwards and reset and clean whatever repository encloses TMPDIR.
        pinned = [f"--git-dir={git_dir}", f"--work-tree={self.root}"]
        try:
            if not self._git_dir_intact():
                raise GitError(f"{git_dir} is no longer a directory")
            _run(gitinfo, self.root, [*pinned, *self._source.eol_config(), "reset", "-q", "--hard"])
            _run(gitinfo, self.root, [*pinned, "clean", "-q", "-ffdx"])
        except GitError:  # a run broke the checkout's own .git: build the checkout again
            remove_tree(self.root)
            self._materialise(self._source, self._include)
        for path in self._include:
            self._overlay(self._source.root, path)
        for relative, kind in self._reference.items():
            target = self.path(relative)
            if kind == "dir":
                target.mkdir(parents=True, exist_ok=True)
            elif relative in self._extras:  # what the baseline added (a plugin's cache...)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(self._extras[relative])
                if kind.startswith("file:x:"):
                    target.chmod(target.stat().st_mode | stat.S_IXUSR)
        drift = self.drift()
        if drift:
            raise WorkspaceError(
                "the workspace could not be returned to its reference state:", drift
            )

    def capture_reference(self) -> None:
        """Record the workspace's bytes as the state every restore must return to."""
        reference = tree_digest(self.root, frozenset({".git"}))
        if self._checkout is None:
            self._checkout = reference
        self._extras = {
            relative: self.path(relative).read_bytes()
            for relative, kind in reference.items()
            if kind.startswith("file:") and self._checkout.get(relative) != kind
        }
        self._reference = reference

    def drift(self) -> tuple[str, ...]:
        """Paths whose bytes differ from the reference state (and `.git`, if a run broke it)."""
        changed = changed_paths(self._reference, tree_digest(self.root, frozenset({".git"})))
        return changed if self._git_dir_intact() else tuple(sorted({*changed, ".git"}))

    def _git_dir_intact(self) -> bool:
        """Whether the checkout's `.git` is still a real directory holding a HEAD."""
        git_dir = self.root / ".git"
        try:
            return stat.S_ISDIR(git_dir.lstat().st_mode) and stat.S_ISREG(
                (git_dir / "HEAD").lstat().st_mode
            )
        except OSError:
            return False

    def restore(self, relative: str, original: bytes, mutated: bytes) -> bool:
        """Write a mutated file's original bytes back; never through a link a run planted.

        False when the run changed the file, or replaced it or a directory above it (with a
        symlink, a directory...): such a run proves nothing. Whatever was planted is removed,
        never followed, so nothing outside the checkout is written.
        """
        target = self.path(relative)
        intact = linked_parent(self.root, relative) is None
        _real_directories(self.root, relative)
        if target.is_symlink() or (target.exists() and not target.is_file()):
            intact = False
            if target.is_dir() and not target.is_symlink():
                remove_tree(target)
            else:
                target.unlink()
        elif not target.exists() or target.read_bytes() != mutated:
            intact = False
        target.write_bytes(original)
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

