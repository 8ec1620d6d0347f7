"""The bench of one command: its workspace is removed however its runners end."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Project

from mutharness.lab import bench
from mutharness.lab.events import Silent
from mutharness.model.spec import load_specs
from mutharness.options import resolve
from mutharness.repo.git import configure_git
from mutharness.repo.source import open_source
from mutharness.runners.base import Runner
from mutharness.runners.making import RunnerSetup, make_runner


def test_a_runner_that_fails_to_close_leaves_no_workspace_behind(
    make_project: Callable[..., Project], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project()
    specs = load_specs([project.root / "specs/calc.json"])
    source = open_source(project.root, configure_git(os.environ["PATH"]))

    def failing_close(name: str, setup: RunnerSetup) -> Runner:
        runner = make_runner(name, setup)

        def close() -> None:
            raise OSError("the runner's server would not stop")

        runner.close = close  # type: ignore[method-assign]
        return runner

    monkeypatch.setattr(bench, "make_runner", failing_close)
    temp = tmp_path / "tmp"
    temp.mkdir()

    with pytest.raises(OSError, match="would not stop"), bench.opened(
        source, (), resolve({}, {}, None), specs, Silent(), os.environ, temp
    ):
        assert [path.name[:3] for path in temp.iterdir()] == ["mh-"]  # the workspace is there

    assert list(temp.iterdir()) == []
