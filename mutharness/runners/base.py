"""What every runner observes: the `Outcome` vocabulary, `RunFacts`, the `Runner` lifecycle."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from mutharness.errors import MutharnessError

LOG_TAIL_LINES = 12
LOG_TAIL_BYTES = 16 * 1024
_ERROR_LINE = re.compile(
    r"^(E  |ERROR|FAIL|SUBFAIL|INTERNALERROR|not ok|\s*[A-Za-z_.]*(Error|Exception)\b)"
)


class ReportState(Enum):
    """Whether the run left a report that can be believed."""

    OK = "ok"
    MISSING = "missing"
    UNREADABLE = "unreadable"
    STALE = "stale"
    MISMATCH = "exit-status-mismatch"
    UNFINISHED = "session-unfinished"  # a report, but the session never reached its end


class RunExit(StrEnum):
    """What a runner's exit status means, in the runner's own terms."""

    ALL_PASSED = "all-passed"  # the runner says every test passed
    TESTS_FAILED = "tests-failed"  # the runner completed and says some tests failed
    COLLECT_FAILED = "collect-failed"  # the runner could not load every test file
    OTHER = "other"  # a usage error, an internal error, no tests, an interrupt...


class Outcome(StrEnum):
    """How one test ended in one run (pytest's words, node's, plus two of ours)."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"
    XFAILED = "xfailed"
    XPASSED = "xpassed"
    TODO = "todo"  # node's `todo`: ran, but its result does not count
    CANCELLED = "cancelled"  # node cancelled it (its parent failed, the file ended first)
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
        """Neither a pass nor a failure: it proves nothing either way (skip, xfail, xpass, todo)."""
        return self in (Outcome.SKIPPED, Outcome.XFAILED, Outcome.XPASSED, Outcome.TODO)


@dataclass(frozen=True)
class TestOutcome:
    """One test's outcome in one run."""

    __test__ = False  # not a pytest test class

    nodeid: str
    outcome: Outcome
    duration_s: float
    reason: str = ""  # a skip's reason


class RunnerFacts(Protocol):
    """What only one runner observes about a run (pytest's import record, node's events)."""

    def to_json(self) -> dict[str, Any]: ...

    def inputs(self) -> tuple[str, ...]:
        """Repo-relative files the run read as configuration (pytest's config file)."""
        ...


@dataclass(frozen=True)
class NoFacts:
    """A runner-specific extension that holds nothing (a run read back from a results file)."""

    recorded: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """What was recorded, as it was."""
        return dict(self.recorded)

    def inputs(self) -> tuple[str, ...]:
        """None known."""
        return ()


@dataclass(frozen=True)
class RunFacts:
    """Everything observed about one run of the tests; verdicts are derived from this alone."""

    runner: str  # the runner's name ("pytest", "node"): who said what `said` quotes
    exit_status: int | None
    signal: int | None
    timed_out: bool
    timeout_s: float
    duration_s: float
    report: ReportState
    exit: RunExit  # what `exit_status` means to the runner
    outcomes: tuple[TestOutcome, ...]
    collection_errors: tuple[str, ...]
    log_path: str
    log_tail: str = ""  # the last lines the runner printed: its own words when a run goes wrong
    free_bytes: int | None = None  # space left where it wrote, measured when it lost its report
    # "concurrent": node ran its files at once (a fast route); else why it ran as the
    # baseline did, if asked
    route: str = ""
    extension: RunnerFacts = field(default_factory=NoFacts)

    @property
    def took_a_fast_route(self) -> bool:
        """Ran by a route proven against the baseline rather than as the baseline ran: a run
        that gives no verdict there is run again as the baseline ran (`RunRequest.fresh`)."""
        return self.route == "concurrent"

    def said(self, limit: int = 3) -> str:
        """The runner's own error lines from the end of its output (else its last lines)."""
        lines = self.log_tail.splitlines()
        errors = [line.removeprefix("E ").strip() for line in lines if _ERROR_LINE.match(line)]
        return " | ".join((errors or [line.strip() for line in lines])[-limit:])

    @cached_property
    def nodeids(self) -> tuple[str, ...]:
        """Every test that ran, in order."""
        return tuple(outcome.nodeid for outcome in self.outcomes)

    @cached_property
    def passed(self) -> int:
        """Tests that passed."""
        return sum(1 for outcome in self.outcomes if outcome.outcome.is_pass)

    @cached_property
    def failed(self) -> int:
        """Tests that failed or errored."""
        return sum(1 for outcome in self.outcomes if outcome.outcome.is_failure)

    @cached_property
    def failing_ids(self) -> tuple[str, ...]:
        """Ids of failed or errored tests, in run order."""
        return tuple(o.nodeid for o in self.outcomes if o.outcome.is_failure)

    @cached_property
    def inert(self) -> dict[str, TestOutcome]:
        """The skipped, xfailed, xpassed and todo tests by id."""
        return {o.nodeid: o for o in self.outcomes if o.outcome.is_inert}


@dataclass(frozen=True)
class RunRequest:
    """One run of a spec's tests: where, with what limit, and how it runs them."""

    tests: tuple[str, ...]
    cwd: Path  # the workspace checkout
    scratch: Path  # an empty directory outside `cwd`, for this run only
    timeout_s: float
    keep_going: bool = False  # run the files that load when another fails to (red-first)
    first_failure: bool = False  # stop at the first failing test (--first-failure)
    mutant: bool = False  # a mutant's run: only its tests' outcomes decide, not their reports
    fresh: str = ""  # why it never takes a fast route (a fast run's confirmation)
    mutants: int = 0  # a proof's: how many mutant runs of these tests follow
    mutated: tuple[str, ...] = ()  # a mutant's: the repo-relative files it changed


LINE_RECORD = "MUTHARNESS_LINE_RECORD"  # `LineAsk`, in the environment a command hands the lab


@dataclass(frozen=True)
class LineAsk:
    """`suggest`'s baseline asks the runner for a line record: the lines its run executes in
    `files` (repo-relative), written as JSON to `out`. It travels in the environment mapping
    the command hands the lab (`LINE_RECORD`, which no test process inherits), so no other
    command's run carries it, and a mutant's run never records.

    The record: `{"files": {path: facts}, "silent": {path: why}}`, each asked file in one of
    them: pytest's facts `{"ran": [line...], "called": [[first line, name]...]}` (the lines
    with a line event, the functions that began to run); node's `{"ran": [line...],
    "functions": [[first, last, called]...]}` (the lines where code ran, each function's);
    `silent`: why the record cannot speak for the file."""

    files: tuple[str, ...]
    out: Path

    def environment(self, environ: Mapping[str, str]) -> dict[str, str]:
        """`environ` carrying this ask."""
        return {**environ, LINE_RECORD: json.dumps({"files": list(self.files),
                                                    "out": str(self.out)})}

    @staticmethod
    def asked(environ: Mapping[str, str], request: RunRequest) -> LineAsk | None:
        """The ask `environ` carries, for a run without a mutant (None: none, or a
        mutant's run)."""
        given = environ.get(LINE_RECORD)
        if not given or request.mutant:
            return None
        try:
            found = json.loads(given)
            return LineAsk(tuple(str(path) for path in found["files"]), Path(found["out"]))
        except (ValueError, KeyError, TypeError):  # none of suggest's: not an ask
            return None

    def write(self, record: Mapping[str, Any]) -> None:
        """The record, where the ask wants it."""
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self.out.write_text(json.dumps(record, indent=1), encoding="utf-8")


@dataclass(frozen=True)
class Isolation:
    """Where a run's code must come from: the user's repository is remapped to the workspace."""

    user_root: Path  # the user's repository (resolved)
    workspace_base: Path  # the workspace directory; every process of a run is marked with it
    workspace_root: Path  # the checkout inside it (resolved)


@dataclass(frozen=True)
class SpecFiles:
    """What a runner's isolation check needs to know about one spec and the workspace."""

    spec_id: str
    targets: tuple[str, ...]  # the spec's mutation targets (repo-relative)
    user_root: Path  # the user's repository
    workspace_root: Path  # the workspace checkout (resolved)
    tracked: frozenset[str]  # every path the workspace tracks


class Runner(Protocol):
    """Runs a spec's tests in a workspace and records the facts; one per workspace.

    The lifecycle is `begin` then `start` (probe the tool, once), then any number of `run`s
    (and a `prove` after each green baseline), then `close` (always, also after an error): the
    pytest runner keeps its fork server between them."""

    @property
    def name(self) -> str: ...

    def stops_at_first_failure(self, tests: tuple[str, ...], baseline: RunFacts) -> bool:
        """Whether a mutant's run of `tests`, which `baseline` measured, can stop at its first
        failing test (in the tests' own order) and still prove something."""
        ...

    def begin(self) -> None:
        """Start what `start` waits for, while the workspace is being made (the tool's probe:
        a process that needs no workspace); `start` (or `close`) always follows."""
        ...

    def start(self) -> Mapping[str, str]:
        """Check the tool can run the tests; its versions, for the results (raises if not)."""
        ...

    def run(self, request: RunRequest) -> RunFacts: ...

    def prove(self, request: RunRequest, baseline: RunFacts) -> None:
        """After a green `baseline` of `request`'s tests, make later runs of them faster where
        the runner can show they give the same facts (the pytest fork server's proof run)."""
        ...

    def adopt(self, request: RunRequest,
              measured: Callable[[], RunFacts | None]) -> RunFacts | None:
        """Another workspace's green baseline of `request`'s tests (`measured`: waits for it,
        None when there is none) taken as this one's where the runner proves, by a run in
        this workspace, that it gives the same facts here; None: measure one here."""
        ...

    def isolation_problem(self, facts: RunFacts, files: SpecFiles) -> MutharnessError | None:
        """Why a run's code did not come from the workspace (None when it did)."""
        ...

    def forget(self, paths: Sequence[Path] | None) -> None:
        """The workspace's files (or directories) at `paths` were written again or removed
        (None: any of its files may have been): what the runner keeps made from them (the
        pytest runner's compiled bytecode) is void before its next run."""
        ...

    def loaded(self, facts: RunFacts, path: Path) -> bool | None:
        """Whether the run loaded the mutated file at `path` (None: this runner cannot tell)."""
        ...

    def imported(self, facts: RunFacts, root: Path) -> tuple[str, ...]:
        """The files under `root` (repo-relative) any process of the run imported or read
        (none when this runner cannot tell)."""
        ...

    def records(self, facts: RunFacts) -> frozenset[str]:
        """What `imported` lists of the run's use of the checkout: the files it imported
        ("imports"), every file it opened ("reads"); none where the run did what no record
        sees (started a program the runner cannot follow)."""
        ...

    def close(self) -> None: ...


def free_bytes(report: ReportState, path: Path) -> int | None:
    """The space left on the device holding `path` after a run that lost its report (None
    when the report is there, or the device cannot say): a full device loses the report and
    the runner's own last words alike."""
    if report is ReportState.OK:
        return None
    try:
        return shutil.disk_usage(path).free
    except OSError:
        return None


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
