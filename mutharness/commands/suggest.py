"""`mutharness suggest`: mutations on the lines changed since a revision, run as verify runs
them, and drafted as a spec whose survivors come first."""

from __future__ import annotations

import json
import os
from collections import Counter
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
from mutharness.errors import GitError, SpecError, SuggestError
from mutharness.lab.logs import shown
from mutharness.model.affected import fix_files, under
from mutharness.model.anchors import Splice, locate, unified_diff
from mutharness.model.pins import PinState
from mutharness.model.results import MutationResult, RunResult
from mutharness.model.spec import Spec, display_name, read_specs
from mutharness.model.verdict import Verdict
from mutharness.options import SINCE_RECORDS
from mutharness.paths import visible as shown_path
from mutharness.repo.files import write_atomic
from mutharness.repo.git import run_git
from mutharness.repo.source import SourceRepo, added_lines, status_paths
from mutharness.reports.console import LISTED, Console, PinConsole, listed
from mutharness.runners.base import LineAsk
from mutharness.runners.registry import DEFAULT, runner_kind
from mutharness.signals import interrupts
from mutharness.static_check import tracked_with
from mutharness.suggest.candidates import (
    PER_OPERATOR,
    Anchored,
    Candidate,
    anchored,
    chosen,
    eligible,
)
from mutharness.suggest.javascript import SUFFIXES, javascript_candidates
from mutharness.suggest.lines import carried
from mutharness.suggest.python import python_candidates
from mutharness.suggest.reach import GAP, Reach, read_reach, split
from mutharness.suggest.sources import Source, read_source

DRAFT = "suggest/draft.json"  # under the run directory, unless --out names another file
RUNNING = "suggest/run"  # the spec the run measures, named as the draft: a failed run leaves
# the last complete draft as it was
RESULTS = "suggest/results.json"  # the run's results: the user's last verify's stay as they are
LINES = "suggest/lines.json"  # the line record of the pin's measurement (`LineAsk`)
UNRECORDED = ("the tests' baseline could not be trusted with the line record, and could "
              "without it (a tracer the tests mind, or a run the record made slower)")
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

    rev: str  # --since ("" with --commit)
    tests: tuple[str, ...] = ()  # --test entries; else the specs' or the project's
    most: int = 7  # --max: the candidates kept
    out: Path | None = None  # --out: the draft's file
    all_lines: tuple[str, ...] = ()  # --all-lines: files whose every line counts as changed
    jobs: int = 1
    commit: str = ""  # --commit: that one commit's change alone

    @property
    def flag(self) -> tuple[str, str]:
        """The flag naming the change, and its revision, as the user gave them."""
        return ("--commit", self.commit) if self.commit else ("--since", self.rev)

    def refused(self, problem: str, remedy: str = "") -> SuggestError:
        """The error of this request: a `--commit` one says so."""
        if self.commit:
            return CommitRefused(self.commit, problem, remedy)
        return SuggestError(self.rev, problem, remedy)


class CommitRefused(SuggestError):
    """`suggest --commit REV` cannot be set up: SuggestError, said of the flag given."""

    words = "suggest --commit"

    @property
    def kind(self) -> str:
        """Explained as every SuggestError is."""
        return "SuggestError"


@dataclass(frozen=True)
class Change:
    """What `suggest` mutates: the paths changed, each one's changed lines in the working
    tree, and the words and the draft's record of the change."""

    paths: tuple[str, ...]
    lines: Mapping[str, frozenset[int]] | None  # --commit's, worked out; else asked of git
    base: str  # the commit the lines differ from (--commit: the commit itself, carried on)
    said: str  # "since HEAD~1 (3b88573e5ed3)", "of commit HEAD~2 (0123456789ab)"
    record: Mapping[str, str]  # the draft's `_suggested`, but for --max
    untracked: frozenset[str] = frozenset()  # every line of these is changed
    lost: int = 0  # --commit: its lines a later change changed again


def _since(source: SourceRepo, request: Request, changes: Sequence[str]) -> Change:
    """Every line changed since REV (from where HEAD's history meets it): committed,
    uncommitted, untracked."""
    named = source.base_commit(request.rev)
    base = source.fork_point(named) or named  # a branch main moved past: where they meet
    paths = tuple(sorted(set(source.committed_since(base)) | set(status_paths(changes))))
    untracked = frozenset(line[3:] for line in changes if line.startswith("?? "))
    return Change(paths, None, base, f"since {request.rev} ({base[:12]})",
                  {"since": request.rev, "base": base}, untracked)


def _commit(source: SourceRepo, request: Request) -> Change:
    """The lines one commit changed (its parent to it), where they are in the working tree;
    those a later change changed again left out, counted. Refused: a name that is no commit,
    a merge (no one parent to compare with)."""
    rev = request.commit
    if request.rev:
        raise request.refused(
            f"--since {request.rev} names a change too",
            "give one: --commit REV for that commit's change alone, --since REV for every "
            "change since REV (later commits included)")
    try:
        sha = source.base_commit(rev)
    except GitError as error:
        problem = error.what.removeprefix(f"{rev} ")
        raise request.refused(problem, error.remedy) from error
    [_, *parents] = _git(source, ["rev-list", "--parents", "-n", "1", sha]).split()
    if len(parents) > 1:
        raise request.refused(
            f"is a merge of {len(parents)} commits "
            f"({', '.join(parent[:12] for parent in parents)}): its change has no one parent",
            f"name one of the commits it merges, or suggest for all it brought in: --since "
            f"{parents[0][:12]}")
    diff = ["--no-renames", "--no-ext-diff", "--no-textconv", "--no-color"]
    listed = _git(source, ["diff-tree", "--root", "--no-commit-id", "-r", "--name-only", "-z",
                           *diff, sha])
    paths = tuple(sorted(path for path in listed.split("\0") if path))
    lines: dict[str, frozenset[int]] = {}
    lost = 0
    for path in paths:
        made = added_lines(_git(source, ["--literal-pathspecs", "diff-tree", "--root", "-p",
                                         "-U0", *diff, sha, "--", path]))
        since = _git(source, ["--literal-pathspecs", "diff", "-U0", *diff, sha, "--", path])
        lines[path], gone = carried(made, since)
        lost += gone
    return Change(paths, lines, sha, f"of commit {rev} ({sha[:12]})",
                  {"commit": rev, "sha": sha}, lost=lost)


def _git(source: SourceRepo, args: list[str]) -> str:
    return run_git(source.git, source.root, args, source.neutral,
                   strip_newline_in_stdout=False)


def run(console: Console, cli_options: Mapping[str, Any], request: Request,
        config: Path | None) -> int:
    """The command line's suggest, from its parsed arguments to its exit code: 0 once the
    draft is written (its survivors are for the author, not a failed gate), or once it is
    said that nothing could be drafted."""
    source = open_repository()
    changes = source.changes()
    change = _commit(source, request) if request.commit else _since(source, request, changes)
    changed = tuple(sorted(set(change.paths) | set(request.all_lines)))
    tracked = frozenset(tracked_with(source, status_paths(changes)))
    if not changed:
        if request.commit:
            raise request.refused("changes no file: there is no line to mutate",
                                  "name a commit that changes source lines")
        raise request.refused("nothing changed since: there is no line to mutate",
                              "name the commit the change starts from, e.g. --since HEAD~1")
    runner, tests, why = _tests(source, request, changed, tracked, cli_options, config)
    read = _candidates(source, change, request, changed, runner, tests)
    candidates = read.candidates
    lines = len({(c.file, c.line) for c in candidates})
    drafted, unanchored = _drafted(source, read, request.most,
                                   frozenset(status_paths(changes)))
    console.line(f"suggest: {len(candidates)} candidate(s) on {lines} of {read.examined} "
                 f"changed line(s) {change.said} in {read.files} file(s); "
                 f"{len(drafted)} kept (one a line, at most {PER_OPERATOR} of an operator, "
                 f"at most --max {request.most}); tests: {listed(tests)}")
    if read.unread:
        console.line(f"  {len(read.unread)} file{'s' if len(read.unread) > 1 else ''} not "
                     "read: " + "; ".join(f"{shown_path(path)} ({why})"
                                          for path, why in read.unread), "yellow")
    _unanchored(console, unanchored)
    if change.lost:
        console.line(f"  {change.lost} of the commit's changed line(s) changed again since: "
                     "left out (a later commit's now)")
    if why:
        console.line(f"  ({why})")
    out = request.out or source.run_dir / DRAFT
    if not drafted:
        console.line("no candidate to run: nothing is drafted")
        _earlier(console, out)
        return 0
    run_dir = source.ensure_run_dir()
    draft = run_dir / RUNNING / (out.stem + ".json")
    draft.parent.mkdir(parents=True, exist_ok=True)
    command = ("mutharness", "suggest", *request.flag)
    # a pin of 1 until the measurement: the format wants a positive count, the run its own
    write_atomic(draft, _dumped(_document(tests, 1, drafted, request, change)))
    settings = settings_of((draft,), cli_options, config, True, command,
                           json_path=run_dir / RESULTS, jobs=request.jobs)
    # the measurement records the lines its run executes in the files with a candidate
    ask = LineAsk(tuple(sorted(read.sources)), run_dir / LINES)
    ask.out.unlink(missing_ok=True)  # an earlier run's record never speaks for this one
    texts = {path: found.text for path, found in read.sources.items()}
    with interrupts():
        [pin] = baseline.measure(settings, _Quiet(), ask.environment(os.environ), 1,
                                 lambda pin: None)
        reach = read_reach(ask.out, texts)
        if pin.state is PinState.UNTRUSTWORTHY:  # the record's doing (a tracer the tests
            # mind, a slower run), or the tests' own: measured again as verify runs them
            [pin] = baseline.measure(settings, _Quiet(), os.environ, 1, lambda pin: None)
            if pin.state is PinState.UNTRUSTWORTHY:
                raise request.refused(f"the tests' baseline cannot be trusted: {pin.reason}",
                                      "\n  ".join(pin.detail) or
                                      "make the tests pass at the working tree first")
            reach = Reach({}, dict.fromkeys(texts, UNRECORDED))
        drafted, notes = _reached(console, source, read, reach, request.most,
                                  frozenset(status_paths(changes)), drafted, unanchored)
        if not drafted:
            console.line("no candidate to run: each is on a line no test executes; nothing is "
                         "drafted")
            _earlier(console, out)
            return 0
        write_atomic(draft, _dumped(_document(tests, pin.total, drafted, request, change,
                                              notes)))
        result = verify.execute(settings, console, os.environ)
    [spec] = result.specs or [None]
    if result.interrupted is not None or result.error is not None or spec is None or (
            spec.error):
        said = spec.error if spec is not None and spec.error else "the run stopped"
        console.line(f"no draft: {said}", "red")
        _earlier(console, out)
        return int(result.exit_code())
    final = _final(result, tests, pin.total, drafted, request, change, notes)
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
    _survivors(console, result, drafted, read.sources)
    console.line(f"draft: {shown(out)} (survivors first; copy it into your specs and "
                 "commit it)")
    return 0


NAMING = ("name the tests with --test PATH_OR_ID (or verify a spec of them into evidence, "
          "whose record then names them)")
PROJECT_TESTS = ("tests", "test")  # the directories that hold a project's tests, first first


def _tests(source: SourceRepo, request: Request, changed: tuple[str, ...],
           known: frozenset[str], cli_options: Mapping[str, Any],
           config: Path | None) -> tuple[str, tuple[str, ...], str]:
    """(runner, test entries, how they were chosen, for the console): the entries --test
    names; else, for the runner whose tests test the changed source files, the tests of the
    specs whose mutations cover a changed file, else of the specs whose committed evidence
    records loading one, else the project's tests (`_project_tests`), each with the test
    files the change touched; with no such source file, the test files changed."""
    if request.tests:
        return (*chosen_tests(request.tests, (), changed, known, request.refused, NAMING), "")
    runners = _runners_of(changed)
    if not runners:  # only tests (or other files) changed: nothing to mutate but theirs
        return (*chosen_tests((), (), changed, known, request.refused, NAMING), "")
    specs, records_dir = _specs(source, cli_options, config)
    wanted = set(changed)
    mine = tuple(spec for spec in specs if spec.runner in runners)
    covering = tuple(spec for spec in mine
                     if any(mutation.file in wanted for mutation in spec.mutations))
    records = {} if covering else last_runs(source, records_dir, mine)  # only when needed
    recorded = tuple(spec for spec in mine
                     if (record := records.get(spec.id)) is not None and record.files & wanted)
    touched = changed_tests(changed, known)
    if covering or recorded:
        named = covering or recorded
        runner, tests = chosen_tests((), named, changed, known, request.refused, NAMING)
        whose = ("whose mutations cover a changed file" if covering
                 else "whose evidence records loading a changed file")
        said = f"the tests of {', '.join(spec.path for spec in named)}, {whose}"
    else:
        if len(runners) > 1:
            raise request.refused(
                "source files of several runners changed and no spec covers them or records "
                "loading them", "name one runner's tests with --test PATH_OR_ID")
        [runner] = runners
        tests = _project_tests(source, runner, known)
        if not tests:
            raise request.refused(
                f"no spec covers a changed file, no evidence records loading one, and the "
                f"project has no {runner} test file", NAMING)
        said = ("no spec covers a changed file and no evidence records loading one: the "
                f"project's tests, {listed(tests)}")
    kind = runner_kind(runner)
    own = tuple(path for path in touched.get(runner, ())
                if not any(under(path, kind.entry_path(entry)) for entry in tests))
    if own:
        said += "; and the test files the change touched"
    return runner, tests + own, said


def _project_tests(source: SourceRepo, runner: str, tracked: frozenset[str]) -> tuple[
        str, ...]:
    """The project's tests for `runner`: its test files (by the runner's names) in the first
    of `tests/`, `test/` that holds one, else wherever they are; pytest's as the directory,
    node's a file each (a directory names no runner: a spec's runner is told from its
    files)."""
    kind = runner_kind(runner)
    modules = sorted(path for path in tracked if kind.is_test_module(path)
                     and "node_modules/" not in f"/{path}"
                     and source.root.joinpath(*path.split("/")).is_file())
    for directory in PROJECT_TESTS:
        inside = [path for path in modules if path.startswith(directory + "/")]
        if inside:
            return (directory,) if runner == DEFAULT else tuple(inside)
    return tuple(modules)


def _specs(source: SourceRepo, cli_options: Mapping[str, Any],
           config: Path | None) -> tuple[tuple[Spec, ...], str]:
    """The project's specs (none without a specs directory; one that does not parse is
    passed over: `check` and `verify` name it), and where their records of their last runs
    are (the committed evidence facts: every file of the checkout their tests loaded)."""
    options = project_options(source, cli_options, config)
    directory = specs_directory(source, options)
    records_dir = str(options[SINCE_RECORDS])
    try:
        paths = expand((directory,)) if directory.is_dir() else ()
    except SpecError:  # a directory with no *.json
        return (), records_dir
    specs, _ = read_specs(paths, [display_name(path, source.root) for path in paths])
    return tuple(specs), records_dir


def _earlier(console: Console, out: Path) -> None:
    """Said when no draft is written: the draft file an earlier run left is not this one's."""
    if out.is_file():
        console.line(f"{shown(out)} still holds an earlier run's draft, not one of this "
                     "change", "yellow")


def _runners_of(changed: Sequence[str]) -> frozenset[str]:
    """The runners whose tests test a changed source file (by its suffix: `READERS`)."""
    return frozenset(READERS[suffix][0] for path in changed
                     if (suffix := Path(path).suffix) in READERS)


def _unanchored(console: Console, unanchored: Sequence[Candidate]) -> None:
    if unanchored:
        console.line(f"  {len(unanchored)} candidate(s) left out: no anchor of whole lines "
                     "verify finds (it reads anchors as UTF-8) names them in the file's bytes: "
                     + ", ".join(f"{shown_path(c.file)}:{c.line}" for c in unanchored),
                     "yellow")


def _reached(console: Console, source: SourceRepo, read: _Read, reach: Reach, most: int,
             dirty: frozenset[str], drafted: list[Anchored],
             unanchored: list[Candidate]) -> tuple[list[Anchored], dict[str, Any]]:
    """The candidates kept again from those on lines a test executes (or the record cannot
    speak for), and the draft's notes: said first, the changed lines no test executes (each
    line that had a candidate: a coverage gap, never a survivor), then the files the line
    record cannot speak for (their candidates kept)."""
    kept, unrun = split(read.candidates, reach)
    notes: dict[str, Any] = {}
    if unrun:
        lines = sorted({(c.file, c.line): c.function for c in unrun}.items())
        notes["_not_executed"] = [{"file": file, "line": line, "function": function,
                                   "why": GAP} for (file, line), function in lines]
        console.line(f"{len(lines)} changed line(s) {GAP}: no candidate there", "yellow")
        for (file, line), function in lines:
            console.line(f"  {shown_path(file)}:{line}"
                         + (f"  in {function}" if function else ""), "yellow")
    if reach.silent:
        notes["_not_recorded"] = [{"file": file, "why": why}
                                  for file, why in sorted(reach.silent.items())]
        for file, why in sorted(reach.silent.items()):
            console.line(f"the line record cannot speak for {shown_path(file)} ({why}): its "
                         "candidates are kept", "yellow")
    if not unrun:
        _without(console, kept, drafted, most, notes)
        return drafted, notes
    again, left = _drafted(source, _Read(read.sources, kept, read.files, read.examined,
                                         read.unread), most, dirty)
    _unanchored(console, [candidate for candidate in left if candidate not in unanchored])
    if again:
        console.line(f"  the choice made again from the lines the tests run: {len(again)} kept")
    _without(console, kept, again, most, notes)
    return again, notes


def _without(console: Console, pool: Sequence[Candidate], drafted: Sequence[Anchored],
             most: int, notes: dict[str, Any]) -> None:
    """Say each changed function with candidates (on lines the tests run, or that the line
    record cannot speak for) that the draft has none of, and why (the draft's
    `_without_candidate`): the limit of an operator, or --max."""
    kept = [made.candidate for made in drafted]
    have = {(c.file, c.function) for c in kept}
    counts = Counter(c.operator for c in kept)
    pool = eligible(pool)
    firsts: dict[tuple[str, str], Candidate] = {}
    for candidate in pool:
        key = (candidate.file, candidate.function)
        if key not in have and (key not in firsts or candidate.line < firsts[key].line):
            firsts[key] = candidate
    left: list[tuple[Candidate, str]] = []
    for (file, function), first in sorted(firsts.items(), key=lambda item: (
            item[0][0], item[1].line)):
        operators = {c.operator for c in pool if (c.file, c.function) == (file, function)}
        left.append((first, f"the limit of {PER_OPERATOR} of an operator"
                     if all(counts[operator] >= PER_OPERATOR for operator in operators)
                     else f"--max {most} was reached" if len(kept) >= most
                     else "its candidates had no anchor, or their lines another function's"))
    if not left:
        return
    notes["_without_candidate"] = [{"file": first.file, "function": first.function,
                                    "line": first.line, "why": why} for first, why in left]
    more = (f" and {len(left) - LISTED} more (the draft's _without_candidate lists them all)"
            if len(left) > LISTED else "")
    console.line(f"{len(left)} changed function{'s' if len(left) > 1 else ''} with "
                 "candidates got none in the draft: " + "; ".join(
                     f"{shown_path(first.file)}:{first.line} "
                     f"{first.function or '(module level)'} ({why})"
                     for first, why in left[:LISTED]) + more, "yellow")


class _Quiet(PinConsole):
    """The pin's measurement: said by the run that follows, not twice."""

    def head(self, source: SourceRepo, changes: Sequence[str]) -> None:
        """Nothing: verify's head line follows."""


@dataclass(frozen=True)
class _Read:
    """The changed source files the runner's tests test, as read, and their candidates."""

    sources: dict[str, Source]  # the files with a candidate
    candidates: list[Candidate]
    files: int  # the files read
    examined: int  # their changed lines
    unread: list[tuple[str, str]]  # (a file that could not be read, why)


def _candidates(
    source: SourceRepo, change: Change, request: Request, changed: tuple[str, ...],
    runner: str, tests: tuple[str, ...],
) -> _Read:
    """The changed source files the runner's tests test (Python for pytest, JavaScript and
    TypeScript for node), read as their language reads them (`sources.read_source`), every
    candidate on their changed lines (all lines of an --all-lines file), how many files and
    lines they were looked for on, and the files that could not be read, with why."""
    code = fix_files(changed, runner, tests, (), ("specs", "evidence", ".mutharness"))
    read = _Read({}, [], 0, 0, [])
    files = examined = 0
    for path in code:
        file = source.root.joinpath(*path.split("/"))
        reader = READERS.get(Path(path).suffix)
        if reader is None or reader[0] != runner or file.is_symlink() or not file.is_file():
            continue
        try:
            found = read_source(path, file.read_bytes())
        except OSError as error:
            found = f"cannot be read: {error.strerror or error}"
        if not isinstance(found, Source):
            read.unread.append((path, found))
            continue
        text = found.text
        # git's count of a file's lines: the last one need not end in a newline; none if empty
        every = range(1, text.count("\n") + (bool(text) and not text.endswith("\n")) + 1)
        lines = (every if path in request.all_lines or path in change.untracked
                 else change.lines.get(path, frozenset()) if change.lines is not None
                 else source.changed_lines(change.base, path))
        files, examined = files + 1, examined + len(lines)
        made = reader[1](path, text, lines)
        if made:
            read.sources[path] = found
            read.candidates.extend(made)
    return _Read(read.sources, read.candidates, files, examined, read.unread)


def _drafted(source: SourceRepo, read: _Read, most: int, dirty: frozenset[str]) -> tuple[
        list[Anchored], list[Candidate]]:
    """The kept candidates (`chosen`), each with an anchor the run finds (`anchored`: in the
    working tree's bytes; in HEAD's as checked out too, for a file the run takes from
    HEAD); a kept one with none is replaced by the next choice. Returns the drafted and the
    candidates left out for want of an anchor."""
    pool = list(read.candidates)
    unanchored: list[Candidate] = []
    grown: dict[Candidate, Anchored | None] = {}
    while True:
        kept = chosen(pool, most)
        for candidate in kept:
            if candidate not in grown:
                found = anchored(read.sources[candidate.file], candidate)
                grown[candidate] = (found if found is not None
                                    and _found_at_head(source, found, dirty) else None)
        bad = [candidate for candidate in kept if grown[candidate] is None]
        if not bad:
            return [made for candidate in kept if (made := grown[candidate]) is not None], \
                unanchored
        unanchored.extend(bad)
        pool = [candidate for candidate in pool if candidate not in bad]


def _found_at_head(source: SourceRepo, made: Anchored, dirty: frozenset[str]) -> bool:
    """Whether the run, which takes a file the working tree does not change from HEAD's
    checkout, finds the anchor there too (a checkout's filters may write other bytes)."""
    path = made.candidate.file
    if path in dirty:
        return True
    data = source.committed_bytes(path)
    return data is not None and isinstance(locate(data, made.anchor, made.replacement), Splice)


def _mutation(made: Anchored) -> dict[str, Any]:
    candidate = made.candidate
    return {"name": candidate.name, "file": candidate.file, "anchor": made.anchor,
            "replacement": made.replacement, "expectCaught": True,
            "_operator": candidate.operator.value, "_line": candidate.line}


def _document(tests: tuple[str, ...], passing: int, drafted: Sequence[Anchored],
              request: Request, change: Change,
              notes: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return {
        "tests": list(tests), "expectBaselinePass": passing,
        "mutations": [_mutation(made) for made in drafted],
        **(notes or {}),
        "_suggested": {**change.record, "max": request.most},
    }


def _final(result: RunResult, tests: tuple[str, ...], passing: int,
           drafted: Sequence[Anchored], request: Request, change: Change,
           notes: Mapping[str, Any]) -> dict[str, Any]:
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
    document = _document(tests, passing, drafted, request, change, notes)
    document["mutations"] = survived + caught
    if left:
        document["_left_out"] = left
    return document


def _survivors(console: Console, result: RunResult, drafted: Sequence[Anchored],
               sources: Mapping[str, Source]) -> None:
    """The actionable part: each survivor with file:line and its diff."""
    [spec] = result.specs
    for made, outcome in _paired(drafted, spec.mutations):
        if outcome.verdict is not Verdict.SURVIVED or outcome.never_imported:
            continue
        candidate = made.candidate
        data = sources[candidate.file].data
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
