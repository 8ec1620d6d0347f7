"""GitHub Actions annotations of a run: an `::error` at each mutation that did not behave as
its spec expects, a `::warning` at each run and spec without a verdict (workflow commands,
their data and properties escaped as the runner reads them); as GitHub shows ten of each
kind per step, the rest are counted in a notice that points to the summary."""

from __future__ import annotations

from mutharness.model.results import RunResult
from mutharness.reports.outcome import Outcome, described


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _command(kind: str, message: str, file: str, line: int | None, title: str) -> str:
    where = f"file={_property(file)}," + (f"line={line}," if line is not None else "")
    return f"::{kind} {where}title={_property(title)}::{_data(message)}"


SHOWN = 10  # annotations GitHub shows per kind and step


def workflow_commands(run: RunResult) -> list[str]:
    """The workflow commands that annotate the run's files, in the run's order."""
    lines = []
    title = _property("mutharness: no verdict")
    if run.error is not None:
        lines.append(f"::warning title={title}::{_data(run.error.message())}")
    if run.interrupted is not None:
        lines.append(f"::warning title={title}::interrupted by signal {run.interrupted}")
    for spec in run.specs:
        for result in spec.mutations:
            outcome = Outcome.of(result)
            if outcome is Outcome.AS_EXPECTED:
                continue
            mutation = result.mutation
            lines.append(_command(
                "error" if outcome is Outcome.UNEXPECTED else "warning",
                f"{mutation.name}: {described(result)}", mutation.file, result.line,
                f"mutharness: {spec.spec.id} #{mutation.number} {outcome.value}"))
        if spec.refused:
            lines.append(_command("warning", spec.error, spec.spec.path, None,
                                  f"mutharness: {spec.spec.id} has no verdict"))
    return _capped(lines)


def _capped(lines: list[str]) -> list[str]:
    kept, left = [], 0
    counts = {"::error": 0, "::warning": 0}
    for line in lines:
        kind = line.split(" ", 1)[0]
        counts[kind] += 1
        if counts[kind] <= SHOWN:
            kept.append(line)
        else:
            left += 1
    if left:
        kept.append(f"::notice title={_property('mutharness')}::{left} more result(s) "
                    "without annotations: see the summary and the results file")
    return kept
