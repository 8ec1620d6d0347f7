"""Results as data: per-spec and per-mutation facts and verdicts, the exit code, the JSON file."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mutharness.atomic import write_atomic
from mutharness.errors import ExitCode, MutharnessError
from mutharness.paths import shown
from mutharness.runner import ReportState, RunFacts
from mutharness.spec import Mutation, Spec
from mutharness.verdict import Verdict

SCHEMA_VERSION = 2
MAX_LISTED = 20  # files removed between runs, listed per mutation


@dataclass(frozen=True)
class MutationResult:
    """One mutation: where it landed, what the run did, and what that proves."""

    mutation: Mutation
    line: int
    end_line: int
    crlf: bool
    diff: str
    facts: RunFacts
    verdict: Verdict
    reason: str
    as_expected: bool
    loaded: bool | None = None  # the run imported the mutated module (None: not a .py file)
    removed: tuple[str, ...] = ()  # untracked files the run wrote, deleted after it

    @property
    def never_imported(self) -> bool:
        """A .py mutant whose module no process of its run imported: it never ran."""
        return self.loaded is False


@dataclass(frozen=True)
class SpecResult:
    """One spec's baseline and mutation results, or why it has none."""

    spec: Spec
    baseline: RunFacts | None
    timeout_s: float
    mutations: tuple[MutationResult, ...] = ()
    error: str = ""
    depends_on: Mapping[str, str] = field(default_factory=dict)  # path -> sha256 of its bytes
    source_commit: str = ""  # the newest commit that touched any of `depends_on`


@dataclass(frozen=True)
class RunResult:
    """A whole verify run."""

    tool: Mapping[str, str]
    commit: str
    dirty: bool
    dirty_changes: tuple[str, ...]
    command: tuple[str, ...]
    specs: tuple[SpecResult, ...]
    interrupted: int | None = None  # the signal number, when a signal stopped the run
    settings: Mapping[str, Any] = field(default_factory=dict)
    results_path: str = ""  # where the results file was written (absolute); not in the file
    complete: bool = True  # False while the run goes on (the file is rewritten as it does)
    error: MutharnessError | None = field(default=None, compare=False)  # what stopped it

    @property
    def mutation_results(self) -> tuple[MutationResult, ...]:
        """Every mutation result, in run order."""
        return tuple(result for spec in self.specs for result in spec.mutations)

    def exit_code(self) -> ExitCode:
        """0 all as expected; 1 some unexpected; 2 no trustworthy verdict; 130/143 interrupted."""
        if self.interrupted is not None:
            return ExitCode.TERMINATED if self.interrupted == 15 else ExitCode.INTERRUPTED
        results = self.mutation_results
        if (
            self.error is not None or not self.complete
            or any(spec.error for spec in self.specs)
            or any(not result.verdict.is_evidence for result in results)
        ):
            return ExitCode.NO_VERDICT
        if any(not result.as_expected for result in results):
            return ExitCode.UNEXPECTED
        return ExitCode.OK


def _clean(value: Any) -> Any:
    """A JSON value whose every string can be written as UTF-8 (file names that are not)."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, dict):
        return {shown(str(key)): _clean(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(item) for item in value]
    return value


def _facts(facts: RunFacts) -> dict[str, Any]:
    document: dict[str, Any] = {
        "exit_status": facts.exit_status,
        "signal": facts.signal,
        "timed_out": facts.timed_out,
        "timeout_s": facts.timeout_s,
        "duration_s": round(facts.duration_s, 3),
        "report": facts.report.value,
        "pytest_exit": facts.pytest_exit,
        "passed": facts.passed,
        "failed": facts.failed,
        "collected": len(facts.outcomes),
        "failing": list(facts.failing_ids),
        "collection_errors": list(facts.collection_errors),
    }
    if (
        facts.report is not ReportState.OK or facts.timed_out or facts.collection_errors
        or facts.exit_status not in (0, 1)
    ):  # a run that went wrong: keep pytest's own last words
        document["log_tail"] = facts.log_tail
    return document


def _mutation(result: MutationResult) -> dict[str, Any]:
    mutation = result.mutation
    return {
        "index": mutation.index,
        "name": mutation.name,
        "file": mutation.file,
        "line": result.line,
        "end_line": result.end_line,
        "crlf_translated": result.crlf,
        "anchor": mutation.anchor,
        "replacement": mutation.replacement,
        "expect_caught": mutation.expect_caught,
        "killed_by": list(mutation.killed_by),
        "diff": result.diff,
        "facts": _facts(result.facts),
        "verdict": result.verdict.value,
        "reason": result.reason,
        "as_expected": result.as_expected,
        "loaded": result.loaded,
        "removed": list(result.removed[:MAX_LISTED]),
        "removed_count": len(result.removed),
    }


def _spec(result: SpecResult) -> dict[str, Any]:
    spec = result.spec
    baseline = result.baseline
    return {
        "id": spec.id,
        "path": spec.path,
        "sha256": spec.digest,
        "tests": list(spec.tests),
        "expect_baseline_pass": spec.expect_baseline_pass,
        "error": result.error,
        "source_commit": result.source_commit,
        "depends_on": dict(sorted(result.depends_on.items())),
        "timeout_s": result.timeout_s,
        "baseline": None if baseline is None else {
            **_facts(baseline),
            "config_file": baseline.config_file,
            "tests": [
                {"nodeid": o.nodeid, "outcome": o.outcome.value,
                 "duration_s": round(o.duration_s, 4), **({"reason": o.reason} if o.reason else {})}
                for o in baseline.outcomes
            ],
        },
        "skipped": [] if baseline is None else [
            {"nodeid": o.nodeid, "outcome": o.outcome.value, "reason": o.reason}
            for o in baseline.outcomes if o.outcome.is_inert
        ],
        "mutations": [_mutation(mutation) for mutation in result.mutations],
    }


def to_json(run: RunResult) -> dict[str, Any]:
    """The results document: the single source for evidence rendering."""
    document: dict[str, Any] = _clean({
        "schema": SCHEMA_VERSION,
        "complete": run.complete,
        "error": run.error.message() if run.error is not None else "",
        "tool": dict(run.tool),
        "commit": run.commit,
        "dirty": run.dirty,
        "dirty_changes": list(run.dirty_changes),
        "command": list(run.command),
        "settings": dict(run.settings),
        "interrupted": run.interrupted is not None,
        "signal": run.interrupted,
        "exit_code": int(run.exit_code()),
        "specs": [_spec(spec) for spec in run.specs],
    })
    return document


def write_results(run: RunResult, path: Path) -> None:
    """Write the results JSON file atomically."""
    write_atomic(path, json.dumps(to_json(run), indent=2, ensure_ascii=False) + "\n")
