"""`mutharness suggest`: mutations on the lines changed since a revision, run as verify runs
them, and drafted as a spec whose survivors come first."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mutharness.commands import baseline, verify
from mutharness.commands.prepare import (
    changed_tests,
    chosen_tests,
    expand,
    last_runs,
    open_repository,
    project_options,
    settings_of,
    specs_directory,
)
from mutharness.errors import SpecError, SuggestError
from mutharness.lab.logs import shown
from mutharness.model.affected import fix_files
from mutharness.model.anchors import Splice, locate, unified_diff
from mutharness.model.pins import PinState
from mutharness.model.results import MutationResult, RunResult
from mutharness.model.spec import Spec, display_name, read_specs
from mutharness.model.verdict import Verdict
from mutharness.options import SINCE_RECORDS
from mutharness.repo.files import write_atomic
from mutharness.repo.source import SourceRepo, status_paths
from mutharness.reports.console import Console, PinConsole
from mutharness.signals import interrupts
from mutharness.static_check import tracked_with
from mutharness.suggest.candidates import Anchored, Candidate, anchored, one_per_line, spread
from mutharness.suggest.javascript import SUFFIXES, javascript_candidates
from mutharness.suggest.python import python_candidates

DRAFT = "suggest/draft.json"  # under the run directory, unless --out names another file
RUNNING = "suggest/run"  # the spec the run measures, named as the draft: a failed run leaves
# the last complete draft as it was
RESULTS = "suggest/results.json"  # the run's results: the user's last verify's stay as they are
Reader = Callable[[str, str, Collection[int]], list[Candidate]]
# the source files suggest reads, by suffix: the runner whose tests test them, and their reader
READERS: dict[str, tuple[str, Reader]] = {
    ".py": ("pytest", python_candidates),
    **{suffix: ("node", javascript_candidates) for suffix in sorted(SUFFIXES)},
}
NEVER_IMPORTED = ("no process of the tests' run loaded this file: code no test imports is "
                  "left out (name tests that import it with --test)")
REVIEW = ("SURVIVED: no test failed. Strengthen the tests until it is CAUGHT, or keep it with "
          "expectCaught: false and say in its name why it does not matter")


@dataclass(frozen=True)
class Request:
    """What `mutharness suggest` was asked."""

    rev: str
    tests: tuple[str, ...] = ()  # --test entries; else changed test files; else recorded
    most: int = 7  # --max: the candidates kept
    out: Path | None = None  # --out: the draft's file
    all_lines: tuple[str, ...] = ()  # --all-lines: files whose every line counts as changed
    jobs: int = 1


def run(console: Console, cli_options: Mapping[str, Any], request: Request,
        config: Path | None) -> int:
    """The command line's suggest, from its parsed arguments to its exit code: 0 once the
    draft is written (its survivors are for the author, not a failed gate), or once it is
    said that nothing could be drafted."""
    source = open_repository()
    named = source.base_commit(request.rev)
    base = source.fork_point(named) or named  # a branch main moved past: where they meet
    changes = source.changes()
    changed = tuple(sorted(set(source.committed_since(base)) | set(status_paths(changes))
                           | set(request.all_lines)))
    tracked = frozenset(tracked_with(source, status_paths(changes)))
    if not changed:
        raise SuggestError(request.rev, "nothing changed since: there is no line to mutate",
                           "name the commit the change starts from, e.g. --since HEAD~1")
    recorded = () if request.tests or changed_tests(changed, tracked) else tuple(
        spec for spec in _recorded(source, changed, cli_options, config)
        if spec.runner in _runners_of(changed))
    runner, tests = chosen_tests(
        request.tests, recorded, changed, tracked,
        lambda problem, remedy: SuggestError(request.rev, problem, remedy),
        "name the tests with --test PATH_OR_ID (or verify a spec of them into evidence, "
        "whose record then names them)")
    untracked = frozenset(line[3:] for line in changes if line.startswith("?? "))
    texts, candidates, (files, examined) = _candidates(source, base, request, changed, runner,
                                                       tests, untracked)
    lines = one_per_line(candidates)
    kept = spread(lines, request.most)
    drafted = [made for made in (anchored(texts[c.file], c) for c in kept) if made is not None]
    console.line(f"suggest: {len(candidates)} candidate(s) on {len(lines)} of {examined} "
                 f"changed line(s) since {request.rev} ({base[:12]}) in {files} file(s); "
                 f"{len(drafted)} "
                 f"kept (one a line, at most --max {request.most}); tests: {' '.join(tests)}")
    if recorded:
        console.line(f"  (no test file changed: the tests of {', '.join(s.path for s in recorded)}"
                     ", whose evidence records loading a changed file)")
    out = request.out or source.run_dir / DRAFT
    if not drafted:
        console.line("no candidate to run: nothing is drafted")
        _earlier(console, out)
        return 0
    run_dir = source.ensure_run_dir()
    draft = run_dir / RUNNING / (out.stem + ".json")
    draft.parent.mkdir(parents=True, exist_ok=True)
    command = ("mutharness", "suggest", "--since", request.rev)
    # a pin of 1 until the measurement: the format wants a positive count, the run its own
    write_atomic(draft, _dumped(_document(tests, 1, drafted, request, base)))
    settings = settings_of((draft,), cli_options, config, True, command,
                           json_path=run_dir / RESULTS, jobs=request.jobs)
    with interrupts():
        [pin] = baseline.measure(settings, _Quiet(), os.environ, 1, lambda pin: None)
        if pin.state is PinState.UNTRUSTWORTHY:
            raise SuggestError(request.rev, f"the tests' baseline cannot be trusted: "
                               f"{pin.reason}", "\n  ".join(pin.detail) or
                               "make the tests pass at the working tree first")
        write_atomic(draft, _dumped(_document(tests, pin.total, drafted, request, base)))
        result = verify.execute(settings, console, os.environ)
    [spec] = result.specs or [None]
    if result.interrupted is not None or result.error is not None or spec is None or (
            spec.error):
        said = spec.error if spec is not None and spec.error else "the run stopped"
        console.line(f"no draft: {said}", "red")
        _earlier(console, out)
        return int(result.exit_code())
    final = _final(result, tests, pin.total, drafted, request, base)
    if not final["mutations"]:  # a spec needs one: nothing to pin is said, never drafted
        console.results(settings.json_path or run_dir / RESULTS)
        console.line(f"no draft: none of the {len(drafted)} candidate(s) run has a verdict "
                     "to pin", "yellow")
        for left in final.get("_left_out", ()):
            console.line(f"  {left['verdict']} {left['file']}:{left['line']}  "
                         f"{left['name']}: {left['why']}", "yellow")
        _earlier(console, out)
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, _dumped(final))
    console.results(settings.json_path or run_dir / RESULTS)
    _survivors(console, result, drafted, texts)
    console.line(f"draft: {shown(out)} (survivors first; copy it into your specs and "
                 "commit it)")
    return 0


def _recorded(source: SourceRepo, changed: Sequence[str], cli_options: Mapping[str, Any],
              config: Path | None) -> tuple[Spec, ...]:
    """The project's specs whose last run's record (their committed evidence facts: every
    file of the checkout their tests loaded) holds a changed file; none without specs or
    records. A spec that does not parse is passed over: `check` and `verify` name it."""
    options = project_options(source, cli_options, config)
    directory = specs_directory(source, options)
    try:
        paths = expand((directory,)) if directory.is_dir() else ()
    except SpecError:  # a directory with no *.json
        return ()
    specs, _ = read_specs(paths, [display_name(path, source.root) for path in paths])
    records = last_runs(source, options[SINCE_RECORDS], specs)
    wanted = set(changed)
    return tuple(spec for spec in specs
                 if (record := records.get(spec.id)) is not None and record.files & wanted)


def _earlier(console: Console, out: Path) -> None:
    """Said when no draft is written: the draft file an earlier run left is not this one's."""
    if out.is_file():
        console.line(f"{shown(out)} still holds an earlier run's draft, not one of this "
                     "change", "yellow")


def _runners_of(changed: Sequence[str]) -> frozenset[str]:
    """The runners whose tests test a changed source file (by its suffix: `READERS`)."""
    return frozenset(READERS[suffix][0] for path in changed
                     if (suffix := Path(path).suffix) in READERS)


class _Quiet(PinConsole):
    """The pin's measurement: said by the run that follows, not twice."""

    def head(self, source: SourceRepo, changes: Sequence[str]) -> None:
        """Nothing: verify's head line follows."""


def _candidates(
    source: SourceRepo, base: str, request: Request, changed: tuple[str, ...], runner: str,
    tests: tuple[str, ...], untracked: frozenset[str],
) -> tuple[dict[str, str], list[Candidate], tuple[int, int]]:
    """The texts of the changed source files the runner's tests test (Python for pytest,
    JavaScript and TypeScript for node), every candidate on their changed lines (all lines
    of an --all-lines file), and how many files and lines they were looked for on."""
    code = fix_files(changed, runner, tests, (), ("specs", "evidence", ".mutharness"))
    texts: dict[str, str] = {}
    found: list[Candidate] = []
    files = examined = 0
    for path in code:
        file = source.root.joinpath(*path.split("/"))
        reader = READERS.get(Path(path).suffix)
        if reader is None or reader[0] != runner or file.is_symlink() or not file.is_file():
            continue
        try:
            text = file.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        # git's count of a file's lines: the last one need not end in a newline; none if empty
        every = range(1, text.count("\n") + (bool(text) and not text.endswith("\n")) + 1)
        lines = (every if path in request.all_lines or path in untracked
                 else source.changed_lines(base, path))
        files, examined = files + 1, examined + len(lines)
        made = reader[1](path, text, lines)
        if made:
            texts[path] = text
            found.extend(made)
    return texts, found, (files, examined)


def _mutation(made: Anchored) -> dict[str, Any]:
    candidate = made.candidate
    return {"name": candidate.name, "file": candidate.file, "anchor": made.anchor,
            "replacement": made.replacement, "expectCaught": True,
            "_operator": candidate.operator.value, "_line": candidate.line}


def _document(tests: tuple[str, ...], passing: int, drafted: Sequence[Anchored],
              request: Request, base: str) -> dict[str, Any]:
    return {
        "tests": list(tests), "expectBaselinePass": passing,
        "mutations": [_mutation(made) for made in drafted],
        "_suggested": {"since": request.rev, "base": base, "max": request.most},
    }


def _final(result: RunResult, tests: tuple[str, ...], passing: int,
           drafted: Sequence[Anchored], request: Request, base: str) -> dict[str, Any]:
    """The draft as the run left it: survivors first, marked for review; the caught after;
    the candidates with no verdict left out, each with why."""
    [spec] = result.specs
    survived, caught, left = [], [], []
    for made, outcome in _paired(drafted, spec.mutations):
        entry = _mutation(made)
        if outcome.never_imported:  # code no test imports: nothing the tests could pin
            left.append({"name": entry["name"], "file": entry["file"], "line": entry["_line"],
                         "verdict": outcome.verdict.value, "why": NEVER_IMPORTED})
        elif outcome.verdict is Verdict.SURVIVED:
            survived.append({**entry, "_review": REVIEW})
        elif outcome.verdict is Verdict.CAUGHT:
            caught.append(entry)
        else:
            left.append({"name": entry["name"], "file": entry["file"], "line": entry["_line"],
                         "verdict": outcome.verdict.value, "why": outcome.reason})
    document = _document(tests, passing, drafted, request, base)
    document["mutations"] = survived + caught
    if left:
        document["_left_out"] = left
    return document


def _survivors(console: Console, result: RunResult, drafted: Sequence[Anchored],
               texts: Mapping[str, str]) -> None:
    """The actionable part: each survivor with file:line and its diff."""
    [spec] = result.specs
    for made, outcome in _paired(drafted, spec.mutations):
        if outcome.verdict is not Verdict.SURVIVED or outcome.never_imported:
            continue
        candidate = made.candidate
        data = texts[candidate.file].encode("utf-8")
        splice = locate(data, made.anchor, made.replacement)
        # the line verify names (where the anchor starts), and the mutated one when it differs
        at = splice.line if isinstance(splice, Splice) else candidate.line
        changed = f" (line {candidate.line} changes)" if at != candidate.line else ""
        console.line(f"SURVIVED {candidate.file}:{at}{changed}  {candidate.name}", "yellow")
        if isinstance(splice, Splice):
            console.line(unified_diff(data, splice, candidate.file).rstrip("\n"))


def _paired(drafted: Sequence[Anchored], results: Sequence[MutationResult]) -> list[
        tuple[Anchored, MutationResult]]:
    """Each result with the candidate it ran: the draft's mutation number is its place."""
    return [(drafted[result.mutation.number - 1], result) for result in results]


def _dumped(document: Mapping[str, Any]) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
