"""`mutharness baseline`: each spec's tests measured and its expectBaselinePass judged."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from mutharness.commands.prepare import Settings, default_specs, locked, prepare, settings_of
from mutharness.errors import ExitCode, NothingSelected, SpecError, SpecProblem
from mutharness.lab.events import Listener
from mutharness.lab.pinning import measure_pins
from mutharness.model.pins import Pin, exit_code, summary
from mutharness.options import BASELINE_RUNS
from mutharness.reports.console import PinConsole
from mutharness.signals import interrupts


def run(
    console: PinConsole, specs: tuple[Path, ...], cli_options: Mapping[str, Any], *,
    all_specs: bool, since: str | None, repeat: int | None, allow_dirty: bool,
    config: Path | None,
) -> int:
    """The command line's baseline, from its parsed arguments to its exit code."""
    if all_specs and specs:
        raise SpecError((SpecProblem("baseline", "", "name SPEC files or --all, not both"),))
    settings = settings_of(
        specs or default_specs("to measure", cli_options, config), cli_options, config,
        allow_dirty,
        ("mutharness", "baseline", *(path.as_posix() for path in specs)), since=since,
    )
    with interrupts():
        pins = measure(settings, console, os.environ, repeat, console.pin)
    code = exit_code(pins)
    console.line(summary(pins), "green" if code is ExitCode.OK else "red")
    return int(code)


def measure(
    settings: Settings, listener: Listener, environ: Mapping[str, str], repeat: int | None,
    report: Callable[[Pin], None],
) -> tuple[Pin, ...]:
    """Measure each selected spec's tests `repeat` times (default: the `baseline-runs`
    option) and judge its pin (`mutharness baseline`)."""
    prepared = prepare(settings, environ)
    runs = repeat if repeat is not None else prepared.options[BASELINE_RUNS]
    if prepared.selection is not None:
        if not prepared.specs:
            raise NothingSelected(prepared.selection.describe())
        listener.selected(prepared.selection)
    with locked(prepared):
        listener.head(prepared.source, prepared.changes)
        return measure_pins(
            prepared.source, prepared.included, prepared.tracked, prepared.options,
            prepared.specs, prepared.skip_rules, runs, listener, environ, prepared.temp_dir,
            report,
        )


