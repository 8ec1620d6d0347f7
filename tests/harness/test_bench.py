"""The bench of one command: its workspace is removed however its runners end."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Project, git_on_path

from mutharness.errors import GitError
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


CHECKOUT_WATCH = """case " $* " in
  *" checkout "*)
    if [ -e "$PWD/../probe/probe.log" ]; then echo probing >> "$CALLS_LOG"
    else echo not-probing >> "$CALLS_LOG"; fi
    if [ -n "$FAIL_CHECKOUT" ]; then exit 1; fi;;
esac"""


def _watched_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git on PATH that says, at each checkout, whether the interpreter's probe has
    started (its log exists beside the checkout); returns where it says so."""
    calls = tmp_path / "calls.log"
    monkeypatch.setenv("CALLS_LOG", str(calls))
    monkeypatch.setenv("PATH", git_on_path(tmp_path / "bin", CHECKOUT_WATCH))
    return calls


@pytest.mark.skipif(sys.platform == "win32", reason="a shell script as git")
def test_the_interpreter_is_probed_while_git_checks_the_workspace_out(
    make_project: Callable[..., Project], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project()
    calls = _watched_git(tmp_path, monkeypatch)
    specs = load_specs([project.root / "specs/calc.json"])
    source = open_source(project.root, configure_git(os.environ["PATH"]))
    temp = tmp_path / "tmp"
    temp.mkdir()

    with bench.opened(source, (), resolve({}, {}, None), specs, Silent(), os.environ,
                      temp) as opened:
        assert "pytest" in opened.runners.versions  # probed, and read

    assert calls.read_text(encoding="utf-8").split() == ["probing"]
    assert list(temp.iterdir()) == []


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
def test_a_probe_begun_before_a_failed_checkout_is_ended_with_the_workspace(
    make_project: Callable[..., Project], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project()
    calls = _watched_git(tmp_path, monkeypatch)
    monkeypatch.setenv("FAIL_CHECKOUT", "1")
    token = f"MH_SLOW_PROBE={tmp_path}"
    monkeypatch.setenv("MH_SLOW_PROBE", str(tmp_path))  # carried by the probe's process
    slow = tmp_path / "slow-python"  # an interpreter whose probe never ends by itself
    slow.write_text("#!/bin/sh\nexec sleep 600\n", encoding="utf-8")
    slow.chmod(0o755)
    specs = load_specs([project.root / "specs/calc.json"])
    source = open_source(project.root, configure_git(os.environ["PATH"]))
    temp = tmp_path / "tmp"
    temp.mkdir()

    with pytest.raises(GitError), bench.opened(
        source, (), resolve({"python": str(slow)}, {}, None), specs, Silent(), os.environ, temp
    ):
        pytest.fail("the checkout failed: nothing runs")

    assert calls.read_text(encoding="utf-8").split() == ["probing"]
    assert _carrying(token) == []  # the probe was ended, not left to sleep
    assert list(temp.iterdir()) == []


def _carrying(entry: str) -> list[int]:
    """The live processes whose environment holds `entry` (NAME=value)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and entry.encode() in (
                    proc / "environ").read_bytes().split(b"\0"):
                found.append(int(proc.name))
        except OSError:
            continue
    return found
