"""Making a runner a spec names: its setup (options, environment, scratch) -> a `Runner`."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Final

from mutharness.options import (
    NODE,
    NODE_CONCURRENCY,
    NODE_IMPORT,
    NODE_OPTIONS,
    NODE_REQUIRE,
    PYTEST_ADDOPTS,
    PYTEST_DROP_ADDOPTS,
    PYTEST_RUNNER,
    PYTHON,
    Options,
)
from mutharness.runners import bytecode
from mutharness.runners.base import Isolation, Runner
from mutharness.runners.node import rules as node_rules
from mutharness.runners.node.runner import NodeRunner
from mutharness.runners.pytest import rules as pytest_rules
from mutharness.runners.pytest.runner import PytestRunner


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


def _pytest(setup: RunnerSetup) -> Runner:
    python = setup.options[PYTHON] or sys.executable
    pycache = bytecode.shared_pycache(setup.environ) or setup.scratch("pycache")
    return PytestRunner(
        str(Path(python).absolute()) if setup.options[PYTHON] else python,
        setup.environ, pycache, setup.isolation, setup.options[PYTEST_ADDOPTS],
        drop_addopts=setup.options[PYTEST_DROP_ADDOPTS],
        probe_dir=setup.scratch("probe"),
        server_dir=(setup.scratch("forkserver") if setup.options[PYTEST_RUNNER] == "forked"
                    else None),
        note=setup.note,
    )


def _node(setup: RunnerSetup) -> Runner:
    return NodeRunner(
        setup.options[NODE], setup.environ, setup.isolation,
        imports=setup.options[NODE_IMPORT],
        requires=setup.options[NODE_REQUIRE],
        extra=setup.options[NODE_OPTIONS],
        concurrency=setup.options[NODE_CONCURRENCY],
        probe_dir=setup.scratch("node-probe"),
        note=setup.note,
    )


MAKERS: Final[Mapping[str, Callable[[RunnerSetup], Runner]]] = MappingProxyType({
    pytest_rules.NAME: _pytest,
    node_rules.NAME: _node,
})


def make_runner(name: str, setup: RunnerSetup) -> Runner:
    """A new runner of the kind a spec names (the spec's validation guarantees it exists)."""
    return MAKERS[name](setup)
