"""`mutharness check`: the specs' static check on the working tree; no test runs."""

from __future__ import annotations

import time
from pathlib import Path

from mutharness.commands.prepare import default_specs, expand, open_repository, since_selection
from mutharness.errors import ExitCode
from mutharness.model.spec import display_name, read_specs
from mutharness.options import read_config, resolve
from mutharness.reports.console import Console
from mutharness.static_check import check_spec_files


def run(console: Console, specs: tuple[Path, ...], *, suggest: bool, since: str | None) -> int:
    """The command line's check: every problem of every spec at once, or the counts."""
    started = time.perf_counter()
    source = open_repository()
    paths = expand(specs or default_specs("to check (mutharness check path/to/spec.json)"))
    display = [display_name(path, source.root) for path in paths]
    if since is not None:
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
            return int(ExitCode.OK)
    loaded = check_spec_files(paths, display, source, suggest)
    count = sum(len(spec.mutations) for spec in loaded)
    console.line(
        f"{len(loaded)} spec(s), {count} mutation(s): schema valid, every anchor occurs exactly "
        f"once ({time.perf_counter() - started:.2f} s)", "green",
    )
    return int(ExitCode.OK)
