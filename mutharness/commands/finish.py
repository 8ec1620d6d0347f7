"""After a verify or a merge: its error, the evidence, the reports (and GitHub's), the summary."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from mutharness.errors import ExitCode, MutharnessError, OSProblem
from mutharness.model.results import RunResult
from mutharness.reports.console import Console
from mutharness.reports.outputs import GitHub, Reports

if TYPE_CHECKING:
    from mutharness.repo.source import SourceRepo


def finish(
    run: RunResult, console: Console, evidence_dir: Path | None, template_dir: Path | None,
    reports: Reports,
) -> ExitCode:
    """After a verify or merge: the error that stopped it, the evidence, the reports (and
    under GitHub Actions the annotations and the step summary), the summary; the exit code."""
    if run.error is not None:
        console.error(run.error)
    code = run.exit_code()

    documents: tuple[Path, dict[str, str]] | None = None  # all rendered before one is written
    rendered: list[tuple[Path, bytes]] | None = None
    unmade: MutharnessError | None = None  # why evidence or a report could not be made
    if evidence_dir is not None and not run.complete:
        console.line("evidence: not written (the run did not complete: its results are "
                     "partial)", "yellow")
    elif evidence_dir is not None:
        from mutharness.reports.evidence import evidence_documents  # Jinja2: only for evidence

        try:
            documents = evidence_dir, evidence_documents(run, evidence_dir, template_dir)
        except MutharnessError as error:
            unmade = error
        except OSError as error:
            unmade = OSProblem.from_error(error, f"reading the evidence in {evidence_dir}")
        if unmade is not None:
            console.error(unmade)
    try:
        rendered = reports.render(run)
    except MutharnessError as error:
        console.error(error)
        unmade = unmade or error
    if unmade is not None:
        code = worse(code, unmade.exit_code)
        if documents is not None or rendered:
            console.line("evidence and reports: none written (one of them could not be made)",
                         "yellow")
        documents, rendered = None, None
    if documents is not None:
        from mutharness.reports.evidence import write_documents

        try:
            written = write_documents(*documents)
            console.line(f"evidence: {len(written)} document(s) in {evidence_dir}"
                         f"{_uncommitted(written)}", "bright_black")
        except MutharnessError as error:
            console.error(error)
            code = worse(code, error.exit_code)
    try:
        reported = reports.write_rendered(rendered or [])
        for path in reported:
            console.line(f"report: {path}", "bright_black")
        _remember(reported)
        github = GitHub.of(os.environ)
        if github is not None:
            for command in github.annotations(run):
                console.workflow_command(command)
            github.add_summary(run)
    except MutharnessError as error:
        console.error(error)
        code = worse(code, error.exit_code)
    except OSError as error:
        problem = OSProblem.from_error(error, "writing the reports")
        console.error(problem)
        code = worse(code, problem.exit_code)
    console.summary(run, run.results_path)
    return code


def _remember(paths: tuple[Path, ...]) -> tuple[SourceRepo, tuple[str, ...]] | None:
    """Record `paths`, written by this run, as its outputs (`repo.written`): the next run
    leaves them out of the changes it refuses while they hold these bytes. The repository
    and the repo-relative paths recorded (None where no repository is here)."""
    if not paths:
        return None
    from mutharness.commands.prepare import open_repository
    from mutharness.repo.written import remember

    try:
        source = open_repository()
        return source, remember(source.root, source.ensure_run_dir(), paths)
    except (MutharnessError, OSError):  # unrecorded, a file is a change, as any other
        return None


def _uncommitted(paths: tuple[Path, ...]) -> str:
    """What the evidence line adds: how many documents differ from HEAD, and what to do."""
    remembered = _remember(paths)
    try:
        changed = [] if remembered is None else [
            path for path in remembered[1]
            if (remembered[0].root / path).read_bytes() != remembered[0].committed_bytes(path)]
    except (MutharnessError, OSError):
        changed = []
    if not changed:
        return ", as committed"
    return (f", {len(changed)} of them new or changed: commit them with the change they prove "
            "(a run leaves them out of the changes it refuses while they stay as written)")


def worse(code: ExitCode, failure: ExitCode) -> ExitCode:
    """A run's code once writing its outputs failed with `failure`: a verdict (0, 1) gives way
    to the failure; a run without one keeps its own code."""
    return failure if code in (ExitCode.OK, ExitCode.UNEXPECTED) else code


