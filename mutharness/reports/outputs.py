"""The report files a verify, render or merge writes from one run's results (JUnit XML, the
Markdown summary), and what it adds under GitHub Actions (the step summary, annotations)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from mutharness.atomic import write_atomic
from mutharness.reports.annotations import workflow_commands
from mutharness.reports.junit import junit_xml
from mutharness.reports.summary import summary_markdown
from mutharness.results import RunResult


@dataclass(frozen=True)
class Reports:
    """The report files asked for on the command line (None: not asked for)."""

    junit: Path | None = None
    summary: Path | None = None

    @property
    def asked(self) -> bool:
        return self.junit is not None or self.summary is not None

    def write(self, run: RunResult) -> tuple[Path, ...]:
        """Write each report asked for (atomically, its directory made); the paths."""
        written = []
        for path, render in ((self.junit, junit_xml), (self.summary, summary_markdown)):
            if path is not None:
                path.absolute().parent.mkdir(parents=True, exist_ok=True)
                write_atomic(path, render(run).encode("utf-8"))
                written.append(path)
        return tuple(written)


@dataclass(frozen=True)
class GitHub:
    """What a run adds when GitHub Actions runs it (`GITHUB_ACTIONS=true`): annotations on
    standard output, and its summary appended to the step's summary file."""

    step_summary: Path | None

    @classmethod
    def of(cls, environ: Mapping[str, str]) -> GitHub | None:
        if environ.get("GITHUB_ACTIONS") != "true":
            return None
        summary = environ.get("GITHUB_STEP_SUMMARY")
        return cls(Path(summary) if summary else None)

    def annotations(self, run: RunResult) -> list[str]:
        return workflow_commands(run)

    def add_summary(self, run: RunResult) -> None:
        """Append the run's summary to the step's summary (other steps' parts are kept)."""
        if self.step_summary is not None:
            with self.step_summary.open("a", encoding="utf-8") as summary:
                summary.write(summary_markdown(run))
