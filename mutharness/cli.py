"""The click command line; the one place errors become exit codes."""

from __future__ import annotations

import functools
import os
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from mutharness.environment import prepare_process
from mutharness.errors import (
    ExitCode,
    ForcedExit,
    InputProblem,
    Interrupted,
    MutharnessError,
    NothingSelected,
    OptionConflict,
    OSProblem,
    OutputClosed,
    SpecError,
    SpecProblem,
)
from mutharness.options import OPTIONS, Kind, Option
from mutharness.signals import exit_status, interrupts

if TYPE_CHECKING:
    from mutharness.model.rederive import Tree
    from mutharness.model.results import RunResult
    from mutharness.reports.console import Console
    from mutharness.reports.outputs import Reports
    from mutharness.workspace import SourceRepo

EXIT_CODES_HELP = "Exit codes: " + "; ".join(
    f"{int(code)} {code.summary}" for code in ExitCode
) + "."


POLICY_NAME = "platform-skips.json"  # beside the specs, and not one


def _expand(paths: tuple[Path, ...]) -> tuple[Path, ...]:
    """Spec arguments: files as given, directories as their sorted `*.json` files (but the
    platform skip policy, `platform-skips.json`)."""
    expanded: list[Path] = []
    for path in paths:
        if not path.exists() and not path.is_symlink():
            raise SpecError((SpecProblem(str(path), "", "does not exist"),))
        if path.is_dir():
            found = sorted(p for p in path.glob("*.json") if p.name != POLICY_NAME)
            if not found:
                raise SpecError((SpecProblem(str(path), "", "is a directory with no *.json"),))
            expanded.extend(found)
        else:
            expanded.append(path)
    return tuple(expanded)


Command = TypeVar("Command", bound=Callable[..., Any])


def _guarded(doing: str) -> Callable[[Command], Command]:
    """A command whose every failure is its exit code with one clear line: an OSError (disk
    full, no permission) is named with what it stopped, a closed standard output just ends it."""

    def wrap(command: Command) -> Command:
        @functools.wraps(command)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            try:
                return command(*args, **kwargs)
            except OutputClosed as closed:
                sys.exit(closed.exit_code)
            except OSError as error:
                _fail(OSProblem.from_error(error, doing))

        return guarded  # type: ignore[return-value]

    return wrap


class _Main(click.Group):
    """The command group: an exception no command expected is a bug, said as one (exit 70)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except Exception:  # every other exception is a bug of ours
            traceback.print_exc()
            sys.stderr.write(
                "mutharness: internal error: an exception nothing expected (the traceback "
                "above); this is a bug, please report it with the traceback\n"
            )
            sys.stderr.flush()
            sys.exit(ExitCode.INTERNAL)


@click.group(cls=_Main, epilog=EXIT_CODES_HELP)
@click.version_option(package_name="mutharness")
def main() -> None:
    """mutharness: do these tests catch these specific defects?"""


def _prepare() -> None:
    """Start-up of every command that touches git (`environment.prepare_process`)."""
    prepare_process()


def _open_repository() -> tuple[SourceRepo, Console]:
    """Library floors checked, git resolved, and the repository around the current directory."""
    _prepare()
    from mutharness.reports.console import Console
    from mutharness.workspace import configure_git, enclosing_worktrees, open_source

    start = Path.cwd().resolve()
    git_info = configure_git(os.environ.get("PATH", os.defpath), refuse=enclosing_worktrees(start))
    return open_source(start, git_info), Console()


def _tree(source: SourceRepo, commit: str, dirty: tuple[str, ...],
          working: bool = False) -> Tree:
    """`commit`'s bytes of each path (the working tree's for the paths a dirty run took from
    it, or for every path when `working`), never read through a link."""
    from mutharness.model.rederive import TreeBytes
    from mutharness.workspace import status_paths

    taken = set(status_paths(dirty))

    def read(path: str) -> bytes | None:
        if not working and path not in taken:
            return source.bytes_at(commit, path)
        file = source.root.joinpath(*path.split("/"))
        return None if file.is_symlink() or not file.is_file() else file.read_bytes()

    return TreeBytes(commit, read)


def _fail(error: MutharnessError, console: Console | None = None) -> NoReturn:
    from mutharness.reports.console import Console

    (console or Console()).error(error)
    sys.exit(error.exit_code)


def _click_type(option: Option) -> Any:
    if option.kind is Kind.FLOAT:
        return click.FloatRange(min=option.minimum, max=option.maximum)
    if option.kind is Kind.INT:
        return click.IntRange(
            min=None if option.minimum is None else int(option.minimum),
            max=None if option.maximum is None else int(option.maximum),
        )
    if option.choices:
        return click.Choice(option.choices)
    return str


def _with_options(command: Command) -> Command:
    """One click option per declared option (options.OPTIONS): its flag, type and doc; no
    click default, so that an option not given falls through to the config file."""
    for option in reversed(OPTIONS):
        default = "" if option.default in (None, (), False) else f" [default: {option.default}]"
        doc = option.doc if "[default:" in option.doc else option.doc + default
        if option.kind is Kind.FLAG:
            command = click.option(option.flag, option.parameter, is_flag=True, default=False,
                                   help=doc)(command)
            continue
        command = click.option(
            option.flag, option.parameter, type=_click_type(option), default=None,
            multiple=option.kind is Kind.TEXTS, help=doc,
        )(command)
    return command


def _default_specs(what: str) -> tuple[Path, ...]:
    """`specs/` at the repository root, for a command given no SPEC."""
    from mutharness.model.spec import display_name

    source, _ = _open_repository()
    default = source.root / "specs"
    if not default.is_dir():
        raise SpecError((SpecProblem(
            display_name(default, source.root), "",
            f"is not a directory at the repository root: name the spec files {what}",
        ),))
    return (default,)


def _settings(
    specs: tuple[Path, ...], given: dict[str, Any], config: Path | None, allow_dirty: bool,
    command: tuple[str, ...], **more: Any,
) -> Any:
    from mutharness.engine import Settings

    return Settings(
        spec_paths=_expand(specs), start=Path.cwd(),
        cli_options={option.name: given[option.parameter] for option in OPTIONS},
        config=config, allow_dirty=allow_dirty, command=command, **more,
    )


_SINCE_HELP = ("Only the specs affected by changes since REV (committed, uncommitted and "
               "untracked): a spec whose JSON, tests or targets changed; every spec when "
               "shared test infrastructure changed (conftest.py, a config file, a helper "
               "beside the tests, the skip policy, a node preload).")


def _with_reports(command: Command) -> Command:
    """The report files every command that has a run's results can write."""
    command = click.option(
        "--report-html", "html_path", type=click.Path(path_type=Path, dir_okay=False),
        help="Also write the mutation report as one self-contained HTML page "
             "(mutation-testing-elements, inlined).")(command)
    command = click.option(
        "--report-stryker", "stryker_path", type=click.Path(path_type=Path, dir_okay=False),
        help="Also write the mutation report as JSON (mutation-testing-report-schema, "
             "schemaVersion 2).")(command)
    command = click.option(
        "--summary", "summary_path", type=click.Path(path_type=Path, dir_okay=False),
        help="Also write a short Markdown summary (a table per spec) to this file.")(command)
    return click.option(
        "--junit", "junit_path", type=click.Path(path_type=Path, dir_okay=False),
        help="Also write JUnit XML (one test case per mutation) to this file.")(command)


@main.command(epilog=EXIT_CODES_HELP)
@click.argument("specs", nargs=-1, type=click.Path(path_type=Path))
@click.option("--since", "since", metavar="REV", help=_SINCE_HELP + " [default specs: specs/]")
@click.option("--allow-dirty", is_flag=True,
              help="Include uncommitted changes (their bytes) instead of refusing a dirty tree.")
@click.option("--fail-fast", is_flag=True, help="Stop at the first unexpected result.")
@click.option("-j", "--jobs", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Run the mutations in N worker processes, each in its own workspace; the "
                   "console, results and evidence are those of -j 1.")
@click.option("--shard", "shard_text", metavar="K/N",
              help="Run only shard K of N (1-based) of the mutations, for a CI matrix; "
                   "`mutharness merge` joins the shards' results files.")
@click.option("--json", "json_path", type=click.Path(path_type=Path, dir_okay=False),
              help="Results file [default: .mutharness/results.json].")
@click.option("--evidence", "evidence_dir", type=click.Path(path_type=Path, file_okay=False),
              help="Also render Markdown evidence into this directory.")
@click.option("--template-dir", type=click.Path(path_type=Path, file_okay=False, exists=True),
              help="Templates that override the packaged ones (spec.md.j2, index.md.j2).")
@click.option("--config", "config", type=click.Path(path_type=Path, dir_okay=False),
              help="Project config file (TOML) [default: mutharness.toml at the repository "
                   "root, else [tool.mutharness] in pyproject.toml].")
@click.option("--no-progress", is_flag=True,
              help="No live status line on a terminal: plain lines only, as in a pipe or CI.")
@click.option("--color", "force_color", is_flag=True,
              help="Colour the output even when it is not a terminal or NO_COLOR is set.")
@_with_reports
@_with_options
@_guarded("verifying")
def verify(
    specs: tuple[Path, ...], since: str | None, allow_dirty: bool, fail_fast: bool,
    jobs: int, shard_text: str | None, json_path: Path | None, evidence_dir: Path | None,
    template_dir: Path | None, config: Path | None, junit_path: Path | None,
    summary_path: Path | None, stryker_path: Path | None, html_path: Path | None,
    no_progress: bool, force_color: bool, **given: Any,
) -> None:
    """Run each SPEC's mutations against its tests and report CAUGHT / SURVIVED.

    A SPEC is a JSON file (format: the README's "Spec format" section: tests,
    expectBaselinePass, mutations with name, file, anchor, replacement, expectCaught) or a
    directory, whose *.json files are verified in name order. Every option can also be set
    in the project config file; the command line wins.
    """
    from mutharness.reports.console import Console

    console = Console(color=True if force_color else None, progress=not no_progress)

    command = ("mutharness", "verify", *(path.as_posix() for path in specs))

    def body() -> int:
        from mutharness.engine import record_refusal
        from mutharness.engine import verify as run_verify

        try:
            settings = checked()
        except MutharnessError as error:  # no earlier results pass for this run's
            record_refusal(json_path.absolute() if json_path else None, Path.cwd(), command,
                           os.environ, error)
            raise
        with interrupts():
            run = run_verify(settings, console, os.environ)
        from mutharness.reports.outputs import Reports

        try:
            return int(_finish(run, console, evidence_dir, template_dir,
                               Reports(junit_path, summary_path, stryker_path, html_path)))
        except OutputClosed as closed:
            return int(closed.exit_code)

    def checked() -> Any:
        """The run's settings, once the command line is known to be one that can run."""
        from mutharness.model.shards import Shard

        if not specs and since is None:
            raise SpecError((SpecProblem("verify", "", "name the SPEC files or directories to "
                                         "verify (or --since REV for those it affects)"),))
        shard = None if shard_text is None else Shard.parse(shard_text)
        if shard is not None and fail_fast:
            raise OptionConflict(("--shard", "--fail-fast"), "a shard that stops early leaves "
                                 "mutations no shard ran, and merge refuses the set")
        if shard is not None and evidence_dir is not None:
            raise OptionConflict(("--shard", "--evidence"), "a shard holds part of a run; "
                                 "merge the shards' results (mutharness merge --evidence DIR)")
        settings = _settings(
            specs or _default_specs("to verify"), given, config, allow_dirty, command,
            fail_fast=fail_fast, json_path=json_path.absolute() if json_path else None,
            since=since, shard=shard, jobs=jobs,
        )
        if evidence_dir is not None:  # a broken override template fails before any test runs
            from mutharness.reports.evidence import load_templates

            load_templates(template_dir)
        return settings

    _run_command(console, body, "preparing the run")


def _finish(
    run: RunResult, console: Console, evidence_dir: Path | None, template_dir: Path | None,
    reports: Reports,
) -> ExitCode:
    """After a verify or merge: the error that stopped it, the evidence, the reports (and
    under GitHub Actions the annotations and the step summary), the summary; the exit code."""
    if run.error is not None:
        console.error(run.error)
    code = run.exit_code()
    from mutharness.reports.evidence import evidence_documents, write_documents
    from mutharness.reports.outputs import GitHub

    documents: tuple[Path, dict[str, str]] | None = None  # all rendered before one is written
    rendered: list[tuple[Path, bytes]] | None = None
    unmade: MutharnessError | None = None  # why evidence or a report could not be made
    if evidence_dir is not None and not run.complete:
        console.line("evidence: not written (the run did not complete: its results are "
                     "partial)", "yellow")
    elif evidence_dir is not None:
        try:
            documents = evidence_dir, evidence_documents(run, evidence_dir, template_dir)
        except MutharnessError as error:
            unmade = error
        except OSError as error:
            unmade = OSProblem.from_error(error, f"reading the evidence in {evidence_dir}")
        if unmade is not None:
            console.error(unmade)
    try:
        rendered = reports.render(run)
    except MutharnessError as error:
        console.error(error)
        unmade = unmade or error
    if unmade is not None:
        code = _worse(code, unmade.exit_code)
        if documents is not None or rendered:
            console.line("evidence and reports: none written (one of them could not be made)",
                         "yellow")
        documents, rendered = None, None
    if documents is not None:
        try:
            written = write_documents(*documents)
            console.line(f"evidence: {len(written)} document(s) in {evidence_dir}",
                         "bright_black")
        except MutharnessError as error:
            console.error(error)
            code = _worse(code, error.exit_code)
    try:
        for path in reports.write_rendered(rendered or []):
            console.line(f"report: {path}", "bright_black")
        github = GitHub.of(os.environ)
        if github is not None:
            for command in github.annotations(run):
                console.workflow_command(command)
            github.add_summary(run)
    except MutharnessError as error:
        console.error(error)
        code = _worse(code, error.exit_code)
    except OSError as error:
        problem = OSProblem.from_error(error, "writing the reports")
        console.error(problem)
        code = _worse(code, problem.exit_code)
    console.summary(run, run.results_path)
    return code


def _worse(code: ExitCode, failure: ExitCode) -> ExitCode:
    """A run's code once writing its outputs failed with `failure`: a verdict (0, 1) gives way
    to the failure; a run without one keeps its own code."""
    return failure if code in (ExitCode.OK, ExitCode.UNEXPECTED) else code


def _run_command(console: Console, body: Callable[[], int], doing: str) -> NoReturn:
    """A command that runs tests (`body` holds the signals with `interrupts()` while they
    run): its errors, an interrupt, a second signal, each as one line and its exit code."""
    try:
        _prepare()
        try:
            code = body()
        finally:
            console.end_progress()  # never leave a status line under what follows
    except NothingSelected as nothing:
        console.line(nothing.message(), "yellow")
        sys.exit(ExitCode.OK)
    except MutharnessError as error:
        _fail(error, console)
    except OSError as error:
        _fail(OSProblem.from_error(error, doing), console)
    except KeyboardInterrupt:
        sys.exit(ExitCode.INTERRUPTED)
    except Interrupted as interrupted:
        sys.exit(exit_status(interrupted.signal_number))
    except ForcedExit as forced:
        console.line(
            f"second signal ({forced.signal_number}): exited at once; tests killed, lock "
            "released; the workspace is removed by the next run", "red", err=True,
        )
        os._exit(exit_status(forced.signal_number))
    sys.exit(code)


@main.command("baseline")
@click.argument("specs", nargs=-1, type=click.Path(path_type=Path))
@click.option("--all", "all_specs", is_flag=True, help="Every spec in specs/.")
@click.option("--since", "since", metavar="REV", help=_SINCE_HELP + " [default specs: specs/]")
@click.option("--repeat", type=click.IntRange(1, 20), default=None,
              help="Run each test set N times; a test whose outcome differs is unstable "
                   "[default: baseline-runs].")
@click.option("--allow-dirty", is_flag=True,
              help="Include uncommitted changes (their bytes) instead of refusing a dirty tree.")
@click.option("--config", "config", type=click.Path(path_type=Path, dir_okay=False),
              help="Project config file (TOML), as for verify.")
@_with_options
@_guarded("measuring the baselines")
def baseline_command(
    specs: tuple[Path, ...], all_specs: bool, since: str | None, repeat: int | None,
    allow_dirty: bool, config: Path | None, **given: Any,
) -> None:
    """Measure each SPEC's tests and check its expectBaselinePass; never edits a spec.

    One line per spec: `ok <spec>: P pass + S approved skips = T [...]`, `DRIFT <spec>: ...`
    or `UNTRUSTWORTHY <spec>: <reason>`, then `N spec(s) measured, D drift, U untrustworthy`.
    Approved skips come from the platform skip policy (specs/platform-skips.json). Specs
    with the same tests share one measurement. Exit 2 if any is untrustworthy, else 1 if
    any drifted, else 0.
    """
    from mutharness.reports.console import PinConsole

    console = PinConsole()

    def body() -> int:
        from mutharness.engine import baseline
        from mutharness.model.pins import exit_code, summary

        if all_specs and specs:
            raise SpecError((SpecProblem("baseline", "", "name SPEC files or --all, not both"),))
        if not (specs or all_specs or since is not None):
            raise SpecError((SpecProblem(
                "baseline", "", "name the SPEC files to measure, --all, or --since REV"),))
        settings = _settings(
            specs or _default_specs("to measure"), given, config, allow_dirty,
            ("mutharness", "baseline", *(path.as_posix() for path in specs)), since=since,
        )
        with interrupts():
            pins = baseline(settings, console, os.environ, repeat, console.pin)
        code = exit_code(pins)
        console.line(summary(pins), "green" if code is ExitCode.OK else "red")
        return int(code)

    _run_command(console, body, "measuring the baselines")


@main.command("redfirst")
@click.argument("specs", nargs=-1, type=click.Path(path_type=Path))
@click.option("--base", "rev", required=True, metavar="REV",
              help="The commit before the fix: every non-test file changed since is reverted.")
@click.option("--test", "tests", multiple=True, metavar="PATH_OR_ID",
              help="A test file or id to run [default: the SPECs' tests, else the test files "
                   "changed since REV].")
@click.option("--expect-red", multiple=True, metavar="ID",
              help="A test (or file) that must fail with the fix reverted.")
@click.option("--load-error-is-red", is_flag=True,
              help="Count a test whose file cannot load without the fix as red.")
@click.option("--keep", multiple=True, metavar="PATH",
              help="A file or directory on the tests' side: never reverted (a helper outside "
                   "a tests/ directory).")
@click.option("--allow-dirty", is_flag=True,
              help="Include uncommitted changes (their bytes) instead of refusing a dirty tree.")
@click.option("--json", "json_path", type=click.Path(path_type=Path, dir_okay=False),
              help="Results file [default: .mutharness/redfirst.json].")
@click.option("--evidence", "evidence_dir", type=click.Path(path_type=Path, file_okay=False),
              help="Add a 'Red first' section to each SPEC's evidence document in this "
                   "directory (rendered by verify --evidence before).")
@click.option("--template-dir", type=click.Path(path_type=Path, file_okay=False, exists=True),
              help="Templates that override the packaged ones (spec.md.j2, index.md.j2).")
@click.option("--config", "config", type=click.Path(path_type=Path, dir_okay=False),
              help="Project config file (TOML), as for verify.")
@_with_options
@_guarded("proving red-first")
def redfirst_command(
    specs: tuple[Path, ...], rev: str, tests: tuple[str, ...], expect_red: tuple[str, ...],
    load_error_is_red: bool, keep: tuple[str, ...], allow_dirty: bool, json_path: Path | None,
    evidence_dir: Path | None, template_dir: Path | None, config: Path | None, **given: Any,
) -> None:
    """Prove that tests pin a fix: run them at HEAD, then with the fix reverted.

    The fix is every file outside the tests that changed between REV and HEAD; it is put
    back to its bytes at REV in the workspace (the tests stay as at HEAD). Per test:
    RED-FIRST (passes at HEAD, fails reverted), INVARIANT (passes both), LOAD-ERROR, ...
    The last line is `red-first: R of T test(s) fail with the fix reverted (...)`. Exit 0
    when every test passes at HEAD and at least one (and every --expect-red) fails with the
    fix reverted; 1 when none does; 2 when there is no trustworthy answer.
    """
    from mutharness.reports.console import Console

    console = Console()

    def body() -> int:
        from mutharness.engine import RedFirstRequest, redfirst
        from mutharness.reports.evidence import add_red_first, load_templates

        if evidence_dir is not None:
            if not specs:
                raise SpecError((SpecProblem("redfirst", "", "--evidence needs the SPEC(s) "
                                             "whose documents get the section"),))
            load_templates(template_dir)
        command = ("mutharness", "redfirst", "--base", rev,
                   *(path.as_posix() for path in specs),
                   *(word for test in tests for word in ("--test", test)),
                   *(word for test in expect_red for word in ("--expect-red", test)),
                   *(("--load-error-is-red",) if load_error_is_red else ()),
                   *(word for path in keep for word in ("--keep", path)))
        settings = _settings(specs, given, config, allow_dirty, command,
                             json_path=json_path.absolute() if json_path else None)
        with interrupts():
            record, results = redfirst(
                settings, RedFirstRequest(rev, tests, expect_red, load_error_is_red,
                                          evidence_dir.absolute() if evidence_dir else None,
                                          keep),
                console, os.environ,
            )
        ids = [path.stem for path in settings.spec_paths]
        console.results(results)
        if evidence_dir is not None:
            for written in add_red_first(evidence_dir, ids, record, template_dir):
                console.line(f"evidence: {written}", "bright_black")
        console.red_first(record)
        return int(record.exit_code())

    _run_command(console, body, "proving red-first")


@main.command()
@click.argument("results", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False),
              help="Directory to write the evidence into [default: evidence, unless only "
                   "reports (--junit, --summary, --report-*) are asked for].")
@click.option("--template-dir", type=click.Path(path_type=Path, file_okay=False, exists=True),
              help="Templates that override the packaged ones (spec.md.j2, index.md.j2).")
@_with_reports
@_guarded("rendering the evidence")
def render(results: Path, out_dir: Path | None, template_dir: Path | None,
           junit_path: Path | None, summary_path: Path | None, stryker_path: Path | None,
           html_path: Path | None) -> None:
    """Re-render evidence (and reports) from a saved RESULTS file; never reruns tests."""
    from mutharness.errors import ResultsError
    from mutharness.model.rederive import run_problems
    from mutharness.model.results import read_results
    from mutharness.reports.console import Console
    from mutharness.reports.evidence import evidence_documents, results_problem, write_documents
    from mutharness.reports.outputs import Reports

    console = Console()
    reports = Reports(junit_path, summary_path, stryker_path, html_path)
    if out_dir is None and not reports.asked:
        out_dir = Path("evidence")
    try:
        document = read_results(results)
        forged = run_problems(document)  # nothing reported is taken from a stored verdict
        if forged:
            raise ResultsError(str(results), "its records are not what their facts give:\n  "
                               + "\n  ".join(forged))
        problem = results_problem(document)  # evidence is of whole runs; reports say any run
        if problem is not None and out_dir is not None:
            raise ResultsError(str(results), problem)
        documents = evidence_documents(document, out_dir, template_dir) if out_dir else None
        rendered = reports.render(document)  # every report is rendered before one is written
        written = write_documents(out_dir, documents) if out_dir and documents else ()
        written += reports.write_rendered(rendered)
    except MutharnessError as error:
        _fail(error)
    except OSError as error:
        _fail(OSProblem.from_error(error, "writing the evidence and reports"))
    for path in written:
        console.line(str(path))


@main.command("merge", epilog=EXIT_CODES_HELP)
@click.argument("shards", nargs=-1, required=True,
                type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--json", "json_path", type=click.Path(path_type=Path, dir_okay=False),
              default=Path(".mutharness/results.json"), show_default=True,
              help="The merged results file.")
@click.option("--evidence", "evidence_dir", type=click.Path(path_type=Path, file_okay=False),
              help="Also render Markdown evidence into this directory.")
@click.option("--template-dir", type=click.Path(path_type=Path, file_okay=False, exists=True),
              help="Templates that override the packaged ones (spec.md.j2, index.md.j2).")
@click.option("--commit", "commit_rev", metavar="REV",
              help="The commit the shards ran at, when it is not HEAD (never with --evidence: "
                   "evidence is written only of the tree it goes into).")
@_with_reports
@_guarded("merging the shards' results")
def merge_command(
    shards: tuple[Path, ...], json_path: Path, evidence_dir: Path | None,
    template_dir: Path | None, commit_rev: str | None, junit_path: Path | None,
    summary_path: Path | None, stryker_path: Path | None, html_path: Path | None,
) -> None:
    """Join the results files of every shard of one run (`verify --shard K/N`) into one
    results file (and evidence), after checking that they cover every mutation exactly once,
    at one commit, with the same specs, settings and baseline tests, that every verdict is
    what its recorded facts give, and that they are a run of this checkout (HEAD, or the
    commit --commit names: its spec bytes and the files the verdicts depend on). Exits as
    verify would have for the whole run."""
    from mutharness.model.merging import merge
    from mutharness.model.results import read_results, write_results
    from mutharness.reports.console import Console
    from mutharness.reports.outputs import Reports

    console = Console()
    try:
        source, console = _open_repository()
        read = [(str(path), read_results(path)) for path in shards]
        dirty = read[0][1].dirty_changes if read else ()
        commit = source.head if commit_rev is None else source.base_commit(commit_rev)
        run = merge(read, _tree(source, commit, dirty))
        if evidence_dir is not None:  # evidence only of the tree it goes into
            merge(read, _tree(source, source.head, dirty, working=True))
        json_path.absolute().parent.mkdir(parents=True, exist_ok=True)
        run = replace(run, results_path=str(json_path))
        write_results(run, json_path)
    except MutharnessError as error:
        _fail(error, console)
    console.line(f"merged {len(shards)} shard(s): "
                 f"{len(run.mutation_results)} mutation(s) of {len(run.specs)} spec(s)")
    sys.exit(int(_finish(run, console, evidence_dir, template_dir,
                         Reports(junit_path, summary_path, stryker_path, html_path))))


@main.command()
@click.argument("specs", nargs=-1, type=click.Path(path_type=Path))
@click.option("--suggest", is_flag=True, help="Propose a repaired anchor for a drifted one.")
@click.option("--since", "since", metavar="REV", help=_SINCE_HELP)
@_guarded("checking the specs")
def check(specs: tuple[Path, ...], suggest: bool, since: str | None) -> None:
    """Static check of SPECs (default: every spec in specs/): schema and exactly-once anchors.

    No tests run; every problem is listed at once. Fast enough for a pre-commit hook.
    """
    started = time.perf_counter()
    try:
        source, console = _open_repository()
        from mutharness.check import check_spec_files
        from mutharness.model.spec import display_name, read_specs

        paths = _expand(specs or _default_specs("to check (mutharness check path/to/spec.json)"))
        display = [display_name(path, source.root) for path in paths]
        if since is not None:
            from mutharness.engine import since_selection
            from mutharness.options import read_config, resolve

            parsed, _ = read_specs(paths, display)  # problems: reported by the check below
            values, config_file = read_config(source.root, None)
            selection = since_selection(source, since, parsed, resolve({}, values, config_file),
                                        frozenset(source.tracked()))
            console.line(selection.describe(), "bright_black")
            chosen = {spec.path for spec in selection.specs}
            kept = [(path, name) for path, name in zip(paths, display, strict=True)
                    if name in chosen or name not in {spec.path for spec in parsed}]
            paths, display = tuple(path for path, _ in kept), [name for _, name in kept]
            if not paths:
                sys.exit(ExitCode.OK)
        loaded = check_spec_files(paths, display, source, suggest)
    except MutharnessError as error:
        _fail(error)
    count = sum(len(spec.mutations) for spec in loaded)
    console.line(
        f"{len(loaded)} spec(s), {count} mutation(s): schema valid, every anchor occurs exactly "
        f"once ({time.perf_counter() - started:.2f} s)", "green",
    )


@main.command("evidence-check")
@click.option("--evidence", "evidence_dir", type=click.Path(path_type=Path, file_okay=False),
              help="Evidence directory [default: evidence/ at the repository root].")
@_guarded("checking the evidence")
def evidence_check(evidence_dir: Path | None) -> None:
    """Exit 1 when an evidence document is stale: a file it depends on changed since."""
    try:
        source, console = _open_repository()
        from mutharness.reports.console import printable
        from mutharness.reports.staleness import check_evidence

        directory = evidence_dir or source.root / "evidence"
        if not directory.is_dir():
            raise InputProblem(f"{directory} is not a directory of evidence")
        verdicts = check_evidence(directory, source)
    except MutharnessError as error:
        _fail(error)
    stale = [verdict for verdict in verdicts if verdict.is_stale]
    for verdict in verdicts:
        if verdict.problem:
            console.line(f"{verdict.document}: UNREADABLE ({verdict.problem})", "red")
        elif verdict.stale:
            if verdict.commits_since == 0:
                since = "the files below differ from it in the working tree, not yet committed"
            else:
                count = verdict.commits_since
                number = "an unknown number of" if count is None else str(count)
                since = f"{number} commit(s) since touched these files"
            console.line(
                f"{verdict.document}: STALE (measured at {verdict.commit[:12]}; {since})", "red"
            )
            for item in verdict.stale:
                state = "missing" if item.missing else "added" if item.added else "changed"
                console.line(f"    {printable(item.path)} {state} (stales: "
                             f"{', '.join(item.facts)})", "red")
        else:
            console.line(f"{verdict.document}: fresh")
    console.line(
        f"{len(stale)} of {len(verdicts)} evidence document(s) stale",
        "red" if stale else "green",
    )
    sys.exit(1 if stale else 0)
