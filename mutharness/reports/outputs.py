"""The report files a verify, render or merge writes from one run's results (JUnit XML, the
Markdown summary, the mutation-testing report as JSON and as an HTML page), and what it adds
under GitHub Actions (the step summary, annotations)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from mutharness.model.results import RunResult
from mutharness.repo.files import write_atomic

# Each report's module is imported when that report is made: a run that asks for none (most
# local runs) does not pay for their imports (a tenth of its start-up).


def _junit(run: RunResult) -> str:
    from mutharness.reports.junit import junit_xml
    return junit_xml(run)


def _summary(run: RunResult) -> str:
    from mutharness.reports.summary import summary_markdown
    return summary_markdown(run)


def _stryker_json(run: RunResult) -> str:
    from mutharness.reports.stryker import stryker_report
    return json.dumps(stryker_report(run), indent=2, ensure_ascii=False) + "\n"


def _html(run: RunResult) -> str:
    from mutharness.reports.html import html_report
    return html_report(run)


@dataclass(frozen=True)
class Reports:
    """The report files asked for on the command line (None: not asked for)."""

    junit: Path | None = None
    summary: Path | None = None
    stryker: Path | None = None
    html: Path | None = None

    def _asked(self) -> list[tuple[Path | None, Callable[[RunResult], str]]]:
        return [(self.junit, _junit), (self.summary, _summary),
                (self.stryker, _stryker_json), (self.html, _html)]

    @property
    def asked(self) -> bool:
        return any(path is not None for path, _ in self._asked())

    def write(self, run: RunResult) -> tuple[Path, ...]:
        """Write each report asked for (atomically, its directory made); the paths. Every
        report is rendered before the first is written, so a report that cannot be made
        (results older than it) writes none."""
        return self.write_rendered(self.render(run))

    def render(self, run: RunResult) -> list[tuple[Path, bytes]]:
        """Each report asked for, rendered to the bytes its file gets (nothing written)."""
        return [(path, render(run).encode("utf-8")) for path, render in self._asked()
                if path is not None]

    @staticmethod
    def write_rendered(rendered: list[tuple[Path, bytes]]) -> tuple[Path, ...]:
        """Write reports `render` made (atomically, each directory made); the paths."""
        for path, data in rendered:
            path.absolute().parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, data)
        return tuple(path for path, _ in rendered)


@dataclass(frozen=True)
class GitHub:
    """What a run adds when GitHub Actions runs it (`GITHUB_ACTIONS=true`): annotations on
    standard output, and its summary appended to the step's summary file; a shard's run adds
    neither (the merge of the shards does, once for the whole run)."""

    step_summary: Path | None

    @classmethod
    def of(cls, environ: Mapping[str, str]) -> GitHub | None:
        if environ.get("GITHUB_ACTIONS") != "true":
            return None
        summary = environ.get("GITHUB_STEP_SUMMARY")
        return cls(Path(summary) if summary else None)

    def annotations(self, run: RunResult) -> list[str]:
        from mutharness.reports.annotations import workflow_commands
        return [] if run.shard is not None else workflow_commands(run)

    def add_summary(self, run: RunResult) -> None:
        """Append the run's summary to the step's summary (other steps' parts are kept)."""
        if self.step_summary is not None and run.shard is None:
            with self.step_summary.open("a", encoding="utf-8") as summary:
                summary.write(_summary(run))
