"""Every run starts from the same clean state: nothing one run leaves (files, tags, a warm home,
a daemon) decides the next run's verdict, and files the tests write are no drift."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import Completed, Project, Venv, default_spec, gate_project
from inproc import in_process
from liverun import LOW_BOUND, Sandbox, alive, mutations_of, no_strays

ProjectFactory = Callable[..., Project]
VenvFactory = Callable[..., Venv]
Cli = Callable[..., Completed]

SURVIVOR = default_spec()["mutations"][1]  # 18 -> 17: no test asks, so it must SURVIVE


def with_test(make_project: ProjectFactory, name: str, text: str, count: int,
              mutations: list[dict[str, Any]]) -> Project:
    project = make_project(spec=default_spec(
        tests=["tests/test_calc.py", f"tests/{name}"], expectBaselinePass=count,
        mutations=mutations,
    ))
    project.write(f"tests/{name}", text)
    project.commit(f"add {name}")
    return project


@pytest.mark.skipif(sys.platform == "win32", reason="builds POSIX venv layouts (bin/python)")
def test_a_junit_file_written_by_addopts_is_removed_between_runs_and_coverage_writes_none(
    make_project: ProjectFactory, make_venv: VenvFactory, tool_site: Path, cli: Cli
) -> None:
    project = make_project()
    project.write("pyproject.toml", (
        '[tool.pytest.ini_options]\npythonpath = ["src"]\n'
        'addopts = "--cov=calc --cov-report=xml --junitxml=junit.xml"\n'
    ))
    project.commit("coverage and a JUnit report on every run, as many projects do")
    venv = make_venv("cov", tools=tool_site)

    # every test runs (--no-first-failure), so every run writes its JUnit file; pytest-cov
    # is switched off in every run: no .coverage, no coverage.xml
    done = cli(project.root, "verify", "specs/calc.json", "--python", str(venv.python),
               "--no-first-failure")

    assert done.code == 0, done.out + done.err
    assert [(m["verdict"], m["removed"]) for m in mutations_of(project.root)] == [
        ("CAUGHT", ["junit.xml"]), ("SURVIVED", ["junit.xml"]),
    ]


TAGGING_TEST = '''\
import subprocess

from calc import clamp


def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout


def test_no_tag_is_left_by_an_earlier_run():
    assert git("tag", "--list") == ""


def test_the_unclamped_mutant_tags_the_checkout():
    if clamp(50, 0, 10) != 10:
        git("tag", "left-behind")
'''

UNCLAMPED = {"name": "the high bound is ignored (and its run tags the checkout)",
             "file": "src/calc.py", "anchor": "    if value > high:\n        return high\n",
             "replacement": ""}


def test_a_tag_a_run_leaves_in_the_checkout_is_drift_and_never_reaches_the_next_run(
    make_project: ProjectFactory
) -> None:
    project = with_test(make_project, "test_tags.py", TAGGING_TEST, 6, [UNCLAMPED, SURVIVOR])

    # every test runs (--no-first-failure): the tagging test comes after the caught one
    done = in_process(project.root, "verify", "specs/calc.json", "--no-first-failure")

    tagger, survivor = mutations_of(project.root)
    assert tagger["verdict"] == "UNTRUSTWORTHY"
    assert "workspace changed after restore: .git/refs/tags/left-behind" in tagger["reason"]
    assert (survivor["verdict"], survivor["as_expected"]) == ("SURVIVED", True)
    assert done.code == 4, done.out + done.err  # the untrustworthy run: no verdict for it


RELEASE_TEST = '''\
import subprocess

from calc import clamp


def git(*args):
    return subprocess.run(["git", "-c", "user.name=Release", "-c", "user.email=r@example.invalid",
                           *args], capture_output=True, text=True, check=True).stdout


def test_a_release_tag_is_made_checked_and_deleted_as_a_release_tool_s_tests_do():
    git("tag", "-a", "v9.9.9", "-m", "release 9.9.9")
    assert git("tag", "--list") == "v9.9.9\\n"
    git("tag", "-d", "v9.9.9")
    assert clamp(50, 0, 10) == 10
'''


def test_a_run_that_makes_and_deletes_a_tag_leaves_the_same_refs_and_is_no_drift(
    make_project: ProjectFactory
) -> None:
    project = with_test(make_project, "test_release.py", RELEASE_TEST, 5, [UNCLAMPED, SURVIVOR])

    done = in_process(project.root, "verify", "specs/calc.json")

    assert done.code == 0, done.out + done.err
    assert [m["verdict"] for m in mutations_of(project.root)] == ["CAUGHT", "SURVIVED"]


HOME_TEST = '''\
import os
import pathlib


def test_the_home_is_private_empty_and_fresh():
    home = pathlib.Path.home()
    assert str(home) != os.environ["MH_REAL_HOME"]
    cache = pathlib.Path(os.environ["XDG_CACHE_HOME"])
    assert cache.is_relative_to(home)
    assert sorted(path.name for path in home.rglob("*") if path.is_file()) == []
    (cache / "warm").write_text("a cache an earlier run warmed")
    (home / ".toolrc").write_text("settings a run wrote")
'''


def test_the_tests_get_a_private_empty_home_per_run_and_never_touch_the_real_one(
    make_project: ProjectFactory, cli: Cli, git_home: Path
) -> None:
    project = with_test(make_project, "test_home.py", HOME_TEST, 5, [LOW_BOUND, SURVIVOR])
    before = sorted(path.relative_to(git_home) for path in git_home.rglob("*"))

    done = cli(project.root, "verify", "specs/calc.json",
               env={**os.environ, "MH_REAL_HOME": str(git_home)})

    assert done.code == 0, done.out + done.err
    assert [m["verdict"] for m in mutations_of(project.root)] == ["CAUGHT", "SURVIVED"]
    assert sorted(path.relative_to(git_home) for path in git_home.rglob("*")) == before


DAEMON_TEST = '''\
import os
import pathlib
import sys
import time

SPY = pathlib.Path(os.environ["MH_SPY_DIR"])
DAEMON = "import os, pathlib, sys, time; " \\
    "pathlib.Path(sys.argv[1], f'daemon-{os.getpid()}.pid').write_text(str(os.getpid())); " \\
    "time.sleep(600)"


def _alive(pid):
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_no_daemon_of_an_earlier_run_is_still_alive():
    assert [p.name for p in SPY.glob("daemon-*.pid") if _alive(int(p.read_text()))] == []


def test_leaves_a_daemon_that_escaped_the_group_and_the_environment_marker():
    known = set(SPY.glob("daemon-*.pid"))
    child = os.fork()
    if child == 0:  # a double fork, a new session, and an exec with an empty environment
        os.setsid()
        if os.fork() == 0:
            os.execve(sys.executable, [sys.executable, "-c", DAEMON, str(SPY)], {})
        os._exit(0)
    os.waitpid(child, 0)
    deadline = time.monotonic() + 30
    while set(SPY.glob("daemon-*.pid")) == known and time.monotonic() < deadline:
        time.sleep(0.01)
'''


@pytest.mark.skipif(sys.platform != "linux", reason="the subreaper is Linux's")
@pytest.mark.parametrize("runner", ["subprocess", "forked"])
def test_a_daemon_that_escaped_group_and_marker_is_killed_before_the_next_run(
    runner: str, make_project: ProjectFactory, cli: Cli, tmp_path: Path
) -> None:
    project = with_test(make_project, "test_daemon.py", DAEMON_TEST, 6, [LOW_BOUND, SURVIVOR])
    sandbox = Sandbox.under(tmp_path)

    with no_strays(sandbox.spy):
        # every test runs (--no-first-failure): the daemon test after the caught one too
        done = cli(project.root, "verify", "specs/calc.json", "--pytest-runner", runner,
                   "--no-first-failure", env=sandbox.env())
        daemons = [int(path.read_text()) for path in sandbox.spy.glob("daemon-*.pid")]

        assert done.code == 0, done.out + done.err
        assert [m["verdict"] for m in mutations_of(project.root)] == ["CAUGHT", "SURVIVED"]
        # the baseline's, each mutant's (and, forked, the fork server's proof's)
        assert len(daemons) == (4 if runner == "forked" else 3)
        assert [pid for pid in daemons if alive(pid)] == []


DESCRIBE_TEST = '''\
import subprocess


def test_the_session_asks_git_for_a_version():
    # pytest-benchmark does this in every session; `--dirty` refreshes the index's stat data
    subprocess.run(["git", "describe", "--dirty", "--always"], capture_output=True, check=True)
'''


def test_a_test_that_only_refreshes_the_checkouts_index_causes_no_drift(
    make_project: ProjectFactory
) -> None:
    project = with_test(make_project, "test_describe.py", DESCRIBE_TEST, 5, [
        LOW_BOUND,
        {"name": "the high-bound test expects 9 (a mutant in a second file)",
         "file": "tests/test_calc.py",
         "anchor": "assert clamp(50, 0, 10) == 10", "replacement": "assert clamp(50, 0, 10) == 9"},
        SURVIVOR,
    ])

    done = in_process(project.root, "verify", "specs/calc.json")

    assert done.code == 0, done.out + done.err
    assert [m["verdict"] for m in mutations_of(project.root)] == ["CAUGHT", "CAUGHT", "SURVIVED"]


KEPT = "--deselect tests/test_calc.py::test_clamp_inside"  # an addopt whose effect counts show
KEPT_PASS = 3  # the calc spec's 4 tests, one deselected: had every addopt gone, 4 would pass


def coverage_floor_project(make_project: ProjectFactory, addopts: str) -> Project:
    """The calc project, a function no test calls, and `addopts` (a coverage floor)."""
    project = make_project()
    project.write("src/calc.py", (project.root / "src/calc.py").read_text("utf-8")
                  + "\n\ndef never_called():\n    return 1\n")
    project.write("pyproject.toml", '[tool.pytest.ini_options]\npythonpath = ["src"]\n'
                  f'addopts = "{addopts}"\n')
    project.commit("a coverage floor the spec's tests alone do not reach")
    return project


def test_a_baseline_failed_by_a_suite_gate_in_addopts_names_pytest_addopts_as_the_remedy(
    make_project: ProjectFactory
) -> None:
    project = gate_project(make_project, "--min-tests=99")

    refused = in_process(project.root, "verify", "specs/calc.json")
    project.write("mutharness.toml", 'pytest-addopts = "-ra"\n')
    project.commit("mutharness runs without the suite's gate")
    mended = in_process(project.root, "verify", "specs/calc.json")

    assert refused.code == 3, refused.out + refused.err
    assert "pytest-addopts" in refused.err
    assert "FAIL Required 99 tests not reached: 4 ran" in refused.err
    assert mended.code == 0, mended.out + mended.err


def test_pytest_drop_addopts_removes_the_suite_s_gate_and_keeps_the_rest_of_the_addopts(
    make_project: ProjectFactory
) -> None:
    project = gate_project(make_project, f"--min-tests=99 {KEPT}")
    project.spec("calc", default_spec(expectBaselinePass=KEPT_PASS))
    project.write("mutharness.toml", 'pytest-drop-addopts = ["--min-tests"]\n')
    project.commit("mutharness runs drop the gate by name, value and all")

    done = in_process(project.root, "verify", "specs/calc.json")

    assert done.code == 0, done.out + done.err
    assert "pytest-drop-addopts" not in done.err


@pytest.mark.parametrize(("addopts", "dropped"), [
    ("-k no_test_has_this_name", "-k"),  # the value a separate word: pytest's parser says so
    ("-kno_test_has_this_name", "-k"),  # attached to the short option
    ("--ignore=tests --strict-markers", "--ignore"),
    ("--ignore tests", "--ignore"),
])
def test_pytest_drop_addopts_drops_an_option_with_its_value_however_it_is_written(
    make_project: ProjectFactory, addopts: str, dropped: str
) -> None:
    project = make_project()
    project.write("pyproject.toml", '[tool.pytest.ini_options]\npythonpath = ["src"]\n'
                  f'addopts = "{addopts} {KEPT}"\n')
    project.spec("calc", default_spec(expectBaselinePass=KEPT_PASS))
    project.write("mutharness.toml", f'pytest-drop-addopts = ["{dropped}"]\n')
    project.commit(f"addopts {addopts}, dropped by mutharness")

    done = in_process(project.root, "verify", "specs/calc.json")

    assert done.code == 0, done.out + done.err


def test_pytest_drop_addopts_naming_an_option_the_addopts_lack_is_refused_naming_it(
    make_project: ProjectFactory
) -> None:
    project = make_project()
    project.write("mutharness.toml", 'pytest-drop-addopts = ["--cov-fail-under"]\n')
    project.commit("drops what the project's addopts do not carry")

    done = in_process(project.root, "verify", "specs/calc.json")

    assert done.code == 3, done.out + done.err
    assert "--cov-fail-under" in done.err
    assert "pytest-drop-addopts" in done.err
