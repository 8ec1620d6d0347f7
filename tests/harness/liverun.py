"""Helpers for end-to-end tests with real repositories, real child processes and real signals.

The fixture project (see conftest.make_project) gets two probes, committed:

* ``tests/conftest.py``: when ``MH_SPY_DIR`` is set, every pytest session the harness starts
  writes a record (its cwd, pid, the top-level names in its cwd and the text of ``src/calc.py``
  it saw) into that directory,
  so a test can see from outside what each run inside the workspace saw. A session whose
  ``src/calc.py`` contains ``# LITTER`` leaves ``litter.txt`` in the workspace behind it.
* ``tests/test_gate.py`` (spec ``specs/gate.json``): one test that, in the phase named by
  ``MH_BLOCK`` (``baseline`` or ``mutant``), starts a sleeping grandchild, publishes
  ``<phase>.pids`` (its own pid and the grandchild's) and then waits for ``<spy>/gate`` to
  exist. Tests gate their next step on that observed state, never on a fixed delay.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conftest import git_on_path

from mutharness.digest import tree_digest
from mutharness.sweep import pid_alive

SPY_CONFTEST = '''\
import json
import os
import pathlib
import time

import pytest


@pytest.fixture(autouse=True, scope="session")
def _mutharness_spy():
    spy = os.environ.get("MH_SPY_DIR")
    calc = pathlib.Path("src/calc.py").read_text(encoding="utf-8")
    if spy:
        record = {
            "cwd": os.getcwd(),
            "pid": os.getpid(),
            "calc": calc,
            "files": sorted(path.name for path in pathlib.Path().iterdir()),
        }
        name = f"session-{time.time_ns():020d}-{os.getpid()}.json"
        pathlib.Path(spy, name).write_text(json.dumps(record), encoding="utf-8")
    yield
    if "# LITTER" in calc:
        pathlib.Path("litter.txt").write_text("left behind by a test\\n", encoding="utf-8")
'''

GATE_TEST = '''\
import os
import pathlib
import subprocess
import sys
import time

from calc import clamp


def test_the_gate_opens():
    mutated = clamp(-5, 0, 10) != 0
    phase = "mutant" if mutated else "baseline"
    spy = os.environ.get("MH_SPY_DIR")
    if spy and os.environ.get("MH_BLOCK") == phase:
        sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        scratch = pathlib.Path(spy, phase + ".pids.tmp")
        scratch.write_text(f"{os.getpid()} {sleeper.pid}\\n", encoding="utf-8")
        os.replace(scratch, pathlib.Path(spy, phase + ".pids"))
        gate = pathlib.Path(spy, "gate")
        deadline = time.monotonic() + 60
        while not gate.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        sleeper.kill()
        sleeper.wait()
    assert not mutated
'''

LOW_BOUND = {
    "name": "the low bound is ignored",
    "file": "src/calc.py",
    "anchor": "    if value < low:\n        return low\n",
    "replacement": "",
}

GATE_SPEC: dict[str, Any] = {
    "tests": ["tests/test_gate.py"],
    "expectBaselinePass": 1,
    "mutations": [LOW_BOUND],
}

ONE_MUTATION_SPEC: dict[str, Any] = {
    "tests": ["tests/test_calc.py"],
    "expectBaselinePass": 4,
    "mutations": [LOW_BOUND],
}


def add_probes(project: Any) -> None:
    """Commit the spy conftest, the gate test and `specs/gate.json` into a fixture project."""
    project.write("tests/conftest.py", SPY_CONFTEST)
    project.write("tests/test_gate.py", GATE_TEST)
    project.spec("gate", GATE_SPEC)
    project.commit("probes")


@dataclass(frozen=True)
class Sandbox:
    """Directories outside the repository that a test observes the run through."""

    tmpdir: Path  # the child's TMPDIR: workspaces must appear here, and only here
    spy: Path  # records written by the pytest sessions inside the workspace

    @classmethod
    def under(cls, base: Path) -> Sandbox:
        sandbox = cls(base / "tmpdir", base / "spy")
        sandbox.tmpdir.mkdir()
        sandbox.spy.mkdir()
        return sandbox

    def env(self, **extra: str) -> dict[str, str]:
        """The child environment: ours, with TMPDIR and the spy directory set."""
        return {**os.environ, "TMPDIR": str(self.tmpdir), "MH_SPY_DIR": str(self.spy), **extra}

    def workspaces(self) -> list[Path]:
        """Workspace directories currently under the child's TMPDIR."""
        return sorted(self.tmpdir.glob("mh-*"))

    def sessions(self) -> list[dict[str, Any]]:
        """The spy records of every pytest session so far, in the order they started."""
        return [
            json.loads(path.read_text(encoding="utf-8"))
            for path in sorted(self.spy.glob("session-*.json"))
        ]

    def pids(self, phase: str) -> tuple[int, ...]:
        """The pids (pytest, its sleeping child) the gate test published in `phase`."""
        return tuple(int(pid) for pid in (self.spy / f"{phase}.pids").read_text().split())

    def open_gate(self) -> None:
        (self.spy / "gate").write_text("open\n")


def snapshot(root: Path) -> dict[str, str]:
    """Every file of the working tree AND `.git` (bytes + mode), except `.mutharness/`."""
    return tree_digest(root, frozenset({".mutharness"}))


def git_status(root: Path) -> str:
    """`git status --porcelain` that never touches the index (so it cannot disturb a digest)."""
    return subprocess.run(
        ["git", "--no-optional-locks", "status", "--porcelain", "--untracked-files=all"],
        cwd=root, check=True, capture_output=True, text=True,
    ).stdout


# A mutant that blocks until the test signals must not time out first, however loaded the
# machine (the default floor, 20 s, is a guess about speed): a hang guard, not a speed check.
HANG_GUARD = ("--timeout-floor", "3600")


def spawn(cwd: Path, *args: str, env: Mapping[str, str]) -> subprocess.Popen[str]:
    """Start the real `mutharness` command line without waiting for it."""
    return subprocess.Popen(
        [sys.executable, "-m", "mutharness", *args], cwd=cwd, env=dict(env),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8",
    )


def wait_for(
    condition: Callable[[], bool], proc: subprocess.Popen[str], what: str, timeout: float = 60
) -> None:
    """Poll until `condition` holds; fail with the child's output if it ends first."""
    deadline = time.monotonic() + timeout
    while not condition():
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(
                f"mutharness exited ({proc.returncode}) before {what}\n{out}\n{err}"
            )
        if time.monotonic() > deadline:
            proc.kill()
            out, err = proc.communicate()
            raise AssertionError(f"timed out waiting for {what}\n{out}\n{err}")
        time.sleep(0.02)


def alive(pid: int) -> bool:
    """Whether a process still runs (an unreaped zombie, orphaned to init, counts as dead)."""
    if sys.platform == "win32":  # os.kill(pid, 0) would terminate it there
        return pid_alive(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


# A stand-in for git that publishes its pid and dawdles when it builds a workspace (fetch).
_SLOW_GIT = """\
for arg in "$@"; do
  if [ "$arg" = fetch ]; then
    echo $$ > "$MH_SPY_DIR/git.pid.tmp"
    mv "$MH_SPY_DIR/git.pid.tmp" "$MH_SPY_DIR/git.pid"
    sleep 1
  fi
done"""


def slow_git_path(tmp_path: Path) -> str:
    """A PATH whose git is the real one, except that building a workspace publishes its pid
    in the spy directory and takes a second (so a signal can land while git runs)."""
    return git_on_path(tmp_path / "bin", _SLOW_GIT)


def published_pids(spy: Path) -> list[int]:
    """Every pid the probes and the slow git published in the spy directory."""
    return [
        int(pid) for path in sorted(spy.glob("*.pid*")) if not path.name.endswith(".tmp")
        for pid in path.read_text().split()
    ]


@contextlib.contextmanager
def no_strays(spy: Path) -> Iterator[None]:
    """Whatever the outcome, kill every process the run published, so none outlives the test."""
    try:
        yield
    finally:
        for pid in published_pids(spy):
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def results_of(root: Path) -> dict[str, Any]:
    """The results file a verify in `root` wrote to its default place."""
    document: dict[str, Any] = json.loads(
        (root / ".mutharness/results.json").read_text(encoding="utf-8")
    )
    return document


def mutations_of(root: Path, spec: int = 0) -> list[dict[str, Any]]:
    """The mutation results of one spec in the results file a verify in `root` wrote."""
    mutations: list[dict[str, Any]] = results_of(root)["specs"][spec]["mutations"]
    return mutations
