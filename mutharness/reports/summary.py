"""A short Markdown summary of a run for a pull request (`--summary`, `$GITHUB_STEP_SUMMARY`).

A table with one row per spec and the mutations that did not behave as expected or gave no
verdict, each named once; long runs are cut (rows, names and listed mutations) so the
summary stays far under GitHub's 1 MiB limit for a step's summary.
"""

from __future__ import annotations

from collections.abc import Iterable

from mutharness.errors import ExitCode
from mutharness.model.results import MutationResult, RunResult, SpecResult
from mutharness.model.verdict import Verdict
from mutharness.paths import shown
from mutharness.reports.markdown import escape_markdown
from mutharness.reports.outcome import Outcome, described

MAX_ROWS = 200  # specs in the table; the rest counted in one row
MAX_LISTED = 50  # mutations listed per section; the rest counted
MAX_TEXT = 160  # characters of a spec's text (a name, a reason) shown


def _cell(text: str) -> str:
    """Spec text made safe for one table cell or list item as the evidence makes it: one
    line, no markup, no mention, team mention or link; and no math (`$`), which GitHub
    renders in a summary."""
    return escape_markdown(shown(text), MAX_TEXT).replace("$", "\\$")


def _heading(run: RunResult) -> str:
    code, total = run.exit_code(), len(run.mutation_results)
    if code is ExitCode.OK:
        return f"✅ mutharness: all {total} mutation(s) behaved as expected"
    if code is ExitCode.UNEXPECTED:
        wrong = sum(Outcome.of(r) is Outcome.UNEXPECTED for r in run.mutation_results)
        return f"❌ mutharness: {wrong} of {total} mutation(s) did not behave as expected"
    if code in (ExitCode.INTERRUPTED, ExitCode.TERMINATED):
        return f"⚠️ mutharness: interrupted after {total} mutation(s); no verdict"
    return "⚠️ mutharness: no trustworthy verdict"


def _row(run: RunResult, spec: SpecResult) -> str:
    outcomes = [Outcome.of(result) for result in spec.mutations]
    caught = sum(r.verdict is Verdict.CAUGHT and r.as_expected for r in spec.mutations)
    survivors = sum(r.verdict is Verdict.SURVIVED and r.as_expected for r in spec.mutations)
    note = _cell(spec.error.splitlines()[0]) if spec.error else (
        _cell(spec.stopped) if spec.stopped else "")
    return (f"| {_cell(spec.spec.id)} | {len(spec.mutations)} of {len(run.planned(spec))} "
            f"| {caught} | {survivors} | {outcomes.count(Outcome.UNEXPECTED)} "
            f"| {outcomes.count(Outcome.NO_VERDICT)} | {note} |")


def _listed(title: str, items: Iterable[tuple[SpecResult, MutationResult]]) -> list[str]:
    chosen = list(items)
    if not chosen:
        return []
    lines = ["", f"### {title}", ""]
    for spec, result in chosen[:MAX_LISTED]:
        mutation = result.mutation
        lines.append(f"- {_cell(spec.spec.id)} #{mutation.number} {_cell(mutation.name)}: "
                     f"{_cell(described(result))} ({_cell(mutation.file)}:{result.line})")
    if len(chosen) > MAX_LISTED:
        lines.append(f"- and {len(chosen) - MAX_LISTED} more (all in the results file)")
    return lines


def summary_markdown(run: RunResult) -> str:
    """The run's summary, as Markdown."""
    where = f"commit `{run.commit[:12]}`" if run.commit else "no commit"
    if run.shard is not None:
        where += f", shard {run.shard.shard}"
    if run.dirty:
        where += f", {len(run.dirty_changes)} uncommitted change(s) included"
    lines = [f"## {_heading(run)}", "", where, ""]
    if run.error is not None:
        lines += [f"The run stopped: {_cell(run.error.message().splitlines()[0])}", ""]
    lines += ["| spec | run | caught | documented survivors | unexpected | no verdict | note |",
              "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    lines += [_row(run, spec) for spec in run.specs[:MAX_ROWS]]
    if len(run.specs) > MAX_ROWS:
        lines.append(f"| and {len(run.specs) - MAX_ROWS} more spec(s) | | | | | | |")
    pairs = [(spec, result) for spec in run.specs for result in spec.mutations]
    lines += _listed("Not as expected",
                     (p for p in pairs if Outcome.of(p[1]) is Outcome.UNEXPECTED))
    lines += _listed("No verdict", (p for p in pairs if Outcome.of(p[1]) is Outcome.NO_VERDICT))
    return shown("\n".join(lines) + "\n")  # a forged commit or shard: writable as UTF-8
