"""The verify pipeline up to the lock: specs, options, static check, tree; then the session."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mutharness.check import Committed, check_spec_files, tracked_with
from mutharness.errors import DirtyTreeError, WorkspaceError
from mutharness.lab.events import Listener, Phase
from mutharness.lab.session import Plan, Session
from mutharness.lock import repository_lock
from mutharness.options import Options, read_config, resolve
from mutharness.results import RunResult
from mutharness.spec import display_name
from mutharness.sweep import sweep_stale_workspaces
from mutharness.workspace import (
    configure_git,
    enclosing_worktrees,
    open_source,
    status_paths,
    temp_directory,
)

__all__ = ["Phase", "Settings", "effective_options", "verify"]


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


def effective_options(settings: Settings, root: Path) -> Options:
    """The options in force: the command line over the project config over the defaults."""
    values, config_file = read_config(root, settings.config)
    return resolve(settings.cli_options, values, config_file)


def verify(settings: Settings, listener: Listener, environ: Mapping[str, str]) -> RunResult:
    """Run every spec end to end and write the results file; raises before anything runs.

    After the lock is taken every failure (disk full, a git error, a closed stdout...) ends
    the run with its results written and the error in them, never a traceback."""
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
    if (problem := source.run_dir_problem(source.tracked())) is not None:
        raise WorkspaceError(f"{problem}; mutharness keeps its lock and results there")
    if changes and not settings.allow_dirty:
        raise DirtyTreeError(changes, source.filters)
    temp_dir = temp_directory(environ, source.root)
    run_dir = source.ensure_run_dir()
    plan = Plan(
        source=source, specs=specs, options=options, tracked=frozenset(modes),
        changes=changes, included=included,
        fail_fast=settings.fail_fast, json_path=settings.json_path or run_dir / "results.json",
        command=settings.command, git_version=git_info.version,
    )
    with repository_lock(run_dir, options["lock-timeout"]):
        sweep_stale_workspaces(temp_dir)  # what runs killed outright (or forced out) left behind
        return Session(plan).execute(listener, environ, temp_dir)
