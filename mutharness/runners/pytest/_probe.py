"""pytest plugin loaded into each child: drops the options the project config names from the
project's addopts, switches pytest-cov off, records every test's outcome and every
collector's (the report mutharness reads: pytest-json-report's words and shape, from the same
hooks, so the tests' environment needs nothing but pytest), the session's end, its modules,
its config, the tests a failing subtest belongs to (the outcome word of such a test is its
last report's, a passing subtest's), and whether pytest-xdist distributed the tests.

Asked (MUTHARNESS_LINES: suggest's baseline, no other run), it also records the lines each
process that loads it executes in the files named (`_LineRecord`), from the moment it is
imported (`-p`, before any conftest or entry-point plugin): `sys.monitoring`'s LINE events on
Python 3.12 and later, only on the code objects of those files; `sys.settrace` before, its
per-frame filter tracing only their frames. Python processes the tests start are not followed:
the harness tells them by the import log.

It runs in the tests' interpreter (Python 3.8 syntax, the standard library and pytest).
"""

from __future__ import annotations

import copy
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

DROP_ADDOPTS = "MUTHARNESS_DROP_ADDOPTS"  # a JSON list of option names (pytest-drop-addopts)
REPORT_OUT = "MUTHARNESS_REPORT_OUT"  # where the outcomes are written at the session's end
LINES = "MUTHARNESS_LINES"  # a JSON object: "files" (absolute paths) whose lines to record,
# and "out", the directory each process writes its line record in
TOOL_IDS = (3, 4, 1, 2, 0, 5)  # sys.monitoring's: the two no tool claims first
TOOL_NAME = "mutharness line record"


class _LineRecord:
    """The lines of the named files this process executes, and their functions that began to
    run, each written once, as first seen, to a file of the process's own in the directory
    asked (a forked child opens its own; nothing waits for the session's end, so a process
    that ends with os._exit loses nothing). Its lines: `start` and how it records, `early`
    and a file imported before the record began (its module's own lines ran unseen), `line`
    (a file's index and a line number), `call` (an index, the function's first line and its
    name), `lost` and why lines may have gone unseen, `end` at the session's end."""

    def __init__(self, files: list[str], out: str) -> None:
        self.out = out
        self.files: dict[str, int] = {}
        for index, path in enumerate(files):
            for form in (path, os.path.abspath(path), os.path.realpath(path)):
                self.files[os.path.normcase(form)] = index
        self.known: dict[str, int] = {}  # a code object's file name -> index, -1: not asked
        self.seen: set[tuple[Any, ...]] = set()
        self.pid = -1
        self.fd = -1
        self.how = ""
        # at the end: why lines may have gone unseen ("": none)
        self.check: Callable[[], str] = lambda: ""

    def index(self, filename: str) -> int:
        found = self.known.get(filename)
        if found is None:
            try:
                key = os.path.normcase(os.path.abspath(filename))
                found = self.files.get(key)
                if found is None:
                    found = self.files.get(os.path.normcase(os.path.realpath(filename)), -1)
            except (TypeError, ValueError, OSError):
                found = -1
            self.known[filename] = found
        return found

    def write(self, text: str) -> None:
        try:
            if self.pid != os.getpid():  # the first line of this process (a forked child's)
                self.pid = os.getpid()
                name = os.path.join(self.out, f"{self.pid}-{os.urandom(4).hex()}.lines")
                flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_BINARY", 0)
                self.fd = os.open(name, flags, 0o600)
                os.write(self.fd, f"start\t{self.how}\n".encode())
            os.write(self.fd, text.encode("utf-8", "backslashreplace"))
        except (OSError, ValueError) as error:
            self.how = f"{self.how} (a write failed: {error!r})"
            self.pid = -1  # the next write tries a new file, which says so first

    def ran(self, index: int, line: int) -> None:
        key = (index, line)
        if index >= 0 and key not in self.seen:
            self.seen.add(key)
            self.write(f"line\t{index}\t{line}\n")

    def called(self, index: int, code: Any) -> None:
        key = (index, code.co_firstlineno, code.co_name)
        if code.co_name != "<module>" and key not in self.seen:
            self.seen.add(key)
            self.write(f"call\t{index}\t{code.co_firstlineno}\t{code.co_name}\n")

    def begin(self) -> None:
        """Record from now on; what this process imported of the files before, said."""
        if sys.version_info >= (3, 12):
            self._monitor()
        else:
            self._trace()
        self.write("")  # the process's file, and how it records, even if no line ever runs
        for module in list(sys.modules.values()):
            index = self.index(getattr(module, "__file__", None) or "")
            if index >= 0:
                self.write(f"early\t{index}\n")

    def _monitor(self) -> None:
        """LINE events on the asked files' code objects alone: each code object's start is
        seen once (PY_START, then disabled there), and those of the asked files get LINE
        events, each line's disabled once seen."""
        monitoring = sys.monitoring  # type: ignore[attr-defined]
        for tool in TOOL_IDS:
            try:
                monitoring.use_tool_id(tool, TOOL_NAME)
                break
            except ValueError:
                continue
        else:
            raise RuntimeError("every sys.monitoring tool id is in use")
        events = monitoring.events

        def started(code: Any, offset: int) -> Any:
            index = self.index(code.co_filename)
            if index >= 0:
                self.called(index, code)
                monitoring.set_local_events(tool, code, events.LINE)
            return monitoring.DISABLE

        def line(code: Any, number: int) -> Any:
            self.ran(self.index(code.co_filename), number)
            return monitoring.DISABLE

        monitoring.register_callback(tool, events.PY_START, started)
        monitoring.register_callback(tool, events.LINE, line)
        monitoring.set_events(tool, events.PY_START)
        self.how = f"sys.monitoring {tool}"
        self.check = lambda: ("" if monitoring.get_tool(tool) == TOOL_NAME
                              else "its sys.monitoring tool id was freed during the run")

    def _trace(self) -> None:
        """sys.settrace (and threading.settrace, for threads started later): a frame of
        another file gets no local tracer, so its lines cost nothing."""
        import threading

        def local(index: int) -> Any:
            def trace(frame: Any, event: str, arg: Any) -> Any:
                if event == "line":
                    self.ran(index, frame.f_lineno)
                return trace
            return trace

        tracers: dict[int, Any] = {}

        def trace(frame: Any, event: str, arg: Any) -> Any:
            code = frame.f_code
            index = self.index(code.co_filename)
            if index < 0:
                return None
            self.called(index, code)
            found = tracers.get(index)
            if found is None:
                found = tracers[index] = local(index)
            return found

        sys.settrace(trace)
        threading.settrace(trace)
        self.how = "sys.settrace"
        self.check = lambda: ("" if sys.gettrace() is trace else
                              "a test replaced its tracer (sys.settrace)")

    def end(self) -> None:
        """At the session's end: whether lines may have gone unseen, then `end`."""
        try:
            lost = self.check()
        except Exception as error:
            lost = f"its check failed: {error!r}"
        if lost:
            self.write(f"lost\t{lost}\n")
        self.write("end\n")


def _line_record() -> _LineRecord | None:
    """The line record, begun, when the run asks for one (never raises: a record that
    could not begin says why in a file of its own, which the harness reads as one that
    cannot speak)."""
    asked = os.environ.get(LINES)
    if not asked:
        return None
    record: _LineRecord | None = None
    try:
        wanted = json.loads(asked)
        record = _LineRecord([str(path) for path in wanted["files"]], str(wanted["out"]))
        record.begin()
    except Exception as error:
        if record is not None:
            record.write(f"lost\tthe line record did not begin: {error!r}\n")
        else:
            sys.stderr.write(f"mutharness line record did not begin: {error!r}\n")
        return None
    return record


LINE_RECORD = _line_record()  # bound once, as the plugin is imported


class _Outcomes:
    """Every test's outcome and stages, every collector's outcome, as pytest-json-report 1.5
    records them from the same hooks: a test's word is the category pytest's own
    `pytest_report_teststatus` gives its last report that was neither passed nor silent
    (else "passed"); a stage keeps its duration, outcome and, when it skipped, its long
    representation (the reason); a collector its outcome and long representation."""

    def __init__(self, config: Any) -> None:
        self.config = config
        self.tests: dict[str, dict[str, Any]] = {}
        self.collectors: list[dict[str, Any]] = []

    def pytest_collectreport(self, report: Any) -> None:
        collector: dict[str, Any] = {"nodeid": report.nodeid, "outcome": report.outcome}
        if report.longrepr:
            collector["longrepr"] = str(report.longrepr)
        self.collectors.append(collector)

    def pytest_runtest_logreport(self, report: Any) -> None:
        test = self.tests.setdefault(report.nodeid, {"nodeid": report.nodeid,
                                                     "outcome": "passed"})
        word = self.config.hook.pytest_report_teststatus(report=report, config=self.config)[0]
        if word not in ("passed", ""):
            test["outcome"] = word
        stage: dict[str, Any] = {"duration": report.duration, "outcome": report.outcome}
        if report.skipped and report.longreprtext:  # a skip's reason; a failure's text is
            stage["longrepr"] = report.longreprtext  # never read, so never formatted here
        test[report.when] = stage

    def document(self, exitstatus: int) -> dict[str, Any]:
        return {"created": time.time(), "exitcode": exitstatus,
                "collectors": self.collectors, "tests": list(self.tests.values())}


class _SubtestFailures:
    """The node ids whose subtests (pytest 9's, unittest's subTest) reported a failure."""

    def __init__(self) -> None:
        self.nodeids: set[str] = set()

    def pytest_runtest_logreport(self, report: Any) -> None:
        if "subtest" in type(report).__name__.lower() and report.failed:
            self.nodeids.add(report.nodeid)


def _takes_value(parser: Any, name: str) -> bool:
    """Whether the option `name` takes a value, as pytest's own parser (with every plugin's
    options registered) says: given alone, it complains of a missing argument."""
    try:
        parser.parse_known_args([name])
    except (pytest.UsageError, SystemExit):
        return True
    return False


def _dropped(addopts: list[str], names: list[str], parser: Any) -> tuple[list[str], list[str]]:
    """`addopts` without the `names` (each with its value, however written), and the names
    none of them carried. The names are options alone, never `-p` (options.resolve checks)."""
    takes = {name: _takes_value(parser, name) for name in names}
    kept: list[str] = []
    found = set()
    index = 0
    while index < len(addopts):
        token = addopts[index]
        hit = next((name for name in names if token == name or (
            token.startswith(name + "=") if name.startswith("--")
            else takes[name] and token.startswith(name)  # `-kexpr`: the value attached
        )), None)
        if hit is None:
            kept.append(token)
            index += 1
            continue
        found.add(hit)
        index += 2 if token == hit and takes[hit] else 1
    return kept, [name for name in names if name not in found]


@pytest.hookimpl(hookwrapper=True)
def pytest_load_initial_conftests(
    early_config: Any, parser: Any, args: list[str]
) -> Iterator[None]:
    """Before any plugin reads the early options (pytest-cov does, here): remove the named
    options from the addopts pytest put at the head of `args`, and parse the early options
    again (a pytest-xdist worker gets its options without the addopts: nothing to remove);
    then switch pytest-cov off, whatever the options ask of it."""
    names = json.loads(os.environ.get(DROP_ADDOPTS) or "[]")
    if names:
        addopts = [str(token) for token in early_config.getini("addopts")]
        if not addopts or args[:len(addopts)] == addopts:
            kept, missing = _dropped(addopts, names, parser)
            if missing:
                raise pytest.UsageError(
                    f"pytest-drop-addopts names {', '.join(missing)}, which the project's "
                    f"addopts ({' '.join(addopts) or 'none'}) do not carry: remove it from "
                    "mutharness.toml"
                )
            args[:len(addopts)] = kept
            early_config.known_args_namespace = parser.parse_known_args(
                args, namespace=copy.copy(early_config.option)
            )
    if hasattr(early_config.known_args_namespace, "no_cov"):
        # pytest-cov: measured coverage serves no verdict; off as `--no-cov` turns it off
        early_config.known_args_namespace.no_cov = True
    yield


def pytest_configure(config: Any) -> None:
    """Register the outcome and subtest recorders (one per session: no state outlives it)."""
    config.pluginmanager.register(_SubtestFailures(), "_mutharness_subtests")
    config.pluginmanager.register(_Outcomes(config), "_mutharness_outcomes")


def _write(path: str, document: Any) -> None:
    with open(path + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(document, handle)
    os.replace(path + ".tmp", path)


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    """Write the outcomes, then the module -> file map, sys.path and the config file where
    the harness asked (each atomically): the second's presence is the proof that the session
    reached its end."""
    if LINE_RECORD is not None:  # a pytest-xdist worker's too: each process records its own
        LINE_RECORD.end()
    if hasattr(session.config, "workerinput"):  # a pytest-xdist worker: not the end
        return
    report = os.environ.get(REPORT_OUT)
    outcomes = session.config.pluginmanager.get_plugin("_mutharness_outcomes")
    if report and outcomes is not None:
        _write(report, outcomes.document(session.exitstatus))
    out = os.environ.get("MUTHARNESS_PROBE_OUT")
    if not out:
        return
    modules = {}
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str):
            modules[name] = os.path.abspath(file)
    config = session.config
    inipath = getattr(config, "inipath", None) or getattr(config, "inifile", None)
    document = {
        "pid": os.getpid(),
        "modules": modules,
        "sys_path": [entry for entry in sys.path if isinstance(entry, str)],
        "inipath": str(inipath) if inipath else None,
        "distributed": bool(config.pluginmanager.has_plugin("dsession")),  # xdist's -n
        "subtest_failures": sorted(
            getattr(config.pluginmanager.get_plugin("_mutharness_subtests"), "nodeids", ())
        ),
    }
    _write(out, document)
