"""`mutharness baseline`: each selected spec's tests measured once per test set, pins judged."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path

from mutharness.errors import MutharnessError
from mutharness.lab.baseline import Observed, SpecStopped, observe
from mutharness.lab.bench import opened
from mutharness.lab.events import Listener, Phase
from mutharness.model.pins import Pin
from mutharness.model.skips import SkipRules
from mutharness.model.spec import Spec
from mutharness.options import BASELINE_TIMEOUT, Options
from mutharness.repo.source import SourceRepo
from mutharness.runners.base import RunFacts, Runner, SpecFiles


def _isolation(runner: Runner, files: SpecFiles, facts: RunFacts) -> MutharnessError | None:
    return runner.isolation_problem(facts, files)


def measure_pins(
    source: SourceRepo, included: tuple[str, ...], tracked: frozenset[str], options: Options,
    specs: tuple[Spec, ...], rules: SkipRules, repeat: int, listener: Listener,
    environ: Mapping[str, str], temp_dir: Path, report: Callable[[Pin], None],
) -> tuple[Pin, ...]:
    """Measure every spec's tests `repeat` times in one workspace and judge each pin; specs
    with the same runner and test set share one measurement. Never edits a spec."""
    groups: dict[tuple[str, tuple[str, ...]], list[Spec]] = {}
    for spec in specs:
        groups.setdefault((spec.runner, tuple(sorted(spec.tests))), []).append(spec)
    pins: list[Pin] = []
    with opened(source, included, options, specs, listener, environ, temp_dir) as bench:
        lab = bench.lab
        workspace_root = lab.workspace.root.resolve()
        for members in groups.values():
            first = members[0]
            files = SpecFiles(
                first.id, tuple(dict.fromkeys(m.file for s in members for m in s.mutations)),
                source.root, workspace_root, tracked,
            )
            runner = lab.runner_for(first)
            listener.phase(Phase.BASELINE)
            measured: Observed | SpecStopped
            try:
                measured = observe(
                    first, lab, repeat, options[BASELINE_TIMEOUT],
                    partial(_isolation, runner, files), rules,
                )
            except SpecStopped as stopped:
                measured = stopped
            for spec in members:
                pin = measured.pin(spec) if isinstance(measured, Observed) else (
                    measured.pin_of(spec)
                )
                pins.append(pin)
                report(pin)
    return tuple(pins)
