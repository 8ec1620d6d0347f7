"""The click command line; the one place errors become exit codes."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

import click

from mutharness.environment import check_floors
from mutharness.errors import ExitCode, Interrupted, MutharnessError, SpecError, SpecProblem

EXIT_CODES_HELP = (
    "Exit codes: 0 every mutation behaved as expected; 1 at least one did not; "
    "2 no trustworthy verdict (bad spec, dirty tree, red baseline, untrustworthy or timed-out "
    "run, environment problem); 130/143 interrupted."
)


def _expand(paths: tuple[Path, ...]) -> tuple[Path, ...]:
    """Spec arguments: files as given, directories as their sorted `*.json` files."""
    expanded: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(path.glob("*.json"))
            if not found:
                raise SpecError((SpecProblem(str(path), "", "is a directory with no *.json"),))
            expanded.extend(found)
        else:
            expanded.append(path)
    return tuple(expanded)


@contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """Turn SIGTERM into an exception so that cleanup runs (as Ctrl-C does)."""

    def handler(signal_number: int, _frame: FrameType | None) -> None:
        raise Interrupted(signal_number)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _scrub_git_environment() -> None:
    """GIT_DIR, GIT_INDEX_FILE... set by a hook or a shell must not redirect our git calls."""
    for key in [key for key in os.environ if key.startswith("GIT_")]:
        if not key.startswith("GIT_PYTHON_"):
            del os.environ[key]


@click.group(epilog=EXIT_CODES_HELP)
@click.version_option(package_name="mutharness")
def main() -> None:
    """mutharness: do these tests catch these specific defects?"""


@main.command(epilog=EXIT_CODES_HELP)
@click.argument("specs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--allow-dirty", is_flag=True,
              help="Include uncommitted changes (their bytes) instead of refusing a dirty tree.")
@click.option("--fail-fast", is_flag=True, help="Stop at the first unexpected result.")
@click.option("--json", "json_path", type=click.Path(path_type=Path, dir_okay=False),
              help="Results file [default: .mutharness/results.json].")
@click.option("--python", "python", type=click.Path(path_type=Path, dir_okay=False),
              help="Interpreter that runs the tests (e.g. a project venv) [default: this one].")
@click.option("--lock-timeout", type=click.FloatRange(min=0), default=60.0, show_default=True,
              help="Seconds to wait for another run on this repository.")
@click.option("--timeout-floor", type=click.FloatRange(min=1), default=20.0, show_default=True,
              help="Minimum per-mutation timeout in seconds.")
@click.option("--timeout-factor", type=click.FloatRange(min=1), default=3.0, show_default=True,
              help="Per-mutation timeout = max(floor, factor x baseline + constant).")
@click.option("--timeout-constant", type=click.FloatRange(min=0), default=10.0,
              show_default=True, help="Seconds added to factor x baseline.")
@click.option("--baseline-timeout", type=click.FloatRange(min=1), default=900.0,
              show_default=True, help="Timeout of each baseline run in seconds.")
def verify(
    specs: tuple[Path, ...], allow_dirty: bool, fail_fast: bool, json_path: Path | None,
    python: Path | None, lock_timeout: float, timeout_floor: float, timeout_factor: float,
    timeout_constant: float, baseline_timeout: float,
) -> None:
    """Run each SPEC's mutations against its tests and report CAUGHT / SURVIVED."""
    os.environ.setdefault("GIT_PYTHON_REFRESH", "quiet")  # a missing git is our error to report
    from mutharness.console import Console

    console = Console()
    try:
        check_floors()
        from mutharness.engine import Settings
        from mutharness.engine import verify as run_verify

        _scrub_git_environment()
        settings = Settings(
            spec_paths=_expand(specs),
            start=Path.cwd(),
            python=str(python.absolute()) if python else sys.executable,
            allow_dirty=allow_dirty,
            fail_fast=fail_fast,
            json_path=json_path.absolute() if json_path else None,
            lock_timeout_s=lock_timeout,
            timeout_floor_s=timeout_floor,
            timeout_factor=timeout_factor,
            timeout_constant_s=timeout_constant,
            baseline_timeout_s=baseline_timeout,
            command=("mutharness", "verify", *(str(path) for path in specs)),
        )
        with _terminate_as_interrupt():
            run = run_verify(settings, console, os.environ)
    except MutharnessError as error:
        console.error(error)
        sys.exit(error.exit_code)
    except KeyboardInterrupt:
        sys.exit(ExitCode.INTERRUPTED)
    except Interrupted as interrupted:
        sys.exit(128 + interrupted.signal_number)
    results_path = str(settings.json_path or ".mutharness/results.json")
    console.summary(run, results_path)
    sys.exit(run.exit_code())
