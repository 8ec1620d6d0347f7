"""SIGINT and SIGTERM at every phase of a verify, and a second signal during the cleanup.

Phases: materialising the workspace, the baseline running, a mutant applied (its tests running),
restoring the original bytes. Each signal is a real one, sent once the phase is observed: git
publishing its pid, pytest publishing its pid, or the verify announcing the phase through its
listener (`lab.events.Phase`) -- never after a fixed delay.

After one signal, always: no child left, the workspace removed, the lock released, the results
file written and marked interrupted (with the mutations that had finished), the user's tree and
`.git` byte-identical, exit 130 (SIGINT) or 143 (SIGTERM). After a second signal: exit at once,
the tests still killed, the workspace left for the next run to sweep.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import Completed, Project, Recorder
from liverun import (
    HANG_GUARD,
    ONE_MUTATION_SPEC,
    Sandbox,
    alive,
    no_strays,
    published_pids,
    results_of,
    slow_git_path,
    snapshot,
    spawn,
    wait_for,
)

from mutharness.commands.prepare import Settings
from mutharness.commands.verify import execute
from mutharness.errors import ExitCode, ForcedExit, Interrupted
from mutharness.lab.events import Phase
from mutharness.lock import repository_lock
from mutharness.repo.workspace import MARKER
from mutharness.signals import SignalStages, deferred, exit_status, handled_signals, interrupts

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and process groups")

Cli = Callable[..., Completed]
MakeProject = Callable[..., Project]

PHASE_TEST = '''\
import os
import pathlib
import signal
import subprocess
import sys
import time


def _phase():
    source = pathlib.Path("src/calc.py").read_text(encoding="utf-8")
    for word in ("MUTANT_TWO", "MUTANT_ONE"):
        if word in source:
            return word.lower().replace("_", "-")
    return "baseline"


def test_every_mutant_is_told_apart_from_the_baseline():
    phase = _phase()
    spy = os.environ.get("MH_SPY_DIR")
    if spy and os.environ.get("MH_BLOCK") == phase:
        sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        if os.environ.get("MH_STUBBORN"):
            def stubborn(number, frame):
                pathlib.Path(spy, "terminating").write_text("SIGTERM ignored\\n")
            signal.signal(signal.SIGTERM, stubborn)
        scratch = pathlib.Path(spy, phase + ".pids.tmp")
        scratch.write_text(f"{os.getpid()} {sleeper.pid}\\n", encoding="utf-8")
        os.replace(scratch, pathlib.Path(spy, phase + ".pids"))
        gate = pathlib.Path(spy, "gate")
        deadline = time.monotonic() + 60
        while not gate.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        sleeper.kill()
        sleeper.wait()
    assert phase == "baseline"
'''

PHASES_SPEC: dict[str, Any] = {
    "tests": ["tests/test_phases.py"],
    "expectBaselinePass": 1,
    "mutations": [
        {"name": "mutant one marks clamp", "file": "src/calc.py",
         "anchor": "def clamp(value, low, high):\n",
         "replacement": "def clamp(value, low, high):  # MUTANT_ONE\n"},
        {"name": "mutant two marks is_adult", "file": "src/calc.py",
         "anchor": "def is_adult(age):\n", "replacement": "def is_adult(age):  # MUTANT_TWO\n"},
    ],
}


# The real command line, with one addition: the Nth announcement of a phase (MH_SIGNAL_AT,
# "restoring:2") makes the process send itself the real signal MH_SIGNAL.
SIGNAL_AT_PHASE = """\
import os
import sys

from mutharness.reports import console

seen = {}


def phase(self, phase):
    name = str(phase)
    seen[name] = seen.get(name, 0) + 1
    if f"{name}:{seen[name]}" == os.environ["MH_SIGNAL_AT"]:
        os.kill(os.getpid(), int(os.environ["MH_SIGNAL"]))


console.Console.phase = phase
from mutharness.cli import main

main(prog_name="mutharness")
"""


def _add_phase_probe(project: Project) -> None:
    project.write("tests/test_phases.py", PHASE_TEST)
    project.spec("phases", PHASES_SPEC)
    project.commit("phase probe")


def _assert_cleaned_up(project: Project, sandbox: Sandbox, before: dict[str, str]) -> None:
    """No child alive, no workspace, the lock free and unrecorded, the tree byte-identical."""
    for pid in published_pids(sandbox.spy):
        assert not alive(pid), f"process {pid} outlived the interrupted run"
    assert sandbox.workspaces() == []
    assert snapshot(project.root) == before
    assert not (project.root / ".mutharness/lock-holder.json").exists()
    with repository_lock(project.root / ".mutharness", 0):  # a new holder gets it at once
        pass


class PhaseSignaller(Recorder):
    """A listener that sends this process a real signal at `trigger`.

    With `published` set, the signal waits (in a thread) until that file exists: the phase's
    child process is observed running. Without it, the signal is sent during the announcement.
    At `removing` it keeps the workspace's copy of src/calc.py, to show what restore left there.
    """

    def __init__(self, trigger: Phase, number: int, tmpdir: Path,
                 published: Path | None = None) -> None:
        super().__init__()
        self.trigger, self.number, self.tmpdir, self.published = trigger, number, tmpdir, published
        self.fired = False
        self.done = threading.Event()
        self.thread: threading.Thread | None = None
        self.calc_at_removal: str | None = None

    def phase(self, phase: Any) -> None:
        super().phase(phase)
        if phase is Phase.REMOVING:
            calc = next(self.tmpdir.glob("mh-*")) / "repo/src/calc.py"
            if calc.exists():  # not yet when the checkout was interrupted
                self.calc_at_removal = calc.read_text(encoding="utf-8")
        if phase is not self.trigger or self.fired:
            return
        self.fired = True
        if self.published is None:
            os.kill(os.getpid(), self.number)
        else:
            self.thread = threading.Thread(target=self._when_published, daemon=True)
            self.thread.start()

    def _when_published(self) -> None:
        assert self.published is not None
        deadline = time.monotonic() + 60
        while not self.done.is_set() and time.monotonic() < deadline:
            if self.published.exists():
                os.kill(os.getpid(), self.number)
                return
            time.sleep(0.02)

    def finish(self) -> None:
        self.done.set()
        if self.thread is not None:
            self.thread.join()


# phase -> (what is observed before the signal, the phases announced by the time of removal)
OBSERVED = {
    Phase.MATERIALISING: ("git.pid", ["materialising", "removing"]),
    Phase.BASELINE: ("baseline.pids", ["materialising", "baseline", "removing"]),
    Phase.MUTANT_APPLIED: ("mutant-one.pids", [
        "materialising", "baseline", "mutant-applied", "restoring", "restored", "removing",
    ]),
    Phase.RESTORING: (None, [
        "materialising", "baseline", "mutant-applied", "restoring", "removing",
    ]),
}


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("phase", list(OBSERVED), ids=[str(phase) for phase in OBSERVED])
def test_a_real_signal_at_every_phase_kills_the_children_removes_the_workspace_frees_the_lock_and_leaves_the_tree_untouched(  # noqa: E501
    phase: Phase, number: int, make_project: MakeProject, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = make_project()
    _add_phase_probe(project)
    sandbox = Sandbox.under(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(sandbox.tmpdir))
    monkeypatch.setenv("MH_SPY_DIR", str(sandbox.spy))  # git runs with this process's environ
    monkeypatch.delenv("GIT_PYTHON_GIT_EXECUTABLE", raising=False)  # restored after the test
    marker, expected_phases = OBSERVED[phase]
    environ = sandbox.env(MH_BLOCK=marker.split(".")[0] if marker else "none")
    if phase is Phase.MATERIALISING:
        environ["PATH"] = slow_git_path(tmp_path)
    before = snapshot(project.root)
    listener = PhaseSignaller(
        phase, number, sandbox.tmpdir, sandbox.spy / marker if marker else None
    )
    settings = Settings((project.root / "specs/phases.json",), project.root,
                        {"python": sys.executable})

    with no_strays(sandbox.spy):
        try:
            with interrupts():
                run = execute(settings, listener, environ)
        finally:
            listener.finish()

        assert run.interrupted == number, (run.error, listener.phases)
        assert run.exit_code() == (143 if number == signal.SIGTERM else 130)
        assert listener.phases == expected_phases
        _assert_cleaned_up(project, sandbox, before)
    if phase in (Phase.MUTANT_APPLIED, Phase.RESTORING):
        assert listener.calc_at_removal is not None
        assert "MUTANT" not in listener.calc_at_removal, "the mutant was not restored"
    results = results_of(project.root)
    assert results["interrupted"] is True
    assert results["signal"] == number
    assert results["exit_code"] == run.exit_code()


def _signal_at(
    project: Project, sandbox: Sandbox, at: str, number: int
) -> subprocess.CompletedProcess[str]:
    env = sandbox.env(MH_SIGNAL_AT=at, MH_SIGNAL=str(int(number)))
    return subprocess.run(
        [sys.executable, "-c", SIGNAL_AT_PHASE, "verify", "specs/phases.json"],
        cwd=project.root, env=env, capture_output=True, text=True, timeout=120,
    )


@pytest.mark.parametrize(("number", "code"), [
    (signal.SIGINT, 130), (signal.SIGTERM, 143), (getattr(signal, "SIGHUP", 1), 130),
], ids=["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_signal_while_the_second_mutant_is_restored_exits_130_or_143_with_the_first_mutant_in_the_results(  # noqa: E501
    number: int, code: int, make_project: MakeProject, tmp_path: Path
) -> None:
    project = make_project()
    _add_phase_probe(project)
    sandbox = Sandbox.under(tmp_path)
    before = snapshot(project.root)

    done = _signal_at(project, sandbox, "restoring:2", number)

    assert done.returncode == code, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "CAUGHT" in done.stdout and "mutant one marks clamp" in done.stdout
    assert "workspace removed" in done.stderr
    _assert_cleaned_up(project, sandbox, before)
    results = results_of(project.root)
    assert (results["interrupted"], results["signal"]) == (True, number)
    [spec] = results["specs"]
    assert [m["name"] for m in spec["mutations"]] == ["mutant one marks clamp"]
    assert spec["mutations"][0]["verdict"] == "CAUGHT"
    assert "interrupted" in spec["error"]


def test_sigterm_while_the_second_mutant_runs_exits_143_with_the_first_mutant_in_the_results(
    make_project: MakeProject, tmp_path: Path
) -> None:
    project = make_project()
    _add_phase_probe(project)
    sandbox = Sandbox.under(tmp_path)
    before = snapshot(project.root)

    with no_strays(sandbox.spy):
        proc = spawn(project.root, "verify", "specs/phases.json", *HANG_GUARD,
                     env=sandbox.env(MH_BLOCK="mutant-two"))
        try:
            wait_for((sandbox.spy / "mutant-two.pids").exists, proc, "mutant two's tests")
            assert all(alive(pid) for pid in sandbox.pids("mutant-two"))
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()

        assert proc.returncode == 143, out + err
        _assert_cleaned_up(project, sandbox, before)
    [spec] = results_of(project.root)["specs"]
    assert [m["verdict"] for m in spec["mutations"]] == ["CAUGHT"]


def test_ctrl_c_while_the_baseline_runs_exits_130_and_cleans_up_everything(
    make_project: MakeProject, cli: Cli, tmp_path: Path
) -> None:
    project = make_project()
    _add_phase_probe(project)
    sandbox = Sandbox.under(tmp_path)
    before = snapshot(project.root)

    with no_strays(sandbox.spy):
        proc = spawn(project.root, "verify", "specs/phases.json",
                     env=sandbox.env(MH_BLOCK="baseline"))
        try:
            wait_for((sandbox.spy / "baseline.pids").exists, proc, "the baseline's tests")
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()

        assert proc.returncode == 130, out + err
        _assert_cleaned_up(project, sandbox, before)
    assert results_of(project.root)["specs"] == []

    again = cli(project.root, "verify", "--lock-timeout", "0", "specs/phases.json",
                env=sandbox.env())

    assert again.code == 0, again.out + again.err
    assert snapshot(project.root) == before


def test_a_second_signal_during_the_cleanup_exits_at_once_still_killing_the_tests_and_the_next_run_sweeps_the_workspace(  # noqa: E501
    make_project: MakeProject, cli: Cli, tmp_path: Path
) -> None:
    project = make_project()
    _add_phase_probe(project)
    project.spec("one", ONE_MUTATION_SPEC, commit=True)
    sandbox = Sandbox.under(tmp_path)
    before = snapshot(project.root)

    with no_strays(sandbox.spy):
        proc = spawn(project.root, "verify", "specs/phases.json", *HANG_GUARD,
                     env=sandbox.env(MH_BLOCK="mutant-one", MH_STUBBORN="1"))
        try:
            wait_for((sandbox.spy / "mutant-one.pids").exists, proc, "mutant one's tests")
            pids = sandbox.pids("mutant-one")
            proc.send_signal(signal.SIGINT)
            # pytest ignores the SIGTERM of the tree kill: the cleanup waits out its grace period
            wait_for((sandbox.spy / "terminating").exists, proc, "the tree kill to begin")
            proc.send_signal(signal.SIGTERM)
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()

        assert proc.returncode == 143, out + err
        assert "second signal" in err
        assert "Traceback" not in err
        for pid in pids:
            assert not alive(pid), f"test process {pid} outlived the forced exit"
    [left] = sandbox.workspaces()
    assert (left / MARKER).read_text().split()[0] == str(proc.pid)
    assert snapshot(project.root) == before
    assert not (project.root / ".mutharness/lock-holder.json").exists()

    again = cli(project.root, "verify", "--lock-timeout", "0", "specs/one.json",
                env=sandbox.env())

    assert again.code == 0, again.out + again.err
    assert sandbox.workspaces() == []
    assert snapshot(project.root) == before


def test_the_first_signal_unwinds_and_any_later_one_forces_the_exit() -> None:
    stages = SignalStages()

    with pytest.raises(KeyboardInterrupt):
        stages(signal.SIGINT, None)
    with pytest.raises(ForcedExit) as forced:
        stages(signal.SIGTERM, None)
    assert forced.value.signal_number == signal.SIGTERM
    with pytest.raises(ForcedExit):
        stages(signal.SIGINT, None)

    with pytest.raises(Interrupted) as first:
        SignalStages()(signal.SIGTERM, None)
    assert first.value.signal_number == signal.SIGTERM


def test_interrupts_puts_one_handler_on_every_handled_signal_and_restores_the_old_ones() -> None:
    previous = {number: signal.getsignal(number) for number in handled_signals()}

    with interrupts():
        installed = {signal.getsignal(number) for number in handled_signals()}

    assert len(installed) == 1 and isinstance(installed.pop(), SignalStages)
    assert {number: signal.getsignal(number) for number in handled_signals()} == previous


def test_a_signal_ignored_when_the_run_starts_stays_ignored_as_under_nohup() -> None:
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with interrupts():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
            assert isinstance(signal.getsignal(signal.SIGTERM), SignalStages)
            with deferred():
                assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, previous)


def test_signals_held_during_a_critical_section_are_delivered_once_it_ends() -> None:
    events: list[str] = []
    with pytest.raises(Interrupted) as delivered, interrupts():
        with deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)  # both have arrived and are held
            events.append("the section finished")
        events.append("not reached")

    assert events == ["the section finished"]
    assert delivered.value.signal_number == signal.SIGTERM


def test_on_posix_sigint_sigterm_and_sighup_are_handled() -> None:
    assert handled_signals() == (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


# Windows' Ctrl-Break and console close arrive as SIGBREAK, which cannot exist here: the logic is
# driven with a stand-in for the signal module that has it (its number on Windows is 21).
WINDOWS_SIGNALS = SimpleNamespace(SIGINT=2, SIGTERM=15, SIGBREAK=21)


def test_where_sigbreak_exists_ctrl_break_and_console_close_get_the_same_cleanup() -> None:
    assert handled_signals(WINDOWS_SIGNALS) == (2, 15, 21)
    stages = SignalStages()

    with pytest.raises(Interrupted) as first:
        stages(21, None)
    with pytest.raises(ForcedExit):
        stages(21, None)

    assert first.value.signal_number == 21
    assert exit_status(21) == ExitCode.INTERRUPTED


def test_sigterm_exits_143_and_every_other_handled_signal_130() -> None:
    assert exit_status(signal.SIGTERM) == 143
    assert exit_status(signal.SIGINT) == 130
    assert exit_status(signal.SIGHUP) == 130
