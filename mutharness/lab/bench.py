"""The workspace and the runners of one command: built, handed out, always closed and removed."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from mutharness.errors import ForcedExit, WorkspaceError
from mutharness.lab.events import Listener, Phase
from mutharness.lab.logs import RunLogs
from mutharness.lab.scenario import Lab
from mutharness.model.spec import Spec
from mutharness.options import Options
from mutharness.repo.source import SourceRepo
from mutharness.repo.workspace import Workspace
from mutharness.runners.base import Isolation, Runner
from mutharness.runners.making import RunnerSetup, make_runner


class Runners:
    """One runner per runner name, started when a spec first needs it, all closed at the end."""

    def __init__(self, setup: RunnerSetup) -> None:
        self.setup = setup
        self.made: dict[str, Runner] = {}  # each begun once made
        self.started: set[str] = set()  # the names of those started
        self.versions: dict[str, str] = {}

    def __call__(self, spec: Spec) -> Runner:
        runner = self._made(spec)
        if spec.runner not in self.started:
            self.versions |= runner.start()
            self.started.add(spec.runner)
        return runner

    def _made(self, spec: Spec) -> Runner:
        runner = self.made.get(spec.runner)
        if runner is None:
            runner = make_runner(spec.runner, self.setup)
            self.made[spec.runner] = runner  # closed even if begin or start fails
            runner.begin()
        return runner

    def begin(self, specs: tuple[Spec, ...]) -> None:
        """Begin every runner the specs need (their probes run while the workspace is made)."""
        for spec in specs:
            self._made(spec)

    def start(self, specs: tuple[Spec, ...]) -> None:
        """Start every runner the specs need, before any spec runs (a missing tool is one
        error up front, not one after some specs have run)."""
        for spec in specs:
            self(spec)

    def close(self) -> None:
        """Close every runner started, each even when closing an earlier one failed (the
        first failure is raised once all are closed)."""
        with ExitStack() as stack:
            for runner in self.made.values():
                stack.callback(runner.close)


class Notes:
    """Passes what the runners tell the user (a fall-back) to the listener, and keeps it for
    the results."""

    def __init__(self, listener: Listener) -> None:
        self.listener = listener
        self.told: list[str] = []

    def __call__(self, text: str) -> None:
        self.told.append(text)
        self.listener.note(text)


@dataclass(frozen=True)
class Bench:
    """What a command's scenarios run in: the lab, the runners it started, their notes."""

    lab: Lab
    runners: Runners
    notes: Notes


@contextmanager
def opened(
    source: SourceRepo, included: tuple[str, ...], options: Options, specs: tuple[Spec, ...],
    listener: Listener, environ: Mapping[str, str], temp_dir: Path, logs: RunLogs | None = None,
) -> Iterator[Bench]:
    """A workspace of HEAD (plus `included` uncommitted paths) and the runners `specs` need,
    started (each scenario's log kept in `logs`, if given); afterwards the runners are closed
    and the workspace removed, also after an error or a signal (a second signal leaves the
    workspace to the next run's sweep)."""
    listener.phase(Phase.MATERIALISING)
    workspace = Workspace.reserved(temp_dir)
    remove = True
    try:
        isolation = Isolation(source.root, workspace.base, workspace.root.resolve())
        notes = Notes(listener)
        runners = Runners(RunnerSetup(options, dict(environ), isolation, workspace.scratch,
                                      notes))
        try:
            runners.begin(specs)  # the interpreter's probe runs while git checks HEAD out
            workspace.fill(source, included)
            runners.start(specs)
            yield Bench(Lab(runners, workspace, listener, logs), runners, notes)
        finally:
            runners.close()
        written = workspace.installed_changes()
        if written:
            raise WorkspaceError(
                "the tests wrote into your installed packages through the workspace's links "
                "to them (or something else changed them during the run); mutharness cannot "
                "keep them unchanged for such a suite: reinstall them (npm ci), and point what "
                "the tests write elsewhere (a temp directory):", written)
    except ForcedExit:
        remove = False  # exit at once: the next run's sweep removes the workspace
        raise
    finally:
        if remove:
            listener.phase(Phase.REMOVING)
            workspace.remove()
