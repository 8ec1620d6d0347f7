"""`mutharness redfirst`: the tests at HEAD, then with the fix reverted to its base; paired."""

from __future__ import annotations

import os
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mutharness.commands.prepare import (
    Settings,
    chosen_tests,
    locked,
    prepare,
    settings_of,
    with_directories,
)
from mutharness.errors import RedFirstError, SpecError, SpecProblem
from mutharness.lab.bench import opened
from mutharness.lab.events import Listener
from mutharness.lab.redfirst import prove
from mutharness.model.affected import fix_files
from mutharness.model.redfirst import Proof, RedFirst
from mutharness.model.results import write_red_first
from mutharness.model.spec import Spec
from mutharness.options import BASELINE_TIMEOUT
from mutharness.repo.source import REGULAR_MODES, SourceRepo
from mutharness.reports.console import Console
from mutharness.reports.evidence import add_red_first, load_templates
from mutharness.signals import interrupts


def run(
    console: Console, specs: tuple[Path, ...], cli_options: Mapping[str, Any], *, rev: str,
    tests: tuple[str, ...], expect_red: tuple[str, ...], load_error_is_red: bool,
    keep: tuple[str, ...], allow_dirty: bool, json_path: Path | None,
    evidence_dir: Path | None, template_dir: Path | None, config: Path | None,
) -> int:
    """The command line's redfirst, from its parsed arguments to its exit code."""
    if evidence_dir is not None:
        if not specs:
            raise SpecError((SpecProblem("redfirst", "", "--evidence needs the SPEC(s) "
                                         "whose documents get the section"),))
        load_templates(template_dir)
    command = ("mutharness", "redfirst", "--base", rev,
               *(path.as_posix() for path in specs),
               *(word for test in tests for word in ("--test", test)),
               *(word for test in expect_red for word in ("--expect-red", test)),
               *(("--load-error-is-red",) if load_error_is_red else ()),
               *(word for path in keep for word in ("--keep", path)))
    settings = settings_of(specs, cli_options, config, allow_dirty, command,
                           json_path=json_path.absolute() if json_path else None)
    with interrupts():
        record, results = prove_red_first(
            settings, RedFirstRequest(rev, tests, expect_red, load_error_is_red,
                                      evidence_dir.absolute() if evidence_dir else None,
                                      keep),
            console, os.environ,
        )
    ids = [path.stem for path in settings.spec_paths]
    console.results(results)
    if evidence_dir is not None:
        for written in add_red_first(evidence_dir, ids, record, template_dir):
            console.line(f"evidence: {written}", "bright_black")
    console.red_first(record)
    return int(record.exit_code())


@dataclass(frozen=True)
class RedFirstRequest:
    """What `mutharness redfirst` was asked: the base, the tests, how load errors count."""

    rev: str
    tests: tuple[str, ...] = ()  # --test entries; else the specs' tests; else changed tests
    expect_red: tuple[str, ...] = ()
    load_error_is_red: bool = False
    evidence_dir: Path | None = None  # its documents are never part of the fix
    keep: tuple[str, ...] = ()  # --keep: paths on the tests' side, never reverted


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


def prove_red_first(
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
    runner, tests = chosen_tests(
        request.tests, prepared.specs, changed, prepared.tracked,
        lambda problem, remedy: RedFirstError(request.rev, problem, remedy),
        "name the tests with --test PATH_OR_ID (or a spec whose tests to run)")
    known = with_directories(prepared.tracked)
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
    proof = Proof(request.rev, base, spec, fix, prepared.options[BASELINE_TIMEOUT],
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
