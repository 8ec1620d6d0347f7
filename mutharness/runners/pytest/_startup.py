"""Start-up hook copied into every test run as `sitecustomize`: the workspace's copy wins.

Every Python process a run starts (pytest, and the interpreters its tests start: a
`subprocess.run([sys.executable, ...])`, a console script, pytest-xdist workers) inherits the
run's PYTHONPATH, whose first entry holds this file as `sitecustomize.py`. Python imports it at
start-up, after the `.pth` files of site-packages ran (so editable installs have put their path
entries and finders in place) and before the main module imports anything. Here it:

* rewrites every `sys.path` entry inside the user's repository (`MUTHARNESS_USER_ROOT`) to the
  same path inside the workspace (`MUTHARNESS_WORKSPACE_ROOT`);
* puts a finder first on `sys.meta_path` that asks the other finders, in their order, and
  rewrites any module they find in the user's repository (setuptools' editable finder, the
  `editables` redirector, a path entry added later) to the workspace's copy of that file. A
  package found that way also keeps the user's directory after the workspace's in its
  `__path__`, so files the workspace lacks (a generated `_version.py`, an extension built in
  place) are still found where the environment pointed;
* refuses (ImportError, naming the file) a module found in the temp directory the workspace
  lies in but outside the run's own directory, the user's repository and every path the
  interpreter's own start-up put on `sys.path`: a `pythonpath` or `sys.path` entry that climbs
  above the checkout (`..`, `-o pythonpath=$TMPDIR` in addopts) resolves, in the workspace,
  to a directory other local users can write to;
* appends a line per imported module (pid, name, file) to a log in `MUTHARNESS_IMPORTS`, so the
  harness knows which copy of each file every process of the run loaded, children included
  (a script run by path, `python pkg/cli.py`, as `__main__`: logged at start-up, since the
  interpreter removes `__main__.__file__` once the script has run);
* appends a line per file of the workspace the process opens (`READ`, from the audit event
  `open`: a data file read at import, a fixture's file), so `--since` knows every file of
  the checkout a run read, not only those it imported, and a line per program that is not
  Python it starts (`SPAWN`: what that program reads, no hook sees);
* then runs the `sitecustomize` that this one shadows, if there is one.

It runs in the tests' interpreter, which may be older than the harness's: Python 3.8 syntax,
standard library only, and it never raises (a failure is logged for the harness to report).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.machinery
import importlib.util
import os
import sys
from typing import Any

USER_ROOT = "MUTHARNESS_USER_ROOT"
WORKSPACE_ROOT = "MUTHARNESS_WORKSPACE_ROOT"
WORKSPACE_BASE = "MUTHARNESS_WORKSPACE_BASE"  # the run's own directory, in the shared temp dir
IMPORTS = "MUTHARNESS_IMPORTS"
ERROR = "!error"  # a log line's name field when the hook itself failed
REGISTERED = "_mutharness_startup"  # this module's name in sys.modules, for the fork server
HOOKED = "!hooked"  # the lines before this one list what start-up imported before the hook
READ = "!read"  # a log line's name field for a file of the workspace the process opened
SPAWN = "!spawn"  # a log line's name field for a program it started that is not Python


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


class _Log:
    """An append-only log of (pid, module, file) lines: each line is one write(2), so lines of
    processes sharing the file (a fork) never interleave, and an os._exit loses nothing."""

    def __init__(self, directory: str) -> None:
        self.fd = self._open(directory)
        self.seen: set[tuple[str, str]] = set()
        self.early: list[tuple[str, str]] = []  # what start-up imported before the hook

    @staticmethod
    def _open(directory: str) -> int:
        """A new log file of this process in `directory` (binary: LF, not CRLF)."""
        name = f"{os.getpid()}-{os.urandom(4).hex()}.log"
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_BINARY", 0)
        return os.open(os.path.join(directory, name), flags, 0o600)

    def reopen(self, directory: str) -> None:
        """In a process forked from this one (a fork server's child): log to `directory`
        from now on, as if this process had started there: what start-up imported before
        the hook first, then everything else already loaded."""
        with contextlib.suppress(OSError):
            os.close(self.fd)
        self.fd = self._open(directory)
        self.seen = set()
        for module, origin in self.early:
            self.write(module, origin)
        self.write(HOOKED, "")
        self.modules()

    def write(self, name: str, origin: str) -> None:
        key = (name, origin)
        if key in self.seen:
            return
        self.seen.add(key)
        line = f"{os.getpid()}\t{name}\t{_escape(origin)}\n"
        with contextlib.suppress(OSError, ValueError):
            os.write(self.fd, os.fsencode(line))

    def modules(self) -> None:
        """Log every module in sys.modules that came from a file."""
        for name, module in list(sys.modules.items()):
            origin = getattr(module, "__file__", None)
            if isinstance(origin, str):
                self.write(name, os.path.abspath(origin))


class WorkspaceFirst:
    """The finder first on sys.meta_path: what the others find in the user's tree is rewritten
    to the workspace's copy."""

    def __init__(self, user_root: str, workspace_root: str, log: _Log | None,
                 base: str | None = None) -> None:
        self.user = os.path.realpath(user_root)  # real paths keep their case: paths are
        self.workspace = os.path.realpath(workspace_root)  # compared normcased, never shown so
        self.log = log
        self.base = os.path.realpath(base) if base else None  # the run's own directory
        self.shared = os.path.dirname(self.base) if self.base else None  # the temp dir it is in
        # what the interpreter's start-up put on sys.path, and its prefixes: made real only
        # when a directory in the shared temp dir is judged (never, in most processes)
        self._startup_paths = [
            entry for entry in
            [*sys.path, sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix]
            if isinstance(entry, str) and entry
        ]
        self._vouched: list[str] | None = None
        self.remapped_roots: list[str] = []  # workspace directories that replaced user ones
        self._real: dict[str, str] = {}

    def _realdir(self, directory: str) -> str:
        found = self._real.get(directory)
        if found is None:
            found = os.path.realpath(directory)
            self._real[directory] = found
        return found

    def _relative(self, path: str, root: str) -> str | None:
        """`path` relative to `root` (both real), or None when outside it. They are compared
        normcased (Windows: case-insensitive); the part returned keeps `path`'s case."""
        key, base = os.path.normcase(path), os.path.normcase(root)
        if key == base:
            return ""
        prefix = base.rstrip(os.sep) + os.sep
        if not key.startswith(prefix):
            return None
        return path[len(prefix):] if len(key) == len(path) else key[len(prefix):]

    def to_workspace(self, path: str) -> str | None:
        """The workspace's path for `path` when it lies in the user's tree (None otherwise).

        A file reached through a link (setuptools' strict editable mode links every file of
        the package into a tree under build/) counts where the link leads."""
        absolute = os.path.abspath(path)
        head, tail = os.path.split(absolute)
        if os.path.islink(absolute):
            real = os.path.realpath(absolute)
        elif tail:
            real = os.path.join(self._realdir(head), tail)
        else:
            real = self._realdir(absolute)
        relative = self._relative(real, self.user)
        if relative is None:
            return None
        return os.path.join(self.workspace, relative) if relative else self.workspace

    def to_user(self, path: str) -> str | None:
        """The user's path for a workspace path below a remapped root (None otherwise)."""
        real = self._realdir(path)
        if not any(self._relative(real, root) is not None for root in self.remapped_roots):
            return None
        relative = self._relative(real, self.workspace)
        if relative is None:
            return None
        return os.path.join(self.user, relative) if relative else self.user

    def rewrite_sys_path(self) -> None:
        """Replace each entry inside the user's tree by the workspace's (the user's after it)."""
        rewritten: list[str] = []
        for entry in sys.path:
            target = self.to_workspace(entry or os.curdir) if isinstance(entry, str) else None
            if target is not None and os.path.isdir(target) and target not in rewritten:
                rewritten.append(target)
                self.remapped_roots.append(self._realdir(target))
            rewritten.append(entry)
        sys.path[:] = rewritten
        sys.path_importer_cache.clear()

    def _locations(self, locations: list[str]) -> list[str] | None:
        """A package's search path with workspace directories first (None: nothing to change)."""
        moved = [(self.to_workspace(entry), entry) for entry in locations]
        if any(target is not None for target, _ in moved):
            first = [target for target, _ in moved if target is not None and os.path.isdir(target)]
            for target in first:
                self.remapped_roots.append(self._realdir(target))
            return first + [entry for entry in locations if entry not in first]
        extra = [user for user in map(self.to_user, locations) if user and os.path.isdir(user)]
        if not extra:
            return None
        return list(locations) + [entry for entry in extra if entry not in locations]

    def rewritten(self, spec: Any) -> Any:
        """`spec`, or one for the workspace's copy of the same module."""
        locations = spec.submodule_search_locations
        new_locations = self._locations(list(locations)) if locations is not None else None
        origin = spec.origin if spec.has_location and isinstance(spec.origin, str) else None
        new_origin = self.to_workspace(origin) if origin else None
        if new_origin is not None and not os.path.isfile(new_origin):
            new_origin = None  # the workspace lacks it (untracked, generated): keep the user's
        if new_origin is None and new_locations is None:
            return spec
        if origin is None:  # a namespace package
            new = importlib.machinery.ModuleSpec(spec.name, None, is_package=True)
            new.submodule_search_locations = new_locations
            return new
        return importlib.util.spec_from_file_location(
            spec.name, new_origin or origin, submodule_search_locations=new_locations
        )

    def foreign(self, directory: str) -> bool:
        """Whether `directory` lies in the shared temp directory but in none of the places a
        run may import from (its own directory, the user's tree, the start-up's paths)."""
        if self.shared is None or self.base is None:
            return False
        real = self._realdir(os.path.abspath(directory or os.curdir))
        if self._relative(real, self.shared) is None:
            return False
        if self._vouched is None:
            self._vouched = [self._realdir(entry) for entry in self._startup_paths]
        allowed = [self.base, self.user, *self._vouched]
        return all(self._relative(real, root) is None for root in allowed)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        try:
            after = sys.meta_path[sys.meta_path.index(self) + 1:]
        except ValueError:
            return None
        for finder in after:
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(fullname, path, target)
            if spec is None:
                continue
            try:
                spec = self.rewritten(spec)
            except Exception as error:  # never break an import over the remap
                if self.log is not None:
                    self.log.write(ERROR, f"remapping {fullname}: {error!r}")
            if self.log is not None and isinstance(spec.origin, str) and spec.has_location:
                self.log.write(fullname, os.path.abspath(spec.origin))
            return spec
        return None


class _Reads:
    """An audit hook: each file inside the workspace a process opens is logged once as read
    (never raises; bytecode is no file of the checkout)."""

    def __init__(self, root: str, log: _Log) -> None:
        self.prefixes = tuple({os.path.normcase(os.path.join(place, "")) for place in
                               (os.path.abspath(root), os.path.realpath(root))})
        self.log = log

    def __call__(self, event: str, args: Any) -> None:
        if event in _STARTS:
            self.started(event, args)
            return
        if event != "open" or not args or isinstance(args[0], int):
            return
        try:
            path = os.path.abspath(os.fsdecode(os.fspath(args[0])))
            if (os.path.normcase(path).startswith(self.prefixes)
                    and not path.endswith(".pyc") and os.path.isfile(path)):
                self.log.write(READ, path)
        except Exception:  # an open is never failed over its record
            return


    def started(self, event: str, args: Any) -> None:
        """A program a process starts: logged unless it is Python (which this hook follows)."""
        try:
            program = args[1] if event == "os.spawn" else args[0]  # os.spawn's mode first
            if event == "subprocess.Popen" and program is None:
                program = args[1] if isinstance(args[1], (str, bytes)) else args[1][0]
            if event == "os.system":
                program = os.fsdecode(program).split()[0] if program else ""
            name = os.path.basename(os.fsdecode(os.fspath(program)))
            if not (name.lower().startswith("python") or name in _READS_NO_FILE
                    or os.fsdecode(os.fspath(program)) == sys.executable):
                self.log.write(SPAWN, name)
        except Exception:  # a start is never failed over its record
            return


# programs that read no file of a checkout: `platform` asks `uname -p` for the processor
_READS_NO_FILE = frozenset({"uname"})
# the audit events of a process starting a program, the program first in their arguments
_STARTS = frozenset({"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn"})


class _Refusing:
    """The path entry finder of a foreign directory: a module found there is refused."""

    def __init__(self, directory: str, shared: str, real: Any) -> None:
        self.directory, self.shared, self.real = directory, shared, real

    def find_spec(self, fullname: str, target: Any = None) -> Any:
        spec = self.real.find_spec(fullname, target)
        if spec is None:
            return None
        raise ImportError(
            f"mutharness refuses to import {fullname} from {self.directory}, a `pythonpath` "
            "or `sys.path` entry above the checkout, in the temporary directory other users "
            f"share ({self.shared}): name a directory inside the repository instead",
            name=fullname, path=self.directory,
        )

    def invalidate_caches(self) -> None:
        self.real.invalidate_caches()


class ForeignGuard:
    """A path hook, first on `sys.path_hooks`: every import system lookup on a directory of
    `sys.path` or a package's `__path__` asks it first (pytest's assertion rewriter too), and
    a foreign one (`WorkspaceFirst.foreign`) gets a finder that refuses what it holds."""

    def __init__(self, judge: WorkspaceFirst) -> None:
        self.judge = judge

    def __call__(self, directory: str) -> Any:
        if not isinstance(directory, str) or not self.judge.foreign(directory):
            raise ImportError("not a foreign directory")  # the next path hook decides
        for hook in sys.path_hooks[sys.path_hooks.index(self) + 1:]:
            try:
                real = hook(directory)
            except ImportError:
                continue
            return _Refusing(directory, str(self.judge.shared), real)
        raise ImportError("no path hook takes it")


def _chain() -> None:
    """Run the `sitecustomize` this file shadows (the interpreter's or the environment's)."""
    here = os.path.normcase(os.path.dirname(os.path.abspath(__file__)))
    rest = [
        entry for entry in sys.path
        if isinstance(entry, str) and os.path.normcase(os.path.abspath(entry or os.curdir)) != here
    ]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


def _script() -> str | None:
    """The file this interpreter runs as `__main__` when it was started on a script's path
    (`python pkg/cli.py`): at start-up `sys.argv[0]` is that path (`-c`, `-m`: the option)."""
    argv = getattr(sys, "argv", None)
    first = argv[0] if argv else ""
    if first in ("", "-", "-c", "-m") or not os.path.isfile(first):
        return None
    return os.path.abspath(first)


def install() -> _Log | None:
    """Set the hook up from the run's environment; log (never raise) what goes wrong. The
    import log is returned (None without one), for `reopen` in a forked child."""
    log: _Log | None = None
    try:
        directory = os.environ.get(IMPORTS)
        if directory and os.path.isdir(directory):
            log = _Log(directory)
            log.modules()  # what start-up (site, .pth files) imported before this ran
            log.early = sorted(log.seen)
            log.write(HOOKED, "")
            script = _script()
            if script is not None:  # its module loses `__file__` before atexit: say it now
                log.write("__main__", script)
            atexit.register(log.modules)
            sys.addaudithook(_Reads(os.environ.get(WORKSPACE_ROOT) or os.getcwd(), log))
        user, workspace = os.environ.get(USER_ROOT), os.environ.get(WORKSPACE_ROOT)
        if user and workspace:
            base = os.environ.get(WORKSPACE_BASE)
            hook = WorkspaceFirst(user, workspace, log, base)
            if base:  # the guard judges directories against the run's own one
                sys.path_hooks.insert(0, ForeignGuard(hook))
            hook.rewrite_sys_path()  # (clears sys.path_importer_cache)
            sys.meta_path.insert(0, hook)
    except Exception as error:
        if log is not None:
            log.write(ERROR, f"start-up: {error!r}")
        sys.stderr.write(f"mutharness start-up hook failed: {error!r}\n")
    return log


def reopen(directory: str | None) -> None:
    """In a forked child: log its imports to the run's `directory` (see `_Log.reopen`)."""
    log = getattr(sys.modules.get(REGISTERED), "LOG", None)
    if directory and isinstance(log, _Log):
        try:
            log.reopen(directory)
        except Exception as error:
            sys.stderr.write(f"mutharness start-up hook could not reopen its log: {error!r}\n")


if __name__ == "sitecustomize":  # as a run's start-up hook; importing the module does nothing
    LOG = install()  # bound once; only a forked child's `reopen` retargets it
    sys.modules[REGISTERED] = sys.modules[__name__]  # found after a chained sitecustomize
    try:
        _chain()
    except Exception as _error:
        sys.stderr.write(f"sitecustomize (run after mutharness's start-up hook) failed: "
                         f"{_error!r}\n")
