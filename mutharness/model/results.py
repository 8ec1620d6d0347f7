"""Results as data and their one JSON schema: `to_json` and `from_json`, the exit code, the file.

The results file, the evidence renderer and `staleness` all read results through `from_json`,
so a document that does not follow the schema is refused in one place, with what is wrong.
"""

from __future__ import annotations

import json
import math
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mutharness.digest import file_digest
from mutharness.errors import ExitCode, MutharnessError, RecordedError, ResultsError
from mutharness.model.anchors import Location, Position
from mutharness.model.pins import Pin
from mutharness.model.redfirst import RedFirst, red_first_from_json
from mutharness.model.shards import Planned, Shard, ShardPlan
from mutharness.model.spec import Mutation, Spec
from mutharness.model.verdict import Verdict, ids_problem
from mutharness.paths import shown
from mutharness.repo.files import write_atomic
from mutharness.runners.base import (
    NoFacts,
    Outcome,
    ReportState,
    RunExit,
    RunFacts,
    TestOutcome,
)

SCHEMA_VERSION = 5
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
    loaded: bool | None = None  # the run loaded the mutated file (None: the runner cannot tell)
    removed: tuple[str, ...] = ()  # untracked files the run wrote, deleted after it
    first_failure: bool = False  # the run stopped at its first failing test (--first-failure)
    location: Location | None = None  # the anchor's text, to the column (None: older results)

    @property
    def never_imported(self) -> bool:
        """A mutant whose file no process of its run loaded: it never ran."""
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
    stopped: str = ""  # why the spec's mutations were not all run (interrupted, an error)
    tools: tuple[tuple[str, str], ...] = ()  # (tool, version) of the runner that ran it
    pin: Pin | None = None  # the baseline line, as `mutharness baseline` prints it
    pin_depends_on: Mapping[str, str] = field(default_factory=dict)  # what the count depends on
    red_first: RedFirst | None = None  # a red-first proof recorded for the spec
    absent: tuple[str, ...] = ()  # paths where a new file would configure the run (none yet)
    sources: Mapping[str, str] = field(default_factory=dict)  # each mutated file's text, as run
    error_kind: str = ""  # the class of `error` (`MutharnessError.kind`)
    # what `depends_on` records beyond the spec's own files (`RunnerKind.records`); None:
    # a record older than this field
    recorded: tuple[str, ...] | None = None

    @property
    def in_progress(self) -> bool:
        """A spec a run was still in when it stopped (its partial result says so)."""
        return bool(self.error) and self.error == self.stopped

    @property
    def refused(self) -> bool:
        """A spec left without verdicts by its own error (its baseline was refused)."""
        return bool(self.error) and not self.in_progress


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
    logs_path: str = ""  # where the scenarios' logs were kept (`lab.logs`); not in the file
    complete: bool = True  # False while the run goes on (the file is rewritten as it does)
    error: MutharnessError | None = field(default=None, compare=False)  # what stopped it
    shard: ShardPlan | None = None  # the shard of a run this is (`verify --shard k/n`)
    notes: tuple[str, ...] = ()  # what the run told the user on its way (a runner's fall-back)

    def planned(self, spec: SpecResult) -> tuple[Mutation, ...]:
        """The mutations of `spec` this run was to make: a shard's, or every one."""
        if self.shard is None:
            return spec.spec.mutations
        indices = self.shard.assigned().get(spec.spec.id, ())
        return tuple(spec.spec.mutations[index] for index in indices)

    @property
    def mutation_results(self) -> tuple[MutationResult, ...]:
        """Every mutation result, in run order."""
        return tuple(result for spec in self.specs for result in spec.mutations)

    def exit_code(self) -> ExitCode:
        """The first that holds: the interrupting signal's code; the stopping error's; 3 a
        spec's baseline refused; 4 a mutation without a trustworthy verdict (or a run not
        complete); 1 a mutation not as expected; else 0 (see ExitCode)."""
        if self.interrupted is not None:
            return ExitCode.TERMINATED if self.interrupted == 15 else ExitCode.INTERRUPTED
        if self.error is not None:
            return self.error.exit_code
        if any(spec.refused for spec in self.specs):
            return ExitCode.BASELINE
        if not self.complete or any(spec.error for spec in self.specs) or any(
            not result.verdict.is_evidence for result in self.mutation_results
        ):
            return ExitCode.NO_VERDICT
        if any(not result.as_expected for result in self.mutation_results):
            return ExitCode.UNEXPECTED
        return ExitCode.OK


def encodable(value: Any) -> Any:
    """A JSON value whose every string can be written as UTF-8 (file names that are not)."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, dict):
        return {shown(str(key)): encodable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [encodable(item) for item in value]
    return value


def _went_wrong(facts: RunFacts) -> bool:
    return (
        facts.report is not ReportState.OK or facts.timed_out or bool(facts.collection_errors)
        or facts.exit not in (RunExit.ALL_PASSED, RunExit.TESTS_FAILED)
    )


def _test(outcome: TestOutcome, timings: bool) -> dict[str, Any]:
    document: dict[str, Any] = {"nodeid": outcome.nodeid, "outcome": outcome.outcome.value}
    if timings:
        document["duration_s"] = round(outcome.duration_s, 4)
    if outcome.reason:
        document["reason"] = outcome.reason
    return document


def facts_json(facts: RunFacts, timings: bool = True, tests: bool = False) -> dict[str, Any]:
    """One run's facts; with `tests`, every test's outcome (a baseline's, or a mutant's whose
    tests were not the baseline's)."""
    document: dict[str, Any] = {
        "runner": facts.runner,
        "exit_status": facts.exit_status,
        "exit": facts.exit.value,
        "signal": facts.signal,
        "timed_out": facts.timed_out,
        "report": facts.report.value,
        "passed": facts.passed,
        "failed": facts.failed,
        "collected": len(facts.outcomes),
        "failing": list(facts.failing_ids),
        "collection_errors": list(facts.collection_errors),
        "runner_facts": facts.extension.to_json(),
    }
    if timings:
        document["timeout_s"] = facts.timeout_s
        document["duration_s"] = round(facts.duration_s, 3)
    if _went_wrong(facts):  # a run that went wrong: keep the runner's own last words
        document["log_tail"] = facts.log_tail
        if facts.free_bytes is not None:
            document["free_bytes"] = facts.free_bytes
    if facts.route:
        document["route"] = facts.route
    if tests:
        document["tests"] = [_test(outcome, timings) for outcome in facts.outcomes]
    else:  # a mutant's run: the tests that did not pass, and the count of those that did
        document["not_passed"] = [
            _test(outcome, timings) for outcome in facts.outcomes if not outcome.outcome.is_pass
        ]
    return document


def _mutation(result: MutationResult, timings: bool, baseline: RunFacts | None
              ) -> dict[str, Any]:
    """One mutant's record. Its passing tests are counted, not named, unless its tests were
    not the baseline's (then the count could not name them again: `rederive`); a record read
    back keeps the form it was written in."""
    mutation = result.mutation
    facts = result.facts
    named = (baseline is not None and all(outcome.nodeid for outcome in facts.outcomes)
             and ids_problem(facts, baseline, result.first_failure) is not None)
    return {
        "index": mutation.index,
        "number": mutation.number,
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
        "facts": facts_json(facts, timings, tests=named),
        "verdict": result.verdict.value,
        "reason": result.reason if timings or result.verdict is not Verdict.TIMEOUT
        else "exceeded its timeout",
        "as_expected": result.as_expected,
        "loaded": result.loaded,
        "removed": list(result.removed[:MAX_LISTED]),
        "removed_count": len(result.removed),
        "first_failure": result.first_failure,
        "location": None if result.location is None else _location(result.location),
    }


def _location(location: Location) -> dict[str, Any]:
    return {"start": {"line": location.start.line, "column": location.start.column},
            "end": {"line": location.end.line, "column": location.end.column}}


def _position(reader: _Reader | None) -> Position:
    if reader is None:
        raise _Bad("a location's position is null")
    position = Position(reader.integer("line"), reader.integer("column"))
    if position.line < 1 or position.column < 1:
        raise _Bad(f"{reader.where}line and column start at 1")
    return position


def _declared(mutation: Mutation) -> dict[str, Any]:
    return {
        "name": mutation.name, "file": mutation.file, "anchor": mutation.anchor,
        "replacement": mutation.replacement, "expect_caught": mutation.expect_caught,
        "killed_by": list(mutation.killed_by),
    }


def spec_json(result: SpecResult, timings: bool = True) -> dict[str, Any]:
    """One spec's record."""
    spec = result.spec
    baseline = result.baseline
    document: dict[str, Any] = {
        "id": spec.id,
        "path": spec.path,
        "sha256": spec.digest,
        "runner": spec.runner,
        "tests": list(spec.tests),
        "expect_baseline_pass": spec.expect_baseline_pass,
        "declared": [_declared(mutation) for mutation in spec.mutations],
        "error": result.error,
        "error_kind": result.error_kind,
        **({} if result.recorded is None else {"recorded": list(result.recorded)}),
        "stopped": result.stopped,
        "source_commit": result.source_commit,
        "depends_on": dict(sorted(result.depends_on.items())),
        "tools": [{"fact": fact, "value": value} for fact, value in result.tools],
        "baseline": None if baseline is None else facts_json(baseline, timings, tests=True),
        "skipped": [] if baseline is None else [
            {"nodeid": o.nodeid, "outcome": o.outcome.value, "reason": o.reason}
            for o in baseline.outcomes if o.outcome.is_inert
        ],
        "mutations": [_mutation(mutation, timings, baseline) for mutation in result.mutations],
        "pin": None if result.pin is None else {
            **result.pin.to_json(), "depends_on": dict(sorted(result.pin_depends_on.items())),
        },
        "red_first": None if result.red_first is None else result.red_first.to_json(),
        "absent": list(result.absent),
        "sources": dict(sorted(result.sources.items())),
    }
    if timings:
        document["timeout_s"] = result.timeout_s
    return document


def to_json(run: RunResult, timings: bool = True) -> dict[str, Any]:
    """The results document: the single source for evidence rendering. Without `timings`
    it holds no durations or timeouts, so the same facts give the same bytes."""
    document: dict[str, Any] = encodable({
        "schema": SCHEMA_VERSION,
        "complete": run.complete,
        "error": run.error.message() if run.error is not None else "",
        "error_kind": run.error.kind if run.error is not None else "",
        "tool": dict(run.tool),
        "commit": run.commit,
        "dirty": run.dirty,
        "dirty_changes": list(run.dirty_changes),
        "command": list(run.command),
        "settings": dict(run.settings),
        "interrupted": run.interrupted is not None,
        "signal": run.interrupted,
        "exit_code": int(run.exit_code()),
        "specs": [spec_json(spec, timings) for spec in run.specs],
        "notes": list(run.notes),
        **({"shard": run.shard.to_json()} if run.shard is not None else {}),
    })
    texts: dict[str, str] = {}  # each mutated file's text once, however many specs mutate it
    for spec in document["specs"]:
        by_digest = {path: text_digest(text) for path, text in spec["sources"].items()}
        texts.update((by_digest[path], text) for path, text in spec["sources"].items())
        spec["sources"] = by_digest
    document["texts"] = dict(sorted(texts.items()))
    return document


def text_digest(text: str) -> str:
    """What a results file names a mutated file's text by: the sha256 of its UTF-8 bytes."""
    return file_digest(text.encode("utf-8"))


def write_results(run: RunResult, path: Path) -> None:
    """Write the results JSON file atomically."""
    write_atomic(path, json.dumps(to_json(run), indent=2, ensure_ascii=False) + "\n")


def previous_path(path: Path) -> Path:
    """Where the results file at `path` keeps the last complete run's results
    (`results.json` -> `results.previous.json`)."""
    return path.with_name(f"{path.stem}.previous{path.suffix}")


def keep_previous(path: Path) -> None:
    """Before a run first writes its results file at `path`: the record there, when it is a
    complete run's that measured specs, is copied to `previous_path` (atomically, never
    through a link), so a run cut short or refused never leaves the user without the last
    complete results; any other record there (a refusal, an interrupted run) is not kept,
    and the one kept before it stays."""
    try:
        if not stat.S_ISREG(path.lstat().st_mode):  # a link or a directory: not ours to read
            return
        data = path.read_bytes()
    except OSError:
        return
    try:
        document = json.loads(data)
    except ValueError:
        return
    if isinstance(document, dict) and document.get("complete") is True and document.get(
            "specs"):
        write_atomic(previous_path(path), data)


RED_FIRST_KIND = "red-first"


def write_red_first(
    record: RedFirst, spec_ids: tuple[str, ...], command: tuple[str, ...],
    tools: Mapping[str, str], path: Path,
) -> None:
    """Write a red-first run's results file atomically (its own kind, this schema)."""
    document = encodable({
        "schema": SCHEMA_VERSION, "kind": RED_FIRST_KIND, "commit": record.head,
        "command": list(command), "tool": dict(tools), "specs": list(spec_ids),
        "exit_code": int(record.exit_code()), "red_first": record.to_json(),
    })
    write_atomic(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")


class _Reader:
    """Typed access to one JSON object, naming the key that is wrong."""

    def __init__(self, document: Any, where: str) -> None:
        if not isinstance(document, Mapping):
            raise _Bad(f"{where or 'the document'} is not an object")
        self.document = document
        self.where = where

    def _get(self, key: str, kinds: tuple[type, ...], default: Any = ...) -> Any:
        if key not in self.document:
            if default is not ...:
                return default
            raise _Bad(f"{self.where}{key} is missing")
        value = self.document[key]
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            raise _Bad(f"{self.where}{key} is not {' or '.join(k.__name__ for k in kinds)}")
        return value

    def text(self, key: str, default: Any = ...) -> str:
        return str(self._get(key, (str,), default))

    def flag(self, key: str, default: Any = ...) -> bool:
        return bool(self._get(key, (bool,), default))

    def number(self, key: str, default: Any = ...) -> float:
        """A duration or a timeout: a finite number, never below zero (JSON as Python
        reads it also holds `Infinity` and `NaN`)."""
        value = float(self._get(key, (int, float), default))
        if not math.isfinite(value) or value < 0:
            raise _Bad(f"{self.where}{key} is {value}, not a finite number of seconds >= 0")
        return value

    def integer(self, key: str) -> int:
        return int(self._get(key, (int,)))

    def maybe_int(self, key: str) -> int | None:
        value = self._get(key, (int, type(None)), None)
        return None if value is None else int(value)

    def texts(self, key: str, default: Any = ...) -> tuple[str, ...]:
        value = self._get(key, (list,), default)
        if not all(isinstance(item, str) for item in value):
            raise _Bad(f"{self.where}{key} is not a list of strings")
        return tuple(value)

    def objects(self, key: str) -> list[_Reader]:
        value = self._get(key, (list,))
        return [_Reader(item, f"{self.where}{key}[{n}].") for n, item in enumerate(value)]

    def table(self, key: str, default: Any = ...) -> Mapping[str, Any]:
        value = self._get(key, (dict,), default)
        return dict(value)

    def child(self, key: str) -> _Reader | None:
        value = self._get(key, (dict, type(None)))
        return None if value is None else _Reader(value, f"{self.where}{key}.")

    def enum(self, key: str, kind: type[Any], default: Any = ...) -> Any:
        word = self.text(key, default)
        try:
            return kind(word)
        except ValueError:
            raise _Bad(f"{self.where}{key} {word!r} is not a known value") from None


class _Bad(Exception):
    """Inside from_json: what is wrong, before the source is known."""


def _facts(reader: _Reader) -> RunFacts:
    outcomes: tuple[TestOutcome, ...]
    if "tests" in reader.document:
        outcomes = tuple(
            TestOutcome(t.text("nodeid"), t.enum("outcome", Outcome),
                        t.number("duration_s", 0.0), t.text("reason", ""))
            for t in reader.objects("tests")
        )
    else:  # a mutant's run keeps the tests that did not pass, and a count of the others
        outcomes = (
            *(TestOutcome(t.text("nodeid"), t.enum("outcome", Outcome),
                          t.number("duration_s", 0.0), t.text("reason", ""))
              for t in reader.objects("not_passed")),
            *(TestOutcome("", Outcome.PASSED, 0.0) for _ in range(reader.integer("passed"))),
        )
    return RunFacts(
        runner=reader.text("runner"),
        exit_status=reader.maybe_int("exit_status"),
        signal=reader.maybe_int("signal"),
        timed_out=reader.flag("timed_out"),
        timeout_s=reader.number("timeout_s", 0.0),
        duration_s=reader.number("duration_s", 0.0),
        report=reader.enum("report", ReportState),
        exit=reader.enum("exit", RunExit),
        outcomes=outcomes,
        collection_errors=reader.texts("collection_errors"),
        log_path="",
        log_tail=reader.text("log_tail", ""),
        free_bytes=reader.maybe_int("free_bytes"),
        route=reader.text("route", ""),
        extension=NoFacts(reader.table("runner_facts", {})),
    )


def _spec(reader: _Reader, texts: Mapping[str, str] | None) -> SpecResult:
    declared = tuple(
        Mutation(n, d.text("name"), d.text("file"), d.text("anchor"), d.text("replacement"),
                 d.flag("expect_caught"), d.texts("killed_by"))
        for n, d in enumerate(reader.objects("declared"))
    )
    spec = Spec(
        reader.text("id"), reader.text("path"), reader.text("sha256"), reader.texts("tests"),
        reader.integer("expect_baseline_pass"), declared, reader.text("runner"),
    )
    mutations: list[MutationResult] = []
    for m in reader.objects("mutations"):
        index = m.integer("index")
        if not 0 <= index < len(declared):
            raise _Bad(f"{m.where}index {index} is not one of the spec's mutations")
        facts = m.child("facts")
        if facts is None:
            raise _Bad(f"{m.where}facts is null")
        loaded = m._get("loaded", (bool, type(None)), None)
        mutation = Mutation(
            index, m.text("name"), m.text("file"), m.text("anchor"), m.text("replacement"),
            m.flag("expect_caught"), m.texts("killed_by"),
        )
        where = m.child("location") if m.document.get("location") is not None else None
        location = None if where is None else Location(
            _position(where.child("start")), _position(where.child("end")))
        mutations.append(MutationResult(
            mutation, m.integer("line"), m.integer("end_line"),
            m.flag("crlf_translated"), m.text("diff"), _facts(facts),
            m.enum("verdict", Verdict), m.text("reason"), m.flag("as_expected"),
            loaded, m.texts("removed"), m.flag("first_failure", False), location,
        ))
    baseline = reader.child("baseline")
    depends = reader.table("depends_on")
    if not all(isinstance(v, str) for v in depends.values()):
        raise _Bad(f"{reader.where}depends_on holds a digest that is not a string")
    tools = tuple((row.text("fact"), row.text("value")) for row in reader.objects("tools"))
    pin_reader = reader.child("pin") if "pin" in reader.document else None
    pin = None if pin_reader is None else Pin(
        pin_reader.text("spec"), pin_reader.integer("expected"), pin_reader.integer("passed"),
        pin_reader.texts("approved"), pin_reader.texts("unlisted"), pin_reader.text("reason"),
        pin_reader.texts("tests"), pin_reader.texts("detail", ()),
    )
    pin_depends = {} if pin_reader is None else pin_reader.table("depends_on")
    red = reader.child("red_first") if "red_first" in reader.document else None
    try:
        red_first = None if red is None else red_first_from_json(red.document)
    except (KeyError, TypeError, ValueError) as error:
        raise _Bad(f"{reader.where}red_first is not a red-first record: {error}") from None
    return SpecResult(
        spec, None if baseline is None else _facts(baseline), reader.number("timeout_s", 0.0),
        tuple(mutations), reader.text("error"), depends, reader.text("source_commit"),
        reader.text("stopped", ""), tools, pin, pin_depends, red_first,
        reader.texts("absent", ()), _sources(reader, texts),
        reader.text("error_kind", ""),  # older files: none
        reader.texts("recorded") if "recorded" in reader.document else None,
    )


def _sources(reader: _Reader, texts: Mapping[str, str] | None) -> Mapping[str, str]:
    """The mutated files' texts: by digest from the document's `texts`, or (a results file
    older than them) each in place (none in one older still)."""
    sources = reader.table("sources", {})
    if not all(isinstance(text, str) for text in sources.values()):
        raise _Bad(f"{reader.where}sources holds a text that is not a string")
    if texts is None:
        return sources
    missing = sorted(path for path, digest in sources.items() if digest not in texts)
    if missing:
        raise _Bad(f"{reader.where}sources names a text the document's texts lack "
                   f"({missing[0]})")
    return {path: texts[digest] for path, digest in sources.items()}


def _texts(reader: _Reader) -> Mapping[str, str] | None:
    """The document's mutated files' texts by digest, each checked against its digest (None
    in a results file older than them)."""
    if "texts" not in reader.document:
        return None
    texts = reader.table("texts")
    for digest, text in texts.items():
        if not isinstance(text, str) or text_digest(text) != digest:
            raise _Bad(f"texts holds a text whose sha256 is not its key ({str(digest)[:16]})")
    return texts


def _shard(reader: _Reader | None) -> ShardPlan | None:
    if reader is None:
        return None
    index, count = reader.integer("index"), reader.integer("count")
    if not 1 <= index <= count:
        raise _Bad(f"{reader.where}index {index} is not a shard of {count}")
    plan = tuple(Planned(p.text("id"), p.text("sha256"), p.texts("mutations"))
                 for p in reader.objects("plan"))
    return ShardPlan(Shard(index, count), plan)


_STOPPING_CODES = (ExitCode.USAGE, ExitCode.BASELINE, ExitCode.NO_VERDICT, ExitCode.ENVIRONMENT)


def _stopping_code(reader: _Reader) -> ExitCode:
    """The exit code of the error a results document records: its own `exit_code`, one an
    error can have (an interrupted run's signal code does not say which: 5)."""
    code = reader.integer("exit_code")
    if code in (ExitCode.INTERRUPTED, ExitCode.TERMINATED):
        return ExitCode.ENVIRONMENT
    if code not in _STOPPING_CODES:
        raise _Bad(f"exit_code {code} is not the code of a run stopped by an error "
                   f"({', '.join(str(int(c)) for c in _STOPPING_CODES)})")
    return ExitCode(code)


def from_json(document: Any, source: str = "the document") -> RunResult:
    """A results document read back (raises ResultsError naming what is wrong)."""
    try:
        reader = _Reader(document, "")
        schema = document.get("schema")
        if schema != SCHEMA_VERSION:
            raise _Bad(f"its schema is {schema!r}; this mutharness reads {SCHEMA_VERSION}")
        error = reader.text("error")
        stopping = _stopping_code(reader) if error else ExitCode.OK
        texts = _texts(reader)
        return RunResult(
            tool={str(k): str(v) for k, v in reader.table("tool").items()},
            commit=reader.text("commit"),
            dirty=reader.flag("dirty"),
            dirty_changes=reader.texts("dirty_changes"),
            command=reader.texts("command"),
            specs=tuple(_spec(spec, texts) for spec in reader.objects("specs")),
            interrupted=reader.maybe_int("signal") if reader.flag("interrupted") else None,
            settings=reader.table("settings"),
            complete=reader.flag("complete"),
            error=RecordedError(error, stopping, reader.text("error_kind", ""))
            if error else None,
            shard=_shard(reader.child("shard")) if "shard" in document else None,
            notes=reader.texts("notes") if "notes" in document else (),  # older files: none
        )
    except _Bad as bad:
        raise ResultsError(source, str(bad)) from None


def read_results(path: Path) -> RunResult:
    """A results file read back (raises ResultsError when it is not one)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ResultsError(str(path), str(error)) from None
    run = from_json(document, str(path))
    return replace(run, results_path=str(path))
