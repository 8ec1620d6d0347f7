"""The node runner: `node --test`, counted from per-test events our reporter writes to a file."""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from mutharness import process
from mutharness.errors import EnvironmentProblem, MutharnessError
from mutharness.paths import path_problem
from mutharness.runners.base import (
    Isolation,
    Outcome,
    ReportState,
    RunExit,
    RunFacts,
    RunRequest,
    SpecFiles,
    TestOutcome,
    log_tail,
)
from mutharness.runners.node_events import SEPARATOR, NodeEvents, read_events
from mutharness.runners.sandbox import sandboxed

NAME = "node"
SUFFIXES = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts")
MIN_NODE = 20  # the first node whose `node --test` reports what the reporter reads
EVENTS = "MUTHARNESS_NODE_EVENTS"  # where the reporter writes its records (see the reporter)
REPORTER = "_node_reporter.mjs"
PROBE_TIMEOUT_S = 60.0
# Inherited as they are: what finds programs and what Windows needs to start a process at all.
KEPT = frozenset({
    "PATH", "PATHEXT", "SYSTEMROOT", "SYSTEMDRIVE", "COMSPEC", "WINDIR", "OS",
    "NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE", "PROGRAMDATA", "PROGRAMFILES",
    "PROGRAMFILES(X86)", "COMMONPROGRAMFILES", "LANG", "LC_ALL", "LC_CTYPE", "TZ",
})
_VERSION = re.compile(r"^v(\d+)\.(\d+)\.(\d+)")
_OUTCOMES = {
    "passed": Outcome.PASSED, "failed": Outcome.FAILED, "skipped": Outcome.SKIPPED,
    "todo": Outcome.TODO, "cancelled": Outcome.CANCELLED,
}


def entry_problem(entry: str) -> str | None:
    """Why a `tests` entry (a file or directory for `node --test`) is unsafe to pass to node."""
    if entry.startswith("-"):
        return "starts with '-' and would be read as a command-line option"
    if "::" in entry:
        return "holds '::' (a pytest node id); node specs name test files"
    problem = path_problem(entry.rstrip("/") if entry.endswith("/") else entry)
    return None if problem is None else f"path {entry!r} {problem}"


def entry_path(entry: str) -> str:
    """The repo-relative file or directory a `tests` entry names."""
    return entry.rstrip("/")


def split_id(nodeid: str) -> tuple[str, str]:
    """A test id's (file, name): `test/a.test.js > suite > test` -> the file and
    `suite > test`."""
    file, _, name = nodeid.partition(SEPARATOR)
    return file, name


def covers(entries: Sequence[str], file: str, name: str) -> bool:
    """Whether running `entries` runs a test of `file` (the file, or a directory above it)."""
    del name  # node runs whole files
    return any(
        file == entry_path(entry) or file.startswith(entry_path(entry) + "/")
        for entry in entries
    )


def is_test_module(path: str) -> bool:
    """node's default test file names: `*.test.js`, `*-test.js`, `*_test.js`, `test-*.js`,
    `test.js` (and the other JS/TS suffixes)."""
    name = path.rsplit("/", 1)[-1]
    stem = next((name[: -len(suffix)] for suffix in SUFFIXES if name.endswith(suffix)), None)
    if stem is None:
        return False
    return stem == "test" or stem.startswith("test-") or stem.endswith(
        (".test", "-test", "_test")
    )


def config_candidates(tests: Sequence[str], tracked: frozenset[str]) -> tuple[str, ...]:
    """Every `package.json` path on the way from the root to each entry, and in a directory
    entry and below it (its `type` decides how node loads the files)."""
    found: set[str] = set()
    for entry in tests:
        path = entry_path(entry)
        parts = path.split("/")
        found.update("/".join([*parts[:depth], "package.json"]) for depth in range(len(parts)))
        if path not in tracked:  # a directory entry
            below = {item.rsplit("/", 1)[0] for item in tracked if item.startswith(f"{path}/")}
            found.update(f"{directory}/package.json" for directory in below | {path})
    return tuple(sorted(found))


def config_inputs(tests: Sequence[str], tracked: frozenset[str]) -> tuple[str, ...]:
    """The tracked ones of `config_candidates`."""
    return tuple(path for path in config_candidates(tests, tracked) if path in tracked)


@dataclass(frozen=True)
class NodeFacts:
    """What only node observes: its version, the files that failed to load, node's own totals."""

    node_version: str = ""
    file_failures: tuple[str, ...] = ()
    silent_files: tuple[str, ...] = ()  # exited before reporting their tests (process.exit)
    unreported: tuple[str, ...] = ()  # tests node queued that never ended
    suite_failures: tuple[str, ...] = ()
    summary: Mapping[str, int] | None = None  # test:summary's counts (node 22 and later)
    diagnostics: Mapping[str, int] = field(default_factory=dict)  # "tests 5", "pass 3"...

    def to_json(self) -> dict[str, Any]:
        """Everything: it is small."""
        return {
            "node_version": self.node_version,
            "file_failures": list(self.file_failures),
            "silent_files": list(self.silent_files),
            "unreported": list(self.unreported),
            "suite_failures": list(self.suite_failures),
            "summary": None if self.summary is None else dict(self.summary),
            "diagnostics": dict(self.diagnostics),
        }

    def inputs(self) -> tuple[str, ...]:
        """node reads no configuration file of its own (package.json is known statically)."""
        return ()


def child_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """Only what finds programs and starts processes on this platform; no NODE_OPTIONS,
    NODE_TEST_CONTEXT (which would make `node --test` act as a child) or FORCE_COLOR."""
    windows = sys.platform == "win32"  # where names are case-insensitive (Path is PATH)
    env = {
        key: value for key, value in environ.items() if (key.upper() if windows else key) in KEPT
    }
    env["NO_COLOR"] = "1"
    return env


def exit_meaning(status: int | None) -> RunExit:
    """node --test's exit codes in the runner-neutral words: 0 all passed, 1 a failure."""
    if status == 0:
        return RunExit.ALL_PASSED
    if status == 1:
        return RunExit.TESTS_FAILED
    return RunExit.OTHER


def _state(events: NodeEvents) -> ReportState:
    return {
        "ok": ReportState.OK, "missing": ReportState.MISSING,
        "unreadable": ReportState.UNREADABLE, "unfinished": ReportState.UNFINISHED,
    }.get(events.state, ReportState.UNREADABLE)


def _outcomes(events: NodeEvents) -> tuple[TestOutcome, ...]:
    return tuple(
        TestOutcome(
            test.id, _OUTCOMES.get(test.outcome, Outcome.UNKNOWN), test.duration_s,
            test.reason if test.outcome in ("skipped", "todo") else "",
        )
        for test in events.tests
    )


class NodeRunner:
    """`node --test` over a spec's test files, one file at a time, with our reporter."""

    name = NAME

    def __init__(
        self, node: str, environ: Mapping[str, str], isolation: Isolation | None = None,
        imports: Sequence[str] = (), requires: Sequence[str] = (), extra: Sequence[str] = (),
        *, probe_dir: Path,
    ) -> None:
        self.node_given = node
        self.environ = dict(environ)
        self.isolation = isolation
        self.imports = tuple(imports)
        self.requires = tuple(requires)
        self.extra = tuple(extra)
        self.probe_dir = probe_dir  # for the version probe's output
        self.node = node
        self.version = ""

    @property
    def collects(self) -> bool:
        """node has no collect-only mode: the baseline itself shows a file that fails to load."""
        return False

    def stops_at_first_failure(self, baseline: RunFacts) -> bool:
        """node 20 has no option that stops at a failing test: every run keeps full counts."""
        return False

    def _resolve(self) -> str:
        if os.path.dirname(self.node_given):
            return str(Path(self.node_given).absolute())
        found = shutil.which(self.node_given, path=self.environ.get("PATH", os.defpath))
        if found is None:
            raise EnvironmentProblem(
                f"{self.node_given} not found on PATH: node specs need node {MIN_NODE} or newer",
                remedy="install node, or name it with --node PATH",
            )
        return found

    def start(self) -> dict[str, str]:
        """node found and new enough; its version, for the results and the evidence."""
        self.node = self._resolve()
        scratch = self.probe_dir
        scratch.mkdir(parents=True, exist_ok=True)
        log = scratch / "node-version.log"
        try:
            result = process.run(
                [self.node, "--version"], cwd=scratch, env=child_environment(self.environ),
                log_path=log, timeout_s=PROBE_TIMEOUT_S,
            )
        except OSError as error:
            raise EnvironmentProblem(f"cannot run {self.node}: {error.strerror}") from None
        text = log.read_text(encoding="utf-8", errors="replace").strip()
        match = _VERSION.match(text)
        if result.returncode != 0 or match is None:
            raise EnvironmentProblem(f"{self.node} --version did not say a version: {text[:200]}")
        if int(match.group(1)) < MIN_NODE:
            raise EnvironmentProblem(
                f"node {text} ({self.node}) is older than {MIN_NODE}, the oldest mutharness "
                "supports", remedy="install node 20 or newer, or name it with --node PATH",
            )
        self.version = text.removeprefix("v")
        return {"node": self.version}

    def prove(self, request: RunRequest, baseline: RunFacts) -> None:
        """Nothing to prove: every node run is a fresh process."""

    def close(self) -> None:
        """Nothing outlives a run of this runner."""

    def argv(self, tests: Sequence[str], reporter: Path, destination: Path) -> list[str]:
        """The fixed command line: our reporter (its own output, nothing, to `destination`: a
        file, as node 24 fsyncs it and the null device refuses), every file one at a time, the
        project's preloads; never an option that ends a run early (--test-force-exit)."""
        return [
            self.node,
            *[word for module in self.imports for word in ("--import", module)],
            *[word for module in self.requires for word in ("--require", module)],
            *self.extra,
            "--test",
            "--test-concurrency=1",
            f"--test-reporter={reporter.as_uri()}",
            f"--test-reporter-destination={destination}",
            *tests,
        ]

    def environment(self, scratch: Path, events: Path) -> dict[str, str]:
        """The run's environment: the platform's minimum, private temp and home, the events
        file for the reporter."""
        env = sandboxed(child_environment(self.environ), scratch, self.isolation)
        env[EVENTS] = str(events)
        return env

    def run(self, request: RunRequest) -> RunFacts:
        """Run the request's test files in its `cwd`; its `scratch` holds this run's files."""
        scratch = request.scratch
        reporter = scratch / REPORTER
        reporter.write_bytes(
            resources.files("mutharness.runners").joinpath(REPORTER).read_bytes()
        )
        events_path = scratch / "events.jsonl"
        result = process.run(
            self.argv(request.tests, reporter, scratch / "reporter.out"), cwd=request.cwd,
            env=self.environment(scratch, events_path), log_path=scratch / "node.log",
            timeout_s=request.timeout_s,
        )
        events = read_events(events_path, request.cwd)
        return RunFacts(
            runner=NAME,
            exit_status=result.returncode,
            signal=result.signal_number,
            timed_out=result.timed_out,
            timeout_s=request.timeout_s,
            duration_s=result.duration_s,
            report=_state(events),
            exit=exit_meaning(result.returncode),
            outcomes=_outcomes(events),
            # a file that failed to load, or exited before reporting its tests, ran no tests
            collection_errors=(*events.file_failures, *events.silent_files),
            log_path=result.log_path,
            log_tail=log_tail(Path(result.log_path)),
            extension=NodeFacts(
                events.node_version, events.file_failures, events.silent_files,
                events.unreported, events.suite_failures, events.summary, events.diagnostics,
            ),
        )

    def isolation_problem(self, facts: RunFacts, files: SpecFiles) -> MutharnessError | None:
        """node resolves modules from the checkout it runs in: nothing to check yet."""
        return None

    def loaded(self, facts: RunFacts, path: Path) -> bool | None:
        """node does not record which files it loaded."""
        return None

    def imported(self, facts: RunFacts, root: Path) -> tuple[str, ...]:
        """node does not record which files it loaded: none known."""
        return ()
