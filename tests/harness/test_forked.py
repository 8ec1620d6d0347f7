"""The warm forked pytest runner: the verdicts of a fresh process per run, at a fork's cost."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Completed, Project, git

from mutharness.model.results import from_json, to_json

REPOSITORY = Path(__file__).resolve().parents[2]
ProjectFactory = Callable[..., Project]
Cli = Callable[..., Completed]
FORKED = ("--pytest-runner", "forked")  # asked for: the default is a fresh process per run

pytestmark = pytest.mark.skipif(sys.platform != "linux",
                                reason="the warm runner forks; its runs are told apart by /proc")

CONFTEST = '''\
import os

import pytest


def _parent_is_the_server():
    try:
        with open(f"/proc/{os.getppid()}/cmdline", "rb") as handle:
            return b"_mutharness_forkserver" in handle.read()
    except OSError:
        return False


def pytest_sessionstart(session):
    forked = _parent_is_the_server()
    with open(os.environ["RUNS_LOG"], "a", encoding="utf-8") as log:
        log.write(("forked" if forked else "fresh") + "\\n")
    if forked and os.environ.get("KILL_THE_SERVER"):
        os.kill(os.getppid(), 9)


@pytest.fixture
def seven():
    return 7
'''

CORE = '''\
LIMIT = 10
UNUSED = 1


def doubled(function):
    def wrapper(value):
        return 2 * function(value)
    return wrapper


@doubled
def scaled(value):
    return value + 1


class Shape:
    sides = 4
'''

INIT = 'from .core import LIMIT, Shape, scaled\n\nVERSION = "1"\n'

TESTS = '''\
import pkg


def test_limit():
    assert pkg.LIMIT == 10


def test_scaled():
    assert pkg.scaled(1) == 4


def test_sides():
    assert pkg.Shape.sides == 4


def test_version():
    assert pkg.VERSION == "1"


def test_fixture(seven):
    assert seven == 7
'''


def _mutation(name: str, file: str, anchor: str, replacement: str,
              caught: bool = True) -> dict[str, object]:
    found: dict[str, object] = {"name": name, "file": file, "anchor": anchor,
                                "replacement": replacement}
    if not caught:
        found["expectCaught"] = False
    return found


IMPORT_TIME = {
    "tests": ["tests/test_pkg.py"],
    "expectBaselinePass": 5,
    "mutations": [
        _mutation("a module constant", "src/pkg/core.py", "LIMIT = 10", "LIMIT = 11"),
        _mutation("a decorator's body", "src/pkg/core.py", "return 2 * function",
                  "return 3 * function"),
        _mutation("a decorator removed", "src/pkg/core.py", "@doubled\n", ""),
        _mutation("a class body", "src/pkg/core.py", "sides = 4", "sides = 5"),
        _mutation("the package's __init__", "src/pkg/__init__.py", 'VERSION = "1"',
                  'VERSION = "2"'),
        _mutation("a conftest fixture", "tests/conftest.py", "return 7", "return 8"),
        _mutation("SURVIVOR (documented): an unused constant", "src/pkg/core.py",
                  "UNUSED = 1", "UNUSED = 2", caught=False),
    ],
}


def _src_layout(make_project: ProjectFactory, files: dict[str, str],
                spec: dict[str, object]) -> Project:
    """A committed src-layout project with the run-logging conftest, `files` and `spec`."""
    made = make_project()
    made.write("pyproject.toml", '[tool.pytest.ini_options]\npythonpath = ["src"]\n')
    made.write("tests/conftest.py", CONFTEST)
    for relative, text in files.items():
        made.write(relative, text)
    made.spec("imports", spec)
    made.commit("a src-layout project")
    return made


@pytest.fixture
def project(make_project: ProjectFactory) -> Project:
    """A src-layout package whose mutations all act at import time."""
    return _src_layout(make_project, {"src/pkg/__init__.py": INIT, "src/pkg/core.py": CORE,
                                      "tests/test_pkg.py": TESTS}, IMPORT_TIME)


def _verify(cli: Cli, project: Project, name: str, *flags: str,
            **env: str) -> tuple[Completed, dict[str, object], list[str]]:
    """`verify specs/imports.json`: what it printed, its timing-free results, the runs' log."""
    here = project.root.parent
    log = here / f"{name}.log"
    done = cli(project.root, "verify", "specs/imports.json", "--json", str(here / f"{name}.json"),
               *flags, env={**os.environ, "PYTHONIOENCODING": "utf-8", "RUNS_LOG": str(log),
                            **env})
    results = json.loads((here / f"{name}.json").read_text("utf-8"))
    runs = log.read_text("utf-8").split() if log.exists() else []
    return done, to_json(from_json(results), timings=False), runs


def _without_settings(results: dict[str, object]) -> dict[str, object]:
    """The results without the settings (the runner option differs) and the notes (a
    fall-back's), and with the durations pytest prints in its summary line ("2 passed in
    0.12s", kept in a log tail) masked."""
    kept = {key: value for key, value in results.items() if key not in ("settings", "notes")}
    return json.loads(re.sub(r" in \d+\.\d+s", " in Ts", json.dumps(kept)))


def test_import_time_mutations_get_the_same_verdicts_forked_as_in_fresh_processes(
    project: Project, cli: Cli
) -> None:
    fresh, fresh_results, fresh_runs = _verify(cli, project, "fresh", "--pytest-runner",
                                               "subprocess")
    forked, forked_results, forked_runs = _verify(cli, project, "forked", *FORKED)

    assert fresh.code == 0, fresh.out + fresh.err
    assert forked.code == 0, forked.out + forked.err
    assert _without_settings(forked_results) == _without_settings(fresh_results)
    assert "note:" not in forked.err
    assert fresh_runs == ["fresh"] * 9  # the collect probe, the baseline, seven mutants
    # the probe and the baseline in fresh processes, the baseline again forked (the proof),
    # then every mutant forked
    assert forked_runs == ["fresh", "fresh", "forked"] + ["forked"] * 7
    assert git(project.root, "status", "--porcelain") == ""


def _fork_seen(project: Project) -> None:
    project.write("tests/test_main.py", (  # what a fork cannot change: its command line
        "def test_main_is_pytests():\n"
        "    with open('/proc/self/cmdline', 'rb') as handle:\n"
        "        assert b'forkserver' not in handle.read()\n"
    ))
    project.spec("imports", {**IMPORT_TIME, "tests": ["tests/test_pkg.py", "tests/test_main.py"],
                             "expectBaselinePass": 6})
    project.commit("a test that looks at its own command line")


FELL_BACK = "a forked run of tests/test_pkg.py tests/test_main.py differed"


def test_a_run_whose_tests_see_the_fork_falls_back_and_says_why(
    project: Project, cli: Cli
) -> None:
    _fork_seen(project)

    evidence = project.root.parent / "evidence"
    fresh, fresh_results, _ = _verify(cli, project, "fresh", "--pytest-runner", "subprocess")
    forked, forked_results, forked_runs = _verify(cli, project, "forked", *FORKED,
                                                  "--evidence", str(evidence))

    assert fresh.code == 0, fresh.out + fresh.err
    assert forked.code == 0, forked.out + forked.err
    assert _without_settings(forked_results) == _without_settings(fresh_results)
    facts = (evidence / "imports.json").read_text("utf-8")  # how the run went is no verdict's
    assert "notes" not in json.loads(facts) and "differed" not in facts
    assert FELL_BACK in forked.err
    assert "test_main_is_pytests" in forked.err
    assert forked.err.count("note:") == 1
    assert forked_runs == ["fresh", "fresh", "forked"] + ["fresh"] * 7
    assert fresh_results["notes"] == []
    [note] = forked_results["notes"]  # the results keep what the user was told
    assert FELL_BACK in note and f"mutharness: note: {note}" in forked.err


def test_a_fall_back_in_j2_workers_is_told_once_and_kept_in_the_results(
    project: Project, cli: Cli
) -> None:
    _fork_seen(project)

    one, one_results, _ = _verify(cli, project, "one", *FORKED)
    two, two_results, two_runs = _verify(cli, project, "two", *FORKED, "-j", "2")

    assert one.code == 0, one.out + one.err
    assert two.code == 0, two.out + two.err
    assert two.err.count("note:") == 1, two.err  # both workers fell back, for one reason
    assert FELL_BACK in two.err
    assert two_results["notes"] == one_results["notes"]
    assert two_runs.count("forked") == 2  # each worker's proof; every mutant ran fresh


def _own_pprint(project: Project) -> None:
    """A top-level pprint.py that tests import (a fresh python -m pytest imports it)."""
    project.write("pprint.py", (
        "import importlib.util, os, sysconfig\n"
        "_spec = importlib.util.spec_from_file_location(\n"
        "    'pprint', os.path.join(sysconfig.get_paths()['stdlib'], 'pprint.py'))\n"
        "_real = importlib.util.module_from_spec(_spec)\n"
        "_spec.loader.exec_module(_real)\n"
        "globals().update({k: v for k, v in vars(_real).items() if not k.startswith('__')})\n"
        "SHADOWED = True\n"
    ))
    project.write("tests/test_shadow.py", (
        "import pprint\n\n\ndef test_the_workspace_pprint_is_imported():\n"
        "    assert getattr(pprint, 'SHADOWED', False)\n"
    ))
    project.spec("imports", {**IMPORT_TIME, "tests": ["tests/test_pkg.py", "tests/test_shadow.py"],
                             "expectBaselinePass": 6})
    project.commit("a pprint of its own")


def test_a_workspace_module_that_would_shadow_one_the_server_holds_means_no_server(
    project: Project, cli: Cli
) -> None:
    _own_pprint(project)

    forked, _, forked_runs = _verify(cli, project, "forked", *FORKED)

    assert forked.code == 0, forked.out + forked.err
    assert "would shadow pprint" in forked.err
    assert forked_runs == ["fresh"] * 9


def test_a_shadowing_note_made_by_two_workers_is_told_once(project: Project, cli: Cli) -> None:
    _own_pprint(project)

    two, results, _ = _verify(cli, project, "two", *FORKED, "-j", "2")

    assert two.code == 0, two.out + two.err
    assert two.err.count("note:") == 1, two.err  # the same words from each worker's workspace
    [note] = results["notes"]  # type: ignore[misc]
    assert "the workspace's pprint.py would shadow pprint" in note


def test_a_directory_without_init_named_as_a_module_the_server_holds_shadows_nothing(
    project: Project, cli: Cli
) -> None:
    # jsonschema's json/ test data: a namespace-package candidate, never imported over the
    # standard library's json package (a regular package on a later path entry)
    project.write("json/tests/draft7.json", '{"type": "integer"}\n')
    project.write("tests/test_data.py", (
        "import json\n\n\ndef test_the_data_reads_with_the_standard_json():\n"
        "    with open('json/tests/draft7.json', encoding='utf-8') as handle:\n"
        "        assert json.load(handle) == {'type': 'integer'}\n"
        "    assert json.__file__ and 'site' not in json.__file__\n"
    ))
    project.spec("imports", {**IMPORT_TIME, "tests": ["tests/test_pkg.py", "tests/test_data.py"],
                             "expectBaselinePass": 6})
    project.commit("test data in a json/ directory")

    fresh, fresh_results, _ = _verify(cli, project, "fresh", "--pytest-runner", "subprocess")
    forked, forked_results, forked_runs = _verify(cli, project, "forked", *FORKED)

    assert fresh.code == 0, fresh.out + fresh.err
    assert forked.code == 0, forked.out + forked.err
    assert _without_settings(forked_results) == _without_settings(fresh_results)
    assert "note:" not in forked.err, forked.err
    assert forked_runs == ["fresh", "fresh", "forked"] + ["forked"] * 7


ORDER_CONFTEST = '''\
import os


def pytest_sessionstart(session):
    if hasattr(session.config, "workerinput"):
        return  # an xdist worker's session: only the controller counts
    path = os.environ["SESSIONS"]
    count = 1
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            count = int(handle.read()) + 1
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(str(count))
'''

ORDER_TESTS = '''\
import os
import time

from order import value


def _slow_in_sessions(parity):
    with open(os.environ["SESSIONS"], encoding="utf-8") as handle:
        if int(handle.read()) % 2 == parity:
            time.sleep(1.5)


def test_first():
    _slow_in_sessions(0)
    assert value() == 1


def test_second():
    _slow_in_sessions(1)
    assert value() == 1
'''


def test_an_xdist_suite_whose_tests_finish_in_another_order_is_no_forked_difference(
    make_project: ProjectFactory, cli: Cli
) -> None:
    # the baseline's second test finishes first, the forked proof's first: xdist reports
    # tests as they finish, so their order differs from run to run in fresh processes too
    made = make_project()
    made.write("pyproject.toml",
               '[tool.pytest.ini_options]\npythonpath = ["src"]\naddopts = "-n 2"\n')
    made.write("src/order.py", "def value():\n    return 1\n")
    made.write("tests/conftest.py", ORDER_CONFTEST)
    made.write("tests/test_order.py", ORDER_TESTS)
    made.spec("order", {"tests": ["tests/test_order.py"], "expectBaselinePass": 2,
                        "mutations": [_mutation("the value is off by one", "src/order.py",
                                                "return 1", "return 2")]})
    made.commit("an xdist suite")
    out = made.root.parent / "order.json"

    done = cli(made.root, "verify", "specs/order.json", *FORKED, "--json", str(out),
               env={**os.environ, "SESSIONS": str(made.root.parent / "sessions")})

    assert done.code == 0, done.out + done.err
    assert "note:" not in done.err, done.err
    assert json.loads(out.read_text("utf-8"))["notes"] == []


def test_a_server_that_dies_leaves_the_verdicts_to_fresh_processes(
    project: Project, cli: Cli
) -> None:
    fresh, fresh_results, _ = _verify(cli, project, "fresh", "--pytest-runner", "subprocess")
    forked, forked_results, forked_runs = _verify(cli, project, "forked", *FORKED,
                                                     KILL_THE_SERVER="1")

    assert fresh.code == 0, fresh.out + fresh.err
    assert forked.code == 0, forked.out + forked.err
    assert _without_settings(forked_results) == _without_settings(fresh_results)
    assert "the warm pytest server failed: the server exited" in forked.err
    assert forked_runs == ["fresh", "fresh", "forked"] + ["fresh"] * 7


def test_the_runner_option_accepts_only_the_runners_there_are(project: Project, cli: Cli) -> None:
    done = cli(project.root, "verify", "specs/imports.json", "--pytest-runner", "spawn")
    project.write("mutharness.toml", 'pytest-runner = "spawn"\n')
    project.commit("a runner that does not exist")
    configured = cli(project.root, "verify", "specs/imports.json")

    assert done.code == 2
    assert "'spawn' is not one of 'forked', 'subprocess'" in done.err
    assert configured.code == 2
    assert "pytest-runner: must be one of forked, subprocess, not 'spawn'" in configured.err


def _bundled_pytest_specs() -> list[str]:
    return [
        f"specs/{path.name}" for path in sorted((REPOSITORY / "specs").glob("*.json"))
        if "mutations" in (document := json.loads(path.read_text("utf-8")))
        and document.get("runner", "pytest") == "pytest"
    ]


def test_every_bundled_pytest_spec_gets_the_same_verdicts_forked_as_in_fresh_processes(
    cli: Cli, tmp_path: Path
) -> None:
    specs = _bundled_pytest_specs()
    assert len(specs) >= 8, specs
    results = {}
    for runner in ("subprocess", "forked"):
        out = tmp_path / f"{runner}.json"
        done = cli(REPOSITORY, "verify", *specs, "--allow-dirty", "--pytest-runner", runner,
                   "--json", str(out), env={**os.environ, "PYTHONIOENCODING": "utf-8"},
                   timeout=3600)  # a hang guard: 92 mutants take minutes on a loaded machine
        assert done.code == 0, done.out + done.err
        assert "note:" not in done.err, done.err
        results[runner] = _without_settings(
            to_json(from_json(json.loads(out.read_text("utf-8"))), timings=False)
        )

    assert results["forked"] == results["subprocess"]


WORKER = '''\
import multiprocessing
import threading

METHOD = "fork"
_stop = threading.Event()


def start():
    thread = threading.Thread(target=_stop.wait, daemon=True)
    thread.start()
    return thread


def _square(value):
    return value * value


def square_in_child(value):
    with multiprocessing.get_context(METHOD).Pool(1) as pool:
        return pool.apply_async(_square, (value,)).get(timeout=60)
'''

SHUTDOWN = {
    "tests": ["tests/test_worker.py"],
    "expectBaselinePass": 2,
    "mutations": [
        _mutation("SURVIVOR (documented): the thread is no daemon, so the run never ends",
                  "src/worker.py", "daemon=True", "daemon=False", caught=False),
        _mutation("SURVIVOR (documented): the pool spawns its workers", "src/worker.py",
                  'METHOD = "fork"', 'METHOD = "spawn"', caught=False),
    ],
}


def test_a_forked_run_ends_as_a_fresh_interpreter_does_threads_joined_and_main_pytests(
    make_project: ProjectFactory, cli: Cli
) -> None:
    project = _src_layout(make_project, {"src/worker.py": WORKER, "tests/test_worker.py": (
        "import worker\n\n\ndef test_the_thread_runs():\n    assert worker.start().is_alive()\n"
        "\n\ndef test_a_pool_squares():\n    assert worker.square_in_child(3) == 9\n"
    )}, SHUTDOWN)
    # the spawned pool's run must end within its limit on a loaded machine too
    limits = ("--timeout-floor", "10", "--timeout-factor", "1", "--timeout-constant", "8")

    fresh, fresh_results, _ = _verify(cli, project, "fresh", "--pytest-runner", "subprocess",
                                      *limits)
    forked, forked_results, forked_runs = _verify(cli, project, "forked", *FORKED, *limits)

    verdicts = [m["verdict"] for m in fresh_results["specs"][0]["mutations"]]  # type: ignore[index]
    assert verdicts == ["TIMEOUT", "SURVIVED"], fresh.out + fresh.err
    assert _without_settings(forked_results) == _without_settings(fresh_results)
    assert "note:" not in forked.err, forked.err
    assert forked_runs == ["fresh", "fresh", "forked", "forked", "forked"]
