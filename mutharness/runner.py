"""Test runners: the Runner interface and the pytest runner that records a run's facts."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import stat
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

from mutharness import process
from mutharness.environment import is_below
from mutharness.errors import EnvironmentProblem
from mutharness.imports import ImportRecord, read_record

PROBE_MODULE = "_mutharness_probe"
BOOT_MARKER = "mutharness-boot"  # names a run's start-up directory (stripped from a nested run)
USER_ROOT = "MUTHARNESS_USER_ROOT"  # these three: see _startup
WORKSPACE_ROOT = "MUTHARNESS_WORKSPACE_ROOT"
IMPORTS = "MUTHARNESS_IMPORTS"
SCRUBBED = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE")
PROBE_TIMEOUT_S = 120.0
LOG_TAIL_LINES = 12
LOG_TAIL_BYTES = 16 * 1024
MIN_PYTEST = "7.4"  # the oldest pytest mutharness is tested with (tests/harness/test_pytest_floor)
_ERROR_LINE = re.compile(r"^(E  |ERROR|FAIL|INTERNALERROR|[A-Za-z_.]*(Error|Exception)\b)")
_SKIP_REASON = re.compile(r"^Skipped: ?")


class ReportState(Enum):
    """Whether the run left a report that can be believed."""

    OK = "ok"
    MISSING = "missing"
    UNREADABLE = "unreadable"
    STALE = "stale"
    MISMATCH = "exit-status-mismatch"
    UNFINISHED = "session-unfinished"  # a report, but the session never reached its end


class Outcome(StrEnum):
    """How one test ended in one run (pytest's words, plus two of ours)."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"
    XFAILED = "xfailed"
    XPASSED = "xpassed"
    NO_CALL = "passed-without-call"  # "passed" with no call phase: pytest.exit() ended it
    UNKNOWN = "unknown"  # an outcome word this mutharness does not know (a plugin's)

    @property
    def is_pass(self) -> bool:
        """A test that ran its body and passed."""
        return self is Outcome.PASSED

    @property
    def is_failure(self) -> bool:
        """A test that failed or errored (in setup, call or teardown)."""
        return self in (Outcome.FAILED, Outcome.ERROR)

    @property
    def is_inert(self) -> bool:
        """Neither a pass nor a failure: it proves nothing either way (skip, xfail, xpass)."""
        return self in (Outcome.SKIPPED, Outcome.XFAILED, Outcome.XPASSED)


@dataclass(frozen=True)
class TestOutcome:
    """One test's outcome in one run."""

    __test__ = False  # not a pytest test class

    nodeid: str
    outcome: Outcome
    duration_s: float
    reason: str = ""  # a skip's reason


@dataclass(frozen=True)
class RunFacts:
    """Everything observed about one run of the tests; verdicts are derived from this alone."""

    exit_status: int | None
    signal: int | None
    timed_out: bool
    timeout_s: float
    duration_s: float
    report: ReportState
    pytest_exit: int | None
    outcomes: tuple[TestOutcome, ...]
    collection_errors: tuple[str, ...]
    log_path: str
    log_tail: str = ""  # the last lines pytest printed: its own words when a run goes wrong
    imports: ImportRecord = field(default_factory=ImportRecord)
    config_file: str | None = None  # the pytest configuration file the run used

    def said(self, limit: int = 3) -> str:
        """pytest's own error lines from the end of its output (else its last lines), joined."""
        lines = self.log_tail.splitlines()
        errors = [line.removeprefix("E ").strip() for line in lines if _ERROR_LINE.match(line)]
        return " | ".join((errors or [line.strip() for line in lines])[-limit:])

    @property
    def nodeids(self) -> tuple[str, ...]:
        """Every test that ran, in order."""
        return tuple(outcome.nodeid for outcome in self.outcomes)

    @property
    def passed(self) -> int:
        """Tests that passed."""
        return sum(1 for outcome in self.outcomes if outcome.outcome.is_pass)

    @property
    def failed(self) -> int:
        """Tests that failed or errored."""
        return sum(1 for outcome in self.outcomes if outcome.outcome.is_failure)

    @property
    def failing_ids(self) -> tuple[str, ...]:
        """Node ids of failed or errored tests, in run order."""
        return tuple(o.nodeid for o in self.outcomes if o.outcome.is_failure)

    @property
    def inert(self) -> dict[str, TestOutcome]:
        """The skipped, xfailed and xpassed tests by node id."""
        return {o.nodeid: o for o in self.outcomes if o.outcome.is_inert}


class Runner(Protocol):
    """Runs a spec's tests in a workspace and records the facts."""

    def run(
        self, tests: Sequence[str], cwd: Path, scratch: Path, timeout_s: float,
        collect_only: bool = False,
    ) -> RunFacts: ...


def _is_boot_dir(entry: str) -> bool:
    return bool(entry) and os.path.isfile(os.path.join(entry, BOOT_MARKER))


def child_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The child's environment: ours without pytest injection points, GIT_* variables, an
    enclosing mutharness run's variables and start-up directory."""
    env = {
        key: value
        for key, value in environ.items()
        if key not in SCRUBBED and not key.startswith(("GIT_", "MUTHARNESS_"))
    }
    if "PYTHONPATH" in env:
        kept = [entry for entry in env["PYTHONPATH"].split(os.pathsep) if not _is_boot_dir(entry)]
        env["PYTHONPATH"] = os.pathsep.join(kept)
        if not env["PYTHONPATH"]:
            del env["PYTHONPATH"]
    return env


def _remapped_entry(entry: str, user_root: Path, workspace_root: Path) -> str:
    """A PYTHONPATH entry inside the user's repository, moved to the workspace."""
    try:
        relative = Path(entry).resolve().relative_to(user_root)
    except (ValueError, OSError):
        return entry
    return str(workspace_root / relative)


def private_home(scratch: Path) -> dict[str, str]:
    """A fresh, empty home for one run: HOME, the XDG directories, Windows' profile folders."""
    home = scratch / "home"
    places = {
        "HOME": home,
        "XDG_CONFIG_HOME": home / ".config",
        "XDG_CACHE_HOME": home / ".cache",
        "XDG_DATA_HOME": home / ".local" / "share",
        "XDG_STATE_HOME": home / ".local" / "state",
        "XDG_RUNTIME_DIR": scratch / "runtime",
    }
    if sys.platform == "win32":  # pragma: no cover - exercised by the Windows CI job
        places |= {
            "USERPROFILE": home,
            "APPDATA": home / "AppData" / "Roaming",
            "LOCALAPPDATA": home / "AppData" / "Local",
        }
    for path in places.values():
        path.mkdir(parents=True, exist_ok=True)
    (scratch / "runtime").chmod(stat.S_IRWXU)  # as XDG_RUNTIME_DIR must be
    env = {name: str(path) for name, path in places.items()}
    if sys.platform == "win32":  # pragma: no cover - exercised by the Windows CI job
        drive, rest = os.path.splitdrive(str(home))
        env |= {"HOMEDRIVE": drive, "HOMEPATH": rest}
    return env


def _stage(test: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    found = test.get(name)
    return found if isinstance(found, Mapping) else {}


def _skip_reason(test: Mapping[str, Any]) -> str:
    """The reason of a skip, from pytest-json-report's `('file', line, 'Skipped: why')`."""
    for name in ("setup", "call", "teardown"):
        longrepr = _stage(test, name).get("longrepr")
        if isinstance(longrepr, str) and longrepr.startswith("("):
            try:
                parsed = ast.literal_eval(longrepr)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                continue
            if isinstance(parsed, tuple) and len(parsed) == 3 and isinstance(parsed[2], str):
                return _SKIP_REASON.sub("", parsed[2])
    return ""


def _outcome(test: Mapping[str, Any]) -> Outcome:
    word = str(test["outcome"])
    try:
        outcome = Outcome(word)
    except ValueError:
        return Outcome.UNKNOWN
    if outcome in (Outcome.NO_CALL, Outcome.UNKNOWN):
        return Outcome.UNKNOWN  # our own words never come from a report
    if outcome is Outcome.PASSED and "call" not in test:
        return Outcome.NO_CALL
    return outcome


def _outcomes(document: Mapping[str, Any]) -> tuple[TestOutcome, ...]:
    outcomes: list[TestOutcome] = []
    for test in document.get("tests", []):
        stages = (_stage(test, name) for name in ("setup", "call", "teardown"))
        duration = sum(float(stage.get("duration", 0.0)) for stage in stages)
        outcome = _outcome(test)
        reason = _skip_reason(test) if outcome is Outcome.SKIPPED else ""
        outcomes.append(TestOutcome(str(test["nodeid"]), outcome, duration, reason))
    return tuple(outcomes)


def _collection_errors(document: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(
        str(collector.get("nodeid") or "<session>")
        for collector in document.get("collectors", [])
        if collector.get("outcome") != "passed"
    )


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    """The last non-blank lines of a run's output, each cut to 300 characters."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - LOG_TAIL_BYTES))
            data = handle.read()
    except OSError:
        return ""
    kept = [line.rstrip()[:300] for line in data.decode("utf-8", "replace").splitlines()]
    return "\n".join([line for line in kept if line.strip()][-lines:])


def read_report(
    path: Path, started_wall: float, exit_status: int | None
) -> tuple[ReportState, Mapping[str, Any]]:
    """Load a pytest-json-report file and judge whether it belongs to this run."""
    if not path.is_file():
        return ReportState.MISSING, {}
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        created = float(document["created"])
        reported_exit = int(document["exitcode"])
        _outcomes(document)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return ReportState.UNREADABLE, {}
    if created < started_wall:
        return ReportState.STALE, document
    if reported_exit != exit_status:
        return ReportState.MISMATCH, document
    return ReportState.OK, document


def _read_json(path: Path) -> Mapping[str, Any]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return document if isinstance(document, Mapping) else {}


def _config_name(inipath: object, cwd: Path) -> str | None:
    """The config file a run used, relative to the checkout (or what stood in for none)."""
    if not isinstance(inipath, str):
        return None
    try:
        return Path(inipath).resolve().relative_to(cwd.resolve()).as_posix()
    except (ValueError, OSError):
        return f"none in the repository (pytest read {Path(inipath).name} above the checkout)"


@dataclass(frozen=True)
class Isolation:
    """Where a run's code must come from: the user's repository is remapped to the workspace."""

    user_root: Path  # the user's repository (resolved)
    workspace_base: Path  # the workspace directory; every process of a run is marked with it
    workspace_root: Path  # the checkout inside it (resolved)


@dataclass(frozen=True)
class PytestRunner:
    """`python -m pytest` in a child process, reporting through pytest-json-report."""

    python: str
    environ: Mapping[str, str]
    pycache: Path  # shared bytecode cache; the workspace's part is purged before every run
    isolation: Isolation | None = None
    addopts: str | None = None  # replaces the project's `addopts` ([tool.mutharness])
    user_base: str | None = None  # the interpreter's user site base, kept under a private HOME

    def argv(
        self, tests: Sequence[str], cwd: Path, report: Path, collect_only: bool = False
    ) -> list[str]:
        """The fixed command line; spec text only ever appears as test paths after the options."""
        return [
            self.python, "-m", "pytest",
            "-p", PROBE_MODULE,
            "-p", "no:randomly",
            "-p", "no:cacheprovider",
            "-p", "no:rerunfailures",
            "--rootdir", str(cwd),
            *(["-o", f"addopts={self.addopts}"] if self.addopts is not None else []),
            "--maxfail=0",  # overrides a project's -x/--maxfail: every run runs every test
            *(["--collect-only"] if collect_only else []),
            "--json-report", f"--json-report-file={report}",
            "--json-report-omit", "log", "traceback", "streams", "warnings", "keywords",
            "-q", "--color=no",
            *tests,
        ]

    def environment(self, cwd: Path, scratch: Path, boot: Path) -> dict[str, str]:
        """The run's environment: scrubbed, private temp and home, the start-up hook first
        (the private directories are made in `scratch`)."""
        env = child_environment(self.environ)
        env["PYTHONPYCACHEPREFIX"] = str(self.pycache)  # pytest's own bytecode stays warm
        env["PYTHONHASHSEED"] = "0"
        env["GIT_OPTIONAL_LOCKS"] = "0"  # a test's `git status` never rewrites the index
        env["MUTHARNESS_PROBE_OUT"] = str(scratch / "probe.json")
        env[IMPORTS] = str(scratch / "imports")
        (scratch / "imports").mkdir()
        private_tmp = scratch / "tmp"  # the tests' temp files go away with the workspace
        private_tmp.mkdir()
        for name in ("TMPDIR", "TEMP", "TMP"):
            env[name] = str(private_tmp)
        env |= private_home(scratch)
        if self.user_base is not None:  # `pip install --user` packages stay importable
            env["PYTHONUSERBASE"] = self.user_base
        entries = [entry for entry in env.get("PYTHONPATH", "").split(os.pathsep) if entry]
        if self.isolation is not None:
            isolation = self.isolation
            env[USER_ROOT] = str(isolation.user_root)
            env[WORKSPACE_ROOT] = str(isolation.workspace_root)
            env[process.WORKSPACE_MARK] = str(isolation.workspace_base)
            entries = [
                _remapped_entry(entry, isolation.user_root, isolation.workspace_root)
                for entry in entries
            ]
        env["PYTHONPATH"] = os.pathsep.join([str(boot), *entries])
        return env

    def run(
        self, tests: Sequence[str], cwd: Path, scratch: Path, timeout_s: float,
        collect_only: bool = False,
    ) -> RunFacts:
        """Run `tests` in `cwd`; `scratch` is an empty directory outside `cwd` for this run."""
        boot = scratch / "boot"
        boot.mkdir()
        package = resources.files("mutharness")
        (boot / f"{PROBE_MODULE}.py").write_bytes(package.joinpath("_probe.py").read_bytes())
        (boot / "sitecustomize.py").write_bytes(package.joinpath("_startup.py").read_bytes())
        (boot / BOOT_MARKER).write_text("the start-up directory of one mutharness run\n")
        report = scratch / "report.json"
        for root in {cwd.absolute(), cwd.resolve()}:  # as imported, and with links resolved
            stale = self.pycache / root.relative_to(root.anchor)
            if stale.exists():  # the workspace's bytecode is never reused: never stale
                shutil.rmtree(stale)
        env = self.environment(cwd, scratch, boot)
        started_wall = time.time()
        result = process.run(
            self.argv(tests, cwd, report, collect_only),
            cwd=cwd, env=env, log_path=scratch / "pytest.log", timeout_s=timeout_s,
        )
        state, document = read_report(report, started_wall, result.returncode)
        probe = _read_json(scratch / "probe.json")
        if state is ReportState.OK and not probe:
            # The probe writes at session end, like the report plugin: a report without it was
            # written by something else (a test forging one, then os._exit) or cut short.
            state = ReportState.UNFINISHED
        return RunFacts(
            exit_status=result.returncode,
            signal=result.signal_number,
            timed_out=result.timed_out,
            timeout_s=timeout_s,
            duration_s=result.duration_s,
            report=state,
            pytest_exit=int(document["exitcode"]) if "exitcode" in document else None,
            outcomes=_outcomes(document) if document else (),
            collection_errors=_collection_errors(document) if document else (),
            log_path=result.log_path,
            log_tail=log_tail(Path(result.log_path)),
            imports=read_record(scratch / "imports", probe),
            config_file=_config_name(probe.get("inipath"), cwd),
        )


_PROBE_CODE = """\
import json, platform, site, sys
from importlib.metadata import version
out = {'python': platform.python_version(), 'implementation': platform.python_implementation(),
       'python_executable': sys.executable}
for name in ('pytest', 'pytest-json-report'):
    try: out[name] = version(name)
    except Exception: out[name] = ''
if site.ENABLE_USER_SITE:
    out['user_base'] = site.getuserbase()
print(json.dumps(out))
"""


def probe_interpreter(python: str, environ: Mapping[str, str], scratch: Path) -> dict[str, str]:
    """Versions of Python, pytest and pytest-json-report in `python`; a clear error if missing
    or too old. `user_base` is there when the interpreter has a user site directory."""
    log = scratch / "probe.log"
    try:
        result = process.run(
            [python, "-c", _PROBE_CODE], cwd=scratch, env=child_environment(environ),
            log_path=log, timeout_s=PROBE_TIMEOUT_S,
        )
    except OSError as error:
        raise EnvironmentProblem(f"cannot run the interpreter {python}: {error.strerror}") from None
    text = log.read_text(encoding="utf-8", errors="replace")
    try:
        found = json.loads(text.strip().splitlines()[-1]) if result.returncode == 0 else None
    except (ValueError, IndexError):
        found = None
    if not isinstance(found, dict):
        raise EnvironmentProblem(f"the interpreter {python} did not run: {text.strip()[:500]}")
    missing = [name for name in ("pytest", "pytest-json-report") if not found.get(name)]
    if missing:
        raise EnvironmentProblem(
            f"{' and '.join(missing)} not installed in {python}",
            remedy=f"install: {python} -m pip install pytest pytest-json-report",
        )
    if is_below(str(found["pytest"]), MIN_PYTEST):
        raise EnvironmentProblem(
            f"pytest {found['pytest']} in {python} is older than {MIN_PYTEST}, the oldest "
            "mutharness supports",
            remedy=f'install: {python} -m pip install "pytest>={MIN_PYTEST}"',
        )
    return {str(key): str(value) for key, value in found.items()}
