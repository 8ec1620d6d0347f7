"""The runner registry: each `spec.runner` name, its `tests` entry rules, its evidence rows."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from mutharness.runners.node import rules as node
from mutharness.runners.pytest import rules as pytest


@dataclass(frozen=True)
class RunnerKind:
    """A runner as a spec names it: its rules, which start no process (making one:
    `runners.making`)."""

    name: str
    entry_problem: Callable[[str], str | None]  # why a `tests` entry is unsafe to pass
    entry_path: Callable[[str], str]  # the repo-relative path an entry names
    describe: Callable[[Mapping[str, str]], tuple[tuple[str, str], ...]]  # evidence rows
    split_id: Callable[[str], tuple[str, str]]  # a test id -> (file, name)
    covers: Callable[[Sequence[str], str, str], bool]  # entries run the test file + name
    is_test_module: Callable[[str], bool]  # a path named as the runner's test files are
    config_inputs: Callable[[Sequence[str], frozenset[str]], tuple[str, ...]]  # conftest.py...
    config_candidates: Callable[[Sequence[str], frozenset[str]], tuple[str, ...]]  # ...could
    # what a record of a run made before the results said what it lists held beyond the
    # spec's own files (`Runner.records`): the files it imported ("imports")
    legacy: frozenset[str] = frozenset()
    modules: tuple[str, ...] = ()  # the suffixes of the files an import record lists
    stops_after: str = "test"  # what a run stopped at its first failure ran up to (a failing one)


def _pytest_rows(versions: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    unknown = "unknown"
    return (
        ("Python", f"{versions.get('python', unknown)} "
                   f"({versions.get('implementation', unknown)})"),
        ("pytest", versions.get("pytest", unknown)),
    )


def _node_rows(versions: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    return (("node", versions.get("node", "unknown")),
            ("installed packages", versions.get("installed", "unknown")))


RUNNERS: Final[Mapping[str, RunnerKind]] = MappingProxyType({
    pytest.NAME: RunnerKind(
        pytest.NAME, pytest.entry_problem, pytest.entry_path, _pytest_rows, pytest.split_id,
        pytest.covers, pytest.is_test_module, pytest.config_inputs, pytest.config_candidates,
        legacy=frozenset({"imports"}),
        modules=(".py",),
    ),
    node.NAME: RunnerKind(
        node.NAME, node.entry_problem, node.entry_path, _node_rows, node.split_id,
        node.covers, node.is_test_module, node.config_inputs, node.config_candidates,
        stops_after="test file",
    ),
})
DEFAULT = pytest.NAME


def runner_kind(name: str) -> RunnerKind:
    """The registered runner called `name` (the spec's validation guarantees it exists)."""
    return RUNNERS[name]


def detected(tests: Sequence[str]) -> str:
    """The runner for a spec without a `runner` key: node when every `tests` entry is a
    JavaScript or TypeScript file, else pytest."""
    if tests and all(entry.endswith(node.SUFFIXES) for entry in tests):
        return node.NAME
    return DEFAULT
