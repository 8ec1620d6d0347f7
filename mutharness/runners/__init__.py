"""The runner registry: each `spec.runner` name, its `tests` entry rules, how to make one."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Final

from mutharness.options import Options
from mutharness.runners import bytecode, node, pytest
from mutharness.runners.base import Isolation, Runner


@dataclass(frozen=True)
class RunnerSetup:
    """What a runner is made from: the options, our environment, where its code must come
    from, a maker of fresh scratch directories (outside the checkout), and where to say
    what the user should know (a runner's fall-back)."""

    options: Options
    environ: Mapping[str, str]
    isolation: Isolation
    scratch: Callable[[str], Path]
    note: Callable[[str], None]  # tells the user something a runner decided, once


@dataclass(frozen=True)
class RunnerKind:
    """A runner as a spec names it."""

    name: str
    entry_problem: Callable[[str], str | None]  # why a `tests` entry is unsafe to pass
    entry_path: Callable[[str], str]  # the repo-relative path an entry names
    create: Callable[[RunnerSetup], Runner]
    describe: Callable[[Mapping[str, str]], tuple[tuple[str, str], ...]]  # evidence rows
    split_id: Callable[[str], tuple[str, str]]  # a test id -> (file, name)
    covers: Callable[[Sequence[str], str, str], bool]  # entries run the test file + name
    is_test_module: Callable[[str], bool]  # a path named as the runner's test files are
    config_inputs: Callable[[Sequence[str], frozenset[str]], tuple[str, ...]]  # conftest.py...
    config_candidates: Callable[[Sequence[str], frozenset[str]], tuple[str, ...]]  # ...could


def _pytest_rows(versions: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    unknown = "unknown"
    return (
        ("Python", f"{versions.get('python', unknown)} "
                   f"({versions.get('implementation', unknown)})"),
        ("pytest", f"{versions.get('pytest', unknown)} "
                   f"(pytest-json-report {versions.get('pytest-json-report', unknown)})"),
    )


def _node_rows(versions: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    return (("node", versions.get("node", "unknown")),)


def _pytest(setup: RunnerSetup) -> Runner:
    python = setup.options["python"] or sys.executable
    pycache = bytecode.shared_pycache(setup.environ) or setup.scratch("pycache")
    return pytest.PytestRunner(
        str(Path(python).absolute()) if setup.options["python"] else python,
        setup.environ, pycache, setup.isolation, setup.options["pytest-addopts"],
        drop_addopts=tuple(setup.options["pytest-drop-addopts"]),
        probe_dir=setup.scratch("probe"),
        server_dir=(setup.scratch("forkserver") if setup.options["pytest-runner"] == "forked"
                    else None),
        note=setup.note,
    )


def _node(setup: RunnerSetup) -> Runner:
    return node.NodeRunner(
        setup.options["node"], setup.environ, setup.isolation,
        imports=tuple(setup.options["node.import"]),
        requires=tuple(setup.options["node.require"]),
        extra=tuple(setup.options["node.options"]),
        probe_dir=setup.scratch("node-probe"),
    )


RUNNERS: Final[Mapping[str, RunnerKind]] = MappingProxyType({
    pytest.NAME: RunnerKind(
        pytest.NAME, pytest.entry_problem, pytest.entry_path, _pytest, _pytest_rows,
        pytest.split_id, pytest.covers, pytest.is_test_module, pytest.config_inputs,
        pytest.config_candidates,
    ),
    node.NAME: RunnerKind(
        node.NAME, node.entry_problem, node.entry_path, _node, _node_rows,
        node.split_id, node.covers, node.is_test_module, node.config_inputs,
        node.config_candidates,
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
