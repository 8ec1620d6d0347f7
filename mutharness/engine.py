"""The commands up to the lock (specs, options, static check, --since, tree); then their lab."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mutharness.check import Committed, check_spec_files, tracked_with
from mutharness.errors import (
    DirtyTreeError,
    MutharnessError,
    NothingSelected,
    RedFirstError,
    WorkspaceError,
)
from mutharness.lab.bench import opened
from mutharness.lab.events import Listener, Phase
from mutharness.lab.feed import Feed
from mutharness.lab.parallel import Parallel, WorkerJob, scratch_directory, worker_argv
from mutharness.lab.pinning import measure_pins
from mutharness.lab.redfirst import prove
from mutharness.lab.session import Plan, Session
from mutharness.lock import repository_lock
from mutharness.model.affected import Records, Selection, fix_files, select
from mutharness.model.pins import Pin
from mutharness.model.redfirst import Proof, RedFirst
from mutharness.model.results import RunResult, keep_previous, write_red_first, write_results
from mutharness.model.shards import Shard, ShardPlan
from mutharness.model.skips import SkipRules, load_policy, this_platform
from mutharness.model.spec import Spec, display_name
from mutharness.options import (
    ConfigReader,
    Options,
    config_problem,
    project_inputs,
    read_config,
    resolve,
    working_tree,
)
from mutharness.paths import repo_path
from mutharness.runners.registry import RUNNERS, detected, runner_kind
from mutharness.sweep import sweep_stale_workspaces
from mutharness.workspace import (
    REGULAR_MODES,
    SourceRepo,
    configure_git,
    enclosing_worktrees,
    open_source,
    status_paths,
    temp_directory,
)

__all__ = ["Phase", "Prepared", "Settings", "effective_options", "prepare", "record_refusal",
           "verify"]


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
    shard: Shard | None = None  # --shard k/n: only this shard's mutations
    jobs: int = 1  # -j N: N worker processes, each in its own workspace
    inherited: Inherited | None = None  # a -j worker: the tree its parent run measures
    feed: Path | None = None  # a -j worker: where its parent hands it mutations
    parent: int | None = None  # a -j worker: its parent's pid (it stops when that is gone)


@dataclass(frozen=True)
class Inherited:
    """What a `verify -j` worker takes from its parent instead of looking again: HEAD (which
    must not have moved) and the uncommitted changes, already judged (its results file may
    be one of them)."""

    head: str
    changes: tuple[str, ...]
    included: tuple[str, ...]


def settings_json(settings: Settings) -> dict[str, Any]:
    """`settings` as JSON (a `verify -j` worker's job): read back by `settings_from_json`."""
    return {
        "spec_paths": [str(path) for path in settings.spec_paths],
        "start": str(settings.start),
        "cli_options": {name: list(value) if isinstance(value, tuple) else value
                        for name, value in settings.cli_options.items()},
        "config": None if settings.config is None else str(settings.config),
        "allow_dirty": settings.allow_dirty, "fail_fast": settings.fail_fast,
        "json_path": None if settings.json_path is None else str(settings.json_path),
        "command": list(settings.command), "since": settings.since,
        "shard": None if settings.shard is None else str(settings.shard),
        "jobs": settings.jobs,
        "feed": None if settings.feed is None else str(settings.feed),
        "parent": settings.parent,
        "inherited": None if settings.inherited is None else {
            "head": settings.inherited.head, "changes": list(settings.inherited.changes),
            "included": list(settings.inherited.included),
        },
    }


def settings_from_json(document: Mapping[str, Any]) -> Settings:
    """The settings `settings_json` wrote."""
    return Settings(
        spec_paths=tuple(Path(path) for path in document["spec_paths"]),
        start=Path(document["start"]),
        cli_options={name: tuple(value) if isinstance(value, list) else value
                     for name, value in document["cli_options"].items()},
        config=None if document["config"] is None else Path(document["config"]),
        allow_dirty=document["allow_dirty"], fail_fast=document["fail_fast"],
        json_path=None if document["json_path"] is None else Path(document["json_path"]),
        command=tuple(document["command"]), since=document["since"],
        shard=None if document["shard"] is None else Shard.parse(document["shard"]),
        jobs=document["jobs"],
        feed=None if document["feed"] is None else Path(document["feed"]),
        parent=document["parent"],
        inherited=None if document["inherited"] is None else Inherited(
            document["inherited"]["head"], tuple(document["inherited"]["changes"]),
            tuple(document["inherited"]["included"]),
        ),
    )


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


def committed_config(source: SourceRepo, included: tuple[str, ...]) -> ConfigReader:
    """The project's config files as a run's workspace holds them: HEAD's bytes (the working
    tree's for a path `--allow-dirty` takes from it), never a link; a config file in the
    working tree that git does not report (ignored) is refused, as it would change a run
    of a tree reported clean without being part of it."""
    working = working_tree(source.root)

    def read(name: str) -> bytes | None:
        if name in included:
            return working(name)
        mode = source.mode_at(source.head, name)
        if mode == "120000":
            raise config_problem(name, "", "is committed as a symlink: a project config is read "
                                          "from a regular file only (never through a link)")
        if mode is None:
            if (source.root / name).exists() or (source.root / name).is_symlink():
                raise config_problem(name, "", "is in the working tree but not committed (a "
                                              "git-ignored file?): a run reads HEAD's bytes; "
                                              "commit it, or name it with --config")
            return None
        return source.committed_bytes(name)

    return read


def effective_options(
    settings: Settings, source: SourceRepo, included: tuple[str, ...] = (),
) -> Options:
    """The options in force: the command line over the project config (HEAD's bytes) over
    the defaults."""
    values, config_file = read_config(source.root, settings.config,
                                      committed_config(source, included))
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
    return select(rev, base, source.changed_since(base), specs, sorted(extra),
                  last_runs(source, options["since-records"], specs))


def last_runs(source: SourceRepo, directory: str, specs: Sequence[Spec]) -> Records:
    """Each spec's record of its last run: the files its evidence facts (HEAD's bytes) say
    its verdicts, count and red-first proof depended on; None where there is no such record."""
    from mutharness.reports.evidence import FACTS_SUFFIX  # Jinja2: only when --since is used
    from mutharness.reports.staleness import parse_facts

    found: dict[str, frozenset[str] | None] = {}
    where = repo_path(directory)
    for spec in specs:
        name = f"{spec.id}{FACTS_SUFFIX}"
        data = source.committed_bytes(f"{where}/{name}") if where is not None else None
        parsed = parse_facts(data.decode("utf-8", "replace"), name) if data else None
        found[spec.id] = None if parsed is None or isinstance(parsed, str) else frozenset(
            path for digests in parsed[1].values() for path in digests)
    return found


def prepare(settings: Settings, environ: Mapping[str, str]) -> Prepared:
    """Up to the lock: git, the repository, options, every spec checked (every problem at
    once), --since, the run directory, the dirty tree, the temp directory; raises on any."""
    start = settings.start.resolve()
    git_info = configure_git(environ.get("PATH", os.defpath), refuse=enclosing_worktrees(start))
    source = open_source(start, git_info)
    display = [display_name(path, source.root) for path in settings.spec_paths]
    inherited = settings.inherited
    if inherited is not None and source.head != inherited.head:
        raise WorkspaceError(f"HEAD moved from {inherited.head[:12]} to {source.head[:12]} "
                             "after the run started")
    changes = source.changes() if inherited is None else inherited.changes
    included = (inherited.included if inherited is not None
                else status_paths(changes) if settings.allow_dirty else ())
    options = effective_options(settings, source, included)
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
    if changes and not settings.allow_dirty and inherited is None:
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


def verify(
    settings: Settings, listener: Listener, environ: Mapping[str, str], lock: bool = True,
) -> RunResult:
    """Run every spec end to end and write the results file; raises before anything runs.

    After the lock is taken every failure (disk full, a git error, a closed stdout...) ends
    the run with its results written and the error in them, never a traceback. Without
    `lock` (a `verify -j` worker) the run is under its parent's lock. A run refused before
    it runs replaces the results file an earlier run left with its record of the refusal."""
    try:
        prepared = prepare(settings, environ)
    except MutharnessError as error:
        if lock:
            record_refusal(settings.json_path, settings.start, settings.command, environ, error)
        raise
    json_path = settings.json_path or prepared.run_dir / "results.json"
    if prepared.selection is not None:
        if not prepared.specs:  # the results say so too: an older results file is no answer
            with locked(prepared):
                keep_previous(json_path)
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
        skip_rules=prepared.skip_rules, shard=settings.shard,
        feed=None if settings.feed is None else Feed(settings.feed, settings.parent),
    )
    # no more workers than mutations to run (shard 1/1 is the whole run)
    jobs = min(settings.jobs, ShardPlan.of(plan.shard or Shard(1, 1), plan.specs).size)
    if not lock:
        return Session(plan).execute(listener, environ, prepared.temp_dir)
    with locked(prepared):
        if jobs > 1:
            return _parallel(settings, prepared, plan, jobs).execute(
                listener, environ, prepared.temp_dir)
        return Session(plan).execute(listener, environ, prepared.temp_dir)


def record_refusal(json_path: Path | None, start: Path, command: tuple[str, ...],
                   environ: Mapping[str, str], error: MutharnessError) -> None:
    """An earlier run's results must not outlive a refused one, for `render` or a CI step to
    read as this run's: the results file (`--json`, else `.mutharness/results.json` when the
    repository is known and its run directory usable), if there is one, is replaced by a
    record of the refusal (no specs, not complete, the error). A file another run holds the
    lock over is that run's, in progress, and is left to it."""
    source: SourceRepo | None = None
    with suppress(MutharnessError, OSError):
        root = start.resolve()
        source = open_source(root, configure_git(environ.get("PATH", os.defpath),
                                                 refuse=enclosing_worktrees(root)))
    run_dir = None
    with suppress(MutharnessError, OSError):
        if source is not None and source.run_dir_problem(source.tracked()) is None \
                and source.run_dir.is_dir():
            run_dir = source.run_dir
    path = json_path or (run_dir / "results.json" if run_dir is not None else None)
    if path is None or not path.is_file():
        return
    record = RunResult(
        tool={}, commit=source.head if source is not None else "", dirty=False,
        dirty_changes=(), command=command, specs=(), complete=False, error=error,
    )
    with suppress(MutharnessError, OSError):
        if run_dir is None:
            keep_previous(path)
            write_results(record, path)
            return
        with repository_lock(run_dir, 0):
            keep_previous(path)
            write_results(record, path)


def _parallel(settings: Settings, prepared: Prepared, plan: Plan, jobs: int) -> Parallel:
    """`jobs` workers, each handed the run's mutations (a shard's, with `--shard`) one at a
    time (`verify -j`)."""
    scratch = scratch_directory(prepared.temp_dir)
    workers = []
    for index in range(1, jobs + 1):
        results, feed = scratch / f"results-{index}.json", scratch / f"feed-{index}.jsonl"
        worker = replace(settings, jobs=1, shard=None, feed=feed, parent=os.getpid(),
                         json_path=results, fail_fast=False, inherited=Inherited(
                             prepared.source.head, prepared.changes, prepared.included))
        document = settings_json(worker)
        workers.append(WorkerJob(index, jobs, document, results, feed))
    return Parallel(plan, workers, scratch, worker_argv, settings.start)


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
    keep: tuple[str, ...] = ()  # --keep: paths on the tests' side, never reverted


def _with_directories(tracked: frozenset[str]) -> frozenset[str]:
    """The tracked paths and every directory above them."""
    return tracked | {path.rsplit("/", depth)[0] for path in tracked
                      for depth in range(1, path.count("/") + 1)}


def _red_first_tests(
    request: RedFirstRequest, specs: tuple[Spec, ...], committed: tuple[str, ...],
    tracked: frozenset[str],
) -> tuple[str, tuple[str, ...]]:
    """(runner, test entries): `--test`, else the specs' tests, else the test files changed
    since the base (pytest's or node's test file names); every entry names a tracked file or
    directory."""
    if request.tests:
        tests = request.tests
        runner = detected(tests)
    elif specs:
        runners = {spec.runner for spec in specs}
        if len(runners) > 1:
            raise RedFirstError(
                request.rev, f"the specs' tests are of different runners "
                f"({', '.join(sorted(runners))})",
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
            raise RedFirstError(
                request.rev, "no test file changed since" if not kinds
                else "test files of several runners changed since",
                remedy="name the tests with --test PATH_OR_ID (or a spec whose tests to run)",
            )
        runner, tests = kinds[0], found[kinds[0]]
    kind = runner_kind(runner)
    known = _with_directories(tracked)
    for entry in tests:
        if (why := kind.entry_problem(entry)) is not None:
            raise RedFirstError(request.rev, f"the test entry {entry!r} {why}")
        if kind.entry_path(entry) not in known:
            raise RedFirstError(request.rev, f"the test entry {entry!r} names nothing HEAD "
                                             "tracks", remedy="name a committed test file or id")
    return runner, tests


def _records(source: SourceRepo, specs: tuple[Spec, ...], evidence: Path | None) -> tuple[
        str, ...]:
    """The repo-relative directories that hold the specs (`specs/` and the named specs') and
    the evidence (`--evidence`, else `evidence/`, where `evidence-check` looks for it)."""
    found = {spec.path.rsplit("/", 1)[0] for spec in specs if "/" in spec.path} | {"specs"}
    with suppress(ValueError):  # outside the repository: no file of the fix is in it
        found.add((evidence or source.root / "evidence").resolve().relative_to(
            source.root).as_posix())
    return tuple(sorted(path for path in found if path and path != "."))


def _fork_point(source: SourceRepo, rev: str, base: str) -> str:
    """The commit the fix is reverted to: `base` when HEAD descends from it, else their merge
    base (a branch that moved on since: its later changes are not this fix)."""
    fork = source.fork_point(base)
    if fork is None and source.is_shallow():
        raise RedFirstError(
            rev, f"this shallow clone cannot tell where HEAD's history left {base[:12]}",
            remedy="fetch the history between them (actions/checkout with fetch-depth: 0, or "
            "git fetch --deepen=N), or name the commit the fix was made on",
        )
    if fork is None:
        raise RedFirstError(rev, f"{base[:12]} and HEAD share no history",
                            remedy="name the commit the fix was made on")
    if fork == source.head and base != source.head:
        raise RedFirstError(rev, f"{base[:12]} is a descendant of HEAD: HEAD holds no fix on "
                                 "top of it", remedy="name a commit before the fix")
    return fork


def _revertible(source: SourceRepo, rev: str, base: str, fix: tuple[str, ...]) -> None:
    """Every file of the fix can be put back: a regular file (or nothing) at the base."""
    for path in fix:
        mode = source.mode_at(base, path)
        if mode is not None and mode not in REGULAR_MODES:
            raise RedFirstError(
                rev, f"{path} cannot be reverted: at {base[:12]} it is not a regular file "
                f"(git mode {mode})", remedy="name the tests' side with --keep PATH if it is "
                "not part of the fix",
            )


def redfirst(
    settings: Settings, request: RedFirstRequest, listener: Listener,
    environ: Mapping[str, str],
) -> tuple[RedFirst, Path]:
    """Run the tests at HEAD and with the fix reverted (`mutharness redfirst`); the record,
    and the results file it was written to."""
    prepared = prepare(settings, environ)
    source = prepared.source
    named = source.base_commit(request.rev)
    base = _fork_point(source, request.rev, named)
    changed = tuple(sorted(set(source.committed_since(base)) | set(prepared.included)))
    runner, tests = _red_first_tests(request, prepared.specs, changed, prepared.tracked)
    known = _with_directories(prepared.tracked)
    for kept in request.keep:
        if kept not in known:
            raise RedFirstError(request.rev, f"--keep {kept} names nothing HEAD tracks",
                                remedy="name a repo-relative file or directory, / separated")
    fix = fix_files(changed, runner, tests, request.keep,
                    _records(source, prepared.specs, request.evidence_dir))
    if not fix:
        raise RedFirstError(
            request.rev, "no file outside the tests changed since: there is no fix to revert",
            remedy="name the base the fix was made on, e.g. the commit before it",
        )
    _revertible(source, request.rev, base, fix)
    spec = Spec("red-first", "", "", tests, 0, (), runner)
    proof = Proof(request.rev, base, spec, fix, prepared.options["baseline-timeout"],
                  request.load_error_is_red, request.expect_red,
                  named if named != base else "")
    with locked(prepared):
        listener.head(source, prepared.changes)
        listener.proving(proof)
        with opened(source, prepared.included, prepared.options, (spec,), listener, environ,
                    prepared.temp_dir) as bench:
            record = replace(prove(proof, source, bench.lab, prepared.tracked),
                             flags=tuple(prepared.options.flags()), keep=request.keep)
            tools = bench.runners.versions
    path = settings.json_path or prepared.run_dir / "redfirst.json"
    write_red_first(record, tuple(spec.id for spec in prepared.specs), settings.command,
                    tools, path)
    return record, path
