"""Real runs recorded once, handed back to later runs of the same bytes: the replay runner.

A test that checks what a verify makes of its runs (the console, the results file, the
evidence, the logs kept, the exit code) needs real facts, not the cost of a pytest child per
scenario every time. `record(patch)` wraps every runner a command makes (through
`mutharness.lab.bench.make_runner`, the one place a runner is made) so that each real run's
facts, its log and a digest of the workspace it ran in are kept by scenario; `replay(patch,
recording)` makes the next commands' runners hand those facts back instead of starting the
tests. A replayed run is only ever the real run of the same scenario over the same bytes: a
scenario that was not recorded, or a workspace whose files differ from the recorded run's
(another spec, another mutant, an edited test), fails the test at once.

What the replay does not replace stays real: the workspace is materialised, each mutant is
written and restored, the workspace is settled, the logs are kept and the results, reports
and evidence are written. The runner's judgements of facts (isolation, what a run loaded)
are the real runner's, over the recorded facts moved to the new workspace. Only commands in
this process are reached (`inproc.in_process`, `conftest.verify_here`), never `-j` workers.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from mutharness.digest import changed_paths, tree_digest
from mutharness.lab import bench
from mutharness.runners.base import RunFacts, Runner, RunRequest
from mutharness.runners.making import RunnerSetup, make_runner

Key = tuple[str, str]  # (the spec's run directory, the scenario's name): "calc", "mutant-1"


def _key(request: RunRequest) -> Key:
    """The scenario a request runs: its scratch directory is runs/<spec>/<scenario>."""
    return (request.scratch.parent.name, request.scratch.name)


def _digest(cwd: Path) -> dict[str, str]:
    """What the run's workspace held, every file but git's own."""
    return tree_digest(cwd, skip=frozenset({".git"}))


def _asked(request: RunRequest) -> RunRequest:
    """What a request asks for, wherever it runs: its tests, limit and way of running them."""
    return dataclasses.replace(request, cwd=Path(), scratch=Path())


@dataclass(frozen=True)
class Take:
    """One recorded run: what was asked, where it ran, what it saw there and observed."""

    asked: RunRequest
    cwd: str
    files: Mapping[str, str]
    facts: RunFacts
    log: bytes


@dataclass
class Recording:
    """The runs of one or more real commands, by scenario, and the runners' versions."""

    takes: dict[Key, Take] = field(default_factory=dict)
    versions: dict[str, Mapping[str, str]] = field(default_factory=dict)


def _moved(value: Any, old: str, new: str) -> Any:
    """`value` with `old` (the recorded run's workspace) replaced by `new` in every string it
    holds: paths, and a log tail quoting them."""
    if type(value) is str:  # an Enum's str value is a word of a closed vocabulary: kept
        return value.replace(old, new)
    if type(value) in (tuple, list):
        return type(value)(_moved(item, old, new) for item in value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
        return type(value)(*(_moved(item, old, new) for item in value))
    if type(value) is dict:
        return {_moved(key, old, new): _moved(item, old, new) for key, item in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{
            item.name: _moved(getattr(value, item.name), old, new)
            for item in dataclasses.fields(value) if item.init
        })
    return value


class _Wrapped:
    """A runner standing in for a real one: what it does not define, the real one does."""

    def __init__(self, real: Runner, recording: Recording) -> None:
        self.real = real
        self.recording = recording

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


class _Recording(_Wrapped):
    """A real runner whose every run is also kept in `recording`."""

    def begin(self) -> None:
        self.real.begin()

    def start(self) -> Mapping[str, str]:
        versions = self.real.start()
        self.recording.versions[self.real.name] = dict(versions)
        return versions

    def run(self, request: RunRequest) -> RunFacts:
        key = _key(request)
        assert key not in self.recording.takes, f"{'/'.join(key)} was recorded already"
        files = _digest(request.cwd)
        facts = self.real.run(request)
        # A replay writes nothing into the workspace: only runs that left it as they found it
        # can be handed back (what a run writes is settled afterwards, and seen there).
        assert _digest(request.cwd) == files, f"the run of {'/'.join(key)} changed its workspace"
        log = Path(facts.log_path)
        self.recording.takes[key] = Take(
            _asked(request), str(request.cwd.parent), files, facts,
            log.read_bytes() if log.is_file() else b"",
        )
        return facts


class _Replay(_Wrapped):
    """A runner that hands back the recorded run of each scenario, moved to this workspace."""

    def begin(self) -> None:
        """Nothing: no tool is asked anything."""

    def start(self) -> Mapping[str, str]:
        return self.recording.versions[self.real.name]

    def prove(self, request: RunRequest, baseline: RunFacts) -> None:
        """Nothing: each run hands back the recorded one, whichever runner made it (the
        recordings here are made with the default runner: a fresh process per run)."""

    def close(self) -> None:
        self.real.close()

    def run(self, request: RunRequest) -> RunFacts:
        take = self.recording.takes.get(_key(request))
        assert take is not None, (
            f"no recorded run of {'/'.join(_key(request))}: recorded are "
            f"{sorted('/'.join(key) for key in self.recording.takes)}")
        assert _asked(request) == take.asked, (
            f"the run of {'/'.join(_key(request))} asks for {_asked(request)}, the recorded "
            f"run was {take.asked}")
        changed = changed_paths(take.files, _digest(request.cwd))
        assert not changed, (
            f"the workspace of {'/'.join(_key(request))} is not the recorded run's: {changed}")
        facts: RunFacts = _moved(take.facts, take.cwd, str(request.cwd.parent))
        log = request.scratch / "pytest.log"
        log.write_bytes(take.log)
        return dataclasses.replace(facts, log_path=str(log))


def _wrapping(wrap: Callable[[Runner], Any]) -> Callable[[str, RunnerSetup], Runner]:
    def make(name: str, setup: RunnerSetup) -> Runner:
        wrapped: Runner = wrap(make_runner(name, setup))
        return wrapped

    return make


def record(patch: pytest.MonkeyPatch, into: Recording | None = None) -> Recording:
    """From now on (until `patch` is undone), every run of a command in this process is real
    and kept in the returned recording (`into`, if given)."""
    recording = Recording() if into is None else into
    patch.setattr(bench, "make_runner", _wrapping(lambda real: _Recording(real, recording)))
    return recording


@contextmanager
def replaying(recording: Recording) -> Iterator[Recording]:
    """Within: every run of a command in this process is the recorded run of its scenario."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bench, "make_runner", _wrapping(lambda real: _Replay(real, recording)))
        yield recording


def recorded_verify(tmp_path_factory: pytest.TempPathFactory, name: str,
                    make: Callable[[Path], Path], *args: str, exit_code: int = 0,
                    env: Mapping[str, str] | None = None) -> tuple[Path, Recording]:
    """A project made once a session by `make(directory)` (it returns the repository) and
    verified for real once in this process (`mutharness verify ARGS` with `env` added to the
    isolated environment `conftest.recording` sets, which must exit with `exit_code`):
    the directory as it was before that run, for each test to take a copy of
    (`copy_recording`), and the run's runs."""
    from conftest import recording as made_once
    from inproc import in_process

    runs = Recording()

    def made(base: Path) -> None:
        root = make(base)
        with pytest.MonkeyPatch.context() as patch:
            record(patch, into=runs)
            done = in_process(root, "verify", *args, env={**os.environ, **(env or {})})
            assert done.code == exit_code, done.out + done.err
        shutil.rmtree(root / ".mutharness")  # each copy starts as the recorded run did

    return made_once(tmp_path_factory, name, made), runs
