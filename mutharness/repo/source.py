"""The user's repository, read-only: HEAD fixed when a run starts, its blobs and modes, status
and history."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

from mutharness.errors import GitError
from mutharness.paths import shown
from mutharness.repo import written
from mutharness.repo.files import write_atomic
from mutharness.repo.git import GitInfo, call_git, repository_filters, run_git, switched_off

RUN_DIR = ".mutharness"
REGULAR_MODES = ("100644", "100755")
_EOL_KEYS = ("core.autocrlf", "core.eol", "core.safecrlf")
_T = TypeVar("_T")

@dataclass(frozen=True)
class SourceRepo:
    """The user's repository: read, never written (except the self-ignoring run directory)."""

    root: Path
    head: str  # fixed when the run starts: a commit made meanwhile never enters its results
    git: GitInfo
    filters: tuple[str, ...] = ()  # the repository's own filter drivers: never run
    # what git said of HEAD, asked once: HEAD is fixed, so its tree and blobs never change
    _head_facts: dict[tuple[str, str], Any] = field(
        default_factory=dict, compare=False, hash=False, repr=False)
    # the untracked environments the last `changes` left out, each as the console names it
    _left_out: list[str] = field(default_factory=list, compare=False, hash=False, repr=False)
    # the files the last `changes` left out as mutharness's own outputs (`repo.written`)
    _outputs: list[str] = field(default_factory=list, compare=False, hash=False, repr=False)

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
        """Uncommitted changes as `git status --porcelain` lines (untracked files included),
        but the run directory's, the untracked bytecode a test run leaves in `__pycache__`
        (never a commit's, never read by a run: runs compile into their own cache) and what
        lies in an untracked environment (`environments`: a virtual environment, a
        `node_modules`, an install's `NAME.egg-info`, the `.venv` redirect file naming an
        environment; never part of the project's tree, never in a workspace), and the
        evidence and reports a run wrote while they hold its bytes (`outputs`)."""
        output = run_git(
            self.git, self.root,
            ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"],
            self.neutral, strip_newline_in_stdout=False,
        )
        entries = [entry for entry in output.split("\0") if entry]
        found: dict[str, str | None] = {}
        kept, environments, outputs = [], set(), []
        record = written.recorded(self.run_dir)
        for entry in entries:
            if entry[3:].startswith(f"{RUN_DIR}/") or _left_bytecode(entry):
                continue
            place = _environment(self.root, entry, found)
            if place is not None:
                environments.add(place)
            elif entry[:2] in _AS_WRITTEN and written.as_written(self.root, entry[3:], record):
                outputs.append(entry[3:])
            else:
                kept.append(entry)
        self._left_out[:] = sorted(environments)
        self._outputs[:] = sorted(outputs)
        return tuple(kept)

    def environments(self) -> tuple[str, ...]:
        """The untracked environments the last `changes` left out: each directory
        (`/`-separated, repo-relative) or the `.venv` redirect file, followed by what it is
        (a `node_modules` by nothing)."""
        return tuple(self._left_out)

    def outputs(self) -> tuple[str, ...]:
        """The files the last `changes` left out as a run's own outputs, as it wrote them."""
        return tuple(self._outputs)

    def tracked(self) -> dict[str, str]:
        """Every path in HEAD's tree mapped to its git mode (exact case)."""
        return dict(self._once(("tracked", ""), self._tracked))

    def _once(self, key: tuple[str, str], ask: Callable[[], _T]) -> _T:
        """What `ask` gives for HEAD, asked of git once per run."""
        if key not in self._head_facts:
            self._head_facts[key] = ask()
        return cast(_T, self._head_facts[key])

    def _tracked(self) -> dict[str, str]:
        output = run_git(
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
        def ask() -> int | None:
            try:
                return int(run_git(self.git, self.root, ["cat-file", "-s", f"{self.head}:{path}"]))
            except (GitError, ValueError):
                return None
        return self._once(("size", path), ask)

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
            found = run_git(self.git, self.root, ["rev-parse", "--verify", "--quiet",
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
        return run_git(self.git, self.root, ["rev-parse", "--is-shallow-repository"]).strip() \
            == "true"

    def fork_point(self, base: str) -> str | None:
        """`base` when it is an ancestor of HEAD, else the commit HEAD's history left it at
        (their merge base); None when this clone's history cannot tell."""
        try:
            run_git(self.git, self.root, ["merge-base", "--is-ancestor", base, self.head])
            return base
        except GitError:
            pass
        try:
            found = run_git(self.git, self.root, ["merge-base", base, self.head]).strip()
        except GitError:
            return None
        return found or None

    def committed_since(self, base: str) -> tuple[str, ...]:
        """The paths whose blobs differ between `base` and HEAD (both sides of a rename)."""
        output = run_git(self.git, self.root, [
            "diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", "--no-textconv",
            base, self.head, "--",
        ], self.neutral, strip_newline_in_stdout=False)
        return tuple(sorted(path for path in output.split("\0") if path))

    def changed_since(self, base: str) -> tuple[str, ...]:
        """Every path changed since `base`: committed since, uncommitted, and untracked."""
        return tuple(sorted(
            set(self.committed_since(base)) | set(status_paths(self.changes()))
        ))

    def changed_lines(self, base: str, path: str) -> frozenset[int]:
        """The lines of `path` in the working tree that differ from `base` (added or changed;
        a file `base` lacks: all of them); none for a file git shows no difference of."""
        output = run_git(self.git, self.root, [  # the path as written, whatever it holds
            "--literal-pathspecs", "diff", "-U0", "--no-color", "--no-ext-diff",
            "--no-textconv", "--no-renames", base, "--", path,
        ], self.neutral, strip_newline_in_stdout=False)
        return added_lines(output)

    def bytes_at(self, commit: str, path: str) -> bytes | None:
        """`path` as a checkout of `commit` writes it (None when that commit lacks it)."""
        if commit == self.head:
            return self._once(("bytes", path), lambda: self._bytes_at(commit, path))
        return self._bytes_at(commit, path)

    def _bytes_at(self, commit: str, path: str) -> bytes | None:
        try:
            output = call_git(
                self.git, self.root, ["cat-file", "--filters", f"{commit}:{path}"],
                self.neutral, stdout_as_string=False, strip_newline_in_stdout=False,
            )
        except GitError:
            return None
        return bytes(output)

    def mode_at(self, commit: str, path: str) -> str | None:
        """`path`'s git mode in `commit`'s tree (None when it holds no such entry)."""
        output = run_git(self.git, self.root, ["ls-tree", "-z", commit, "--", path],
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
        found = run_git(self.git, self.root, ["log", "-1", "--format=%H", self.head, "--", *wanted])
        return found.strip() or self.head

    def commits_touching_since(self, commit: str, paths: Iterable[str]) -> int | None:
        """How many commits after `commit` up to HEAD changed any of `paths` (None: unknown)."""
        try:
            counted = run_git(self.git, self.root, [
                "rev-list", "--count", f"{commit}..HEAD", "--", *sorted(set(paths)),
            ])
        except GitError:
            return None
        return int(counted.strip() or 0)

    def info_attributes(self) -> bytes | None:
        """The repository's own `info/attributes` (uncommitted EOL rules...), if it has one."""
        found = Path(run_git(self.git, self.root, ["rev-parse", "--git-path", "info/attributes"])
                     .strip())
        path = found if found.is_absolute() else self.root / found
        if path.is_symlink() or not path.is_file():
            return None
        return path.read_bytes()

    def eol_config(self) -> tuple[str, ...]:
        """`-c key=value` pairs for the EOL settings in force here, for the workspace checkout."""
        pattern = "^(" + "|".join(key.replace(".", "[.]") for key in _EOL_KEYS) + ")$"
        try:  # one git for the three keys: each key's last value wins, as `--get` has it
            listed = run_git(self.git, self.root, ["config", "-z", "--get-regexp", pattern],
                             strip_newline_in_stdout=False)
        except GitError:  # none is set
            return ()
        found: dict[str, str] = {}
        for entry in listed.split("\0"):
            key, _, value = entry.partition("\n")
            if key in _EOL_KEYS:
                found[key] = value
        return tuple(part for key in _EOL_KEYS if key in found
                     for part in ("-c", f"{key}={found[key]}"))


# the states of an entry a run's output may be in: new, changed, or staged as it is (its index
# and working-tree bytes the same)
_AS_WRITTEN = frozenset({"??", " M", "A ", "M "})
VENV_MARKER = "pyvenv.cfg"  # what makes a directory a virtual environment (PEP 405)
POINTER = ".venv"  # at the root, a file: the redirect file of PEP 832 (a draft)
POINTER_LIMIT = 512  # bytes: a redirect file holds one path, and a path is never longer here
INSTALL_METADATA = "PKG-INFO"  # what makes a `NAME.egg-info` directory an install's metadata


@dataclass(frozen=True)
class Pointer:
    """The repository's `.venv` redirect file: its line as written, the environment it names."""

    line: str
    environment: Path  # absolute (the root joined to a relative line), normalised


def venv_pointer(root: Path) -> Pointer | None:
    """The environment the repository's `.venv` file names, as tox (an editable environment)
    and virtualenv write one (PEP 832, a draft): a regular file, never read through a link,
    of at most `POINTER_LIMIT` bytes, one UTF-8 line (a line break after it aside) with no
    surrounding whitespace, naming a directory that holds a `pyvenv.cfg`, relative to the
    root (inside it or beside it, as tox and virtualenv write it) or absolute. None for
    anything else, a `.venv` directory included."""
    text = _pointer_text(root / POINTER)
    if text is None:
        return None
    line = text.removesuffix("\n").removesuffix("\r")
    if not line or line != line.strip() or line.splitlines() != [line] or "\0" in line:
        return None
    environment = Path(os.path.normpath(root / line))  # an absolute line replaces the root
    if not (environment / VENV_MARKER).is_file():
        return None
    return Pointer(line, environment)


def _pointer_text(path: Path) -> str | None:
    """A redirect file's text: a regular file's (opened without following a link, and
    without waiting on a FIFO swapped in), at most `POINTER_LIMIT` bytes of UTF-8."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) \
        | getattr(os, "O_BINARY", 0)
    try:
        if not stat.S_ISREG(path.lstat().st_mode):
            return None
        with os.fdopen(os.open(path, flags), "rb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                return None
            data = file.read(POINTER_LIMIT + 1)
    except OSError:
        return None
    try:
        return data.decode("utf-8") if len(data) <= POINTER_LIMIT else None
    except UnicodeDecodeError:
        return None


def _environment(root: Path, entry: str, found: dict[str, str | None]) -> str | None:
    """The untracked environment an untracked `entry` is or lies in (None: none), as the
    console names it: the root's `.venv` redirect file (`.venv (points at LINE)`:
    `venv_pointer`), or the nearest directory above it that holds a `pyvenv.cfg` (`DIR (a
    virtual environment)`), is a `node_modules`, or is a `NAME.egg-info` holding a `PKG-INFO`
    (`DIR (an install's metadata)`, as setuptools' `pip install -e .` leaves it beside the
    package) (`found` keeps what each directory was found to be, so each is looked at
    once)."""
    if not entry.startswith("?? "):
        return None
    if entry[3:] == POINTER:
        pointer = venv_pointer(root)
        return None if pointer is None else f"{POINTER} (points at {pointer.line})"
    parts = entry[3:].rstrip("/").split("/")
    for depth in range(1, len(parts)):
        place = "/".join(parts[:depth])
        if place not in found:
            found[place] = _kind(root, place, parts[depth - 1])
        if found[place] is not None:
            return found[place]
    return None


def _kind(root: Path, place: str, name: str) -> str | None:
    """What the untracked directory `place` (its last part `name`) is, as the console names
    it (None: none of the environments a run leaves out)."""
    if (root / place / VENV_MARKER).is_file():
        return f"{place} (a virtual environment)"
    if name == "node_modules":
        return place
    metadata = root / place / INSTALL_METADATA
    if name.endswith(".egg-info") and metadata.is_file() and not metadata.is_symlink():
        return f"{place} (an install's metadata)"
    return None


def _left_bytecode(entry: str) -> bool:
    """An untracked `.pyc` in a `__pycache__` directory (`?? src/__pycache__/calc...pyc`)."""
    path = entry[3:]
    return (entry.startswith("?? ") and path.endswith(".pyc")
            and "__pycache__" in path.split("/")[:-1])


def status_paths(changes: Iterable[str]) -> tuple[str, ...]:
    """The paths of `git status --porcelain=v1` lines (`XY path`)."""
    return tuple(entry[3:] for entry in changes)


def _no_commit(git_info: GitInfo, root: Path, error: GitError) -> GitError:
    """Why HEAD names no commit: an unborn branch only when its ref is absent (git says so
    by a silent exit 1); anything else (a broken ref, a git that failed or was killed) with
    git's words or its exit status."""
    try:
        branch = run_git(git_info, root, ["symbolic-ref", "--quiet", "HEAD"]).strip()
    except GitError:
        branch = ""  # a detached HEAD: never unborn
    if branch and error.silent_no():
        try:
            run_git(git_info, root, ["show-ref", "--verify", "--quiet", branch])
        except GitError as absent:
            if absent.silent_no():
                return GitError(f"{root} has no commits yet (unborn HEAD)", remedy="commit first")
            error = absent
    return GitError(
        f"HEAD does not name a commit in {root}",
        error.detail,
        remedy="see `git status` and `git fsck` there",
    )


def open_source(start: Path, git_info: GitInfo) -> SourceRepo:
    """The repository containing `start`, with a born HEAD."""
    if not start.is_dir():
        raise GitError(f"{start} is not a directory")
    try:
        root = run_git(git_info, start, ["rev-parse", "--show-toplevel"]).strip()
    except GitError as error:
        if "not a git repository" in error.detail:
            raise GitError(f"{start} is not inside a git repository") from None
        raise
    if not root:
        raise GitError(f"{start} is inside a git directory, not a working tree")
    root_path = Path(root).resolve()
    try:
        head = run_git(git_info, root_path, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])
    except GitError as error:
        raise _no_commit(git_info, root_path, error) from None
    return SourceRepo(root_path, head.strip(), git_info, repository_filters(git_info, root_path))


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.M)


def added_lines(diff: str) -> frozenset[int]:
    """The new side's line numbers that a zero-context unified diff (`git diff -U0`) adds."""
    lines: set[int] = set()
    for hunk in _HUNK.finditer(diff):
        start, count = int(hunk[1]), 1 if hunk[2] is None else int(hunk[2])
        lines.update(range(start, start + count))
    return frozenset(lines)
