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
from mutharness.options import (
    FLAGS,
    HEADINGS,
    OPTIONS,
    Flag,
    FlagKind,
    Heading,
    Kind,
    Option,
    within,
)
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


# the order `mutharness --help` lists the commands in: the main job first
COMMAND_ORDER = ("verify", "check", "baseline", "redfirst", "suggest", "merge", "render",
                 "evidence-check", "explain")


class _Main(click.Group):
    """The command group: an exception no command expected is a bug, said as one (exit 70);
    `--help` lists the commands main job first, each with its first sentence whole."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        known = [name for name in COMMAND_ORDER if name in self.commands]
        return known + sorted(name for name in self.commands if name not in known)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=200)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

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
    except OutputClosed as closed:  # nothing more can be said where the output went
        sys.exit(closed.exit_code)
    except MutharnessError as error:
        _fail(error, console)
    except OSError as error:
        _fail(OSProblem.from_error(error, doing), console)
    sys.exit(code)


def _fail(error: MutharnessError, console: Console | None = None) -> NoReturn:
    from mutharness.reports.console import Console

    (console or Console()).error(error)
    sys.exit(error.exit_code)


class _FloatWithin(click.FloatRange):
    """A FLOAT option's range, with `options.within`'s rules (a finite number)."""

    def __init__(self, option: Option[Any]) -> None:
        super().__init__(min=option.minimum, max=option.maximum)
        self.option = option

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        return within(self.option, number, lambda what: click.BadParameter(what, ctx, param))


def _click_type(option: Option[Any]) -> Any:
    if option.kind is Kind.FLOAT:
        return _FloatWithin(option)
    if option.kind is Kind.INT:
        return click.IntRange(
            min=None if option.minimum is None else int(option.minimum),
            max=None if option.maximum is None else int(option.maximum),
        )
    if option.choices:
        return click.Choice(option.choices)
    return str


_FLAG_TYPES: dict[FlagKind, Any] = {
    FlagKind.FILE: click.Path(path_type=Path, dir_okay=False),
    FlagKind.DIRECTORY: click.Path(path_type=Path, file_okay=False),
    FlagKind.PATH: click.Path(path_type=Path),
    FlagKind.TEMPLATES: click.Path(path_type=Path, file_okay=False, exists=True),
}


def _kind_of_out(out: Path | None, directory: bool) -> Path | None:
    """`--out` as the command takes it: a directory (render's evidence) or a file (suggest's
    draft); the other kind, existing, is refused as click refuses a wrong path."""
    if out is not None and out.exists() and out.is_dir() is not directory:
        kind = "directory" if directory else "file"
        raise click.BadParameter(f"{str(out)!r} is not a {kind}", param_hint="'--out'")
    return out


def _flag(flag: Flag, name: str) -> Callable[[Command], Command]:
    """One declared command-line flag (`options.FLAGS`) as `name` takes it."""
    if flag.kind is FlagKind.SWITCH:
        return click.option(*flag.switches, flag.parameter, is_flag=True,
                            help=flag.help_for(name))
    default = flag.default_for(name)
    kind = (click.IntRange(flag.minimum, flag.maximum) if flag.kind is FlagKind.COUNT
            else _FLAG_TYPES.get(flag.kind, str))
    given = {} if default is None else {"default": default, "show_default": True}
    return click.option(  # an explicit default=None would satisfy required=True (click 8.2+)
        *flag.switches, flag.parameter, type=kind, metavar=flag.metavar,
        required=flag.required, multiple=flag.kind is FlagKind.TEXTS, help=flag.help_for(name),
        **given,
    )


def _setting(option: Option[Any]) -> Callable[[Command], Command]:
    """One setting (`options.OPTIONS`): its flag, type and doc; no click default, so that an
    option not given falls through to the config file (a flag's `--no-X` turns it off)."""
    default = "" if option.default in (None, (), False) else f" [default: {option.default}]"
    doc = option.doc if "[default:" in option.doc else option.doc + default
    if option.kind is Kind.FLAG:
        return click.option("/".join(option.switches), option.parameter, default=None,
                            help=doc)
    return click.option(option.flag, option.parameter, type=_click_type(option), default=None,
                        multiple=option.kind is Kind.TEXTS, help=doc)


def _with_flags(name: str) -> Callable[[Command], Command]:
    """Every option command `name` takes, as declared once in `options` (its flags, then
    the settings of the commands that run tests), in the order `--help` lists them."""
    def add(command: Command) -> Command:
        declared = [_flag(flag, name) for flag in FLAGS if name in flag.commands]
        declared += [_setting(option) for option in OPTIONS if name in option.commands]
        for option in reversed(declared):
            command = option(command)
        return command

    return add


class _Headed(click.Command):
    """A command whose `--help` lists its options under their headings (`options.Heading`)."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        groups: dict[str, list[tuple[str, str]]] = {}
        for parameter in self.get_params(ctx):
            record = parameter.get_help_record(ctx)
            if record is not None and isinstance(parameter, click.Option):
                heading = HEADINGS.get(parameter.name or "")
                groups.setdefault(heading.value if heading else "Other options", []).append(
                    record)
        for title in [*(heading.value for heading in Heading), "Other options"]:
            if title in groups:
                with formatter.section(title):
                    formatter.write_dl(groups[title])


@main.command(cls=_Headed, epilog=EXIT_CODES_HELP)
@click.argument("specs", nargs=-1, type=click.Path(path_type=Path))
@_with_flags("verify")
@_guarded("verifying")
def verify(
    specs: tuple[Path, ...], since: str | None, allow_dirty: bool, fail_fast: bool,
    jobs: int, shard_text: str | None, json_path: Path | None, evidence_dir: Path | None,
    template_dir: Path | None, config: Path | None, junit_path: Path | None,
    summary_path: Path | None, stryker_path: Path | None, html_path: Path | None,
    no_progress: bool, force_color: bool, **given: Any,
) -> None:
    """Run each SPEC's mutations against its tests and report CAUGHT / SURVIVED.

    A SPEC is a JSON file (format: docs/spec-format.md: tests,
    expectBaselinePass, mutations with name, file, anchor, replacement, expectCaught) or a
    directory, whose *.json files are verified in name order; none: every spec in
    specs-dir (specs/, else test/mutations/). Every option can also be set
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


@main.command("baseline", cls=_Headed)
@click.argument("specs", nargs=-1, type=click.Path(path_type=Path))
@_with_flags("baseline")
@_guarded("measuring the baselines")
def baseline_command(
    specs: tuple[Path, ...], all_specs: bool, since: str | None, repeat: int | None,
    allow_dirty: bool, config: Path | None, **given: Any,
) -> None:
    """Measure each SPEC's tests and check its expectBaselinePass; never edits a spec.

    One line per spec: `ok <spec>: P pass + S approved skips = T [...]`, `DRIFT <spec>: ...`
    or `UNTRUSTWORTHY <spec>: <reason>`, then `N spec(s) measured, D drift, U untrustworthy`.
    Approved skips come from the platform skip policy (platform-skips.json beside the specs). Specs
    with the same tests share one measurement. Exit 3 if any is untrustworthy, else 1 if
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


@main.command("redfirst", cls=_Headed)
@click.argument("specs", nargs=-1, type=click.Path(path_type=Path))
@_with_flags("redfirst")
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
    fix reverted; 1 when none does; 4 when there is no trustworthy answer.
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


@main.command("suggest", cls=_Headed)
@_with_flags("suggest")
@_guarded("suggesting mutations")
def suggest_command(
    since: str | None, commit_rev: str | None, tests: tuple[str, ...],
    all_lines: tuple[str, ...], most: int, jobs: int, out: Path | None, config: Path | None,
    no_progress: bool, force_color: bool, **given: Any,
) -> None:
    """Suggest the mutations a change's tests should catch, run them, and draft a spec.

    Candidates come from the syntax tree of each source file changed since REV (or by the
    one commit --commit names; Python for pytest's tests, JavaScript and TypeScript for
    node's), on its changed lines only (the tests' side excluded, as for --since): a boundary
    moved, a comparison inverted, a call bypassed, a character class narrowed, a default
    changed... at most one per line and two of an operator, decisions before blunt changes
    (--max), spread over the changed functions. They run against the tests named with
    --test (else the tests of the specs whose mutations cover a changed file, else of those
    whose evidence records loading one, else the project's tests; with the test files the
    change touched) as verify runs them, the working tree included. The draft (a spec in the
    usual format, its expectBaselinePass measured) lists the survivors first, marked for
    review, then the caught; the console ends with each survivor's file:line and diff. Exit 0
    once the draft is written, or once it is said that no candidate run has a verdict to pin
    (then none is).
    """
    from mutharness.reports.console import Console

    console = Console(color=True if force_color else None, progress=not no_progress)
    draft = _kind_of_out(out, directory=False)

    def body() -> int:  # imported after the library floors are checked
        from mutharness.commands import suggest as command
        from mutharness.errors import SuggestError

        if not since and not commit_rev:
            raise SuggestError("", "no revision to start from",
                               "name the commit the change starts from: --since REV (or the "
                               "one commit to suggest for: --commit REV)")
        request = command.Request(since or "", tests, most, draft, all_lines, jobs,
                                  commit_rev or "")
        return command.run(console, _given(given), request, config)

    _run_command(console, body, "suggesting mutations")


@main.command(cls=_Headed)
@click.argument("results", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@_with_flags("render")
@_guarded("rendering the evidence")
def render(results: Path, out: Path | None, template_dir: Path | None,
           junit_path: Path | None, summary_path: Path | None, stryker_path: Path | None,
           html_path: Path | None) -> None:
    """Re-render evidence (and reports) from a saved RESULTS file; never reruns tests."""
    from mutharness.reports.outputs import Reports

    out_dir = _kind_of_out(out, directory=True)

    def body(console: Console) -> int:  # render runs no git: no floors, no git scrubbing
        from mutharness.commands import render as command

        return command.run(
            console, results, out_dir=out_dir, template_dir=template_dir,
            reports=Reports(junit_path, summary_path, stryker_path, html_path),
        )

    _run_plain(body, "writing the evidence and reports", git=False)


@main.command("merge", cls=_Headed, epilog=EXIT_CODES_HELP)
@click.argument("shards", nargs=-1, required=True,
                type=click.Path(path_type=Path, dir_okay=False, exists=True))
@_with_flags("merge")
@_guarded("merging the shards' results")
def merge_command(
    shards: tuple[Path, ...], json_path: Path, evidence_dir: Path | None,
    template_dir: Path | None, commit_rev: str | None, junit_path: Path | None,
    summary_path: Path | None, stryker_path: Path | None, html_path: Path | None,
) -> None:
    """Join the shards' results files of one run (`verify --shard K/N`) into one.

    Writes one results file (and evidence) after checking that they cover every mutation
    exactly once, at one commit, with the same specs, settings and baseline tests, that
    every verdict is what its recorded facts give, and that they are a run of this checkout
    (HEAD, or the commit --commit names: its spec bytes and the files the verdicts depend
    on). Exits as verify would have for the whole run."""
    from mutharness.reports.outputs import Reports

    def body(console: Console) -> int:  # imported after the library floors are checked
        from mutharness.commands import merge as command

        return command.run(
            console, shards, json_path=json_path, evidence_dir=evidence_dir,
            template_dir=template_dir, commit_rev=commit_rev,
            reports=Reports(junit_path, summary_path, stryker_path, html_path),
        )

    _run_plain(body, "merging the shards' results")


@main.command(cls=_Headed)
@click.argument("specs", nargs=-1, type=click.Path(path_type=Path))
@_with_flags("check")
@_guarded("checking the specs")
def check(specs: tuple[Path, ...], suggest: bool, diff: bool, since: str | None) -> None:
    """Static check of SPECs (default: every spec in specs-dir): schema and exactly-once anchors.

    No tests run; every problem is listed at once. Fast enough for a pre-commit hook.
    """

    def body(console: Console) -> int:  # imported after the library floors are checked
        from mutharness.commands import check as command

        return command.run(console, specs, suggest=suggest, since=since, diff=diff)

    _run_plain(body, "checking the specs")


@main.command("evidence-check", cls=_Headed)
@_with_flags("evidence-check")
@_guarded("checking the evidence")
def evidence_check(evidence_dir: Path | None) -> None:
    """Exit 1 when an evidence document is stale: a file it depends on changed since."""

    def body(console: Console) -> int:  # imported after the library floors are checked
        from mutharness.commands import evidence_check as command

        return command.run(console, evidence_dir)

    _run_plain(body, "checking the evidence")


def _explained(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """The entry NAME means, its case aside; any other name is refused with the nearest."""
    from mutharness.commands.explain import known, nearest

    if value is None or known(value) is not None:
        return value
    near = nearest(value)
    guess = f" (did you mean {' or '.join(near)}?)" if near else ""
    raise click.BadParameter(f"no error is named {value}{guess}; `mutharness explain` lists "
                             "them", ctx, param)


@main.command()
@click.argument("name", required=False, callback=_explained)
def explain(name: str | None) -> None:
    """Print what error NAME says, why, and the next step (the name every error's last line
    gives); with no NAME, list them."""

    def body(console: Console) -> int:
        from mutharness.commands import explain as command

        return command.run(console, name)

    _run_plain(body, "explaining", git=False)
