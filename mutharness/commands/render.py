"""`mutharness render`: evidence and reports from a saved results file, re-derived first."""

from __future__ import annotations

from pathlib import Path

from mutharness.errors import ExitCode, ResultsError
from mutharness.model.rederive import run_problems
from mutharness.model.results import read_results
from mutharness.reports.console import Console
from mutharness.reports.evidence import evidence_documents, results_problem, write_documents
from mutharness.reports.outputs import Reports


def run(console: Console, results: Path, *, out_dir: Path | None, template_dir: Path | None,
        reports: Reports) -> int:
    """The command line's render: nothing written unless everything could be made."""
    if out_dir is None and not reports.asked:
        out_dir = Path("evidence")
    document = read_results(results)
    forged = run_problems(document)  # nothing reported is taken from a stored verdict
    if forged:
        raise ResultsError(str(results), "its records are not what their facts give:\n  "
                           + "\n  ".join(forged))
    problem = results_problem(document)  # evidence is of whole runs; reports say any run
    if problem is not None and out_dir is not None:
        raise ResultsError(str(results), problem)
    documents = evidence_documents(document, out_dir, template_dir) if out_dir else None
    rendered = reports.render(document)  # every report is rendered before one is written
    written = write_documents(out_dir, documents) if out_dir and documents else ()
    written += reports.write_rendered(rendered)
    for path in written:
        console.line(str(path))
    return int(ExitCode.OK)
