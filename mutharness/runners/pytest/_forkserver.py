"""The pytest fork server, copied into a run's start-up directory: imports pytest once, forks
a child per run that imports the project afresh and ends as a process ends.

`python -m _mutharness_forkserver` runs in the tests' interpreter, with the environment of a
run (the start-up hook is active), in a scratch directory outside the workspace. It imports
pytest and its built-in plugins, never workspace code: it refuses (and the harness falls back
to a fresh process per run) when anything it imported came from the workspace or the user's
repository, and when the interpreter's start-up ran code that a forked child would not run
again (`start_up_code`: start-up state is made once, here, and only inherited). Then, for
each request the harness sends (one JSON line on stdin: the pytest arguments, the working
directory, the environment, the log file), it forks a child that makes
itself look like a fresh `python -m pytest` (its own session, the run's environment and
directory, `sys.path[0]` as `-m` sets it, the import log reopened for the run), runs pytest's
`__main__` as `-m` does and leaves through the interpreter's own exit; the server answers
`{"pid": N}` once the child leads its session and `{"status": S}` (a `Popen.returncode`) when
it has gone.

Plugins that pytest loads through entry points are not imported here: pytest rewrites the
asserts of those modules and warns about (or, under `-W error`, fails on) ones imported
before it starts. The project's own code, its conftests and test modules are imported by each
child, fresh from the workspace, so a mutant in module-level code is executed.

It runs in the tests' interpreter, which may be older than the harness's: Python 3.8 syntax,
standard library only (and pytest).
"""

from __future__ import annotations

import sys

AT_START = frozenset(sys.modules)  # loaded before any path entry of a run's directory existed

import contextlib  # noqa: E402
import importlib  # noqa: E402
import importlib.machinery  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import runpy  # noqa: E402
import site  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

STARTUP = "_mutharness_startup"  # the start-up hook, as it registers itself
USER_ROOT = "MUTHARNESS_USER_ROOT"
WORKSPACE_ROOT = "MUTHARNESS_WORKSPACE_ROOT"
IMPORTS = "MUTHARNESS_IMPORTS"
# `.pth` lines that run code and are known to do the same in every process of a run: their
# effect depends on nothing a run changes (its directory, temp, home). Any other start-up code
# ran once, here, and a forked child would not run it again: no server for it.
KNOWN_START_UP = (
    re.compile(r"import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os\.environ\.get\("
               r"var, '(local|stdlib)'\) == 'local'; enabled and "
               r"__import__\('_distutils_hack'\)\.add_shim\(\); ?"),  # setuptools
    re.compile(r"import (__editable___\w+_finder); \1\.install\(\)"),  # setuptools -e
    re.compile(r"import _virtualenv"),  # virtualenv's own
    # coverage 7's `a1_coverage.pth`: starts coverage when one of COVERAGE_START is set (then
    # it is not known to do the same: `_executable_pth_line` names it)
    re.compile(r"""import sys; exec\('import os\\n\\nif os\.getenv\("COVERAGE_PROCESS_START"\)"""
               r"""( or os\.getenv\("COVERAGE_PROCESS_CONFIG"\))?:\\n try:\\n  import """
               r"""coverage\\n except:\\n  pass\\n else:\\n  coverage\.process_startup\("""
               r"""(slug="pth")?\)'\)"""),
    # pytest-cov 2.12 to 6's `pytest-cov.pth`, its exact text: starts coverage when
    # COV_CORE_SOURCE is set (then not known to do the same)
    re.compile(re.escape(
        "import os, sys;exec('if \\'COV_CORE_SOURCE\\' in os.environ:\\n try:\\n  from "
        "pytest_cov.embed import init\\n  init()\\n except Exception as exc:\\n  "
        "sys.stderr.write(\\n   \"pytest-cov: Failed to setup subprocess coverage. \"\\n   "
        "\"Environ: {0!r} \"\\n   \"Exception: {1!r}\\\\n\".format(\\n    dict((k, v) for k, v "
        "in os.environ.items() if k.startswith(\\'COV_CORE\\')),\\n    exc\\n   )\\n  )\\n')")),
)
# what a refusal of start-up code says: why nothing is wrong, and how to say it from the start
_NEW_INTERPRETER = ("every run is a new interpreter, as a fresh `python -m pytest` is; "
                    "`--pytest-runner subprocess` chooses that from the start, without this note")
# what starts coverage through those lines: the harness never passes them on to a run
COVERAGE_START = ("COVERAGE_PROCESS_START", "COVERAGE_PROCESS_CONFIG", "COV_CORE_SOURCE")


class Channel:
    """The harness's requests (fd 0 at start) and the answers (fd 1), moved off the standard
    streams so that nothing printed can corrupt them, and closed in every child."""

    def __init__(self) -> None:
        self.inp = os.dup(0)
        self.out = os.dup(1)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        os.dup2(2, 1)  # stray output goes to the server's log
        self.buffer = b""

    def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message) + "\n").encode()
        while data:
            data = data[os.write(self.out, data):]

    def receive(self) -> dict[str, Any] | None:
        while b"\n" not in self.buffer:
            chunk = os.read(self.inp, 65536)
            if not chunk:
                return None
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        found = json.loads(line.decode())
        return found if isinstance(found, dict) else None

    def close(self) -> None:
        for fd in (self.inp, self.out):
            with contextlib.suppress(OSError):
                os.close(fd)


def _within(path: str, roots: list[str]) -> bool:
    real = os.path.normcase(os.path.realpath(path))
    return any(real == root or real.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def preload() -> str | None:
    """Import pytest and its built-in plugins; why the server must not be used (else None)."""
    import pytest  # noqa: F401
    from _pytest import config

    for name in tuple(getattr(config, "essential_plugins", ())) + tuple(config.default_plugins):
        with contextlib.suppress(Exception):  # an optional one: the child imports it, or not
            importlib.import_module("_pytest." + name)
    start_up = start_up_code()
    if start_up is not None:
        return start_up
    user = os.environ.get(USER_ROOT)
    workspace = os.environ.get(WORKSPACE_ROOT)
    if not user or not workspace:
        return None
    user, workspace = (os.path.normcase(os.path.realpath(root)) for root in (user, workspace))
    for name, module in sorted(sys.modules.items()):
        origin = getattr(module, "__file__", None)
        if isinstance(origin, str) and _workspace_code(origin, user, workspace):
            return (f"importing pytest loaded {name} from the repository's "
                    f"{_in_repository(origin, [workspace, user])}: a forked child would keep "
                    "that copy")
    return _shadowed(workspace)


def _in_repository(path: str, roots: list[str]) -> str:
    """`path` as the repository names it (relative to the first root it lies in, `/`
    separated): the same words from every workspace, so a note is told once."""
    real = os.path.normcase(os.path.realpath(path))
    for root in roots:
        if _within(real, [root]):
            return os.path.relpath(real, root).replace(os.sep, "/")
    return path


def _site_directories() -> list[str]:
    """The directories whose `.pth` files this interpreter's start-up ran."""
    found = list(getattr(site, "getsitepackages", lambda: [])())
    if site.ENABLE_USER_SITE:
        found.append(site.getusersitepackages())
    return [directory for directory in dict.fromkeys(found) if os.path.isdir(directory)]


def _executable_pth_line(directory: str) -> str | None:
    """The `.pth` file in `directory` with the first line that start-up ran as code and is
    not known to do the same in every process (its path: the note never quotes the code)."""
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".pth"):
            continue
        path = os.path.join(directory, name)
        try:
            with open(path, "rb") as handle:
                lines = handle.read().decode("utf-8", "replace").splitlines()
        except OSError:
            continue
        for line in lines:
            if line.startswith(("import ", "import\t")) and (not any(
                    known.fullmatch(line.rstrip()) for known in KNOWN_START_UP)
                    or any(name in line and name in os.environ for name in COVERAGE_START)):
                return path
    return None


def start_up_code() -> str | None:
    """Why this interpreter's start-up made state a forked child would not make afresh: a
    `.pth` line that runs code other than the known ones, a `sitecustomize` that the start-up
    hook chained to, a `usercustomize` (None: none). A variable set in the environment is the
    harness's to see: `serve` reports the environment the server has when it is ready."""
    for directory in _site_directories():
        line = _executable_pth_line(directory)
        if line is not None:
            return (f"the interpreter's start-up code would not run again in a forked child "
                    f"({line} runs code as Python starts); {_NEW_INTERPRETER}")
    boot = os.path.normcase(os.path.dirname(os.path.abspath(__file__)))
    rest = [entry for entry in sys.path if isinstance(entry, str)
            and os.path.normcase(os.path.abspath(entry or os.curdir)) != boot]
    for name in ("sitecustomize", "usercustomize"):
        if name == "usercustomize" and not site.ENABLE_USER_SITE:
            continue
        spec = importlib.machinery.PathFinder.find_spec(name, rest)
        if spec is not None:
            return (f"the interpreter's start-up code would not run again in a forked child "
                    f"({spec.origin}, a {name}, runs as Python starts); {_NEW_INTERPRETER}")
    return None


def _workspace_code(origin: str, user: str, workspace: str) -> bool:
    """A file of the checkout, or the user's copy of one (not an untracked venv's)."""
    real = os.path.normcase(os.path.realpath(origin))
    if _within(real, [workspace]):
        return True
    if not _within(real, [user]):
        return False
    return os.path.exists(os.path.join(workspace, os.path.relpath(real, user)))


def _shadowed(workspace: str) -> str | None:
    """A module the server holds that a run would import from the workspace instead: one the
    import system finds in the run's directory (`-m` puts it first on sys.path) or in a path
    entry inside the checkout, by its own rules: a module file or a regular package wins
    there; a directory without `__init__` is only a namespace-package portion, which never
    takes the place of a module found on a later entry."""
    places = [workspace] + [entry for entry in sys.path
                            if isinstance(entry, str) and entry and _within(entry, [workspace])]
    names = sorted({name.split(".", 1)[0] for name in sys.modules} - AT_START)
    for place in places:
        for name in names:
            try:
                spec = importlib.machinery.PathFinder.find_spec(name, [place])
            except (ImportError, ValueError, OSError):
                spec = None
            if spec is not None and spec.has_location and isinstance(spec.origin, str):
                return (f"the workspace's {_in_repository(spec.origin, [workspace])} would "
                        f"shadow {name}, which the server imported from elsewhere")
    return None


def _path(request: dict[str, Any], server_cwd_entry: str | None, boot: str) -> list[str]:
    """The child's sys.path: the server's, with `-m`'s first entry for the run's directory
    (as `os.getcwd()` gives it, links resolved) and the run's start-up directory for the
    server's."""
    entries = list(sys.path)
    if server_cwd_entry is not None and entries and entries[0] == server_cwd_entry:
        entries[0] = os.getcwd() if server_cwd_entry else server_cwd_entry
    pythonpath = request["env"].get("PYTHONPATH", "").split(os.pathsep)
    run_boot = pythonpath[0] if pythonpath and pythonpath[0] else boot
    return [run_boot if entry == boot else entry for entry in entries]


def _become(request: dict[str, Any], server_cwd_entry: str | None, boot: str) -> None:
    """Take the run's directory, environment, temp directory, path and import log."""
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    tempfile.tempdir = None  # the run's TMPDIR, not the server's
    sys.path[:] = _path(request, server_cwd_entry, boot)
    sys.path_importer_cache.clear()
    importlib.invalidate_caches()
    reopen = getattr(sys.modules.get(STARTUP), "reopen", None)
    if reopen is not None:
        reopen(os.environ.get(IMPORTS))


def _own_session(channel: Channel, started: int, log_path: str, fds: tuple[int, ...]) -> None:
    """In a forked child: leave the server's channel, lead a session of its own (the server
    names our pid only once it exists), and write `fds` (stdout, stderr) to the run's log."""
    channel.close()
    os.setsid()
    os.close(started)
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    for fd in fds:
        os.dup2(log, fd)
    os.close(log)


def child(request: dict[str, Any], channel: Channel, server_cwd_entry: str | None,
          boot: str, started: int) -> None:
    """Become the run; never returns: pytest runs as `python -m pytest` runs it (`runpy`,
    `__main__` and `sys.argv[0]` included) and its SystemExit, or any exception, leaves
    through the interpreter's own exit (non-daemon threads joined, atexit, finalisation), as
    a fresh process's does. The server's signal dispositions are a fresh process's: untouched."""
    _own_session(channel, started, request["log"], (1, 2))
    _become(request, server_cwd_entry, boot)
    sys.argv = ["-m", *request["args"]]  # runpy puts pytest's __main__.py first, as -m does
    runpy.run_module("pytest", run_name="__main__", alter_sys=True)
    raise SystemExit(0)  # pytest's __main__ always exits; a fresh process would end here too


def _returncode(status: int) -> int:
    """A wait status as `Popen.returncode` gives it: negative for the signal that killed."""
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def serve() -> None:
    """Preload, say whether the server can be used, then serve requests until stdin closes."""
    channel = Channel()
    safe_path = bool(getattr(sys.flags, "safe_path", False))
    server_cwd_entry = None if safe_path or not sys.path else sys.path[0]
    boot = os.path.dirname(os.path.abspath(__file__))
    try:
        problem = preload()
    except Exception as error:
        problem = f"importing pytest failed: {error!r}"
    # the environment start-up and the preload left, for the harness to compare with the one
    # it gave: a child is given the run's, so any change made here would be lost in it
    # and the processor time its start took: what a run in a new interpreter spends before
    # pytest reads its options, and a forked child does not
    channel.send({"ready": problem is None, "problem": problem, "environ": dict(os.environ),
                  "start_s": time.process_time()})
    if problem is not None:
        return
    while True:
        request = channel.receive()
        if request is None:
            return
        _fork(channel, lambda told, request=request: child(
            request, channel, server_cwd_entry, boot, told))


def _fork(channel: Channel, become: Any) -> None:
    """Fork a child that `become`s the run (never returning); answer its pid once the child
    leads its own session, then its end."""
    sys.stdout.flush()
    sys.stderr.flush()
    started, told = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(started)
        become(told)
    os.close(told)
    os.read(started, 1)  # end of file once the child leads its own session (or died)
    os.close(started)
    channel.send({"pid": pid})
    _, status = os.waitpid(pid, 0)
    channel.send({"status": _returncode(status)})


if __name__ == "__main__":
    serve()
