"""GitHub Actions annotations of a run: an `::error` at each mutation that did not behave as
its spec expects, a `::warning` at each run and spec without a verdict (workflow commands,
their data and properties escaped as the runner reads them)."""

from __future__ import annotations

from mutharness.reports.outcome import Outcome, described
from mutharness.results import RunResult


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _command(kind: str, message: str, file: str, line: int | None, title: str) -> str:
    where = f"file={_property(file)}," + (f"line={line}," if line is not None else "")
    return f"::{kind} {where}title={_property(title)}::{_data(message)}"


def workflow_commands(run: RunResult) -> list[str]:
    """The workflow commands that annotate the run's files, in the run's order."""
    lines = []
    if run.error is not None:
        lines.append(f"::warning title=mutharness: no verdict::{_data(run.error.message())}")
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
        if spec.error and spec.error != spec.stopped:
            lines.append(_command("warning", spec.error, spec.spec.path, None,
                                  f"mutharness: {spec.spec.id} has no verdict"))
    return lines
