"""The click command line; the one place errors become exit codes."""

from __future__ import annotations

import functools
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from mutharness.environment import prepare_process
from mutharness.errors import (
    ExitCode,
    ForcedExit,
    Interrupted,
    MutharnessError,
    NothingSelected,
    OSProblem,
    OutputClosed,
)
from mutharness.options import OPTIONS, Kind, Option
from mutharness.signals import exit_status

if TYPE_CHECKING:
    from mutharness.reports.console import Console

EXIT_CODES_HELP = "Exit codes: " + "; ".join(
    f"{int(code)} {code.summary}" for code in ExitCode
) + "."


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


def _given(given: dict[str, Any]) -> dict[str, Any]:
    """The declared options as the command line gave them, by option name (None: not given)."""
    return {option.name: given[option.parameter] for option in OPTIONS}


def _run_plain(body: Callable[[Console], int], doing: str, git: bool = True) -> NoReturn:
    """A command that runs no test: its error as one line and its exit code (one that uses
    `git`: after the library floors are checked and git's environment scrubbed)."""
    from mutharness.reports.console import Console

    console = Console()
    try:
        if git:
            _prepare()
        code = body(console)
    except MutharnessError as error:
        _fail(error, console)
    except OSError as error:
        _fail(OSProblem.from_error(error, doing), console)
    sys.exit(code)


def _fail(error: MutharnessError, console: Console | None = None) -> NoReturn:
    from mutharness.reports.console import Console

    (console or Console()).error(error)
    sys.exit(error.exit_code)


def _click_type(option: Option[Any]) -> Any:
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
        if option.kind is Kind.FLAG:  # --no-X: off, whatever the project config says
            command = click.option(f"{option.flag}/{option.negation}", option.parameter,
                                   default=None, help=doc)(command)
            continue
        command = click.option(
            option.flag, option.parameter, type=_click_type(option), default=None,
            multiple=option.kind is Kind.TEXTS, help=doc,
        )(command)
    return command


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
    from mutharness.reports.outputs import Reports

    console = Console(color=True if force_color else None, progress=not no_progress)

    def body() -> int:  # imported after the library floors are checked
        from mutharness.commands import verify as command

        return command.run(
            console, specs, _given(given), since=since, allow_dirty=allow_dirty,
            fail_fast=fail_fast, jobs=jobs, shard_text=shard_text, json_path=json_path,
            evidence_dir=evidence_dir, template_dir=template_dir, config=config,
            reports=Reports(junit_path, summary_path, stryker_path, html_path),
        )

    _run_command(console, body, "preparing the run")


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

    def body() -> int:  # imported after the library floors are checked
        from mutharness.commands import baseline as command

        return command.run(
            console, specs, _given(given), all_specs=all_specs, since=since, repeat=repeat,
            allow_dirty=allow_dirty, config=config,
        )

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

    def body() -> int:  # imported after the library floors are checked
        from mutharness.commands import redfirst as command

        return command.run(
            console, specs, _given(given), rev=rev, tests=tests, expect_red=expect_red,
            load_error_is_red=load_error_is_red, keep=keep, allow_dirty=allow_dirty,
            json_path=json_path, evidence_dir=evidence_dir, template_dir=template_dir,
            config=config,
        )

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
    from mutharness.reports.outputs import Reports

    def body(console: Console) -> int:  # imported after the library floors are checked
        from mutharness.commands import render as command

        return command.run(
            console, results, out_dir=out_dir, template_dir=template_dir,
            reports=Reports(junit_path, summary_path, stryker_path, html_path),
        )

    _run_plain(body, "writing the evidence and reports", git=False)


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
    from mutharness.reports.outputs import Reports

    def body(console: Console) -> int:  # imported after the library floors are checked
        from mutharness.commands import merge as command

        return command.run(
            console, shards, json_path=json_path, evidence_dir=evidence_dir,
            template_dir=template_dir, commit_rev=commit_rev,
            reports=Reports(junit_path, summary_path, stryker_path, html_path),
        )

    _run_plain(body, "merging the shards' results")


@main.command()
@click.argument("specs", nargs=-1, type=click.Path(path_type=Path))
@click.option("--suggest", is_flag=True, help="Propose a repaired anchor for a drifted one.")
@click.option("--since", "since", metavar="REV", help=_SINCE_HELP)
@_guarded("checking the specs")
def check(specs: tuple[Path, ...], suggest: bool, since: str | None) -> None:
    """Static check of SPECs (default: every spec in specs/): schema and exactly-once anchors.

    No tests run; every problem is listed at once. Fast enough for a pre-commit hook.
    """

    def body(console: Console) -> int:  # imported after the library floors are checked
        from mutharness.commands import check as command

        return command.run(console, specs, suggest=suggest, since=since)

    _run_plain(body, "checking the specs")


@main.command("evidence-check")
@click.option("--evidence", "evidence_dir", type=click.Path(path_type=Path, file_okay=False),
              help="Evidence directory [default: evidence/ at the repository root].")
@_guarded("checking the evidence")
def evidence_check(evidence_dir: Path | None) -> None:
    """Exit 1 when an evidence document is stale: a file it depends on changed since."""

    def body(console: Console) -> int:  # imported after the library floors are checked
        from mutharness.commands import evidence_check as command

        return command.run(console, evidence_dir)

    _run_plain(body, "checking the evidence")
