"""After a verify or a merge: its error, the evidence, the reports (and GitHub's), the summary."""

from __future__ import annotations

import os
from pathlib import Path

from mutharness.errors import ExitCode, MutharnessError, OSProblem
from mutharness.model.results import RunResult
from mutharness.reports.console import Console
from mutharness.reports.outputs import GitHub, Reports


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
            console.line(f"evidence: {len(written)} document(s) in {evidence_dir}",
                         "bright_black")
        except MutharnessError as error:
            console.error(error)
            code = worse(code, error.exit_code)
    try:
        for path in reports.write_rendered(rendered or []):
            console.line(f"report: {path}", "bright_black")
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


def worse(code: ExitCode, failure: ExitCode) -> ExitCode:
    """A run's code once writing its outputs failed with `failure`: a verdict (0, 1) gives way
    to the failure; a run without one keeps its own code."""
    return failure if code in (ExitCode.OK, ExitCode.UNEXPECTED) else code


