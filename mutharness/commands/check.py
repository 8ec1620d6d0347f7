"""`mutharness check`: the specs' static check on the working tree; no test runs."""

from __future__ import annotations

import time
from pathlib import Path

from mutharness.commands.prepare import default_specs, expand, open_repository, since_selection
from mutharness.errors import ExitCode
from mutharness.model.anchors import Splice, locate, unified_diff
from mutharness.model.spec import Spec, display_name, read_specs
from mutharness.options import read_config, resolve
from mutharness.reports.console import Console
from mutharness.static_check import check_spec_files


def run(console: Console, specs: tuple[Path, ...], *, suggest: bool, since: str | None,
        diff: bool = False) -> int:
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
    if diff:
        _diffs(console, source.root, loaded)
    count = sum(len(spec.mutations) for spec in loaded)
    console.line(
        f"{len(loaded)} spec(s), {count} mutation(s): schema valid, every anchor occurs exactly "
        f"once ({time.perf_counter() - started:.2f} s)", "green",
    )
    return int(ExitCode.OK)


def _diffs(console: Console, root: Path, specs: tuple[Spec, ...]) -> None:
    """Each mutation as a unified diff of its file in the working tree (the check above found
    every anchor exactly once there), under a line naming the spec and the mutation."""
    read: dict[str, bytes] = {}  # each file once, however many mutations it has
    for spec in specs:
        for mutation in spec.mutations:
            data = read.get(mutation.file)
            if data is None:
                data = read[mutation.file] = root.joinpath(*mutation.file.split("/")).read_bytes()
            splice = locate(data, mutation.anchor, mutation.replacement)
            if not isinstance(splice, Splice):  # the check refused it before: never here
                continue
            console.line(f"{spec.id} #{mutation.number} {mutation.name}", "cyan")
            for line in unified_diff(data, splice, mutation.file).splitlines():
                console.line(line, "green" if line.startswith("+") else
                             "red" if line.startswith("-") else None)
