"""The disposable workspace: materialised from HEAD, settled after every run (what the tests
added deleted, drift reset and reported), a mutant's file restored byte for byte."""

from __future__ import annotations

import os
import socket
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from mutharness.digest import TreeState
from mutharness.errors import EnvironmentProblem, GitError, WorkspaceError
from mutharness.paths import WORKSPACE_PREFIX, linked_parent, shown
from mutharness.repo.files import copy_file, copy_tree, remove_path, remove_tree, write_atomic
from mutharness.repo.git import run_git
from mutharness.repo.installed import Installed, changed, found, link, record
from mutharness.repo.source import SourceRepo

MARKER = "mutharness-workspace"
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




def marked_directory(temp_dir: Path, prefix: str) -> Path:
    """A new directory under `temp_dir` whose marker names this process and host, so that the
    next run's sweep removes it if this process dies without removing it (see sweep)."""
    base = Path(tempfile.mkdtemp(prefix=prefix, dir=temp_dir))
    (base / MARKER).write_text(f"{os.getpid()}\n{socket.gethostname()}\n")
    return base


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
        self.installed: tuple[Installed, ...] = ()  # the user's node_modules, linked in

    @classmethod
    def reserved(cls, temp_dir: Path) -> Workspace:
        """Its marked directory under `temp_dir`, nothing checked out yet (`fill` does)."""
        base = marked_directory(temp_dir, WORKSPACE_PREFIX)
        return cls(base, base / "repo")

    def fill(self, source: SourceRepo, include: tuple[str, ...] = ()) -> None:
        """Check `source.head` out; overlay `include`d uncommitted paths (the caller removes
        the workspace if that fails)."""
        self._materialise(source, include)
        self._snapshot()

    @property
    def _pristine_git(self) -> Path:
        return self.base / "pristine.git"

    def _materialise(self, source: SourceRepo, include: tuple[str, ...]) -> None:
        empty = self.base / "empty"
        empty.mkdir(exist_ok=True)  # exists when a reset builds the checkout again
        self._source, self._include = source, include
        gitinfo = source.git
        run_git(gitinfo, self.base, ["init", "-q", f"--template={empty}", str(self.root)])
        run_git(gitinfo, self.root, [
            "fetch", "-q", "--no-tags", "--no-write-fetch-head", "--depth=1",
            source.root.as_uri(), source.head,
        ])
        if (attributes := source.info_attributes()) is not None:  # they shape the checkout too
            (self.root / ".git/info").mkdir(parents=True, exist_ok=True)
            (self.root / ".git/info/attributes").write_bytes(attributes)
        run_git(gitinfo, self.root, [
            *source.eol_config(), "-c", "advice.detachedHead=false",
            "checkout", "-q", "--detach", source.head,
        ])
        for path in include:
            self._overlay(source.root, path)
        self._link_installed()

    def _link_installed(self) -> None:
        """The user's untracked `node_modules` directories, beside the same directories here:
        a directory of links to their entries (`installed.link`); linked again after a reset,
        their first record kept (what `installed_changes` compares with)."""
        assert self._source is not None
        user_root = self._source.root
        if not self.installed:
            paths = (*self._source.tracked(), *self._include)
            self.installed = tuple(record(user_root, where)
                                   for where in found(user_root, self.root, paths))
        for installed in self.installed:
            remove_path(self.path(installed.relative))  # what a reset's `git clean` left
            link(user_root, self.root, installed.where)

    def installed_changes(self) -> tuple[str, ...]:
        """The files of the user's linked `node_modules` that changed since they were linked
        (repo-relative): a run wrote into the user's installed packages through a link."""
        if self._source is None:  # never materialised: nothing linked
            return ()
        return tuple(path for installed in self.installed
                     for path in changed(self._source.root, installed))

    def _snapshot(self) -> None:
        """Record the checkout and its .git as the state every run starts from."""
        self._guard_above()
        git_dir = self.root / ".git"
        copy_tree(git_dir, self._pristine_git)
        self._git = TreeState.scan(git_dir)
        self._index = self._index_entries()
        self._meaning = self._git_meaning(self._index)
        self._checkout = TreeState.scan(self.root, frozenset({".git"}))

    def _index_entries(self) -> str:
        """The checkout's index as git reads it: every entry's mode, blob, stage, path and
        flags (assume-unchanged, skip-worktree), not the stat data git caches beside them."""
        if self._source is None:
            return ""
        git_dir = self.root / ".git"
        try:
            return run_git(self._source.git, self.root, [
                f"--git-dir={git_dir}", f"--work-tree={self.root}",
                "ls-files", "--stage", "-v", "-z",
            ], strip_newline_in_stdout=False)
        except GitError:
            return "unreadable"

    def _git_meaning(self, index: str | None = None) -> str:
        """What the checkout's git state means, not how git stored it: every ref and its
        target, HEAD, the repository's own config values and the index's entries. A test that
        makes and deletes a tag leaves `packed-refs` rewritten and an object no ref reaches:
        the same meaning. `index`: the index's entries, when just read."""
        if self._source is None:
            return ""
        git_dir = self.root / ".git"
        pinned = [f"--git-dir={git_dir}", f"--work-tree={self.root}"]
        try:
            return "\0\0".join((
                run_git(self._source.git, self.root, [
                    *pinned, "for-each-ref", "--format=%(refname)%00%(objectname)"],
                    strip_newline_in_stdout=False),
                (git_dir / "HEAD").read_text(encoding="utf-8", errors="replace"),
                run_git(self._source.git, self.root, [*pinned, "config", "--local", "--list", "-z"],
                     strip_newline_in_stdout=False),
                self._index_entries() if index is None else index,
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
            run_git(gitinfo, self.root,
                    [*pinned, *self._source.eol_config(), "reset", "-q", "--hard"])
            run_git(gitinfo, self.root, [*pinned, "clean", "-q", "-ffdx"])
        except (GitError, OSError):  # a run broke the checkout beyond git's repair: build again
            remove_tree(self.root)
            self._materialise(self._source, self._include)
        self._restore_git_dir()  # as materialised: drops the index git just refreshed
        for path in self._include:
            self._overlay(self._source.root, path)
        self._link_installed()  # `git clean -x` took the links with what the run added
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
