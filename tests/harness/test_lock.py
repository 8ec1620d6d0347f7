"""One verify at a time per repository, proven with two real processes."""

from __future__ import annotations

import re
import socket
from collections.abc import Callable
from pathlib import Path

from conftest import Completed, Project
from liverun import Sandbox, add_probes, spawn, wait_for

Cli = Callable[..., Completed]
MakeProject = Callable[..., Project]


def test_a_second_verify_gives_up_after_its_lock_timeout_naming_the_holder_pid_host_and_start(
    make_project: MakeProject, cli: Cli, tmp_path: Path
) -> None:
    project = make_project()
    add_probes(project)
    sandbox = Sandbox.under(tmp_path)
    holder = project.root / ".mutharness/lock-holder.json"
    first = spawn(project.root, "verify", "specs/gate.json", env=sandbox.env(MH_BLOCK="baseline"))
    try:
        wait_for(holder.exists, first, "the first run to hold the lock")
        wait_for(lambda: (sandbox.spy / "baseline.pids").exists(), first,
                 "the first run's baseline to be running")

        second = cli(project.root, "verify", "--lock-timeout", "1", "specs/calc.json",
                     env=sandbox.env())

        assert first.poll() is None, "the first run must still hold the lock"
    finally:
        sandbox.open_gate()
        out, err = first.communicate(timeout=120)
    assert second.code == 5, second.out + second.err
    assert f"pid {first.pid} on {socket.gethostname()}" in second.err
    assert re.search(r"started \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", second.err)
    assert "baseline" not in second.out
    assert first.returncode == 0, out + err
    assert not holder.exists()
