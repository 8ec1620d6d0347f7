"""A run as a mutation-testing-report-schema report (schemaVersion 2, as the Stryker family and
the mutation-testing-elements viewer read it): a file per mutated file with its text as run,
a mutant per spec mutation located to the column, the tests per test file."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any

from mutharness.errors import OlderResults
from mutharness.model.results import MutationResult, RunResult, SpecResult, encodable
from mutharness.model.verdict import Verdict
from mutharness.reports.outcome import described
from mutharness.runners.registry import runner_kind

SCHEMA_VERSION = "2"
# the viewer's score is green at 100 % only, red below: it counts no documented survivor
# (Ignored), so a survivor it counts is one the gate fails on (html.py greys the viewer where
# its colours would still contradict the gate)
THRESHOLDS = {"high": 100, "low": 100}

STATUS = {  # a verdict as the schema says it
    Verdict.CAUGHT: "Killed",
    Verdict.SURVIVED: "Survived",
    Verdict.TIMEOUT: "Timeout",
    Verdict.UNTRUSTWORTHY: "RuntimeError",
}
LANGUAGES = {".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript",
             ".cjs": "javascript", ".ts": "typescript", ".mts": "typescript",
             ".cts": "typescript", ".jsx": "javascript", ".tsx": "typescript"}
PLATFORMS = {"Linux": "linux", "Windows": "win32", "Darwin": "darwin"}


def mutant_id(spec: SpecResult, result: MutationResult) -> str:
    """A mutant's id, stable across runs of the same spec: spec id and mutation number."""
    return f"{spec.spec.id}#{result.mutation.number}"


def _mutant(spec: SpecResult, result: MutationResult) -> dict[str, Any]:
    location = result.location
    if location is None or result.mutation.file not in spec.sources:
        raise OlderResults(spec.spec.id, result.mutation.number)
    facts = result.facts
    documented = result.verdict is Verdict.SURVIVED and not result.mutation.expect_caught
    ran = [o.nodeid for o in facts.outcomes if o.outcome.is_pass or o.outcome.is_failure]
    return {
        "id": mutant_id(spec, result),
        "mutatorName": spec.spec.id,
        "description": result.mutation.name,
        "replacement": result.mutation.replacement,
        "location": {"start": {"line": location.start.line, "column": location.start.column},
                     "end": {"line": location.end.line, "column": location.end.column}},
        "status": "Ignored" if documented else STATUS[result.verdict],
        "statusReason": ("a documented survivor, left out of the score: " if documented else "")
        + described(result) + (
            f" ({result.reason})" if result.reason and result.verdict.is_evidence else ""),
        "killedBy": list(facts.failing_ids) if result.verdict is Verdict.CAUGHT else [],
        # every test of the spec ran against the mutant (no coverage is measured), unless no
        # process of the run loaded the mutated file
        "coveredBy": [] if result.never_imported else ran,
        "testsCompleted": len(ran),
        "duration": round(facts.duration_s * 1000),
        "static": False,
    }


def viewer_score(report: Mapping[str, Any]) -> float | None:
    """The mutation score the viewer shows for `report`, computed as it computes it: the
    detected mutants (Killed, Timeout) of the valid ones (those and Survived, NoCoverage),
    in percent; None when it counts none (Ignored, RuntimeError, CompileError and Pending
    mutants are left out)."""
    counts: dict[str, int] = {}
    for entry in report["files"].values():
        for mutant in entry["mutants"]:
            counts[mutant["status"]] = counts.get(mutant["status"], 0) + 1
    detected = counts.get("Killed", 0) + counts.get("Timeout", 0)
    valid = detected + counts.get("Survived", 0) + counts.get("NoCoverage", 0)
    return detected / valid * 100 if valid else None


def _language(path: str) -> str:
    suffix = PurePosixPath(path).suffix.lower()
    return LANGUAGES.get(suffix, suffix.lstrip(".") or "text")


def _test_files(run: RunResult) -> dict[str, Any]:
    """Every test that ran in a baseline or a mutant's run, by its file."""
    files: dict[str, dict[str, str]] = {}
    for spec in run.specs:
        split = runner_kind(spec.spec.runner).split_id
        runs = [spec.baseline] if spec.baseline is not None else []
        for facts in [*runs, *(result.facts for result in spec.mutations)]:
            for outcome in facts.outcomes:
                file, name = split(outcome.nodeid)
                files.setdefault(file, {}).setdefault(outcome.nodeid, name or outcome.nodeid)
    return {file: {"tests": [{"id": nodeid, "name": name} for nodeid, name in tests.items()]}
            for file, tests in sorted(files.items())}


def _system(tool: Mapping[str, str]) -> dict[str, Any]:
    system = tool.get("platform", "").split(" ")[0]
    return {"ci": tool.get("ci") == "true",
            "os": {"platform": PLATFORMS.get(system, system.lower() or "unknown"),
                   "description": tool.get("platform", "unknown")}}


def stryker_report(run: RunResult) -> dict[str, Any]:
    """The run's report; raises OlderResults for results that cannot say where a mutant is."""
    files: dict[str, dict[str, Any]] = {}
    for spec in run.specs:
        for result in spec.mutations:
            mutant = _mutant(spec, result)
            path = result.mutation.file
            entry = files.setdefault(path, {"language": _language(path),
                                            "source": spec.sources[path], "mutants": []})
            entry["mutants"].append(mutant)
    tool = dict(run.tool)
    # a test or file name that is not UTF-8 is shown with its escapes
    report: dict[str, Any] = encodable({
        "schemaVersion": SCHEMA_VERSION,
        "thresholds": THRESHOLDS,
        "files": dict(sorted(files.items())),
        "testFiles": _test_files(run),
        "framework": {
            "name": "mutharness", "version": tool.get("mutharness", "unknown"),
            "dependencies": {key: value for key, value in sorted(tool.items())
                             if not key.endswith("_executable") and key != "mutharness"},
        },
        "system": _system(tool),
        "config": {"commit": run.commit, "command": list(run.command)},
    })
    return report
