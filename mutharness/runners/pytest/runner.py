"""The pytest runner: `python -m pytest`, counted by the probe plugin, imports checked."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from mutharness import process
from mutharness.environment import is_below
from mutharness.errors import (
    EnvironmentProblem,
    InstalledCopyError,
    MutharnessError,
    ShadowedImportError,
)
from mutharness.imports import (
    ImportRecord,
    copies,
    loaded_below,
    loaded_file,
    read_below,
    read_record,
    shadowed,
)
from mutharness.runners import bytecode
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
from mutharness.runners.pytest.forked import MODULE as SERVER_MODULE
from mutharness.runners.pytest.forked import ForkServer, ServerUnusable
from mutharness.runners.pytest.rules import NAME
from mutharness.runners.sandbox import sandboxed

PROBE_MODULE = "_mutharness_probe"
BOOT_MARKER = "mutharness-boot"  # names a run's start-up directory (stripped from a nested run)
USER_ROOT = "MUTHARNESS_USER_ROOT"  # these four: see _startup
WORKSPACE_ROOT = "MUTHARNESS_WORKSPACE_ROOT"
WORKSPACE_BASE = "MUTHARNESS_WORKSPACE_BASE"
IMPORTS = "MUTHARNESS_IMPORTS"
DROP_ADDOPTS = "MUTHARNESS_DROP_ADDOPTS"  # see _probe
REPORT_OUT = "MUTHARNESS_REPORT_OUT"  # see _probe
PROBE_OUT = "MUTHARNESS_PROBE_OUT"  # see _probe
LINES = "MUTHARNESS_LINES"  # see _probe: asked only by suggest's baseline (`LineAsk`)
# pytest injection points, bytecode settings, and what starts coverage in every process
# (coverage's own and pytest-cov 2-6's .pth lines): coverage serves no verdict
SCRUBBED = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE",
            "COVERAGE_PROCESS_START", "COVERAGE_PROCESS_CONFIG")
SCRUBBED_PREFIXES = ("GIT_", "MUTHARNESS_", "COV_CORE_")
PROBE_TIMEOUT_S = 120.0
MIN_PYTEST = "7.4"  # the oldest pytest mutharness is tested with (tests/harness/test_pytest_floor)
PYTEST_OK = 0
PYTEST_TESTS_FAILED = 1
_SKIP_REASON = re.compile(r"^Skipped: ?")


@dataclass(frozen=True)
class PytestFacts:
    """What only pytest observes: its own exit code in the report, the imports, its config file."""

    pytest_exit: int | None = None
    imports: ImportRecord = field(default_factory=ImportRecord)
    config_file: str | None = None  # the pytest configuration file the run used
    distributed: bool = False  # pytest-xdist ran the tests in worker processes (-n)
    # a run without a mutant: the (module, repo-relative file) pairs it loaded from the
    # workspace, as the results keep them (a -j worker proves its own workspace against them)
    modules: tuple[tuple[str, str], ...] | None = None
    # a run without a mutant: the repo-relative files of the workspace it opened (a data file
    # read at import, say), as the results keep them (what `--since` reads back)
    read: tuple[str, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        """The facts the results file keeps (a mutant's import record is summarised by
        `loaded`; a baseline's modules from the workspace are kept)."""
        document: dict[str, Any] = {"pytest_exit": self.pytest_exit,
                                    "config_file": self.config_file}
        if self.distributed:
            document["distributed"] = True
        if self.modules is not None:
            document["modules"] = [list(pair) for pair in self.modules]
        if self.read is not None:
            document["read"] = list(self.read)
        return document

    def inputs(self) -> tuple[str, ...]:
        """The checkout's files the run read as configuration: pytest's config file."""
        if self.config_file is None or self.config_file.startswith("none "):
            return ()
        return (self.config_file,)


def _is_boot_dir(entry: str) -> bool:
    return bool(entry) and os.path.isfile(os.path.join(entry, BOOT_MARKER))


def child_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The child's environment: ours without pytest injection points, what starts coverage,
    GIT_* variables, an enclosing mutharness run's variables and start-up directory."""
    env = {
        key: value
        for key, value in environ.items()
        if key not in SCRUBBED and not key.startswith(SCRUBBED_PREFIXES)
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


def _stage(test: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    found = test.get(name)
    return found if isinstance(found, Mapping) else {}


def _reason_of(longrepr: object) -> str | None:
    """A skip's reason from pytest-json-report's `('file', line, 'Skipped: why')` (None when
    `longrepr` is not one)."""
    if not isinstance(longrepr, str) or not longrepr.startswith("("):
        return None
    try:
        parsed = ast.literal_eval(longrepr)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if isinstance(parsed, tuple) and len(parsed) == 3 and isinstance(parsed[2], str):
        return _SKIP_REASON.sub("", parsed[2])
    return None


def _skip_reason(test: Mapping[str, Any]) -> str:
    """The reason of a test's skip, from whichever stage skipped it."""
    for name in ("setup", "call", "teardown"):
        reason = _reason_of(_stage(test, name).get("longrepr"))
        if reason is not None:
            return reason
    return ""


_PYTEST_WORDS = frozenset(
    (Outcome.PASSED, Outcome.FAILED, Outcome.ERROR, Outcome.SKIPPED, Outcome.XFAILED,
     Outcome.XPASSED)
)


SUBTESTS_PASSED = "subtests passed"  # pytest 9's own subtests, as pytest-json-report words it


def _outcome(test: Mapping[str, Any]) -> Outcome:
    word = str(test["outcome"])
    if word == SUBTESTS_PASSED:
        # the test's last report was a passing subtest's; a failing subtest does not change
        # the word: the probe plugin records it, and `_outcomes` makes that test a failure
        word = Outcome.PASSED.value
    try:
        outcome = Outcome(word)
    except ValueError:
        return Outcome.UNKNOWN
    if outcome not in _PYTEST_WORDS:
        return Outcome.UNKNOWN  # our own words, and node's, never come from a pytest report
    if outcome is Outcome.PASSED and "call" not in test:
        return Outcome.NO_CALL
    return outcome


def _module_skips(document: Mapping[str, Any]) -> tuple[TestOutcome, ...]:
    """Test modules that skipped as a whole (`pytest.skip(allow_module_level=True)`, a
    module-level `importorskip`): one skipped entry each, named by the module, with its
    reason; their tests never ran and are never counted."""
    return tuple(
        TestOutcome(str(collector.get("nodeid")), Outcome.SKIPPED, 0.0,
                    _reason_of(collector.get("longrepr")) or "")
        for collector in document.get("collectors", [])
        if collector.get("outcome") == "skipped" and collector.get("nodeid")
    )


def _outcomes(
    document: Mapping[str, Any], subtest_failures: frozenset[str] = frozenset()
) -> tuple[TestOutcome, ...]:
    """Every test's outcome, and each module skipped as a whole; a test with a failing
    subtest (pytest's own reports, recorded by the probe plugin) failed, whatever word the
    report gives it."""
    outcomes: list[TestOutcome] = list(_module_skips(document))
    for test in document.get("tests", []):
        stages = (_stage(test, name) for name in ("setup", "call", "teardown"))
        duration = sum(float(stage.get("duration", 0.0)) for stage in stages)
        outcome = _outcome(test)
        if str(test["nodeid"]) in subtest_failures and not outcome.is_failure:
            outcome = Outcome.FAILED
        reason = _skip_reason(test) if outcome is Outcome.SKIPPED else ""
        outcomes.append(TestOutcome(str(test["nodeid"]), outcome, duration, reason))
    return tuple(outcomes)


def _collection_errors(document: Mapping[str, Any]) -> tuple[str, ...]:
    """Collectors that failed (a module skipped as a whole is a skip, not an error)."""
    return tuple(
        str(collector.get("nodeid") or "<session>")
        for collector in document.get("collectors", [])
        if collector.get("outcome") not in ("passed", "skipped")
    )


def read_report(
    path: Path, started_wall: float, exit_status: int | None
) -> tuple[ReportState, Mapping[str, Any]]:
    """Load the probe plugin's report (pytest-json-report's shape) and judge whether it
    belongs to this run."""
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
        if Path(inipath).resolve().parent == cwd.resolve().parent:  # the workspace's own
            return ("none in the repository (pytest stopped at mutharness's empty "
                    f"{Path(inipath).name} above the checkout)")
        return f"none in the repository (pytest read {Path(inipath).name} above the checkout)"


def exit_meaning(status: int | None) -> RunExit:
    """pytest's exit codes in the runner-neutral words."""
    if status == PYTEST_OK:
        return RunExit.ALL_PASSED
    if status == PYTEST_TESTS_FAILED:
        return RunExit.TESTS_FAILED
    return RunExit.OTHER


class PytestRunner:
    """`python -m pytest` in a child process, reporting through the probe plugin: a fresh
    interpreter, or (given a `server_dir`, where fork exists) a child of the fork server
    that imports the project afresh, once a run of the test set there gave the fresh
    baseline's facts."""

    name = NAME

    def __init__(
        self, python: str, environ: Mapping[str, str], pycache: Path,
        isolation: Isolation | None = None, addopts: str | None = None,
        user_base: str | None = None, probe_dir: Path | None = None,
        server_dir: Path | None = None, note: Callable[[str], None] | None = None,
        drop_addopts: tuple[str, ...] = (),
    ) -> None:
        self.python = python
        self.environ = dict(environ)
        self.pycache = pycache  # the bytecode cache (bytecode.py); the workspace's part is
        #                         purged before every run and when the runner closes
        self.isolation = isolation
        self.addopts = addopts  # replaces the project's `addopts` (the pytest-addopts option)
        self.drop_addopts = drop_addopts  # removed from them by name (pytest-drop-addopts)
        self.user_base = user_base  # the interpreter's user site base, kept under a private HOME
        self.probe_dir = probe_dir or pycache.parent / "probe"
        # the fork server (a child per run that imports the project afresh) when given a
        # directory for it and fork() exists; `fallback` says why it is no longer used,
        # `note` tells the user once
        self.server_dir = server_dir if hasattr(os, "fork") else None
        self.note = note or (lambda text: None)
        self.server: ForkServer | None = None
        self.server_ready = False
        self.fallback: str | None = None
        self.proven: set[tuple[str, ...]] = set()  # test sets whose forked run matched
        self.probing: process.Started | None = None  # the interpreter's probe, once begun
        # the workspace's modules are compiled once and read by every later run; the whole
        # workspace's bytecode is forgotten before the first run and when `forget` says so
        self.stale_workspace = True

    def begin(self) -> None:
        """The interpreter's probe started (it needs no workspace)."""
        if self.probing is None:
            self.probe_dir.mkdir(parents=True, exist_ok=True)
            self.probing = start_probe(self.python, self.environ, self.probe_dir)

    def start(self) -> dict[str, str]:
        """The interpreter probed: pytest's floor; versions for the results.
        The bytecode cache loses what it kept for workspaces that no longer exist."""
        if self.isolation is not None:
            bytecode.prune(self.pycache, self.isolation.workspace_base.parent)
        self.begin()
        probing, self.probing = self.probing, None
        assert probing is not None
        found = probe_interpreter(self.python, probing)
        user_base = found.pop("user_base", None)
        if user_base is not None:
            self.user_base = user_base
        return found

    def close(self) -> None:
        """Stop the fork server, if one runs, and drop the bytecode of the workspace's
        modules (nothing else outlives a run of this runner)."""
        if self.probing is not None:  # begun, never waited for
            self.probing.abandon()
            self.probing = None
        self._stop_server()
        if self.isolation is not None:
            bytecode.forget(self.pycache, self.isolation.workspace_base)

    def adopt(self, request: RunRequest,
              measured: Callable[[], RunFacts | None]) -> RunFacts | None:
        """Another workspace's green baseline of `request`'s tests (`measured`, read back from
        its results, waited for once the tests have run here) made this one's, when their run
        here in a child of the fork server gives the same facts (its modules from the
        workspace as recorded): without a fresh baseline of its own. None when it cannot be
        (no fork server, one that cannot serve, any difference): then this workspace
        measures its own."""
        if request.tests in self.proven or (server := self._server()) is None:
            return None
        try:  # while the other worker measures its baseline
            forked = self._run(request, request.scratch, server)
        except ServerUnusable:
            return None  # no note: the baseline measured here, and its proof, say why
        recorded = measured()
        baseline = _read_back(recorded) if recorded is not None else None
        if (baseline is None or baseline.timed_out
                or differences(baseline, forked, request.cwd) is not None):
            return None
        self.proven.add(request.tests)
        return replace(baseline, extension=replace(_pytest_facts(baseline),
                                                   imports=_imports(forked)))

    def _stop_server(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None
            self.server_ready = False

    def _fall_back(self, reason: str) -> None:
        """Use a fresh process per run from now on, and say why (once)."""
        if self.fallback is None:
            self.fallback = reason
            self.note(f"pytest runs in a new interpreter per run for the rest of this verify: "
                      f"{reason}")
        self._stop_server()

    def _launch(self) -> None:
        """The fork server started, unless it runs or the runner fell back: it imports pytest
        meanwhile (a baseline's run), and `_server` waits for it."""
        if self.fallback is not None or self.server_dir is None or self.server is not None:
            return
        directory = _fresh(self.server_dir)
        boot = directory / "boot"
        self._boot(boot)
        (boot / f"{SERVER_MODULE}.py").write_bytes(
            resources.files("mutharness.runners.pytest").joinpath("_forkserver.py").read_bytes()
        )
        cwd = directory / "cwd"
        cwd.mkdir()
        env = self.environment(cwd, directory, boot)
        try:
            self.server = ForkServer.launch(self.python, env, cwd, directory / "server.log")
        except OSError as error:
            self._fall_back(f"the pytest fork server did not start: {_reason(error)}")

    def _server(self) -> ForkServer | None:
        """The fork server, once it has imported pytest (None once the runner fell back)."""
        self._launch()
        if self.server is not None and not self.server_ready:
            try:
                self.server.ready()
            except (ServerUnusable, OSError) as error:
                self.server = None  # closed by `ready`
                self._fall_back(f"the pytest fork server did not start: {_reason(error)}")
                return None
            self.server_ready = True
        return self.server

    def stops_at_first_failure(self, tests: tuple[str, ...], baseline: RunFacts) -> bool:
        """`--maxfail=1`, but not under pytest-xdist: its workers stop a session at --maxfail
        as an interrupted one (exit 2), which proves nothing."""
        del tests
        extension = baseline.extension
        return not (isinstance(extension, PytestFacts) and extension.distributed)

    def argv(
        self, tests: Sequence[str], cwd: Path, keep_going: bool = False,
        first_failure: bool = False, mutant: bool = False,
    ) -> list[str]:
        """The fixed command line; spec text only ever appears as test paths after the options.

        A mutant's failures are reported one line each (`--tb=line`): only the outcomes
        decide its verdict, and formatting full tracebacks was 7.4 s of a 7.9 s run that
        failed 124 tests, time a limit relative to the baseline does not allow for."""
        return [
            self.python, "-m", "pytest",
            "-p", PROBE_MODULE,
            "-p", "no:randomly",
            "-p", "no:cacheprovider",
            "-p", "no:rerunfailures",
            "--rootdir", str(cwd),
            *(["-o", f"addopts={self.addopts}"] if self.addopts is not None else []),
            # after every addopts (pytest puts them before these): no conftest.py above the
            # workspace loads, whatever --confcutdir the project's options name
            "--confcutdir", str(cwd),
            # overrides a project's -x/--maxfail: every run runs every test (but --first-failure)
            "--maxfail=1" if first_failure else "--maxfail=0",
            *(["--continue-on-collection-errors"] if keep_going else []),
            "-q", "--color=no",
            *(["--tb=line"] if mutant else []),
            *tests,
        ]

    def environment(self, cwd: Path, scratch: Path, boot: Path) -> dict[str, str]:
        """The run's environment: scrubbed, private temp and home, the start-up hook first
        (the private directories are made in `scratch`)."""
        env = sandboxed(child_environment(self.environ), scratch, self.isolation)
        env["PYTHONPYCACHEPREFIX"] = str(self.pycache)  # pytest's own bytecode stays warm
        env["PYTHONHASHSEED"] = "0"
        env |= _outputs(scratch)
        if self.drop_addopts:
            env[DROP_ADDOPTS] = json.dumps(list(self.drop_addopts))
        if self.user_base is not None:  # `pip install --user` packages stay importable
            env["PYTHONUSERBASE"] = self.user_base
        entries = [entry for entry in env.get("PYTHONPATH", "").split(os.pathsep) if entry]
        if self.isolation is not None:
            isolation = self.isolation
            env[USER_ROOT] = str(isolation.user_root)
            env[WORKSPACE_ROOT] = str(isolation.workspace_root)
            env[WORKSPACE_BASE] = str(isolation.workspace_base)
            entries = [
                _remapped_entry(entry, isolation.user_root, isolation.workspace_root)
                for entry in entries
            ]
        env["PYTHONPATH"] = os.pathsep.join([str(boot), *entries])
        return env

    @staticmethod
    def _boot(boot: Path) -> None:
        """A run's start-up directory: the probe plugin and the start-up hook."""
        boot.mkdir()
        package = resources.files("mutharness.runners.pytest")
        (boot / f"{PROBE_MODULE}.py").write_bytes(package.joinpath("_probe.py").read_bytes())
        (boot / "sitecustomize.py").write_bytes(package.joinpath("_startup.py").read_bytes())
        (boot / BOOT_MARKER).write_text("the start-up directory of one mutharness run\n")

    def run(self, request: RunRequest) -> RunFacts:
        """Run the request's tests in its `cwd`; its `scratch` holds this run's files: in a
        child of the fork server once `prove` has shown it gives these tests' facts (a
        baseline's run starts the server, which imports pytest meanwhile)."""
        if not request.mutant and request.tests not in self.proven:
            self._launch()
        server = self.server if request.tests in self.proven else None
        if server is None or request.keep_going:
            return self._run(request, request.scratch, None)
        try:
            return self._run(request, request.scratch, server)
        except ServerUnusable as error:
            self._fall_back(f"the pytest fork server failed: {error.reason}")
            return self._run(request, _fresh(request.scratch / "again"), None)

    def prove(self, request: RunRequest, baseline: RunFacts) -> None:
        """Run the tests of a green `baseline` (a fresh process's) once more, forked: the same
        facts make later runs of these tests forked children; any difference, or a server
        that fails, makes every later run a fresh process (and the user is told why). A proof
        that would cost more than the server can save is not run (`worth_proving`): those
        mutants run in new interpreters, which give the same verdicts."""
        if request.tests in self.proven or baseline.timed_out:
            return
        server = self._server()
        if server is None or not worth_proving(baseline, request.mutants, server.start_s):
            return
        try:
            forked = self._run(request, request.scratch, server)
        except ServerUnusable as error:
            self._fall_back(f"the pytest fork server failed: {error.reason}")
            return
        difference = differences(baseline, forked, request.cwd)
        if difference is not None:
            self._fall_back(
                f"a forked run of {' '.join(request.tests)} differed from a fresh process's "
                f"({difference})"
            )
        else:
            self.proven.add(request.tests)

    def _run(self, request: RunRequest, scratch: Path, server: ForkServer | None) -> RunFacts:
        cwd = request.cwd
        report = scratch / "report.json"
        if self.stale_workspace:
            bytecode.forget(self.pycache, cwd)
            self.stale_workspace = False
        started_wall = time.time()
        argv = self.argv(request.tests, cwd, request.keep_going, request.first_failure,
                         request.mutant)
        boot = scratch / "boot"
        self._boot(boot)
        env = self.environment(cwd, scratch, boot)
        ask = LineAsk.asked(self.environ, request)
        if ask is not None:
            env[LINES] = json.dumps({
                "files": [str(cwd.joinpath(*path.split("/"))) for path in ask.files],
                "out": str(_fresh(scratch / "lines"))})
        if server is not None:
            result = server.run(argv[3:], cwd=cwd, env=env,
                                log_path=scratch / "pytest.log", timeout_s=request.timeout_s)
        else:
            result = process.run(argv, cwd=cwd, env=env, log_path=scratch / "pytest.log",
                                 timeout_s=request.timeout_s)
        state, document = read_report(report, started_wall, result.returncode)
        probe = _read_json(scratch / "probe.json")
        if state is ReportState.OK and not probe:
            # The probe writes at session end, like the report plugin: a report without it was
            # written by something else (a test forging one, then os._exit) or cut short.
            state = ReportState.UNFINISHED
        imports = read_record(scratch / "imports", probe)
        if ask is not None:
            ask.write(line_record(scratch / "lines", imports, cwd, ask.files))
        return RunFacts(
            runner=NAME,
            exit_status=result.returncode,
            signal=result.signal_number,
            timed_out=result.timed_out,
            timeout_s=request.timeout_s,
            duration_s=result.duration_s,
            report=state,
            exit=exit_meaning(result.returncode),
            outcomes=_outcomes(document, frozenset(
                str(nodeid) for nodeid in probe.get("subtest_failures", ()))
            ) if document else (),
            collection_errors=_collection_errors(document) if document else (),
            log_path=result.log_path,
            log_tail=log_tail(Path(result.log_path)),
            free_bytes=free_bytes(state, Path(result.log_path)),
            extension=PytestFacts(
                pytest_exit=int(document["exitcode"]) if "exitcode" in document else None,
                imports=imports,
                config_file=_config_name(probe.get("inipath"), cwd),
                distributed=bool(probe.get("distributed")),
                modules=None if request.mutant else tuple(sorted(loaded_below(imports, cwd))),
                read=None if request.mutant else tuple(sorted(read_below(imports, cwd))),
            ),
        )

    def forget(self, paths: Sequence[Path] | None) -> None:
        """The bytecode of the workspace's modules at `paths` (each a module, or a directory
        of them) forgotten; of every module of the workspace before the next run (None)."""
        if paths is None:
            self.stale_workspace = True
            return
        for path in paths:
            bytecode.forget(self.pycache, path)
            bytecode.forget_module(self.pycache, path)

    def isolation_problem(self, facts: RunFacts, files: SpecFiles) -> MutharnessError | None:
        """Why a run's imports make its mutants' verdicts meaningless (None when they do not):
        a tracked file loaded from the user's tree, or a target's module from a copy."""
        record = _imports(facts)
        shadow = shadowed(record, files.user_root, files.workspace_root, files.tracked)
        if shadow is not None:
            via = (
                "a .pth file run while Python started, before mutharness's start-up hook"
                if shadow.loaded.early else
                "a load by file path (importlib.util.spec_from_file_location, runpy, exec)"
            )
            return ShadowedImportError(
                files.spec_id, shadow.loaded.module, shadow.loaded.file, via, shadow.where
            )
        found = next(
            iter(copies(record, files.workspace_root, list(files.targets), files.tracked)), None
        )
        if found is None:
            return None
        return InstalledCopyError(
            files.spec_id, found.target, found.loaded.module, found.loaded.file, found.where
        )

    def loaded(self, facts: RunFacts, path: Path) -> bool | None:
        """Whether any process of the run imported the mutated `.py` file."""
        return loaded_file(_imports(facts), path) if path.suffix == ".py" else None

    def records(self, facts: RunFacts) -> frozenset[str]:
        """Imports and every file opened, unless a process started a program that is not
        Python (what it reads, no hook sees): then the imports alone."""
        return frozenset({"imports"} if _imports(facts).spawned else {"imports", "reads"})

    def imported(self, facts: RunFacts, root: Path) -> tuple[str, ...]:
        """The files under `root` any process of the run imported or opened (a data file
        read at import), from the import record."""
        extension = facts.extension
        read = (extension.read if isinstance(extension, PytestFacts)
                and extension.read is not None else read_below(_imports(facts), root))
        return tuple(sorted({file for _, file in _modules(facts, root)} | set(read)))


MAX_LINES_BYTES = 16 * 1024 * 1024  # a process's line record bigger than this is not read


@dataclass
class _Process:
    """One process's line record, as its file(s) say (`_probe._LineRecord`)."""

    how: str = ""  # sys.monitoring (its tool id) or sys.settrace
    ended: bool = False
    lost: list[str] = field(default_factory=list)
    early: set[int] = field(default_factory=set)
    ran: dict[int, set[int]] = field(default_factory=dict)
    called: dict[int, set[tuple[int, str]]] = field(default_factory=dict)


def _line_files(directory: Path) -> dict[int, _Process]:
    """Each process's line record by pid (its files are named `PID-RANDOM.lines`)."""
    processes: dict[int, _Process] = {}
    for path in sorted(directory.glob("*.lines")) if directory.is_dir() else ():
        try:
            pid = int(path.name.split("-", 1)[0])
            with path.open("rb") as handle:
                data = handle.read(MAX_LINES_BYTES + 1)
        except (ValueError, OSError):
            continue
        found = processes.setdefault(pid, _Process())
        if len(data) > MAX_LINES_BYTES:
            found.lost.append(f"its line record is over {MAX_LINES_BYTES} bytes")
        for raw in data.decode("utf-8", "replace").splitlines():
            kind, _, rest = raw.partition("\t")
            fields = rest.split("\t")
            try:
                if kind == "start":
                    found.how = found.how or rest
                elif kind == "line":
                    found.ran.setdefault(int(fields[0]), set()).add(int(fields[1]))
                elif kind == "call":
                    found.called.setdefault(int(fields[0]), set()).add(
                        (int(fields[1]), fields[2]))
                elif kind == "early":
                    found.early.add(int(fields[0]))
                elif kind == "lost":
                    found.lost.append(rest)
                elif kind == "end":
                    found.ended = True
            except (ValueError, IndexError):
                found.lost.append(f"a line of its record does not read: {raw[:100]!r}")
    return processes


def line_record(directory: Path, imports: ImportRecord, cwd: Path,
                files: Sequence[str]) -> dict[str, Any]:
    """The line record of a run (`LineAsk`) from the probe's files in `directory`: for each
    asked file (repo-relative) the lines any process ran and the functions that began to
    run; or why the record cannot speak for it: for none, where the pytest process's record
    did not reach the session's end, lost lines, or a process started a program that is not
    Python (what it runs, no record sees); for a file imported before the record began, or
    loaded by a process that kept no record (a Python program the tests started: the probe
    is pytest's plugin, and only pytest's processes and their forks load it)."""
    processes = _line_files(directory)
    main = processes.get(imports.main_pid) if imports.main_pid is not None else None
    lost = [f"pid {pid}: {why}" for pid, found in sorted(processes.items())
            for why in found.lost]
    whole = (f"a test started {', '.join(imports.spawned)}, a program that is not Python: "
             "what it runs, no line record sees" if imports.spawned
             else "the pytest process kept no line record" if main is None
             else "the pytest process's line record did not reach the session's end"
             if not main.ended
             else f"lines may have gone unrecorded ({'; '.join(lost)})" if lost else "")
    record: dict[str, Any] = {"files": {}, "silent": {}, "how": sorted(
        {found.how for found in processes.values() if found.how})}
    real = {file: os.path.realpath(cwd.joinpath(*file.split("/"))) for file in files}
    followed = set(processes)
    loaders: dict[str, set[int]] = {file: set() for file in files}
    names = {os.path.basename(path) for path in real.values()}
    for loaded in imports.loaded:
        if loaded.pid in followed or os.path.basename(loaded.file) not in names:
            continue
        for file, path in real.items():
            if os.path.realpath(loaded.file) == path:
                loaders[file].add(loaded.pid)
    for index, file in enumerate(files):
        unfollowed = sorted(loaders[file])
        why = whole or (
            "imported before the line record began (as Python started, or by a plugin "
            "pytest loaded first)" if any(index in found.early for found in processes.values())
            else f"a Python process the line record does not follow loaded it (pid "
                 f"{', '.join(map(str, unfollowed))}: a program the tests started)"
            if unfollowed else "")
        if why:
            record["silent"][file] = why
            continue
        record["files"][file] = {
            "ran": sorted({line for found in processes.values()
                           for line in found.ran.get(index, ())}),
            "called": sorted([line, name] for line, name in {
                pair for found in processes.values() for pair in found.called.get(index, ())}),
        }
    return record


def _outputs(scratch: Path) -> dict[str, str]:
    """Where a run in `scratch` writes what it tells the harness: the report, the probe's
    record, the import log (its directory made)."""
    (scratch / "imports").mkdir(exist_ok=True)
    return {REPORT_OUT: str(scratch / "report.json"), PROBE_OUT: str(scratch / "probe.json"),
            IMPORTS: str(scratch / "imports")}


def _fresh(path: Path) -> Path:
    """An empty directory at `path` (what a run before left there removed)."""
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def _reason(error: BaseException) -> str:
    if isinstance(error, ServerUnusable):
        return error.reason
    return str(getattr(error, "strerror", None) or error)


def _distributed(facts: RunFacts) -> bool:
    return isinstance(facts.extension, PytestFacts) and facts.extension.distributed


def differences(fresh: RunFacts, forked: RunFacts, cwd: Path) -> str | None:
    """The first way the forked run's facts differ from the fresh process's (None: alike).
    Under pytest-xdist the report lists tests as the workers finish them, an order that
    differs from run to run in fresh processes too: there the order is no difference."""
    def outcomes(facts: RunFacts) -> dict[str, tuple[str, str]]:
        return {o.nodeid: (o.outcome.value, o.reason) for o in facts.outcomes}

    before, after = outcomes(fresh), outcomes(forked)
    changed = [
        f"{nodeid} {before.get(nodeid, ('not run',))[0]} against "
        f"{after.get(nodeid, ('not run',))[0]}"
        for nodeid in dict.fromkeys([*before, *after]) if before.get(nodeid) != after.get(nodeid)
    ]
    in_order = not (_distributed(fresh) and _distributed(forked))
    if changed or (in_order and list(before) != list(after)):
        return "test outcomes: " + ("; ".join(changed[:3]) or "the same tests in another order")

    def extension(facts: RunFacts) -> tuple[object, ...]:
        found = facts.extension
        if not isinstance(found, PytestFacts):
            return ()
        return (found.pytest_exit, found.config_file, found.distributed)

    compared: tuple[tuple[str, Callable[[RunFacts], object]], ...] = (
        ("exit status", lambda facts: facts.exit_status),
        ("timed out", lambda facts: facts.timed_out),
        ("report", lambda facts: facts.report),
        ("collection errors", lambda facts: facts.collection_errors),
        ("pytest's exit code, config file or xdist use", extension),
        ("modules loaded from the workspace", lambda facts: _modules(facts, cwd)),
    )
    for what, fact in compared:
        if fact(fresh) != fact(forked):
            return f"{what}: {_brief(fact(fresh))} against {_brief(fact(forked))}"
    return None


def worth_proving(baseline: RunFacts, mutants: int, start_s: float) -> bool:
    """Whether a proof run of a test set (its tests' own time, as the baseline measured it)
    costs less than the fork server saves its `mutants` (an interpreter's start and pytest's
    import each, `start_s`): a slow suite with few mutants runs them in new interpreters."""
    return mutants * start_s > sum(outcome.duration_s for outcome in baseline.outcomes)


def _brief(value: object) -> str:
    if isinstance(value, frozenset):
        value = sorted(value)
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "..."


def _imports(facts: RunFacts) -> ImportRecord:
    extension = facts.extension
    return extension.imports if isinstance(extension, PytestFacts) else ImportRecord()


def _pytest_facts(facts: RunFacts) -> PytestFacts:
    extension = facts.extension
    assert isinstance(extension, PytestFacts)
    return extension


def _read_back(facts: RunFacts) -> RunFacts | None:
    """A baseline's facts read back from a results file with pytest's part of them as this
    runner keeps it (None when the record lacks what a proof compares: its modules)."""
    recorded = facts.extension.to_json()
    exit_code, config, modules = (recorded.get("pytest_exit"), recorded.get("config_file"),
                                  recorded.get("modules"))
    read = recorded.get("read")
    if (facts.runner != NAME or not isinstance(modules, list)
            or not all(isinstance(pair, list) and len(pair) == 2
                       and all(isinstance(part, str) for part in pair) for pair in modules)
            or not (exit_code is None or type(exit_code) is int)
            or not (config is None or isinstance(config, str))
            or not (read is None or (isinstance(read, list)
                    and all(isinstance(file, str) for file in read)))):
        return None
    return replace(facts, extension=PytestFacts(
        pytest_exit=exit_code, config_file=config,
        distributed=recorded.get("distributed") is True,
        modules=tuple((module, file) for module, file in modules),
        read=None if read is None else tuple(read),
    ))


def _modules(facts: RunFacts, cwd: Path) -> frozenset[tuple[str, str]]:
    """The (module, repo-relative file) pairs a run loaded from the workspace at `cwd`."""
    extension = facts.extension
    if isinstance(extension, PytestFacts) and extension.modules is not None:
        return frozenset(extension.modules)
    return loaded_below(_imports(facts), cwd)


_PROBE_CODE = """\
import json, os, platform, site, sys
from importlib.metadata import version
from importlib.util import find_spec
out = {'python': platform.python_version(), 'implementation': platform.python_implementation(),
       'python_executable': sys.executable}
try: out['pytest'] = version('pytest')
except Exception: out['pytest'] = ''
if site.ENABLE_USER_SITE:
    out['user_base'] = site.getuserbase()
out['has_pip'] = 'yes' if find_spec('pip') else ''
try:
    with open(os.path.join(sys.prefix, 'pyvenv.cfg'), encoding='utf-8') as cfg:
        out['made_by_uv'] = 'yes' if any(line.split('=')[0].strip() == 'uv' for line in cfg) else ''
except OSError:
    out['made_by_uv'] = ''
try:
    with open(os.path.join(sys.prefix, '.tox-info.json'), encoding='utf-8') as info:
        out['made_by_tox'] = str(json.load(info)['ToxEnv']['name'])
except Exception:
    out['made_by_tox'] = ''
print(json.dumps(out))
"""

_TOX_ENV = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")  # a name a remedy may repeat as given


def install_remedy(python: str, found: Mapping[str, object]) -> str:
    """How to install pytest into `python`'s environment, as the tool that made it installs
    (`found`: its probe's facts): uv's environments have no pip; tox's are remade from their
    deps."""
    requirement = f'"pytest>={MIN_PYTEST}"'
    tox = str(found.get("made_by_tox") or "")
    if tox and _TOX_ENV.fullmatch(tox):  # pip's install would be undone as tox recreates it
        return (f"install (the environment is tox's {tox}): list {requirement} in the deps of "
                f"tox's {tox} environment, then recreate it: tox -e {tox} --recreate --notest")
    if found.get("made_by_uv"):
        return f"install (the environment is uv's): uv pip install --python {python} {requirement}"
    if found.get("has_pip") == "":
        return (f"install: {python} -m ensurepip, then {python} -m pip install {requirement} "
                "(the environment has no pip)")
    return f"install: {python} -m pip install {requirement}"


def start_probe(python: str, environ: Mapping[str, str], scratch: Path) -> process.Started:
    """The probe of `python` started in `scratch` (`probe_interpreter` reads what it says)."""
    try:
        return process.Started(
            [python, "-c", _PROBE_CODE], cwd=scratch, env=child_environment(environ),
            log_path=scratch / "probe.log",
        )
    except OSError as error:
        raise EnvironmentProblem(f"cannot run the interpreter {python}: {error.strerror}") from None


def probe_interpreter(python: str, probing: process.Started) -> dict[str, str]:
    """Versions of Python and pytest in `python`, from its probe; a clear error if pytest is
    missing or too old. `user_base` is there when the interpreter has a user site directory."""
    result = probing.finish(PROBE_TIMEOUT_S)
    text = probing.log_path.read_text(encoding="utf-8", errors="replace")
    try:
        found = json.loads(text.strip().splitlines()[-1]) if result.returncode == 0 else None
    except (ValueError, IndexError):
        found = None
    if not isinstance(found, dict):
        raise EnvironmentProblem(f"the interpreter {python} did not run: {text.strip()[:500]}")
    if not found.get("pytest"):
        raise EnvironmentProblem(f"pytest not installed in {python}",
                                 remedy=install_remedy(python, found))
    if is_below(str(found["pytest"]), MIN_PYTEST):
        raise EnvironmentProblem(
            f"pytest {found['pytest']} in {python} is older than {MIN_PYTEST}, the oldest "
            "mutharness supports",
            remedy=install_remedy(python, found),
        )
    return {str(key): str(value) for key, value in found.items()
            if key not in ("has_pip", "made_by_uv", "made_by_tox")}  # the remedy's, no versions
