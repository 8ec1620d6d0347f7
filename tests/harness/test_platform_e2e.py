"""The same end-to-end runs on every platform, Windows too: a verify with evidence, a CRLF
checkout, a timeout that kills a grandchild, a run killed outright and the next run's sweep."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Completed, Project, git
from liverun import alive

Cli = Callable[..., Completed]
MakeProject = Callable[..., Project]
SETTLE_S = 120.0  # how long a killed process may take to be gone (a loaded machine, Wine)

GRANDCHILD = (
    "import subprocess, sys, time; from pathlib import Path; "
    "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(900)']); "
    "Path(sys.argv[1], 'grandchild.pid').write_text(str(g.pid)); time.sleep(900)"
)
HANG = f'''\
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HANG = False
GRANDCHILD = {GRANDCHILD!r}


def work():
    if HANG:
        spy = Path(os.environ["MH_SPY"])
        (spy / "workspace").write_text(os.environ.get("MUTHARNESS_WORKSPACE", ""))
        (spy / "test.pid").write_text(str(os.getpid()))
        child = subprocess.Popen([sys.executable, "-c", GRANDCHILD, str(spy)])
        (spy / "child.pid").write_text(str(child.pid))
        time.sleep(900)
    return 1
'''
TEST_HANG = "from hang import work\n\n\ndef test_work():\n    assert work() == 1\n"
HANG_SPEC = {
    "tests": ["tests/test_hang.py"], "expectBaselinePass": 1,
    "mutations": [{"name": "the work hangs, with a child and a grandchild",
                   "file": "src/hang.py", "anchor": "HANG = False", "replacement": "HANG = True"}],
}
PIDS = ("test.pid", "child.pid", "grandchild.pid")
FLOORS_S = (8, 40, 200)  # mutation timeouts tried in turn until the mutant reaches its hang


def gone(pids: list[int]) -> list[int]:
    """The pids still running after waiting up to SETTLE_S for them to end."""
    deadline = time.monotonic() + SETTLE_S
    while (left := [pid for pid in pids if alive(pid)]) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def hang_project(make_project: MakeProject) -> Project:
    project = make_project()
    project.write("src/hang.py", HANG)
    project.write("tests/test_hang.py", TEST_HANG)
    project.spec("hang", HANG_SPEC)
    project.commit("a mutant that hangs with a child and a grandchild")
    return project


def results_of(project: Project) -> dict[str, object]:
    document: dict[str, object] = json.loads(
        (project.root / ".mutharness/results.json").read_text("utf-8")
    )
    return document


def test_a_spec_is_verified_with_evidence_that_render_and_evidence_check_agree_on(
    make_project: MakeProject, cli: Cli, tmp_path: Path
) -> None:
    project = make_project()

    done = cli(project.root, "verify", "specs/calc.json", "--evidence", "evidence")

    assert done.code == 0, done.out + done.err
    assert "CAUGHT   #1 " in done.out and "SURVIVED #2 " in done.out
    project.commit("evidence")
    rendered = cli(project.root, "render", str(project.root / ".mutharness/results.json"),
                   "--out", str(tmp_path / "rendered"))
    assert rendered.code == 0, rendered.out + rendered.err
    for name in ("calc.md", "calc.json", "index.md"):
        assert (tmp_path / "rendered" / name).read_bytes() == (
            project.root / "evidence" / name
        ).read_bytes()
    fresh = cli(project.root, "evidence-check")
    assert fresh.code == 0, fresh.out + fresh.err


def test_j2_feeds_its_workers_and_writes_the_results_of_j1(
    make_project: MakeProject, cli: Cli, tmp_path: Path
) -> None:
    from conftest import BOUNDS

    from mutharness.model.results import from_json, to_json

    project = make_project()
    project.spec("bounds", BOUNDS)
    project.commit("two specs")

    runs = {jobs: cli(project.root, "verify", "specs", "-j", jobs, "--json",
                      str(tmp_path / f"j{jobs}.json")) for jobs in ("1", "2")}

    for done in runs.values():
        assert done.code == 0, done.out + done.err
    one, two = (to_json(from_json(json.loads((tmp_path / f"j{j}.json").read_text("utf-8"))),
                        timings=False) for j in ("1", "2"))
    assert two == one
    assert git(project.root, "status", "--porcelain") == ""


def test_a_crlf_checkout_is_verified_with_its_multi_line_anchor_matched_across_crlf(
    make_project: MakeProject, cli: Cli, git_home: Path, tmp_path: Path
) -> None:
    project = make_project()
    with (git_home / ".gitconfig").open("a") as config:  # as Git for Windows installs it
        config.write("[core]\n\tautocrlf = true\n")
    clone = tmp_path / "crlf"
    git(tmp_path, "clone", "-q", str(project.root), str(clone))
    assert b"\r\n" in (clone / "src/calc.py").read_bytes()

    done = cli(clone, "verify", "specs/calc.json")

    assert done.code == 0, done.out + done.err
    [spec] = results_of(Project(clone))["specs"]  # type: ignore[misc]
    assert spec["mutations"][0]["crlf_translated"] is True
    assert [m["verdict"] for m in spec["mutations"]] == ["CAUGHT", "SURVIVED"]


def test_a_timeout_kills_the_test_its_child_and_its_grandchild(
    make_project: MakeProject, cli: Cli, tmp_path: Path
) -> None:
    project = hang_project(make_project)
    # The mutant must reach its hang (three processes started) before the timeout: on a loaded
    # machine, or under Wine, three Python start-ups can take longer than the first floor, and
    # then the run proves less; it is made again with a longer floor, never judged on timing.
    for floor in FLOORS_S:
        spy = tmp_path / f"spy-{floor}"
        spy.mkdir()
        done = cli(project.root, "verify", "specs/hang.json", "--timeout-floor", str(floor),
                   "--timeout-factor", "1", "--timeout-constant", "1",
                   env={**os.environ, "MH_SPY": str(spy)})

        assert done.code == 4, done.out + done.err
        [mutation] = results_of(project)["specs"][0]["mutations"]  # type: ignore[index]
        assert mutation["verdict"] == "TIMEOUT"
        written = [name for name in PIDS if (spy / name).exists() and (spy / name).read_text()]
        assert gone([int((spy / name).read_text()) for name in written]) == []
        if written == list(PIDS):
            break
    assert written == list(PIDS), f"the mutant did not reach its hang within {floor} s"
    assert mutation["loaded"] is True  # the import log of a killed process is read whole


def test_a_run_killed_outright_leaves_nothing_running_once_the_next_run_has_swept(
    make_project: MakeProject, cli: Cli, tmp_path: Path
) -> None:
    project = hang_project(make_project)
    spy = tmp_path / "spy"
    spy.mkdir()
    env = {**os.environ, "MH_SPY": str(spy)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "mutharness", "verify", "specs/hang.json"], cwd=project.root,
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 600
        while not (spy / "grandchild.pid").exists():
            assert proc.poll() is None, "the run ended before its mutant ran"
            assert time.monotonic() < deadline, "the mutant never started"
            time.sleep(0.1)
        time.sleep(0.5)  # the pid files are written whole
        proc.kill()  # SIGKILL; TerminateProcess on Windows, as taskkill /F does
        proc.wait(timeout=SETTLE_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    pids = [int((spy / name).read_text()) for name in PIDS]

    again = cli(project.root, "verify", "specs/calc.json", "--lock-timeout", "60", env=env)

    assert again.code == 0, again.out + again.err  # the lock of the killed run is free
    assert gone(pids) == []
    workspace = Path((spy / "workspace").read_text())  # its own: /tmp is shared
    assert workspace.name.startswith("mh-") and not workspace.exists()  # swept


@pytest.mark.skipif(sys.platform != "win32", reason="Windows device names: only there")
def test_a_file_a_test_named_after_a_windows_device_is_removed_with_its_directory(
    tmp_path: Path,
) -> None:
    from mutharness.repo.files import remove_tree

    project = tmp_path / "project"
    project.mkdir()
    with open("\\\\?\\" + str(project / "nul"), "w", encoding="utf-8") as handle:
        handle.write("node wrote its report to a file called nul\n")

    remove_tree(project)

    assert not project.exists()
