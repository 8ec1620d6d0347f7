"""The warm server's collected mode: the spec's tests collected once, each body mutant a forked
child that swaps the mutated functions' code and runs every collected test, in order.

The fork server (`_forkserver`) hands a `collect` request here: the server becomes the run (its
directory, environment and path), traces which code of the mutation targets runs while pytest
configures and collects (the imports, every module and class body, anything they call), and
then serves mutant requests from inside `pytest_runtestloop`. For each, `route` compiles the
file as committed and as mutated and pairs their code objects by position in the tree:

* a code object whose own instructions, names or constants changed and that ran during the
  collection (module level, a class body, a decorator, a default, a function called at import)
  would have given a fresh process other state: the mutant runs fresh;
* so does a change the pairing cannot place (a function added, removed or renamed, a closure
  with other free variables, a changed docstring, a file that does not compile);
* otherwise the child replaces the code of every live function whose code changed (moved lines
  included) with the mutated file's, and runs the tests as `pytest` would have: a function's
  code decides everything it does when called, and none of it ran before the tests began.

A change the collected session cannot run (any of the above, a changed signature, code that
something other than a function holds, `held`) runs in a child of the server as it was when
pytest had configured and collected nothing (`_forkserver`). The child's run is judged like
any other; a warm run that gives no verdict (a timeout, a crash) is run again in a fresh
process. It runs in the tests' interpreter: Python 3.8 syntax, the standard library and
pytest.
"""

from __future__ import annotations

import _thread
import contextlib
import gc
import os
import stat
import sys
import threading
import types
from collections.abc import Callable
from typing import Any

import pytest

_PLACE = "<mutharness nested code>"


def _key(path: str) -> str:
    return os.path.normcase(os.path.realpath(path))


class Tracer:
    """Every code object of the target files that started running while it was on, in any
    thread: through `sys.monitoring` where the interpreter has it (3.12 on: one `PY_START`
    event per code object, then none, so the tests' code runs at full speed), else through
    `sys.settrace` (one `call` event per frame, no line events) in this thread and in threads
    that `threading` starts meanwhile."""

    def __init__(self, targets: list[str]) -> None:
        self.targets = {_key(path) for path in targets}
        self.files: dict[str, bool] = {}
        self.called: set[types.CodeType] = set()
        self.watch = Watch(targets)
        self.hooked = False
        self.tool: int | None = None  # the sys.monitoring tool id it holds, while it does

    def _target(self, code: types.CodeType) -> bool:
        hit = self.files.get(code.co_filename)
        if hit is None:
            hit = self.files[code.co_filename] = _key(code.co_filename) in self.targets
        return hit

    def __call__(self, frame: Any, event: str, arg: Any) -> None:
        """`sys.settrace`'s function, called for every frame: `_target` inlined."""
        if event == "call":
            code = frame.f_code
            hit = self.files.get(code.co_filename)
            if hit is None:
                hit = self._target(code)
            if hit:
                self.called.add(code)
        return None

    def _started(self, code: types.CodeType, offset: int) -> Any:
        """`sys.monitoring`'s PY_START callback: noted once per code object, never again."""
        if self._target(code):
            self.called.add(code)
        return MONITORING.DISABLE

    def start(self) -> str | None:
        """Trace (and `watch`) from now on; why not (another tracer, a debugger or coverage,
        is on)."""
        if sys.gettrace() is not None:
            return "another tracer (coverage or a debugger) is on: collection cannot be traced"
        tool = None if MONITORING is None else next(
            (tool for tool in TOOL_IDS if MONITORING.get_tool(tool) is None), None)
        if MONITORING is not None and tool is None:
            return ("sys.monitoring has no free tool id (other tools hold "
                    f"{', '.join(map(str, TOOL_IDS))}): collection cannot be traced")
        if not self.hooked:
            sys.addaudithook(self.watch)
            self.hooked = True
        self.watch.on = True
        if tool is not None:
            MONITORING.use_tool_id(tool, TOOL_NAME)
            MONITORING.register_callback(tool, MONITORING.events.PY_START, self._started)
            MONITORING.set_events(tool, MONITORING.events.PY_START)
            self.tool = tool
            return None
        sys.settrace(self)
        threading.settrace(self)
        sys.settrace = self._settrace
        _thread.start_new_thread = self._start_new_thread
        return None

    def _start_new_thread(self, function: Any, *args: Any, **kwargs: Any) -> Any:
        """`_thread.start_new_thread` while tracing (`threading` holds its own reference:
        its threads are traced): a thread started beneath it runs out of the tracer's sight."""
        if self.watch.on and self.watch.problem is None:
            self.watch.problem = (f"{self.watch.phase} started a thread outside threading, "
                                  "whose work no tracer here sees")
        return START_NEW_THREAD(function, *args, **kwargs)

    def _settrace(self, function: Any) -> None:
        """`sys.settrace` while tracing: code that turns the tracer off, even for a moment,
        computes out of its sight."""
        if function is not self and self.watch.on and self.watch.problem is None:
            self.watch.problem = (f"{self.watch.phase} replaced the trace function: what "
                                  "ran meanwhile is unknown")
        SETTRACE(function)

    def release(self) -> None:
        """Tracing off, `sys.settrace` and the watch as they were."""
        self.watch.on = False
        if self.tool is not None:
            tool, self.tool = self.tool, None
            if MONITORING.get_tool(tool) == TOOL_NAME:
                MONITORING.set_events(tool, 0)
                MONITORING.register_callback(tool, MONITORING.events.PY_START, None)
                MONITORING.free_tool_id(tool)
            return
        sys.settrace = SETTRACE
        _thread.start_new_thread = START_NEW_THREAD
        sys.settrace(None)
        threading.settrace(None)  # type: ignore[arg-type,unused-ignore]

    def stop(self) -> str | None:
        """Stop tracing; why what it saw cannot be trusted (another tracer replaced it, or
        the watch saw what no tracer sees)."""
        if self.tool is not None:  # other tools (coverage's sysmon core) monitor beside it
            displaced = (MONITORING.get_tool(self.tool) != TOOL_NAME
                         or MONITORING.get_events(self.tool) != MONITORING.events.PY_START)
        else:
            displaced = sys.gettrace() is not self
        self.release()
        if displaced:
            return ("another tracer (coverage?) replaced mutharness's while the tests were "
                    "collected: what ran at import is unknown")
        return self.watch.problem


MONITORING: Any = getattr(sys, "monitoring", None)  # Python 3.12 on
TOOL_NAME = "mutharness"
TOOL_IDS = (4, 3)  # free ids: 0, 1, 2 and 5 are the debugger's, coverage's, the profiler's...


SETTRACE = sys.settrace  # the interpreter's own, whatever a tracer puts in its place
START_NEW_THREAD = _thread.start_new_thread
SPAWNS = frozenset({"subprocess.Popen", "os.system", "os.posix_spawn", "os.exec", "os.spawn"})
IMPORTERS = ("<frozen importlib", os.path.join("_pytest", "assertion", "rewrite.py"))
HELPERS = tuple(os.sep + name for name in ("pathlib.py", "io.py", "codecs.py", "tokenize.py"))
PATHLIB = os.path.join(os.path.dirname(os.__file__), "pathlib", "")  # a package from 3.13 on


def _helper(filename: str) -> bool:
    """Whether a frame of `filename` is a file helper of the standard library (pathlib's
    `read_bytes`, io's `open`...): a read is asked for by whoever called it."""
    return filename.endswith(HELPERS) or filename.startswith(PATHLIB)


def _pythonic(event: str, args: tuple[Any, ...]) -> str | None:
    """The command a spawn event starts, when it starts a Python interpreter."""
    def text(word: Any) -> str | None:
        return os.fsdecode(word) if isinstance(word, (str, bytes, os.PathLike)) else None

    if event == "os.system":
        words = (text(args[0]) or "").split() if args else []
        programs = words[:1]
    else:
        argv = args[1] if len(args) > 1 and isinstance(args[1], (list, tuple)) else ()
        words = [word for word in map(text, argv) if word is not None]
        programs = [word for word in (text(args[0]) if args else None, *words[:1]) if word]
        words = words or programs[:1]
    if any(os.path.basename(program).startswith("python") or program == sys.executable
           for program in programs):
        return " ".join(words)[:120]
    return None


class Watch:
    """An audit hook for what collecting does that the tracer cannot see: a target file read
    other than by the import system or pytest's assertion rewriting (a value made from its
    bytes is the mutant's in a fresh process, the original's here), a Python interpreter
    started (it runs whatever it imports out of sight; other programs run, and the harness
    also looks for any process that imported the workspace's code in the run's import
    record), a file written outside the workspace, the run's temp and home and the bytecode
    caches, a socket connected (state outside the process that a fresh process would set up
    again before its tests, and the forked children would share), memory mapped writable
    (shared with every forked child). The workspace, temp and
    home are the harness's to compare after collecting. Installed once (audit hooks stay),
    it watches only while `on`, never raises; `phase` names what pytest is doing."""

    def __init__(self, targets: list[str]) -> None:
        self.targets = {_key(path) for path in targets}
        self.names = {os.path.basename(path) for path in self.targets}
        self.on = False
        self.problem: str | None = None
        self.busy = False
        self.phase = "collecting the tests"
        self.threads_seen = MONITORING is not None  # sys.monitoring sees every thread
        self.ours = tuple(_key(root) + os.sep for root in (
            os.getcwd(), os.environ.get("TMPDIR") or "", os.environ.get("HOME") or "",
            os.path.dirname(os.devnull), getattr(sys, "pycache_prefix", None) or "") if root)

    def __call__(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.on or self.problem is not None or self.busy:
            return
        self.busy = True
        try:
            self.problem = self._seen(event, args)
        except Exception:  # an audit hook must never raise
            self.problem = f"{self.phase} did what mutharness cannot follow ({event})"
        finally:
            self.busy = False

    def _seen(self, event: str, args: tuple[Any, ...]) -> str | None:
        if event in SPAWNS:
            command = _pythonic(event, args)
            return None if command is None else (
                f"{self.phase} started a Python interpreter ({command}), whose work "
                "no tracer here sees")
        if event in ("os.fork", "os.forkpty"):
            return f"{self.phase} forked a process, whose work no tracer here sees"
        if event == "_thread.start_new_thread" and not self.threads_seen:
            starter = sys._getframe(2)  # who called _thread: threading's threads are traced
            if not starter.f_code.co_filename.endswith(os.sep + "threading.py"):
                return (f"{self.phase} started a thread outside threading, whose work no "
                        "tracer here sees")
            return None
        if event == "mmap.__new__" and len(args) > 2 and args[2] not in (MMAP_READ, MMAP_COPY):
            return (f"{self.phase} mapped memory that every forked child would share (a fresh "
                    "process maps its own)")
        if event == "socket.connect" and len(args) > 1:
            address = args[1]
            shown = (f"{address[0]}:{address[1]}" if isinstance(address, tuple)
                     and len(address) > 1 else os.fsdecode(address)
                     if isinstance(address, (str, bytes)) else repr(address))
            return (f"{self.phase} connected to {shown[:120]}: what is there would be set up "
                    "again by a fresh process, and shared by every forked child")
        if event != "open" or not args or isinstance(args[0], int) or args[0] is None:
            return None
        path = os.fsdecode(args[0])
        if _writes(args) and not (_key(path) + os.sep).startswith(self.ours) and (
                "__pycache__" not in path and not path.endswith(".pyc")):
            return (f"{self.phase} wrote {path[:200]}, outside the workspace and the run's "
                    "temp and home: a fresh process would write it again before its tests, "
                    "and every forked child would share it")
        if os.path.basename(path) not in self.names or _key(path) not in self.targets:
            return None
        frame: types.FrameType | None = sys._getframe(2)  # past the file helpers: who asked
        while frame is not None and _helper(frame.f_code.co_filename):
            frame = frame.f_back
        caller = frame.f_code.co_filename if frame is not None else ""
        if caller.endswith(IMPORTERS[1]):  # pytest rewriting a module it imports
            return None
        if caller.startswith(IMPORTERS[0]) and frame is not None and frame.f_back is not None \
                and frame.f_back.f_code.co_name == "get_code":  # the loader compiling it
            return None
        return (f"{self.phase} read {os.path.relpath(path)} other than by importing "
                "it: what it made of those bytes would be the mutant's in a fresh process")


MMAP_READ, MMAP_COPY = 1, 3  # mmap.ACCESS_READ and ACCESS_COPY: nothing a child writes is shared
WRITING = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


def _writes(args: tuple[Any, ...]) -> bool:
    """Whether an `open` audit event's file is opened for writing (its mode, or flags)."""
    mode = args[1] if len(args) > 1 else None
    flags = args[2] if len(args) > 2 else None
    return (isinstance(mode, str) and any(letter in mode for letter in "wax+")) or (
        isinstance(flags, int) and bool(flags & WRITING))


def _own(code: types.CodeType) -> types.CodeType:
    """`code` without its position in the file and with its nested code objects as
    placeholders: what it does when it runs, as the interpreter compares code."""
    consts = tuple((_PLACE, index) if isinstance(const, types.CodeType) else const
                   for index, const in enumerate(code.co_consts))
    changes: dict[str, Any] = {"co_consts": consts, "co_firstlineno": 1}
    if sys.version_info >= (3, 10):  # noqa: UP036 - the tests' Python may be 3.8
        changes["co_linetable"] = b""
    else:  # pragma: no cover - Python 3.8 and 3.9
        changes["co_lnotab"] = b""
    return code.replace(**changes)


def _nested(code: types.CodeType) -> list[types.CodeType]:
    return [const for const in code.co_consts if isinstance(const, types.CodeType)]


def _docstring(code: types.CodeType) -> Any:
    first = code.co_consts[0] if code.co_consts else None
    return first if isinstance(first, str) else None


SHAPE = 0x04 | 0x08 | 0x20 | 0x80 | 0x100 | 0x200  # varargs, varkw, generator, coroutines


def _signature(code: types.CodeType) -> tuple[Any, ...]:
    """What introspection sees of a function's parameters (and whether it is a generator or
    coroutine function): pytest reads fixtures' and tests' parameters as it collects."""
    count = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 0x04) + bool(
        code.co_flags & 0x08)
    return (code.co_argcount, getattr(code, "co_posonlyargcount", 0), code.co_kwonlyargcount,
            code.co_varnames[:count], code.co_flags & SHAPE)


def _pair(old: types.CodeType, new: types.CodeType, called: set[types.CodeType],
          held: set[types.CodeType], swaps: dict[types.CodeType, types.CodeType],
          top: bool) -> str | None:
    """Pair `old` and `new` and everything nested in them into `swaps`; why not."""
    where = getattr(old, "co_qualname", old.co_name)
    if old.co_name != new.co_name or len(_nested(old)) != len(_nested(new)):
        return f"the change adds, removes or renames code in {where}"
    if old == new:
        return None
    changed = _own(old) != _own(new)
    if changed and (top or old in called):
        what = "module level" if top else where
        return f"the change is in code that ran while the tests were collected ({what})"
    if not top:
        if old.co_freevars != new.co_freevars:
            return f"the change alters the closure of {where}"
        if changed and _docstring(old) != _docstring(new):
            return f"the change is in the docstring of {where}"
        if _signature(old) != _signature(new):  # pytest read it as it collected (fixtures)
            return f"the change alters the signature of {where}"
        if old in held:
            return (f"the change is in code something other than a function holds ({where}: "
                    "a generator made while collecting, a code object kept in a value)")
        swaps[old] = new
    for inner_old, inner_new in zip(_nested(old), _nested(new)):  # noqa: B905 - 3.8
        problem = _pair(inner_old, inner_new, called, held, swaps, False)
        if problem is not None:
            return problem
    return None


def route(path: str, original: bytes, mutated: bytes, called: set[types.CodeType],
          held: set[types.CodeType]) -> dict[types.CodeType, types.CodeType] | str:
    """The code swaps that make the collected session run `mutated` as a fresh one would
    (`called`: the code of `path` that ran while collecting; `held`: its code that something
    other than a function holds, see `held`); else why it needs a fresh run."""
    try:
        old = compile(original, path, "exec", dont_inherit=True)
        new = compile(mutated, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        return f"the mutated file does not compile ({error.__class__.__name__})"
    swaps: dict[types.CodeType, types.CodeType] = {}
    problem = _pair(old, new, called, held, swaps, True)
    return problem if problem is not None else swaps


def functions(targets: list[str]) -> dict[str, list[types.FunctionType]]:
    """Every live function of each target file (by `_key`), found once after collecting:
    a forked child has made none since."""
    keys = {_key(path) for path in targets}
    files: dict[str, str | None] = {}
    found: dict[str, list[types.FunctionType]] = {key: [] for key in keys}
    for candidate in gc.get_objects():
        if not isinstance(candidate, types.FunctionType):
            continue
        name = candidate.__code__.co_filename
        if name not in files:
            key = _key(name)
            files[name] = key if key in keys else None
        hit = files[name]
        if hit is not None:
            found[hit].append(candidate)
    return found


def _references(codes: dict[int, types.CodeType]) -> list[int]:
    """Each code object's reference count, as seen from here (the same overhead for each)."""
    return [sys.getrefcount(code) for code in codes.values()]


def _alive(live: dict[str, list[types.FunctionType]], called: set[types.CodeType]
           ) -> tuple[dict[int, types.CodeType], dict[int, int]]:
    """Every live code object of the target files (the live functions', the code that ran
    while collecting, and all code nested in them), each with the references to it that
    mutharness knows of: the functions that run it, the constants of the live code that
    contains it, the tracer's record."""
    alive: dict[int, types.CodeType] = {}
    known: dict[int, int] = {}
    for functions in live.values():
        for function in functions:
            alive[id(function.__code__)] = function.__code__
            known[id(function.__code__)] = known.get(id(function.__code__), 0) + 1
    for code in called:
        alive[id(code)] = code
        known[id(code)] = known.get(id(code), 0) + 1
    pending = list(alive.values())
    while pending:
        for const in _nested(pending.pop()):
            known[id(const)] = known.get(id(const), 0) + 1
            if id(const) not in alive:
                alive[id(const)] = const
                pending.append(const)
    return alive, known


def _tree(code: types.CodeType) -> list[types.CodeType]:
    """`code` and every code object nested in it."""
    found = [code]
    for inner in _nested(code):
        found.extend(_tree(inner))
    return found


def _body(code: types.CodeType) -> tuple[Any, ...]:
    """What a copy of `code` made under other names (`code.replace(co_name=...)`, another
    file) keeps: its instructions, names and plain constants."""
    return (code.co_code, code.co_names, code.co_varnames,
            tuple(const for const in code.co_consts if not isinstance(const, types.CodeType)))


def held(live: dict[str, list[types.FunctionType]], called: set[types.CodeType],
         originals: dict[str, tuple[bytes, str]]) -> set[types.CodeType]:
    """The code of the target files that something other than a function and the code that
    contains it holds: a generator made while collecting and not finished, a code object kept
    in a value. Swapping functions' code cannot reach it, and code objects are not tracked by
    the garbage collector, so they are found by counting: every reference to a code object is
    in its reference count, and any beyond the ones mutharness knows of is such a holder.
    Also held: the file's code (`originals`: its bytes as collected) that a copy made under
    other names repeats (a copy with another name or file, live or run while collecting):
    a fresh process would have copied the mutated code."""
    alive, known = _alive(live, called)
    # the references `_references` itself adds, measured on a code object held nowhere else
    own = _references({0: compile("0", "<mutharness>", "eval")})[0]
    counts = _references(alive)
    found = {code for code, count in zip(alive.values(), counts)  # noqa: B905 - 3.8
             if count - own != known[id(code)]}
    compiled: list[types.CodeType] = []
    for source, path in originals.values():
        try:
            compiled.extend(_tree(compile(source, path, "exec", dont_inherit=True)))
        except (SyntaxError, ValueError):
            continue
    same = set(compiled)
    bodies = {code.co_code for code in compiled}
    copies = {_body(code) for code in alive.values() if code not in same}
    paths = {path for _, path in originals.values()}
    for candidate in gc.get_objects():
        if isinstance(candidate, types.FunctionType):
            code = candidate.__code__
            if code.co_filename not in paths and code.co_code in bodies:
                copies.add(_body(code))
    found.update(code for code in compiled if _body(code) in copies)
    return found


def swap(live: list[types.FunctionType], swaps: dict[types.CodeType, types.CodeType]) -> int:
    """Give every function of `live` whose code is an old one of `swaps` the new code; how
    many were swapped."""
    done = 0
    for function in live:
        new = swaps.get(function.__code__)
        if new is not None:
            function.__code__ = new
            done += 1
    return done


def _restart_clock(config: Any) -> None:
    """The terminal summary's "in N s" counts from now (the run), not from the collection."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    started = getattr(reporter, "_session_start", None)  # pytest 8.4+: a timing.Instant
    if started is not None:
        reporter._session_start = type(started)()
    elif hasattr(reporter, "_sessionstarttime"):  # older pytest: a float from timing.time()
        from _pytest import timing

        reporter._sessionstarttime = timing.time()


def run_tests(session: Any, first_failure: bool) -> int:
    """Run every collected test in order as pytest's own loop does; the session's exit
    status (pytest's `ExitCode` values). The session then finishes as pytest finishes one
    (fixtures torn down, the summary, the report); unconfiguring is left out."""
    config = session.config
    config.option.maxfail = 1 if first_failure else 0
    _restart_clock(config)
    items = session.items
    status = 0
    try:
        for index, item in enumerate(items):
            nextitem = items[index + 1] if index + 1 < len(items) else None
            item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
            if session.shouldfail or session.shouldstop:
                break
        if session.shouldstop and not session.shouldfail:
            status = 2
        elif session.testsfailed:
            status = 1
        elif not items:
            status = 5
    except KeyboardInterrupt:
        status = 2
    session.exitstatus = status
    config.hook.pytest_sessionfinish(session=session, exitstatus=status)
    return status  # the report is written: the child leaves through os._exit


Files = dict[int, tuple[int, int, int]]  # an open descriptor: its type and mode, device, inode


def open_files() -> Files:
    """This process's open descriptors, each with what it is (`fstat`)."""
    listed = "/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd"
    found: Files = {}
    for name in os.listdir(listed):
        try:
            fd = int(name)
            status = os.fstat(fd)  # the listing's own descriptor is closed by now
        except (ValueError, OSError):
            continue
        found[fd] = (status.st_mode, status.st_dev, status.st_ino)
    return found


def _captures(config: Any, names: tuple[str, ...]) -> list[Any]:
    """pytest's global capture of the streams `names` (`in_`, `out`, `err`) where it has one."""
    capman = config.pluginmanager.getplugin("capturemanager")
    capturing = getattr(capman, "_global_capturing", None)
    return [found for found in (getattr(capturing, name, None) for name in names)
            if found is not None]


def _saved(captures: list[Any]) -> list[int]:
    return [saved for saved in (getattr(capture, "targetfd_save", None) for capture in captures)
            if isinstance(saved, int)]


def saved_streams(config: Any) -> tuple[int, ...]:
    """The descriptors pytest's global capture puts back on stdout and stderr between tests
    (its copies of the originals): a child's log must replace them too."""
    return tuple(_saved(_captures(config, ("out", "err"))))


def capture_files(config: Any) -> set[int]:
    """The descriptors pytest's global capture holds (its temporary files, its copies of
    the originals): every run of pytest has them, and empties them between tests."""
    captures = _captures(config, ("in_", "out", "err"))
    found = set(_saved(captures))
    for capture in captures:
        with_fileno = getattr(getattr(capture, "tmpfile", None), "fileno", None)
        if with_fileno is not None:
            with contextlib.suppress(OSError, ValueError):
                found.add(int(with_fileno()))
    return found


def _named(fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")[:200]
    except OSError:
        return f"descriptor {fd}"


def files_problem(before: Files, ours: set[int]) -> str | None:
    """Why a file opened since `before` and still open makes forked children no fresh
    processes (None: there is none): each fresh process opens its own, and every child
    forked from here would share this one, its read and write position included. A
    character device (/dev/null) has no position to share; `ours` (pytest's capture) and
    another descriptor of a file open `before` (a duplicate of the server's own) are known."""
    known = {(device, inode) for _, device, inode in before.values()}
    for fd, (mode, device, inode) in sorted(open_files().items()):
        if before.get(fd) == (mode, device, inode) or fd in ours or stat.S_ISCHR(mode) or (
                (device, inode) in known):
            continue
        return (f"a file open ({_named(fd)}) whose position every forked child would share; "
                "a fresh process opens its own")
    return None


def collection_problem(session: Any, tracer_problem: str | None,
                       before: Files | None = None) -> str | None:
    """Why the collected session cannot serve mutants (None: it can); `before`: the files
    open when the collection began."""
    if tracer_problem is not None:
        return tracer_problem
    if session.testsfailed:
        return "the tests did not all collect"
    if session.config.pluginmanager.has_plugin("dsession"):
        return "pytest-xdist runs the tests in other processes"
    threads = threads_problem()
    if threads is not None:
        return f"the collection started {threads}"
    children = children_problem("the collection")
    if children is not None:
        return children
    files = None if before is None else files_problem(before, capture_files(session.config))
    return None if files is None else f"the collection left {files}"


def threads_problem() -> str | None:
    """Why this process's threads would be lost in a forked child (None: it has no other)."""
    extra = [thread.name for thread in threading.enumerate()
             if thread is not threading.main_thread()]
    if extra:
        return f"threads a forked child would not have ({', '.join(extra[:3])})"
    if os.path.isdir("/proc/self/task") and len(os.listdir("/proc/self/task")) > 1:
        return "threads (outside Python) a forked child would not have"
    return None


def _child_pids() -> list[int] | None:
    """The processes this one started that are still there (zombies too), by Linux's
    /proc; None where it cannot tell."""
    found: list[int] = []
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children", encoding="ascii") as listed:
                found.extend(int(pid) for pid in listed.read().split())
    except (OSError, ValueError):
        return None
    return found


def _running(pid: int) -> str | None:
    """The command name of process `pid` if it still runs (None: a zombie, or gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    name, _, rest = text.partition("(")[2].rpartition(")")
    return None if rest.split()[:1] == ["Z"] else name


def children_problem(phase: str) -> str | None:
    """Why a process this one started in `phase` and left running makes forked children no
    fresh processes (None: it left none): each fresh process starts its own, and every child
    forked from here would share this one (its state, and its end when one child ends it)."""
    shared = "that every forked child would share; a fresh process starts its own"
    pids = _child_pids()
    if pids is None:  # no /proc: any child not waited for counts
        try:
            os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return None
        except (AttributeError, OSError):
            return (f"{phase} may have left a process running {shared} (this platform "
                    "cannot list a process's children)")
        return f"{phase} left a process running {shared}"
    for pid in pids:
        name = _running(pid)
        if name is not None:
            return f"{phase} left a process running (pid {pid}: {name[:60]}) {shared}"
    return None


class Collected:
    """The plugin that turns the server's session into the mutants' server: configured, it
    hands the session to `checkpoint` (which returns in each process that goes on collecting:
    the collector, and each fresh child of the configured state, `fresh` set there)."""

    def __init__(self, tracer: Tracer, targets: list[str],
                 serve: Callable[[Any, str | None, dict[str, tuple[bytes, str]]], None],
                 checkpoint: Callable[[Any], None]) -> None:
        self.tracer = tracer
        self.targets = targets
        self.serve = serve
        self.checkpoint = checkpoint
        self.fresh = False  # a child of the configured session: it collects and runs as pytest
        self.files: Files | None = None  # open as the collector began

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self, session: Any) -> None:
        """pytest configured, nothing collected yet: the checkpoint."""
        self.checkpoint(session)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: Any) -> bool | None:
        """Serve the mutants instead of running the tests (each child runs them), then leave
        without ending a session of its own (no plugin's session-end hook runs here: each run
        ends its own); in a fresh child of the configured session, pytest's own loop runs
        them."""
        if self.fresh:
            return None
        problem = self.tracer.stop()
        problem = collection_problem(session, problem, self.files)
        originals: dict[str, tuple[bytes, str]] = {}
        for path in self.targets:
            try:
                with open(path, "rb") as handle:
                    originals[_key(path)] = (handle.read(), path)
            except OSError:
                continue
        self.serve(session, problem, originals)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)

