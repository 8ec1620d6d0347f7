"""The node runner: `node --test`, counted from per-test events our reporter writes to a file."""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from mutharness import process
from mutharness.errors import EnvironmentProblem, MutharnessError
from mutharness.repo.installed import describe
from mutharness.runners.base import (
    Isolation,
    LineAsk,
    Outcome,
    ReportState,
    RunExit,
    RunFacts,
    RunRequest,
    SpecFiles,
    TestOutcome,
    free_bytes,
    log_tail,
)
from mutharness.runners.node.causes import load_cause, version_of
from mutharness.runners.node.coverage import coverage_record
from mutharness.runners.node.events import NodeEvents, read_events
from mutharness.runners.node.linger import Lingered, read_lingering
from mutharness.runners.node.loads import LoadRecord, read_loads
from mutharness.runners.node.rules import NAME, node_words, package_conditions, split_conditions
from mutharness.runners.node.subset import Subset, choose, with_stood
from mutharness.runners.sandbox import sandboxed

MIN_NODE = 20  # the first node whose `node --test` reports what the reporter reads
EVENTS = "MUTHARNESS_NODE_EVENTS"  # where the reporter writes its records (see the reporter)
FIRST_FAILURE = "MUTHARNESS_NODE_FIRST_FAILURE"  # "1": the reporter ends the run after the
# first failing test file (a mutant's run one file at a time)
REPORTER = "_reporter.mjs"
LINGER = "MUTHARNESS_NODE_LINGER"  # where the linger watch writes its records
WATCH = "_linger.mjs"  # preloaded into every test file's process (see the watch)
LOADS = "MUTHARNESS_NODE_LOADS"  # where each node process of a run logs its loads and reads
LOADS_ROOT = "MUTHARNESS_NODE_ROOT"  # the workspace: only its files are recorded
RECORDER = ("_loads.mjs", "_loads_hooks.mjs")  # preloaded through NODE_OPTIONS (see the preload)
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
    lingered: tuple[Lingered, ...] = ()  # files that outlived their last test
    concurrency: int = 1  # test files node ran at once
    # which files of the workspace each test file's processes loaded and read: a run without
    # a mutant records its own, kept in the results; a mutant's run records none (the
    # preload costs each process its start) and is given its baseline's, not kept (None: no
    # record)
    loads: LoadRecord | None = None
    keep_loads: bool = True
    subset: Subset | None = None  # a mutant's run of only the files it can change
    stopped_after: str = ""  # the failing test file after which the run stopped, if it did

    def to_json(self) -> dict[str, Any]:
        """Everything but a mutant's load record: it is small."""
        document: dict[str, Any] = {
            "node_version": self.node_version,
            "file_failures": list(self.file_failures),
            "silent_files": list(self.silent_files),
            "unreported": list(self.unreported),
            "suite_failures": list(self.suite_failures),
            "summary": None if self.summary is None else dict(self.summary),
            "diagnostics": dict(self.diagnostics),
            "lingered": [entry.to_json() for entry in self.lingered],
            "concurrency": self.concurrency,
        }
        if self.stopped_after:
            document["stopped_after"] = self.stopped_after
        if self.subset is not None:
            document["subset"] = {"ran": list(self.subset.ran), "stood": list(self.subset.stood)}
        if self.loads is not None and self.keep_loads:
            document["loads"] = {
                test_file: {"loaded": sorted(use.loaded), "read": sorted(use.read),
                            "spawned": list(use.spawned), "partial": list(use.partial)}
                for test_file, use in self.loads.files.items()}
        return document

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


def _differences(baseline: RunFacts, facts: RunFacts) -> str:
    """How a run at once differs from the baseline, one file at a time ("" when it does
    not): test by test (outcome and skip reason; node orders the files as they end, so
    order is no difference), then how the run ended."""
    def outcomes(run: RunFacts) -> dict[str, tuple[str, str]]:
        return {o.nodeid: (o.outcome.value, o.reason) for o in run.outcomes}

    before, after = outcomes(baseline), outcomes(facts)
    changed = [
        f"{nodeid} {after.get(nodeid, ('did not run',))[0]}"
        for nodeid in dict.fromkeys([*before, *after]) if before.get(nodeid) != after.get(nodeid)
    ]
    if changed:
        more = f" (and {len(changed) - 3} more)" if len(changed) > 3 else ""
        return "; ".join(changed[:3]) + more
    ended: tuple[tuple[str, Callable[[RunFacts], object]], ...] = (
        ("exit status", lambda run: run.exit_status),
        ("timed out", lambda run: run.timed_out),
        ("report", lambda run: run.report.value),
        ("files that failed", lambda run: ", ".join(run.collection_errors) or "none"),
    )
    for what, value in ended:
        if value(baseline) != value(facts):
            return f"its {what} was {value(facts)}, one at a time {value(baseline)}"
    return ""


class NodeRunner:
    """`node --test` over a spec's test files, one file at a time, with our reporter."""

    name = NAME

    def __init__(
        self, node: str, environ: Mapping[str, str], isolation: Isolation | None = None,
        imports: Sequence[str] = (), requires: Sequence[str] = (), extra: Sequence[str] = (),
        *, probe_dir: Path, note: Callable[[str], None] | None = None, concurrency: int = 1,
    ) -> None:
        self.node_given = node
        self.note = note or (lambda text: None)  # tells the user once per file what lingered
        self._told: set[str] = set()
        self.concurrency = concurrency  # asked for; a test set runs so once `prove` shows it
        self._at_once: set[tuple[str, ...]] = set()  # the test sets proven at `concurrency`
        self._baselines: dict[tuple[str, ...], RunFacts] = {}  # each test set's green baseline
        self.environ = dict(environ)
        self.isolation = isolation
        self.imports = tuple(imports)
        self.requires = tuple(requires)
        self.extra = tuple(extra)
        self.conditions: tuple[str, ...] = ()  # the test script's, when `extra` names none
        self.probe_dir = probe_dir  # for the version probe's output
        self.node = node
        self.version = ""

    def stops_at_first_failure(self, tests: tuple[str, ...], baseline: RunFacts) -> bool:
        """A mutant's run one file at a time ends once its first failing test file has
        (our reporter ends the run: node has no such option); files proven to run at once
        (`prove`) all run, with full counts."""
        del baseline
        return tests not in self._at_once

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

    def begin(self) -> None:
        """Nothing: finding node and asking its version is quick."""

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
        self._script_conditions()
        return {"node": self.version, "installed": self._installed()}

    def _script_conditions(self) -> None:
        """The export conditions of the workspace's package.json test script, when the
        options name none (`node --test --conditions development`), said once."""
        if self.isolation is None or split_conditions(self.extra)[0]:
            return
        self.conditions = package_conditions(self.isolation.workspace_root)
        if self.conditions:
            words = " ".join(f"--conditions={name}" for name in self.conditions)
            self.note(f"node conditions from package.json's test script: {words} (a "
                      "--conditions in [node] options replaces them)")

    def _installed(self) -> str:
        """The installed packages the workspace's runs import (`installed.describe`)."""
        return describe(self.isolation.workspace_root) if self.isolation is not None else "none"

    def prove(self, request: RunRequest, baseline: RunFacts) -> None:
        """With a concurrency above 1: the baseline's tests run at it once; the mutants run so
        only when every test's outcome is the baseline's (one file at a time), else one file
        at a time, the user told why. The baseline's load record chooses the files each
        mutant's run runs (`subset`)."""
        self._baselines[request.tests] = baseline
        if self.concurrency == 1:
            return
        facts = self._run(request, self.concurrency)
        differences = _differences(baseline, facts)
        if differences:
            self.note(f"{' '.join(request.tests)} run one file at a time: at "
                      f"--node-concurrency {self.concurrency}, {differences}")
            return
        self._at_once.add(request.tests)

    def adopt(self, request: RunRequest,
              measured: Callable[[], RunFacts | None]) -> RunFacts | None:
        """Never: without a faster run to prove, a workspace measures its own baseline."""
        del request, measured
        return None

    def close(self) -> None:
        """Nothing outlives a run of this runner."""

    def argv(self, tests: Sequence[str], reporter: Path, destination: Path,
             watch: Path, concurrency: int = 1) -> list[str]:
        """The fixed command line: the linger watch preloaded first, our reporter (its own
        output, nothing, to `destination`: a file, as node 24 fsyncs it and the null device
        refuses), node's own `spec` reporter to stdout (the run's log: what a user reads to
        see why a test failed; no count is taken from it), `concurrency` files at once (one
        at a time unless proven), the project's preloads; never an option that ends a run
        early (--test-force-exit)."""
        return [
            self.node,
            "--import", watch.as_uri(),
            *[word for module in self.imports for word in ("--import", module)],
            *[word for module in self.requires for word in ("--require", module)],
            *node_words(self.extra, self.conditions),
            "--test",
            f"--test-concurrency={concurrency}",
            f"--test-reporter={reporter.as_uri()}",
            f"--test-reporter-destination={destination}",
            "--test-reporter=spec",
            "--test-reporter-destination=stdout",
            *tests,
        ]

    def environment(self, scratch: Path, events: Path, lingering: Path,
                    cwd: Path | None = None) -> dict[str, str]:
        """The run's environment: the platform's minimum, private temp and home, the events
        file for the reporter, the linger watch's file; with the workspace `cwd`, the load
        record's preload for every node process the run starts (NODE_OPTIONS, which nothing
        of the user's environment sets here) and where it writes."""
        env = sandboxed(child_environment(self.environ), scratch, self.isolation)
        env[EVENTS] = str(events)
        env[LINGER] = str(lingering)
        if cwd is not None:
            (scratch / "loads").mkdir(exist_ok=True)
            env[LOADS] = str(scratch / "loads")
            env[LOADS_ROOT] = str(cwd)
            env["NODE_OPTIONS"] = f"--import={(scratch / RECORDER[0]).as_uri()}"
        return env

    def run(self, request: RunRequest) -> RunFacts:
        """Run the request's test files in its `cwd`; its `scratch` holds this run's files.
        A mutant's run of a test set proven at the asked concurrency runs at it, unless asked
        to run as the baseline did (`fresh`)."""
        at_once = request.mutant and not request.fresh and request.tests in self._at_once
        concurrency = self.concurrency if at_once else 1
        baseline = self._baselines.get(request.tests)
        subset = (choose(_loads(baseline), baseline, request.mutated)
                  if request.mutant and not request.fresh and baseline is not None else None)
        if subset is None:
            return self._as_baseline(self._run(request, concurrency), request, baseline)
        if not subset.ran:
            return _stood(request, subset, baseline)
        facts = self._as_baseline(self._run(replace(request, tests=subset.ran), concurrency),
                                  request, baseline)
        extension = facts.extension
        assert isinstance(extension, NodeFacts)
        return with_stood(replace(facts, extension=replace(extension, subset=subset)), subset)

    @staticmethod
    def _as_baseline(facts: RunFacts, request: RunRequest,
                     baseline: RunFacts | None) -> RunFacts:
        """A mutant's facts given its baseline's load record (not kept in the results): the
        mutant changes no code that runs before its file loads, so whether a process loads
        or reads the file is as in the baseline (`loaded`)."""
        extension = facts.extension
        loads = _loads(baseline) if baseline is not None else None
        if not request.mutant or loads is None or not isinstance(extension, NodeFacts):
            return facts
        return replace(facts, extension=replace(extension, loads=loads, keep_loads=False))

    def _run(self, request: RunRequest, concurrency: int) -> RunFacts:
        scratch = request.scratch
        shipped = resources.files("mutharness.runners.node")
        for name in (REPORTER, WATCH) if request.mutant else (REPORTER, WATCH, *RECORDER):
            (scratch / name).write_bytes(shipped.joinpath(name).read_bytes())
        events_path, lingering = scratch / "events.jsonl", scratch / "linger.jsonl"
        # the load record in runs without a mutant: a mutant's is its baseline's (`run`)
        env = self.environment(scratch, events_path, lingering,
                               None if request.mutant else request.cwd)
        if request.mutant and request.first_failure:
            env[FIRST_FAILURE] = "1"
        ask = LineAsk.asked(self.environ, request)
        if ask is not None:  # suggest's baseline: V8's block coverage of every node process
            (scratch / "coverage").mkdir(exist_ok=True)
            env["NODE_V8_COVERAGE"] = str(scratch / "coverage")
        result = process.run(
            self.argv(request.tests, scratch / REPORTER, scratch / "reporter.out",
                      scratch / WATCH, concurrency),
            cwd=request.cwd, env=env, log_path=scratch / "node.log",
            timeout_s=request.timeout_s,
        )
        loads = None if request.mutant else read_loads(scratch / "loads", request.cwd)
        if ask is not None and loads is not None:
            ask.write(coverage_record(scratch / "coverage", scratch / "loads", loads,
                                      request.cwd, ask.files))
        events = read_events(events_path, request.cwd)
        lingered = read_lingering(lingering, request.cwd)
        for entry in lingered:
            if entry.file not in self._told:
                self._told.add(entry.file)
                self.note(entry.note())
        state = _state(events)
        return RunFacts(
            runner=NAME,
            exit_status=result.returncode,
            signal=result.signal_number,
            timed_out=result.timed_out,
            timeout_s=request.timeout_s,
            duration_s=result.duration_s,
            report=state,
            exit=exit_meaning(result.returncode),
            outcomes=_outcomes(events),
            # a file that failed to load, or exited before reporting its tests, ran no tests
            collection_errors=(*events.file_failures, *events.silent_files),
            log_path=result.log_path,
            # a file that failed to load: node's cause from the log, else its last lines
            log_tail=(self._cause(Path(result.log_path), request.cwd, events)
                      or log_tail(Path(result.log_path))),
            free_bytes=free_bytes(state, Path(result.log_path)),
            extension=NodeFacts(
                events.node_version, events.file_failures, events.silent_files,
                events.unreported, events.suite_failures, events.summary, events.diagnostics,
                lingered, concurrency, loads, stopped_after=events.stopped,
            ),
            route="concurrent" if concurrency > 1 else "",
        )

    def _cause(self, log: Path, cwd: Path, events: NodeEvents) -> str:
        """Why a file failed to load, as node's log says, with a remedy (`causes`)."""
        if not events.file_failures:
            return ""
        user_root = self.isolation.user_root if self.isolation is not None else None
        return load_cause(log, cwd, version_of(events.node_version or self.version), user_root)

    def forget(self, paths: Sequence[Path] | None) -> None:
        """Nothing to forget: node compiles every run's modules afresh."""

    def isolation_problem(self, facts: RunFacts, files: SpecFiles) -> MutharnessError | None:
        """node resolves modules from the checkout it runs in: nothing to check yet."""
        return None

    def loaded(self, facts: RunFacts, path: Path) -> bool | None:
        """Whether any process of the run loaded or read the mutated file at `path` (None
        where the record cannot tell: none, or a process started a program no hook sees);
        a mutant no file's process loaded or read in the baseline ran none: False."""
        extension = facts.extension
        if isinstance(extension, NodeFacts) and extension.subset is not None \
                and not extension.subset.ran:
            return False
        loads = _loads(facts)
        if loads is None:
            return None
        try:
            relative = path.resolve().relative_to(Path(loads.root).resolve()).as_posix()
        except ValueError:
            return None
        used = relative in loads.used()
        return True if used else (False if loads.whole else None)

    def imported(self, facts: RunFacts, root: Path) -> tuple[str, ...]:
        """The files of the workspace any process of the run loaded or read."""
        loads = _loads(facts)
        return () if loads is None else tuple(sorted(loads.used()))

    def records(self, facts: RunFacts) -> frozenset[str]:
        """Imports and reads, where every process recorded both and started no other program."""
        loads = _loads(facts)
        return RECORDS if loads is not None and loads.whole else frozenset()


RECORDS = frozenset({"imports", "reads"})


def _stood(request: RunRequest, subset: Subset, baseline: RunFacts | None) -> RunFacts:
    """A mutant no test file's process loaded or read in the baseline: no file runs, every
    baseline outcome stands (the run's log says so)."""
    log = request.scratch / "node.log"
    log.write_text(subset.describe(request.mutated) + "\n", encoding="utf-8")
    version = (baseline.extension.node_version if baseline is not None
               and isinstance(baseline.extension, NodeFacts) else "")
    return RunFacts(
        runner=NAME, exit_status=0, signal=None, timed_out=False, timeout_s=request.timeout_s,
        duration_s=0.0, report=ReportState.OK, exit=exit_meaning(0), outcomes=subset.outcomes,
        collection_errors=(), log_path=str(log), log_tail=log_tail(log), free_bytes=None,
        extension=NodeFacts(version, subset=subset),
    )


def _loads(facts: RunFacts) -> LoadRecord | None:
    extension = facts.extension
    return extension.loads if isinstance(extension, NodeFacts) else None
