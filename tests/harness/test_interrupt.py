"""Ctrl-C and SIGTERM: real signals to a real verify, sent once its tests are observed running.

After the signal: exit 128 + signal, no test process (nor its child) alive, the workspace gone,
the lock released, the results file marked interrupted, and the user's tree byte-identical.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Completed, Project
from liverun import (
    HANG_GUARD,
    Sandbox,
    add_probes,
    alive,
    no_strays,
    results_of,
    slow_git_path,
    snapshot,
    spawn,
    wait_for,
)

pytestmark = pytest.mark.skipif(
    sys.platform == "win32", reason="POSIX signals sent to a child process"
)


Cli = Callable[..., Completed]
MakeProject = Callable[..., Project]


def _interrupt(
    project: Project, sandbox: Sandbox, phase: str, signal_number: int
) -> tuple[int, str, str, tuple[int, ...]]:
    """Start a verify of specs/gate.json, signal it once `phase`'s tests run; wait for the end."""
    proc = spawn(project.root, "verify", "specs/gate.json", *HANG_GUARD,
                 env=sandbox.env(MH_BLOCK=phase))
    try:
        wait_for(lambda: (sandbox.spy / f"{phase}.pids").exists(), proc,
                 f"the {phase} tests to be running")
        pids = sandbox.pids(phase)
        assert all(alive(pid) for pid in pids)
        assert len(sandbox.workspaces()) == 1
        proc.send_signal(signal_number)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, out, err, pids


def test_ctrl_c_while_a_mutant_runs_exits_130_and_cleans_up_everything(
    make_project: MakeProject, cli: Cli, tmp_path: Path
) -> None:
    project = make_project()
    add_probes(project)
    sandbox = Sandbox.under(tmp_path)
    before = snapshot(project.root)

    with no_strays(sandbox.spy):
        code, out, err, pids = _interrupt(project, sandbox, "mutant", signal.SIGINT)

        assert code == 130, out + err
        assert "baseline 1 pass" in out
        for pid in pids:
            assert not alive(pid), f"test process {pid} outlived the interrupted run"
    with pytest.raises(ProcessLookupError):
        os.kill(pids[0], 0)  # the pytest child was reaped, not left a zombie
    assert sandbox.workspaces() == []
    assert snapshot(project.root) == before
    results = results_of(project.root)
    assert results["interrupted"] is True
    assert results["signal"] == signal.SIGINT
    assert results["exit_code"] == 130
    [partial] = results["specs"]  # the spec stopped mid-way keeps what it had measured
    assert partial["error"] == partial["stopped"] == "interrupted after 0 of 1 mutation(s)"
    assert partial["source_commit"] and "specs/gate.json" in partial["depends_on"]
    assert not (project.root / ".mutharness/lock-holder.json").exists()

    again = cli(project.root, "verify", "--lock-timeout", "0", "specs/gate.json",
                env=sandbox.env())

    assert again.code == 0, again.out + again.err
    assert sandbox.workspaces() == []
    assert snapshot(project.root) == before


def test_sigterm_while_the_baseline_runs_exits_143_and_cleans_up_everything(
    make_project: MakeProject, tmp_path: Path
) -> None:
    project = make_project()
    add_probes(project)
    sandbox = Sandbox.under(tmp_path)
    before = snapshot(project.root)

    with no_strays(sandbox.spy):
        code, out, err, pids = _interrupt(project, sandbox, "baseline", signal.SIGTERM)

        assert code == 143, out + err
        for pid in pids:
            assert not alive(pid), f"test process {pid} outlived the terminated run"
    with pytest.raises(ProcessLookupError):
        os.kill(pids[0], 0)
    assert sandbox.workspaces() == []
    assert snapshot(project.root) == before
    results = results_of(project.root)
    assert results["interrupted"] is True
    assert results["signal"] == signal.SIGTERM
    assert results["exit_code"] == 143
    assert not (project.root / ".mutharness/lock-holder.json").exists()


def test_ctrl_c_while_the_workspace_is_built_waits_for_git_then_cleans_up_and_exits_130(
    make_project: MakeProject, tmp_path: Path
) -> None:
    project = make_project()
    sandbox = Sandbox.under(tmp_path)
    env = sandbox.env(PATH=slow_git_path(tmp_path))
    before = snapshot(project.root)
    git_pid_file = sandbox.spy / "git.pid"

    proc = spawn(project.root, "verify", "specs/calc.json", env=env)
    try:
        wait_for(git_pid_file.exists, proc, "git to be fetching into the workspace")
        git_pid = int(git_pid_file.read_text())
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()

    assert not alive(git_pid), "mutharness exited while its git child still ran"
    assert proc.returncode == 130, out + err
    assert "Traceback" not in err
    assert sandbox.workspaces() == []
    assert snapshot(project.root) == before
    assert results_of(project.root)["interrupted"] is True
