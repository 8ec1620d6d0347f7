"""Terminal output: one flushed line per event, colour only on a terminal."""

from __future__ import annotations

import importlib
import os
import shutil
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import click

from mutharness.errors import ExitCode, MutharnessError, OutputClosed
from mutharness.explanations import pointer
from mutharness.lab.logs import log_file, mutant_scenario, spec_directory
from mutharness.model.pins import Pin, PinState
from mutharness.model.redfirst import Pairing, RedFirst
from mutharness.model.results import MutationResult, RunResult
from mutharness.model.shards import ShardPlan
from mutharness.model.spec import Mutation, Spec
from mutharness.model.verdict import Verdict
from mutharness.paths import visible
from mutharness.reports.outcome import mismatch
from mutharness.reports.progress import Progress
from mutharness.runners.base import RunFacts
from mutharness.runners.registry import RUNNERS

if TYPE_CHECKING:  # at run time the console needs only click: it reports missing libraries
    from mutharness.lab.events import Phase
    from mutharness.model.affected import Selection
    from mutharness.model.redfirst import Proof
    from mutharness.repo.source import SourceRepo

MAX_FAILING_SHOWN = 4
MAX_INVARIANTS_SHOWN = 20
NAME_WIDTH = 90
TICK_S = 1.0  # how often the status line's clock moves
CLEAR = "\r\x1b[2K"  # back to the line's start, and clear it
@dataclass(frozen=True)
class Glyphs:
    """Marks used in output; plain ASCII where the stream cannot encode the fancy ones."""

    arrow: str
    cross: str

    @classmethod
    def for_encoding(cls, encoding: str | None) -> Glyphs:
        """The fancy marks when `encoding` can carry them."""
        try:
            "↳✗".encode(encoding or "ascii")
        except (UnicodeEncodeError, LookupError):
            return cls("->", "x")
        return cls("↳", "✗")


def printable(text: str) -> str:
    """Text the tests or a spec chose (a test id, a file name, a name), as inert data in one
    console line: control characters, line breaks and what is not UTF-8 shown as escapes
    (`\\x1b`, `\\n`, `\\xff`), and nothing a CI log takes for a command (GitHub's `::` at
    a line's start, after blanks, and its legacy `##[` anywhere)."""
    text = visible(text)
    text = text.replace("##[", "##\\x5b")
    blank = len(text) - len(text.lstrip())
    if text.startswith("::", blank):
        text = f"{text[:blank]}\\x3a{text[blank + 1:]}"
    return text


LISTED = 6  # test entries a console line names before it counts the rest


def listed(entries: Sequence[str], most: int = LISTED) -> str:
    """Test entries for one console line, each `printable`: all of them up to `most`, else
    the first three and how many more (a suite of a hundred files, named three times over,
    buries the lines a user reads)."""
    shown_entries = [printable(entry) for entry in entries]
    if len(shown_entries) <= most:
        return " ".join(shown_entries)
    return (f"{' '.join(shown_entries[:3])} and {len(shown_entries) - 3} more "
            f"({len(shown_entries)} in all)")


def _first_line(message: str) -> str:
    """A message's first line; one that leads to a list (ends with a colon) with the list's
    first item and how many more follow."""
    lines = message.splitlines() or [""]
    if not lines[0].endswith(":") or len(lines) < 2:
        return lines[0]
    more = len(lines) - 2
    return f"{lines[0]} {lines[1].strip()}" + (f" (and {more} more)" if more else "")


def _encodable(text: str, encoding: str | None) -> str:
    """`text` as the stream's encoding can write it: what it cannot encode (a Windows console's
    code page and a test's, a spec's or node's own glyphs) shown as an escape (`\\u2716`)."""
    if not encoding:
        return text
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return text.encode(encoding, errors="backslashreplace").decode(encoding)
    except LookupError:  # a codec Python does not know: written as it is
        return text
    return text


def _label(name: str) -> str:
    flat = " ".join(name.split())
    return printable(flat if len(flat) <= NAME_WIDTH else flat[: NAME_WIDTH - 3] + "...")


def _cut(name: str) -> bool:
    """Whether `_label` cuts the name."""
    return len(" ".join(name.split())) > NAME_WIDTH


def _shown(path: str) -> str:
    """A path as the user can open it from here: relative below the current directory."""
    try:
        return printable(Path(path).relative_to(Path.cwd()).as_posix())
    except ValueError:
        return printable(path)


def _terminal_sequences() -> bool:
    """Whether the terminal obeys the status line's control sequences: everywhere but a
    Windows console, where colorama (click's dependency there) turns them on."""
    if sys.platform != "win32":
        return True
    try:
        colorama = importlib.import_module("colorama")
        colorama.just_fix_windows_console()
    except (ImportError, AttributeError):  # no colorama, or one older than 0.4.6
        return False
    return True


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _silence(stream: TextIO) -> None:
    """Point a stream that can no longer be written at the null device, so that nothing
    (not even the interpreter's flush at exit) fails on it again."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())
        os.close(null)
    except (OSError, ValueError):
        pass


class Console:
    """Prints progress and the summary; every line is flushed as it is written.

    When standard output cannot be written (`| head` exited, `>/dev/full`) the first line that
    fails raises OutputClosed, which stops the run; later lines to it are dropped. A failing
    standard error is dropped silently: there is nowhere left to say so."""

    def __init__(self, color: bool | None = None, progress: bool = False) -> None:
        """`color`: True forces colour, None gives it to a terminal unless NO_COLOR is set;
        `progress`: a live status line, when standard output is a terminal."""
        self.glyphs = Glyphs.for_encoding(getattr(sys.stdout, "encoding", None))
        self.closed: set[str] = set()  # "stdout" / "stderr" once a write to it failed
        self.color = False if color is None and os.environ.get("NO_COLOR") else color
        self.lock = threading.RLock()  # the status line's ticker writes too
        self.progress: Progress | None = None
        self.status = ""  # the status line as drawn ("" when none is)
        self.ticker: threading.Thread | None = None
        self.run_dir: Path | None = None  # the repository's .mutharness, once known
        if progress and _is_terminal(sys.stdout) and _terminal_sequences():
            self.progress = Progress(time.monotonic())
            self.ticker = threading.Thread(target=self._tick, name="status-line", daemon=True)
            self.ticker.start()

    def _tick(self) -> None:
        while self.progress is not None:
            time.sleep(TICK_S)
            self.redraw()

    def redraw(self) -> None:
        """Draw the status line again (the clock moved, or a line was printed above it)."""
        with self.lock:
            progress = self.progress
            if progress is None or "stdout" in self.closed:
                return
            width = shutil.get_terminal_size((80, 24)).columns - 1
            text = _encodable(printable(progress.line(time.monotonic(), width)),
                              getattr(sys.stdout, "encoding", None))
            try:
                sys.stdout.write(CLEAR + click.style(text, fg="cyan") if self.color is not False
                                 else CLEAR + text)
                sys.stdout.flush()
                self.status = text
            except (OSError, ValueError):
                self.closed.add("stdout")

    def end_progress(self) -> None:
        """The status line removed for good (before the summary, or on the way out)."""
        with self.lock:
            self.progress = None
            self._clear()

    def _clear(self) -> None:
        if self.status and "stdout" not in self.closed:
            try:
                sys.stdout.write(CLEAR)
                sys.stdout.flush()
            except (OSError, ValueError):
                self.closed.add("stdout")
            self.status = ""

    def line(self, text: str = "", colour: str | None = None, err: bool = False) -> None:
        """One line, flushed at once (also when stdout is a file or a pipe); on a terminal
        with a status line, printed above it. Each of its lines goes through `printable`:
        whatever a caller put in it, no line carries a control character or a command."""
        self._write("\n".join(printable(part) for part in text.split("\n")), colour, err)

    def workflow_command(self, command: str) -> None:
        """A GitHub workflow command as `reports.annotations` made it (its data escaped)."""
        self._write(command, None, False)

    def _write(self, text: str, colour: str | None, err: bool) -> None:
        name = "stderr" if err else "stdout"
        if name in self.closed:
            return
        stream = sys.stderr if err else sys.stdout
        text = _encodable(text, getattr(stream, "encoding", None))
        with self.lock:
            self._clear()
            try:
                click.secho(text, fg=colour, err=err, color=self.color)
                stream.flush()
            except (OSError, ValueError) as error:  # EPIPE, ENOSPC, EBADF; ValueError: closed
                self.closed.add(name)
                _silence(stream)
                if not err:
                    code = error.errno if isinstance(error, OSError) else None
                    strerror = error.strerror if isinstance(error, OSError) else str(error)
                    raise OutputClosed(code, strerror or "closed") from None
            if self.progress is not None:
                self.redraw()

    def planned(self, mutations: Mapping[str, int]) -> None:
        """How many mutations of each spec the run makes (the status line's total)."""
        if self.progress is not None:
            self.progress.plan(mutations)
            self.redraw()

    def mutation_started(self, spec: Spec, mutation: Mutation) -> None:
        if self.progress is not None:
            self.progress.start(spec, mutation)
            self.redraw()

    def error(self, error: MutharnessError) -> None:
        """A user-facing error on stderr, then the command that explains it (an entry per
        error class: what it says, why, and the next step)."""
        self.line(f"mutharness: error: {error.message()}", "red", err=True)
        self.line(f"  {pointer(error.kind)}", err=True)

    def note(self, text: str) -> None:
        """Something the user should know that changes no verdict, on stderr: one line,
        whatever a test put in it (a file name it chose with a line break in it)."""
        self.line(f"mutharness: note: {printable(text)}", "yellow", err=True)

    def phase(self, phase: Phase) -> None:
        """Phase transitions print nothing: the lines that follow say what happened."""

    def head(self, source: SourceRepo, changes: Sequence[str]) -> None:
        self.run_dir = source.run_dir  # where the scenarios' logs are kept (lab.logs)
        state = (
            f"dirty: {len(changes)} uncommitted change(s) included (--allow-dirty)"
            if changes else "clean"
        )
        self.line(f"HEAD {source.short}  {state}", "yellow" if changes else None)
        environments = source.environments()
        if environments:
            self.line("left out (environments, not changes): "
                      + ", ".join(printable(place) for place in environments), "bright_black")
        outputs = source.outputs()
        if outputs:
            self.line("left out (mutharness's own outputs, as it wrote them): "
                      + ", ".join(map(printable, outputs)), "bright_black")

    def baseline_started(self, spec: Spec) -> None:
        if self.progress is not None:
            self.progress.baseline_started(spec, time.monotonic())
        self.line(f"spec {printable(spec.id)} ({printable(spec.path)})")
        self.line(f"baseline: {listed(spec.tests)}", "bright_black")

    def baseline_run(self, spec: Spec, number: int, runs: int) -> None:
        """The status line says which baseline run runs."""
        if self.progress is not None:
            self.progress.baseline_run(spec, number, runs, time.monotonic())
            self.redraw()

    def baseline_finished(self, spec: Spec, facts: RunFacts, timeout_s: float) -> None:
        if self.progress is not None:
            self.progress.baseline(spec, facts.duration_s, time.monotonic())
        self.line(
            f"baseline {facts.passed} pass / {facts.failed} fail ({facts.duration_s:.2f} s); "
            f"mutation timeout {round(timeout_s, 1):g} s",
            "green",
        )

    def spec_failed(self, spec: Spec, error: MutharnessError) -> None:
        self.error(error)

    def selected(self, selection: Selection) -> None:
        self.line(selection.describe(), "bright_black" if selection.specs else "yellow")

    def sharded(self, plan: ShardPlan) -> None:
        assigned = plan.assigned()
        count = sum(len(indices) for indices in assigned.values())
        total = sum(planned.mutations for planned in plan.plan)
        self.line(f"shard {plan.shard}: {count} of {total} mutation(s), of {len(assigned)} of "
                  f"{len(plan.plan)} spec(s)", "bright_black")

    def proving(self, proof: Proof) -> None:
        shown_fix = ", ".join(map(printable, proof.fix[:5])) + (
            f" and {len(proof.fix) - 5} more" if len(proof.fix) > 5 else "")
        if proof.named:
            self.line(f"{printable(proof.rev)} ({proof.named[:12]}) is not an ancestor of HEAD: "
                      f"the fix is reverted to their merge base {proof.base[:12]}", "yellow")
        self.line(f"red-first against {printable(proof.rev)} ({proof.base[:12]}): the fix is "
                  f"{len(proof.fix)} file(s): {shown_fix}")
        self.line(f"tests ({proof.spec.runner}): {' '.join(map(printable, proof.spec.tests))}",
                  "bright_black")

    def pin(self, pin: Pin) -> None:
        """One `mutharness baseline` line."""
        colour = {PinState.OK: "green", PinState.DRIFT: "yellow"}.get(pin.state, "red")
        self.line(pin.line(), colour)
        for test in pin.tests[:20]:
            self.line(f"    {printable(test)}", colour)
        for line in pin.detail:
            self.line(f"    {printable(line)}", colour)

    def results(self, path: Path) -> None:
        """Where a command's results file is."""
        self.line(f"results: {_shown(str(path))}", "bright_black")

    def red_first(self, record: RedFirst) -> None:
        """Every test's two outcomes, the verdict, and the exact last line."""
        colours = {Pairing.RED_FIRST: "green", Pairing.INVARIANT: None,
                   Pairing.LOAD_ERROR: "yellow", Pairing.SKIPPED: "bright_black"}
        notes = {Pairing.INVARIANT: " (passes on both sides)",
                 Pairing.LOAD_ERROR: " (its file does not load without the fix)"}
        quiet = (Pairing.INVARIANT, Pairing.SKIPPED)  # listed up to a point: the file has all
        shown_quiet = 0
        for item in record.pairs:
            if item.pairing in quiet:
                shown_quiet += 1
                if shown_quiet > MAX_INVARIANTS_SHOWN:
                    continue
            self.line(
                f"  {item.pairing.value:<11} {printable(item.nodeid)}: HEAD {item.head}, reverted "
                f"{item.reverted}{notes.get(item.pairing, '')}",
                colours.get(item.pairing, "red"),
            )
        if shown_quiet > MAX_INVARIANTS_SHOWN:
            self.line(f"  and {shown_quiet - MAX_INVARIANTS_SHOWN} more invariant or skipped "
                      "test(s), every one in the results file", "bright_black")
        code = record.exit_code()
        colour = "green" if code is ExitCode.OK else "yellow" if code is ExitCode.UNEXPECTED \
            else "red"
        if record.pairs:
            self.line(f"before (fix reverted): {record.before()}; after (HEAD): "
                      f"{record.after()}")
        self.line(record.verdict(), colour)
        self.line(record.line(), colour)

    def mutation_finished(self, spec: Spec, result: MutationResult) -> None:
        if self.progress is not None:
            self.progress.finish(spec, result)
        facts = result.facts
        mark = " " if result.as_expected else self.glyphs.cross
        colour = {Verdict.CAUGHT: "green", Verdict.SURVIVED: "yellow"}.get(result.verdict, "red")
        if not result.as_expected:
            colour = "red"
        ran = facts.passed + facts.failed
        detail = (f"({facts.failed} of {ran} tests failed)" if facts.failed
                  else f"(all {ran} tests passed)")
        if result.first_failure and result.verdict is Verdict.CAUGHT:
            kind = RUNNERS.get(facts.runner)  # a results file read back may name any runner
            detail = f"(stopped at its first failing {kind.stops_after if kind else 'test'})"
        if result.never_imported:
            detail += " never imported: the mutant did not run"
        if not result.verdict.is_evidence:
            detail = f"({printable(result.reason)})"
        elif result.reason:  # a survivor whose tests skipped instead of running
            detail += f" {printable(result.reason)}"
        mutation = result.mutation
        where = f"#{mutation.number} {printable(mutation.file)}:{result.line}"
        self.line(f"{mark} {result.verdict.value:<8} {where}  {_label(mutation.name)}  {detail}",
                  colour)
        if _cut(mutation.name) and (result.verdict is Verdict.SURVIVED
                                    or not result.as_expected):
            # a survivor's name is where a project writes why it survives: never cut there
            self.line(f"      {self.glyphs.arrow} {printable(' '.join(mutation.name.split()))}",
                      "bright_black")
        for test_id in facts.failing_ids[:MAX_FAILING_SHOWN]:
            self.line(f"      {self.glyphs.arrow} {printable(test_id)}", "bright_black")
        if (more := len(facts.failing_ids) - MAX_FAILING_SHOWN) > 0:
            self.line(f"      {self.glyphs.arrow} and {more} more (all in the results file)",
                      "bright_black")
        if not result.verdict.is_evidence and self.run_dir is not None:
            log = log_file(self.run_dir, spec.id, mutant_scenario(result.mutation.number))
            if log.is_file():
                self.line(f"      {self.glyphs.arrow} log: {_shown(str(log))}", "bright_black")

    def summary(self, run: RunResult, results_path: str) -> None:
        """The closing lines: all as expected, the unexpected ones, or why there is no
        verdict; then where the scenarios' logs were kept."""
        self.end_progress()
        interrupted = run.exit_code() in (ExitCode.INTERRUPTED, ExitCode.TERMINATED)
        self._summary(run, results_path, interrupted)
        if run.logs_path:
            runs, ids = Path(run.logs_path), {spec.spec.id for spec in run.specs}
            directory, more = ((spec_directory(runs.parent, ids.pop()), "") if len(ids) == 1
                               else (runs, " (a directory per spec)"))
            if directory.is_dir():
                self.line(f"logs: {_shown(str(directory))}/{more}", "bright_black",
                          err=interrupted)

    def _summary(self, run: RunResult, results_path: str, interrupted: bool) -> None:
        results_path = _shown(results_path)
        results = run.mutation_results
        code = run.exit_code()
        if interrupted:
            self.line(
                f"interrupted (signal {run.interrupted}) after {len(results)} mutation(s); "
                f"workspace removed; partial results: {results_path}", "red", err=True,
            )
            return
        self.line(f"results: {results_path}", "bright_black")
        never = [result for result in results if result.never_imported]
        if never:
            self.line(
                f"note: {len(never)} mutant(s) never imported: no process of their run loaded "
                "the mutated file, so they did not run", "yellow",
            )
        if code is ExitCode.OK:
            tree = (
                f"dirty tree: {len(run.dirty_changes)} uncommitted change(s) included"
                if run.dirty else "tree clean"
            )
            self.line(f"all {len(results)} mutation(s) behaved as expected; {tree}", "green")
            return
        unexpected = [r for r in results if not r.as_expected and r.verdict.is_evidence]
        if code is not ExitCode.UNEXPECTED:  # an error, a refused baseline, no verdict
            broken = [spec for spec in run.specs if spec.error]
            doubtful = [r for r in results if not r.verdict.is_evidence]
            self.line("no trustworthy verdict:", "red")
            if run.error is not None:
                self.line(f"  {printable(_first_line(run.error.message()))}", "red")
            for spec in broken:  # its error was printed when it happened
                what = spec.stopped or "no verdict, for the reason printed on stderr"
                self.line(f"  spec {printable(spec.spec.id)}: {printable(what)}", "red")
            for result in doubtful:
                self.line(
                    f"  {_label(result.mutation.name)}: {result.verdict.value} "
                    f"({printable(result.reason)})",
                    "red",
                )
            if unexpected:
                self._unexpected(unexpected, len(results), "also, ")
            return
        self._unexpected(unexpected, len(results))

    def _unexpected(self, unexpected: list[MutationResult], total: int, lead: str = "") -> None:
        """The mutations whose trustworthy verdict is not the one their spec expects, and hints."""
        self.line(
            f"{lead}{len(unexpected)} of {total} mutation(s) did NOT behave as expected:", "red"
        )
        for result in unexpected:
            self.line(f"  {_label(result.mutation.name)}: {printable(mismatch(result))}", "red")
        if any(r.mutation.expect_caught and r.verdict is Verdict.SURVIVED
               and not r.never_imported for r in unexpected):  # that one has its own note
            self.line(
                "hint: a survivor means no test failed with the defect in: none checks what\n"
                "      the mutated line does. Add an assertion on its effect, or, if the defect\n"
                '      is harmless, mark it "expectCaught": false and say why in its name.'
            )
        if any(not r.mutation.expect_caught and r.verdict is Verdict.CAUGHT for r in unexpected):
            self.line(
                "hint: a documented survivor is now caught: the tests got stronger. Flip it to\n"
                '      "expectCaught": true (or remove the flag) and update its name.'
            )


class PinConsole(Console):
    """`mutharness baseline`'s terminal: the head line, one line per spec, the summary."""

    def baseline_started(self, spec: Spec) -> None:
        """Nothing: the spec's pin line says it all."""

    def baseline_finished(self, spec: Spec, facts: RunFacts, timeout_s: float) -> None:
        """Nothing: the spec's pin line says it all."""

    def spec_failed(self, spec: Spec, error: MutharnessError) -> None:
        """Nothing: the spec's UNTRUSTWORTHY line carries the reason."""
