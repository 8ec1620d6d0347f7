"""What every command that runs tests does up to the lock: settings, options, specs, tree."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from mutharness.environment import is_below
from mutharness.errors import (
    DirtyTreeError,
    EnvironmentProblem,
    MutharnessError,
    SpecError,
    SpecProblem,
    WorkspaceError,
)
from mutharness.model.affected import Record, Records, Selection, select
from mutharness.model.rederive import Tree, TreeBytes
from mutharness.model.results import (
    RunResult,
    keep_previous,
    write_results,
)
from mutharness.model.shards import Shard
from mutharness.model.skips import SkipRules, load_policy, this_platform
from mutharness.model.spec import Spec, display_name
from mutharness.options import (
    LOCK_TIMEOUT,
    NODE_IMPORT,
    NODE_REQUIRE,
    PLATFORM_SKIPS,
    POLICY_NAME,
    PYTHON,
    SINCE_RECORDS,
    SPECS_DIR,
    STRICT_SKIPS,
    ConfigReader,
    Options,
    Source,
    config_problem,
    laid_out,
    project_inputs,
    read_config,
    resolve,
    working_tree,
)
from mutharness.paths import repo_path
from mutharness.repo.git import configure_git, enclosing_worktrees
from mutharness.repo.source import (
    POINTER,
    VENV_MARKER,
    SourceRepo,
    open_source,
    status_paths,
    venv_pointer,
)
from mutharness.repo.workspace import temp_directory
from mutharness.runners.node import rules as node_rules
from mutharness.runners.pytest import rules as pytest_rules
from mutharness.runners.registry import RUNNERS, detected, runner_kind
from mutharness.static_check import Committed, check_spec_files, tracked_with
from mutharness.sweep import sweep_stale_workspaces


def expand(paths: tuple[Path, ...]) -> tuple[Path, ...]:
    """Spec arguments: files as given, directories as their sorted `*.json` files (but the
    platform skip policy, `platform-skips.json`)."""
    expanded: list[Path] = []
    for path in paths:
        if not path.exists() and not path.is_symlink():
            raise SpecError((SpecProblem(str(path), "", "does not exist"),))
        if path.is_dir():
            found = sorted(p for p in path.glob("*.json") if p.name != POLICY_NAME)
            if not found:
                raise SpecError((SpecProblem(str(path), "", "is a directory with no *.json"),))
            expanded.extend(found)
        else:
            expanded.append(path)
    return tuple(expanded)


def default_specs(what: str, cli_options: Mapping[str, Any] | None = None,
                  config: Path | None = None) -> tuple[Path, ...]:
    """The specs' directory, for a command given no SPEC: `specs-dir` (the command line's,
    the project config's), else `specs/`, else the original layout's `test/mutations/`."""
    source = open_repository()
    default = specs_directory(source, project_options(source, cli_options, config))
    if not default.is_dir():
        raise SpecError((SpecProblem(
            display_name(default, source.root), "",
            f"is not a directory: name the spec files {what}, or set specs-dir",
        ),))
    return (default,)


def specs_directory(source: SourceRepo, options: Options) -> Path:
    """Where the project keeps its specs (`specs-dir`, laid out), in the user's tree."""
    return source.root.joinpath(*options[SPECS_DIR].split("/"))


def project_options(source: SourceRepo, cli_options: Mapping[str, Any] | None = None,
                    config: Path | None = None) -> Options:
    """The options of a command before its run: the command line's over the project
    config's (HEAD's bytes), laid out in the user's tree."""
    values, config_file = read_config(source.root, config, committed_config(source, ()))
    return located(source, resolve(dict(cli_options or {}), values, config_file))


def located(source: SourceRepo, options: Options) -> Options:
    """`options.laid_out` in the user's tree: where its specs are, and the skip policy."""
    def is_dir(relative: str) -> bool:
        found = source.root.joinpath(*relative.split("/"))
        return found.is_dir() and not found.is_symlink()

    return laid_out(options, is_dir)


def settings_of(
    specs: tuple[Path, ...], cli_options: Mapping[str, Any], config: Path | None,
    allow_dirty: bool, command: tuple[str, ...], **more: Any,
) -> Settings:
    """The settings of a command run in the current directory: SPEC arguments expanded, the
    options given on the command line (by option name)."""
    return Settings(
        spec_paths=expand(specs), start=Path.cwd(), cli_options=cli_options, config=config,
        allow_dirty=allow_dirty, command=command, **more,
    )


def open_repository() -> SourceRepo:
    """Git resolved, and the repository around the current directory (the command line has
    checked the library floors and scrubbed git's environment: `environment.prepare_process`)."""
    start = Path.cwd().resolve()
    git_info = configure_git(os.environ.get("PATH", os.defpath), refuse=enclosing_worktrees(start))
    return open_source(start, git_info)


def tree_at(source: SourceRepo, commit: str, dirty: tuple[str, ...],
            working: bool = False) -> Tree:
    """`commit`'s bytes of each path (the working tree's for the paths a dirty run took from
    it, or for every path when `working`), never read through a link."""
    taken = set(status_paths(dirty))

    def read(path: str) -> bytes | None:
        if not working and path not in taken:
            return source.bytes_at(commit, path)
        file = source.root.joinpath(*path.split("/"))
        return None if file.is_symlink() or not file.is_file() else file.read_bytes()

    return TreeBytes(commit, read)


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


def package_preloads(source: SourceRepo, options: Options, specs: Sequence[Spec],
                    included: tuple[str, ...]) -> Options:
    """For node specs, when no setting names node's preloads: those of the `test` script of
    the root `package.json` (as the workspace will hold it), so a project that keeps them
    there needs no config file."""
    if not any(spec.runner == node_rules.NAME for spec in specs) or any(
            options.sources[option.name] is not Source.DEFAULT
            for option in (NODE_IMPORT, NODE_REQUIRE)):
        return options
    data = _as_held(source, "package.json", included)
    try:
        manifest = json.loads(data) if data is not None else None
    except ValueError:
        return options
    scripts = manifest.get("scripts") if isinstance(manifest, dict) else None
    script = scripts.get("test") if isinstance(scripts, dict) else None
    found = node_rules.script_preloads(script) if isinstance(script, str) else None
    if found is None or found == ((), ()):
        return options
    return options.taking({NODE_IMPORT.name: found[0], NODE_REQUIRE.name: found[1]},
                          Source.PACKAGE)


def interpreter(source: SourceRepo, options: Options, specs: Sequence[Spec],
                environ: Mapping[str, str], start: Path) -> Options:
    """For pytest specs, when no setting names the tests' interpreter: the active virtual
    environment's (VIRTUAL_ENV), else the repository's `.venv` (a directory, else the
    environment a `.venv` redirect file names: `venv_pointer`), when it is not the one running
    mutharness (a tool install: pipx, `uv tool`); when it is, and that is a `uv run --with`
    overlay, the environment the overlay extends (the project's); else none (this
    interpreter). When none chose it and this interpreter lacks pytest, the run is refused
    naming the repository's environments (`unready`): the environment of a tool install is
    never the project's, and pytest installed there could not import the project."""
    if options.sources[PYTHON.name] is not Source.DEFAULT or not any(
            spec.runner == pytest_rules.NAME for spec in specs):
        return options
    named = _named(source.root, environ)
    own = Path(sys.prefix)
    if named is not None and named[0].resolve() == own.resolve():
        extended = _extended(own)
        if extended is None:
            return options  # the environment running mutharness is the one chosen
        named = (extended, Source.EXTENDED)
    if named is not None and python_in(named[0]).is_file():
        return options.taking({PYTHON.name: str(python_in(named[0]))}, named[1])
    if (problem := unready(source.root, start)) is not None:
        raise problem
    return options


def _named(root: Path, environ: Mapping[str, str]) -> tuple[Path, Source] | None:
    """The environment the rules name, and which rule: VIRTUAL_ENV, else the repository's
    `.venv` directory, else the environment its `.venv` redirect file names (None: none)."""
    active = environ.get("VIRTUAL_ENV")
    if active:
        return Path(active), Source.ACTIVE
    if (root / POINTER).is_dir():
        return root / POINTER, Source.DOTVENV
    pointer = venv_pointer(root)
    return None if pointer is None else (pointer.environment, Source.POINTED)


def python_in(environment: Path) -> Path:
    """A virtual environment's interpreter."""
    return environment / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


@dataclass(frozen=True)
class Choice:
    """An environment of the repository a user may name with `--python`."""

    python: Path
    what: str  # `tox's py environment`


def repository_environments(root: Path) -> tuple[Choice, ...]:
    """The repository's environments that hold an interpreter: its `.venv` directory, tox's
    (`.tox/NAME`; its own dot-named ones, `.pkg`, aside) and the one a `.venv` redirect file
    names; each once, the environment running mutharness aside."""
    places = [(root / POINTER, "the repository's .venv")]
    tox = root / ".tox"
    if tox.is_dir():
        places += [(place, f"tox's {place.name} environment") for place in sorted(tox.iterdir())
                   if not place.name.startswith(".")]
    pointer = venv_pointer(root)
    if pointer is not None:
        places.append((pointer.environment, "the environment the repository's .venv file names"))
    seen = {Path(sys.prefix).resolve()}
    found = []
    for place, what in places:
        if (place / VENV_MARKER).is_file() and python_in(place).is_file() \
                and place.resolve() not in seen:
            seen.add(place.resolve())
            found.append(Choice(python_in(place), what))
    return tuple(found)


def unready(root: Path, start: Path) -> EnvironmentProblem | None:
    """Why the interpreter running mutharness cannot run the tests when nothing chose another
    (None: it can): no pytest, or one below the floor. It is this process's own interpreter,
    so its pytest is looked up here, as its probe would find it. The remedy names the
    repository's environments (`--python`, each path as typed from `start`), else makes the
    `.venv` mutharness then finds; never an install beside mutharness."""
    from mutharness.runners.pytest.runner import MIN_PYTEST  # only when nothing chose one

    try:
        found: str | None = version("pytest")
    except PackageNotFoundError:
        found = None
    if found is not None and not is_below(found, MIN_PYTEST):
        return None
    whose = (f"{sys.executable}, the interpreter running mutharness (nothing chose another: no "
             "active virtual environment, no usable .venv in the repository)")
    what = (f"pytest not installed in {whose}" if found is None else
            f"pytest {found} in {whose} is older than {MIN_PYTEST}, the oldest mutharness "
            "supports")
    choices = repository_environments(root)
    if choices:
        return EnvironmentProblem(what, "name the project's environment: " + ", or ".join(
            f"--python {_typed(choice.python, root, start)} ({choice.what})"
            for choice in choices))
    return EnvironmentProblem(what, (
        "create the project's environment, which mutharness then finds: python -m venv "
        f"{_typed(root / POINTER, root, start)}, then "
        f"{_typed(python_in(root / POINTER), root, start)} -m pip install -e "
        f"{_typed(root, root, start)} pytest (or name one with --python)"))


def _typed(path: Path, root: Path, start: Path) -> str:
    """`path` as the user types it at `start`: relative when it is in the repository (`root`),
    else absolute."""
    return os.path.relpath(path, start) if path.is_relative_to(root) else str(path)


def _extended(prefix: Path) -> Path | None:
    """The environment a `uv run --with` overlay extends: its `pyvenv.cfg` names it
    (`extends-environment = ...`); None for any other environment."""
    try:
        text = (prefix / "pyvenv.cfg").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() == "extends-environment" and value.strip():
            return Path(value.strip())
    return None


def _as_held(source: SourceRepo, path: str, included: tuple[str, ...]) -> bytes | None:
    """A file's bytes as the workspace will hold them: HEAD's, or the working tree's under
    --allow-dirty (None when there is no such file; never read through a link)."""
    if path in included:
        file = source.root / path
        return file.read_bytes() if file.is_file() and not file.is_symlink() else None
    return source.committed_bytes(path)


def skip_rules(source: SourceRepo, options: Options, included: tuple[str, ...]) -> SkipRules:
    """The platform skip policy as the workspace will hold it (HEAD's bytes, or the working
    tree's under --allow-dirty), for this platform, strict or not."""
    path = options[PLATFORM_SKIPS]
    data = _as_held(source, path, included)
    return SkipRules(load_policy(data, path), this_platform(), options[STRICT_SKIPS])


def since_selection(
    source: SourceRepo, rev: str, specs: tuple[Spec, ...], options: Options,
    tracked: frozenset[str],
) -> Selection:
    """The specs the changes since `rev` (committed, uncommitted, untracked) affect."""
    base = source.base_commit(rev)
    extra = {options[PLATFORM_SKIPS]}
    for runner in {spec.runner for spec in specs}:
        extra.update(project_inputs(options, runner))
    return select(rev, base, source.changed_since(base), specs, sorted(extra),
                  last_runs(source, options[SINCE_RECORDS], specs))


def last_runs(source: SourceRepo, directory: str, specs: Sequence[Spec]) -> Records:
    """Each spec's record of its last run: the files its evidence facts (HEAD's bytes) say
    its verdicts, count and red-first proof depended on; None where there is no such record."""
    from mutharness.reports.evidence import FACTS_SUFFIX  # Jinja2: only when --since is used
    from mutharness.reports.staleness import parse_record

    found: dict[str, Record | None] = {}
    where = repo_path(directory)
    for spec in specs:
        name = f"{spec.id}{FACTS_SUFFIX}"
        data = source.committed_bytes(f"{where}/{name}") if where is not None else None
        parsed = parse_record(data.decode("utf-8", "replace"), name) if data else None
        if parsed is None or isinstance(parsed, str):
            found[spec.id] = None
            continue
        (_, digests, _), kinds = parsed
        found[spec.id] = Record(
            frozenset(path for paths in digests.values() for path in paths),
            runner_kind(spec.runner).legacy if kinds is None else frozenset(kinds))
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
    options = located(source, effective_options(settings, source, included))
    modes = tracked_with(source, included)
    specs = check_spec_files(  # every problem of every spec at once, anchors included
        settings.spec_paths, display, source, tracked=modes,
        contents=Committed(source, frozenset(included)),
    )
    tracked = frozenset(modes)
    options = package_preloads(source, options, specs, included)
    options = interpreter(source, options, specs, environ, start)
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
        from mutharness.lock import repository_lock  # filelock: never in a -j worker
        with repository_lock(prepared.run_dir, prepared.options[LOCK_TIMEOUT]):
            sweep_stale_workspaces(prepared.temp_dir)
            yield

    return held()


def with_directories(tracked: frozenset[str]) -> frozenset[str]:
    """The tracked paths and every directory above them."""
    return tracked | {path.rsplit("/", depth)[0] for path in tracked
                      for depth in range(1, path.count("/") + 1)}


def changed_tests(changed: Sequence[str], tracked: frozenset[str]) -> dict[str, tuple[str, ...]]:
    """The tracked test files among the `changed` paths, by the runner whose test file names
    they have (runners with none left out)."""
    found = {name: tuple(path for path in changed
                         if path in tracked and RUNNERS[name].is_test_module(path))
             for name in RUNNERS}
    return {name: paths for name, paths in found.items() if paths}


def chosen_tests(
    named: tuple[str, ...], specs: tuple[Spec, ...], changed: tuple[str, ...],
    tracked: frozenset[str], refuse: Callable[[str, str], MutharnessError],
    naming: str = "name the tests with --test PATH_OR_ID",
) -> tuple[str, tuple[str, ...]]:
    """(runner, test entries) of a command that runs tests around a change (`redfirst`,
    `suggest`): the `named` entries, else the specs' tests, else the test files among the
    `changed` paths (pytest's or node's test file names); every entry names a tracked file
    or directory. `refuse(problem, remedy)` makes the error when none can be chosen; `naming`
    says how the command is told its tests."""
    if named:
        tests = named
        runner = detected(tests)
    elif specs:
        runners = {spec.runner for spec in specs}
        if len(runners) > 1:
            raise refuse(f"the specs' tests are of different runners "
                         f"({', '.join(sorted(runners))})",
                         "run each runner's tests on its own")
        runner = runners.pop()
        tests = tuple(dict.fromkeys(entry for spec in specs for entry in spec.tests))
    else:
        found = changed_tests(changed, tracked)
        kinds = list(found)
        if len(kinds) != 1:
            raise refuse("no test file changed since" if not kinds
                         else "test files of several runners changed since", naming)
        runner, tests = kinds[0], found[kinds[0]]
    kind = runner_kind(runner)
    known = with_directories(tracked)
    for entry in tests:
        if (why := kind.entry_problem(entry)) is not None:
            raise refuse(f"the test entry {entry!r} {why}", "")
        if kind.entry_path(entry) not in known:
            raise refuse(f"the test entry {entry!r} names nothing HEAD tracks",
                         "name a committed test file or id")
    return runner, tests


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
        from mutharness.lock import repository_lock
        with repository_lock(run_dir, 0):
            keep_previous(path)
            write_results(record, path)


