"""The commands up to the lock (specs, options, static check, --since, tree); then their lab."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mutharness.affected import Selection, select, test_roots
from mutharness.check import Committed, check_spec_files, tracked_with
from mutharness.errors import (
    DirtyTreeError,
    EnvironmentProblem,
    NothingSelected,
    WorkspaceError,
)
from mutharness.lab.bench import opened
from mutharness.lab.events import Listener, Phase
from mutharness.lab.pinning import measure_pins
from mutharness.lab.redfirst import Proof, prove
from mutharness.lab.session import Plan, Session
from mutharness.lock import repository_lock
from mutharness.options import Options, project_inputs, read_config, resolve
from mutharness.pins import Pin
from mutharness.redfirst import RedFirst
from mutharness.results import RunResult, write_red_first, write_results
from mutharness.runners import RUNNERS, detected, runner_kind
from mutharness.skips import SkipRules, load_policy, this_platform
from mutharness.spec import Spec, display_name
from mutharness.sweep import sweep_stale_workspaces
from mutharness.workspace import (
    SourceRepo,
    configure_git,
    enclosing_worktrees,
    open_source,
    status_paths,
    temp_directory,
)

__all__ = ["Phase", "Prepared", "Settings", "effective_options", "prepare", "verify"]


@dataclass(frozen=True)
class Settings:
    """What the command line asked for; the options are resolved against the project's config."""

    spec_paths: tuple[Path, ...]
    start: Path
    cli_options: Mapping[str, Any] = field(default_factory=dict)  # option name -> value given
    config: Path | None = None  # --config FILE
    allow_dirty: bool = False
    fail_fast: bool = False
    json_path: Path | None = None
    command: tuple[str, ...] = ()
    since: str | None = None  # --since REV: only the specs its changes affect


@dataclass(frozen=True)
class Prepared:
    """Everything decided before the lock: the repository, options, specs, tree, temp dir."""

    source: SourceRepo
    git_version: str
    options: Options
    specs: tuple[Spec, ...]  # checked; with --since, only the affected ones
    changes: tuple[str, ...]
    included: tuple[str, ...]
    tracked: frozenset[str]
    skip_rules: SkipRules
    selection: Selection | None  # what --since selected, and why
    temp_dir: Path
    run_dir: Path


def effective_options(settings: Settings, root: Path) -> Options:
    """The options in force: the command line over the project config over the defaults."""
    values, config_file = read_config(root, settings.config)
    return resolve(settings.cli_options, values, config_file)


def skip_rules(source: SourceRepo, options: Options, included: tuple[str, ...]) -> SkipRules:
    """The platform skip policy as the workspace will hold it (HEAD's bytes, or the working
    tree's under --allow-dirty), for this platform, strict or not."""
    path = options["platform-skips"]
    if path in included:
        file = source.root / path
        data = file.read_bytes() if file.is_file() and not file.is_symlink() else None
    else:
        data = source.committed_bytes(path)
    return SkipRules(load_policy(data, path), this_platform(), options["strict-skips"])


def since_selection(
    source: SourceRepo, rev: str, specs: tuple[Spec, ...], options: Options,
    tracked: frozenset[str],
) -> Selection:
    """The specs the changes since `rev` (committed, uncommitted, untracked) affect."""
    base = source.base_commit(rev)
    extra = {options["platform-skips"]}
    for runner in {spec.runner for spec in specs}:
        extra.update(project_inputs(options, runner))
    return select(rev, base, source.changed_since(base), specs, sorted(extra), tracked)


def prepare(settings: Settings, environ: Mapping[str, str]) -> Prepared:
    """Up to the lock: git, the repository, options, every spec checked (every problem at
    once), --since, the run directory, the dirty tree, the temp directory; raises on any."""
    start = settings.start.resolve()
    git_info = configure_git(environ.get("PATH", os.defpath), refuse=enclosing_worktrees(start))
    source = open_source(start, git_info)
    options = effective_options(settings, source.root)
    display = [display_name(path, source.root) for path in settings.spec_paths]
    changes = source.changes()
    included = status_paths(changes) if settings.allow_dirty else ()
    modes = tracked_with(source, included)
    specs = check_spec_files(  # every problem of every spec at once, anchors included
        settings.spec_paths, display, source, tracked=modes,
        contents=Committed(source, frozenset(included)),
    )
    tracked = frozenset(modes)
    selection = None
    if settings.since is not None:
        selection = since_selection(source, settings.since, specs, options, tracked)
        specs = selection.specs
    if (problem := source.run_dir_problem(source.tracked())) is not None:
        raise WorkspaceError(f"{problem}; mutharness keeps its lock and results there")
    if changes and not settings.allow_dirty:
        raise DirtyTreeError(changes, source.filters)
    temp_dir = temp_directory(environ, source.root)
    return Prepared(
        source, git_info.version, options, specs, changes, included, tracked,
        skip_rules(source, options, included), selection, temp_dir, source.ensure_run_dir(),
    )


def locked(prepared: Prepared) -> AbstractContextManager[None]:
    """The repository lock, then the sweep of what runs killed outright left behind."""
    @contextmanager
    def held() -> Iterator[None]:
        with repository_lock(prepared.run_dir, prepared.options["lock-timeout"]):
            sweep_stale_workspaces(prepared.temp_dir)
            yield

    return held()


def verify(settings: Settings, listener: Listener, environ: Mapping[str, str]) -> RunResult:
    """Run every spec end to end and write the results file; raises before anything runs.

    After the lock is taken every failure (disk full, a git error, a closed stdout...) ends
    the run with its results written and the error in them, never a traceback."""
    prepared = prepare(settings, environ)
    json_path = settings.json_path or prepared.run_dir / "results.json"
    if prepared.selection is not None:
        if not prepared.specs:  # the results say so too: an older results file is no answer
            with locked(prepared):
                write_results(RunResult(
                    tool={}, commit=prepared.source.head, dirty=bool(prepared.changes),
                    dirty_changes=prepared.changes, command=settings.command, specs=(),
                    settings={"since": prepared.selection.rev,
                              "selection": prepared.selection.describe()},
                ), json_path)
            raise NothingSelected(prepared.selection.describe())
        listener.selected(prepared.selection)
    plan = Plan(
        source=prepared.source, specs=prepared.specs, options=prepared.options,
        tracked=prepared.tracked, changes=prepared.changes, included=prepared.included,
        fail_fast=settings.fail_fast, json_path=json_path,
        command=settings.command, git_version=prepared.git_version,
        skip_rules=prepared.skip_rules,
    )
    with locked(prepared):
        return Session(plan).execute(listener, environ, prepared.temp_dir)


def baseline(
    settings: Settings, listener: Listener, environ: Mapping[str, str], repeat: int | None,
    report: Callable[[Pin], None],
) -> tuple[Pin, ...]:
    """Measure each selected spec's tests `repeat` times (default: the `baseline-runs`
    option) and judge its pin (`mutharness baseline`)."""
    prepared = prepare(settings, environ)
    runs = repeat if repeat is not None else prepared.options["baseline-runs"]
    if prepared.selection is not None:
        if not prepared.specs:
            raise NothingSelected(prepared.selection.describe())
        listener.selected(prepared.selection)
    with locked(prepared):
        listener.head(prepared.source, prepared.changes)
        return measure_pins(
            prepared.source, prepared.included, prepared.tracked, prepared.options,
            prepared.specs, prepared.skip_rules, runs, listener, environ, prepared.temp_dir,
            report,
        )


@dataclass(frozen=True)
class RedFirstRequest:
    """What `mutharness redfirst` was asked: the base, the tests, how load errors count."""

    rev: str
    tests: tuple[str, ...] = ()  # --test entries; else the specs' tests; else changed tests
    expect_red: tuple[str, ...] = ()
    load_error_is_red: bool = False
    evidence_dir: Path | None = None  # its documents are never part of the fix


def _red_first_tests(
    request: RedFirstRequest, specs: tuple[Spec, ...], committed: tuple[str, ...],
    tracked: frozenset[str],
) -> tuple[str, tuple[str, ...]]:
    """(runner, test entries): `--test`, else the specs' tests, else the test files changed
    since the base (pytest's or node's test file names)."""
    if request.tests:
        tests = request.tests
        runner = detected(tests)
    elif specs:
        runners = {spec.runner for spec in specs}
        if len(runners) > 1:
            raise EnvironmentProblem(
                f"the specs name tests of different runners ({', '.join(sorted(runners))})",
                remedy="prove each runner's tests in its own redfirst run",
            )
        runner = runners.pop()
        tests = tuple(dict.fromkeys(entry for spec in specs for entry in spec.tests))
    else:
        found = {
            name: tuple(path for path in committed
                        if path in tracked and RUNNERS[name].is_test_module(path))
            for name in RUNNERS
        }
        kinds = [name for name, paths in found.items() if paths]
        if len(kinds) != 1:
            what = "no test file changed" if not kinds else "test files of several runners " \
                "changed"
            raise EnvironmentProblem(
                f"redfirst: {what} since {request.rev}",
                remedy="name the tests with --test PATH_OR_ID (or a spec whose tests to run)",
            )
        runner, tests = kinds[0], found[kinds[0]]
    kind = runner_kind(runner)
    problems = [f"{entry!r} {why}" for entry in tests
                if (why := kind.entry_problem(entry)) is not None]
    if problems:
        raise EnvironmentProblem(f"redfirst: a test entry cannot be used: {problems[0]}")
    return runner, tests


def _fix_files(
    committed: tuple[str, ...], runner: str, tests: tuple[str, ...], tracked: frozenset[str],
    records: tuple[str, ...],
) -> tuple[str, ...]:
    """The files of the fix: every path changed since the base that is not on the tests'
    side (the test files, a conftest.py, a helper beside the tests) nor a record of the
    measurements (the specs' directories, the evidence directory)."""
    kind = runner_kind(runner)
    entries = {kind.entry_path(entry) for entry in tests}
    roots = {root for root in test_roots(tests, runner, tracked) if root} | set(records)
    return tuple(
        path for path in committed
        if path not in entries and path.rsplit("/", 1)[-1] != "conftest.py"
        and not any(path.startswith(f"{root}/") for root in roots)
    )


def _records(source: SourceRepo, specs: tuple[Spec, ...], evidence: Path | None) -> tuple[
        str, ...]:
    """The repo-relative directories that hold the specs (`specs/` and the named specs') and
    the evidence (`--evidence`, else `evidence/`, where `evidence-check` looks for it)."""
    found = {spec.path.rsplit("/", 1)[0] for spec in specs if "/" in spec.path} | {"specs"}
    with suppress(ValueError):  # outside the repository: no file of the fix is in it
        found.add((evidence or source.root / "evidence").resolve().relative_to(
            source.root).as_posix())
    return tuple(sorted(path for path in found if path and path != "."))


def redfirst(
    settings: Settings, request: RedFirstRequest, listener: Listener,
    environ: Mapping[str, str],
) -> tuple[RedFirst, Path]:
    """Run the tests at HEAD and with the fix reverted (`mutharness redfirst`); the record,
    and the results file it was written to."""
    prepared = prepare(settings, environ)
    source = prepared.source
    base = source.base_commit(request.rev)
    committed = source.committed_since(base)
    runner, tests = _red_first_tests(request, prepared.specs, committed, prepared.tracked)
    fix = _fix_files(committed, runner, tests, prepared.tracked,
                     _records(source, prepared.specs, request.evidence_dir))
    if not fix:
        raise EnvironmentProblem(
            f"redfirst: no file outside the tests changed between {request.rev} and HEAD: "
            "there is no fix to revert",
            remedy="name the base the fix was made on (--base), e.g. the commit before it",
        )
    spec = Spec("red-first", "", "", tests, 0, (), runner)
    proof = Proof(request.rev, base, spec, fix, prepared.options["baseline-timeout"],
                  request.load_error_is_red, request.expect_red)
    with locked(prepared):
        listener.head(source, prepared.changes)
        listener.proving(proof)
        with opened(source, prepared.included, prepared.options, (spec,), listener, environ,
                    prepared.temp_dir) as bench:
            record = replace(prove(proof, source, bench.lab),
                             flags=tuple(prepared.options.flags()))
            tools = bench.runners.versions
    path = settings.json_path or prepared.run_dir / "redfirst.json"
    write_red_first(record, tuple(spec.id for spec in prepared.specs), settings.command,
                    tools, path)
    return record, path
