"""Test runners: the Runner interface and the pytest runner that records a run's facts."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

from mutharness import process
from mutharness.errors import EnvironmentProblem

PROBE_MODULE = "_mutharness_probe"
SCRUBBED = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE")
PROBE_TIMEOUT_S = 120.0
LOG_TAIL_LINES = 12
LOG_TAIL_BYTES = 16 * 1024
_ERROR_LINE = re.compile(r"^(E  |ERROR|INTERNALERROR|[A-Za-z_.]*(Error|Exception)\b)")


class ReportState(Enum):
    """Whether the run left a report that can be believed."""

    OK = "ok"
    MISSING = "missing"
    UNREADABLE = "unreadable"
    STALE = "stale"
    MISMATCH = "exit-status-mismatch"
    UNFINISHED = "session-unfinished"  # a report, but the session never reached its end


@dataclass(frozen=True)
class TestOutcome:
    """One test's outcome in one run."""

    __test__ = False  # not a pytest test class

    nodeid: str
    outcome: str  # passed, failed, error, skipped, xfailed, xpassed
    duration_s: float


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
    imported: Mapping[str, str]  # module name -> file, as the child saw it
    sys_path: tuple[str, ...]
    log_path: str
    log_tail: str = ""  # the last lines pytest printed: its own words when a run goes wrong

    def said(self, limit: int = 3) -> str:
        """pytest's own error lines from the end of its output (else its last lines), joined."""
        lines = self.log_tail.splitlines()
        errors = [line.removeprefix("E ").strip() for line in lines if _ERROR_LINE.match(line)]
        return " | ".join((errors or [line.strip() for line in lines])[-limit:])

    @property
    def nodeids(self) -> tuple[str, ...]:
        """Every test that ran, in order."""
        return tuple(outcome.nodeid for outcome in self.outcomes)

    def count(self, *kinds: str) -> int:
        """How many tests ended with any of these outcomes."""
        return sum(1 for outcome in self.outcomes if outcome.outcome in kinds)

    @property
    def passed(self) -> int:
        """Tests that passed."""
        return self.count("passed")

    @property
    def failed(self) -> int:
        """Tests that failed or errored."""
        return self.count("failed", "error")

    @property
    def failing_ids(self) -> tuple[str, ...]:
        """Node ids of failed or errored tests, in run order."""
        return tuple(o.nodeid for o in self.outcomes if o.outcome in ("failed", "error"))


class Runner(Protocol):
    """Runs a spec's tests in a workspace and records the facts."""

    def run(
        self, tests: Sequence[str], cwd: Path, scratch: Path, timeout_s: float
    ) -> RunFacts: ...


def child_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The child's environment: ours without pytest injection points or GIT_* variables."""
    return {
        key: value
        for key, value in environ.items()
        if key not in SCRUBBED and not key.startswith("GIT_")
    }


def _outcomes(document: Mapping[str, Any]) -> tuple[TestOutcome, ...]:
    outcomes: list[TestOutcome] = []
    for test in document.get("tests", []):
        stages = (test.get(stage) or {} for stage in ("setup", "call", "teardown"))
        duration = sum(float(stage.get("duration", 0.0)) for stage in stages)
        outcomes.append(TestOutcome(str(test["nodeid"]), str(test["outcome"]), duration))
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
    except (OSError, ValueError, KeyError, TypeError):
        return ReportState.UNREADABLE, {}
    if created < started_wall:
        return ReportState.STALE, document
    if reported_exit != exit_status:
        return ReportState.MISMATCH, document
    return ReportState.OK, document


@dataclass(frozen=True)
class PytestRunner:
    """`python -m pytest` in a child process, reporting through pytest-json-report."""

    python: str
    environ: Mapping[str, str]
    pycache: Path  # shared bytecode cache; the workspace's part is purged before every run

    def argv(self, tests: Sequence[str], cwd: Path, report: Path) -> list[str]:
        """The fixed command line; spec text only ever appears as test paths after the options."""
        return [
            self.python, "-m", "pytest",
            "-p", PROBE_MODULE,
            "-p", "no:randomly",
            "-p", "no:cacheprovider",
            "-p", "no:rerunfailures",
            "--rootdir", str(cwd),
            "--maxfail=0",  # overrides a project's -x/--maxfail: every run runs every test
            "--json-report", f"--json-report-file={report}",
            "--json-report-omit", "log", "traceback", "streams", "warnings", "keywords",
            "-q", "--color=no",
            *tests,
        ]

    def run(
        self, tests: Sequence[str], cwd: Path, scratch: Path, timeout_s: float
    ) -> RunFacts:
        """Run `tests` in `cwd`; `scratch` is an empty directory outside `cwd` for this run."""
        probe_dir = scratch / "probe"
        probe_dir.mkdir()
        (probe_dir / f"{PROBE_MODULE}.py").write_bytes(
            resources.files("mutharness").joinpath("_probe.py").read_bytes()
        )
        report = scratch / "report.json"
        probe_out = scratch / "imports.json"
        env = child_environment(self.environ)
        for root in {cwd.absolute(), cwd.resolve()}:  # as imported, and with links resolved
            stale = self.pycache / root.relative_to(root.anchor)
            if stale.exists():  # the workspace's bytecode is never reused: never stale
                shutil.rmtree(stale)
        env["PYTHONPYCACHEPREFIX"] = str(self.pycache)  # pytest's own bytecode stays warm
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # writes go to the private prefix only
        env["PYTHONHASHSEED"] = "0"
        env["MUTHARNESS_PROBE_OUT"] = str(probe_out)
        private_tmp = scratch / "tmp"  # the tests' temp files go away with the workspace
        private_tmp.mkdir()
        for name in ("TMPDIR", "TEMP", "TMP"):
            env[name] = str(private_tmp)
        env["PYTHONPATH"] = os.pathsep.join(
            part for part in (str(probe_dir), env.get("PYTHONPATH", "")) if part
        )
        started_wall = time.time()
        result = process.run(
            self.argv(tests, cwd, report),
            cwd=cwd, env=env, log_path=scratch / "pytest.log", timeout_s=timeout_s,
        )
        state, document = read_report(report, started_wall, result.returncode)
        if state is ReportState.OK and not probe_out.is_file():
            # The probe writes at session end, like the report plugin: a report without it was
            # written by something else (a test forging one, then os._exit) or cut short.
            state = ReportState.UNFINISHED
        imports: Mapping[str, Any] = {}
        if probe_out.is_file():
            try:
                imports = json.loads(probe_out.read_text(encoding="utf-8"))
            except ValueError:
                imports = {}
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
            imported=dict(imports.get("modules", {})),
            sys_path=tuple(imports.get("sys_path", ())),
            log_path=result.log_path,
            log_tail=log_tail(Path(result.log_path)),
        )


def probe_interpreter(python: str, environ: Mapping[str, str], scratch: Path) -> dict[str, str]:
    """Versions of Python, pytest and pytest-json-report in `python`; a clear error if missing."""
    code = (
        "import json, platform, sys\n"
        "from importlib.metadata import version\n"
        "out = {'python': platform.python_version(), 'implementation': "
        "platform.python_implementation(), 'python_executable': sys.executable}\n"
        "for name in ('pytest', 'pytest-json-report'):\n"
        "    try: out[name] = version(name)\n"
        "    except Exception: out[name] = ''\n"
        "print(json.dumps(out))\n"
    )
    log = scratch / "probe.log"
    try:
        result = process.run(
            [python, "-c", code], cwd=scratch, env=child_environment(environ),
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
    return {str(key): str(value) for key, value in found.items()}
