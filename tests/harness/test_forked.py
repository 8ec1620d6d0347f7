"""The pytest fork server: the verdicts of a fresh process per run, at a fork's cost."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import Completed, Project, edit_json, git
from inproc import in_process, kept_environ

from mutharness.model.results import RunResult, from_json, to_json
from mutharness.reports.evidence import spec_facts
from mutharness.runners.base import Outcome, ReportState, RunExit, RunFacts, TestOutcome
from mutharness.runners.pytest.runner import worth_proving

REPOSITORY = Path(__file__).resolve().parents[2]
ProjectFactory = Callable[..., Project]
Cli = Callable[..., Completed]
FORKED = ("--pytest-runner", "forked")  # the default, named

pytestmark = pytest.mark.skipif(sys.platform != "linux",
                                reason="the fork server forks; its runs are told apart by /proc")

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
    assert fresh_runs == ["fresh"] * 8  # the baseline, seven mutants
    # the baseline in a fresh process, the baseline again forked (the proof), then every
    # mutant forked
    assert forked_runs == ["fresh", "forked"] + ["forked"] * 7
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
    assert forked_runs == ["fresh", "forked"] + ["fresh"] * 7
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
    # each worker's proof, and the joining worker's run of the other's baseline; every
    # mutant ran fresh
    assert two_runs.count("forked") == 3, two_runs


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
    assert forked_runs == ["fresh"] * 8


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
    assert forked_runs == ["fresh", "forked"] + ["forked"] * 7


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
    assert "the pytest fork server failed: the server exited" in forked.err
    assert forked_runs == ["fresh", "forked"] + ["fresh"] * 7


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
    """A fresh process never ends while a non-daemon thread runs (the first mutant is a
    TIMEOUT there), and multiprocessing's spawn starts its workers from pytest's `__main__`
    (the second survives): the forked runner's children end and spawn the same way."""
    project = _src_layout(make_project, {"src/worker.py": WORKER, "tests/test_worker.py": (
        "import worker\n\n\ndef test_the_thread_runs():\n    assert worker.start().is_alive()\n"
        "\n\ndef test_a_pool_squares():\n    assert worker.square_in_child(3) == 9\n"
    )}, SHUTDOWN)
    # the spawned pool's run must end within its limit on a loaded machine too
    limits = ("--timeout-floor", "10", "--timeout-factor", "1", "--timeout-constant", "8")

    forked, forked_results, forked_runs = _verify(cli, project, "forked", *FORKED, *limits)

    verdicts = [m["verdict"] for m in forked_results["specs"][0]["mutations"]]  # type: ignore[index]
    assert verdicts == ["TIMEOUT", "SURVIVED"], forked.out + forked.err
    assert "note:" not in forked.err, forked.err
    # the baseline fresh, its proof forked, then both mutants forked: no fall-back
    assert forked_runs == ["fresh", "forked", "forked", "forked"]


SLOW_TESTS = '''\
import time

import pkg


def test_limit():
    assert pkg.LIMIT == 10


def test_slow():
    time.sleep(2)  # a suite whose own time is more than the server saves one mutant
'''


def test_a_slow_suite_with_few_mutants_runs_them_in_new_interpreters_without_a_proof(
    make_project: ProjectFactory, cli: Cli
) -> None:
    spec = {"tests": ["tests/test_pkg.py"], "expectBaselinePass": 2, "mutations": [
        _mutation("a module constant", "src/pkg/core.py", "LIMIT = 10", "LIMIT = 11")]}
    project = _src_layout(make_project, {"src/pkg/__init__.py": INIT, "src/pkg/core.py": CORE,
                                         "tests/test_pkg.py": SLOW_TESTS}, spec)

    done, results, runs = _verify(cli, project, "default")

    assert done.code == 0, done.out + done.err
    assert [m["verdict"] for m in results["specs"][0]["mutations"]] == [  # type: ignore[index]
        "CAUGHT"]
    assert runs == ["fresh", "fresh"]  # the baseline and the mutant: no proof, no fork
    assert "note:" not in done.err  # no fall-back: the cheaper route, the same verdicts


@pytest.mark.parametrize(("mutants", "start_s", "tests_s", "worth"), [
    (10, 0.2, 0.05, True),  # a quick suite, many mutants: humanize's shape
    (10, 0.2, 7.0, False),  # a slow suite: more-itertools' shape
    (2, 0.15, 0.001, True),  # a tiny suite
    (1, 0.3, 0.3, False),  # as costly as it saves: not run
    (0, 0.3, 0.0, False),  # no mutant of these tests follows
])
def test_a_proof_is_run_only_when_it_costs_less_than_the_server_saves(
    mutants: int, start_s: float, tests_s: float, worth: bool
) -> None:
    baseline = RunFacts("pytest", 0, None, False, 60.0, 1.0, ReportState.OK, RunExit.ALL_PASSED,
                        (TestOutcome("t.py::a", Outcome.PASSED, tests_s / 2),
                         TestOutcome("t.py::b", Outcome.PASSED, tests_s / 2)), (), "log")

    assert worth_proving(baseline, mutants, start_s) is worth


def test_the_runner_option_accepts_only_the_runners_there_are(project: Project) -> None:
    done = in_process(project.root, "verify", "specs/imports.json", "--pytest-runner", "spawn")
    project.write("mutharness.toml", 'pytest-runner = "spawn"\n')
    project.commit("a runner that does not exist")
    configured = in_process(project.root, "verify", "specs/imports.json")

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


# What two honest runs of one tree may differ in when one is the recorded fresh-process run
# and the other a forked run made now: how each was asked for (the command, the runner
# setting), when and where it ran (HEAD and the commit measured, a dirty tree included, the
# tools' versions: shown with any difference, not compared), and a red-first proof (another
# command adds it to the evidence; a verify never makes one). Every other fact is compared.
RUN_CONTEXT = ("command", "commit", "dirty", "dirty_changes", "settings", "tool")
SPEC_CONTEXT = ("source_commit", "tools", "red_first")


def facts_of(run: RunResult, spec_id: str) -> dict[str, Any]:
    """One spec's facts from a run, as its evidence file would hold them
    (`reports.evidence.spec_facts`, which wrote the committed ones)."""
    loaded: dict[str, Any] = json.loads(spec_facts(run, spec_id))
    return loaded


def runner_differences(recorded: dict[str, Any], forked: dict[str, Any]) -> list[str]:
    """Each fact of one spec's recorded facts (a fresh-process run's) that the forked run's
    facts for that spec do not repeat, named by where it is: the run's outcome, the spec's
    record (its baseline's per-test outcomes, pin, digests), and each mutation matched by its
    index and name (verdict, as_expected, its facts: failing, not_passed, passed, collected)."""
    recorded, forked = _comparable(recorded), _comparable(forked)
    differences = _differences(_without(recorded, ("specs",)), _without(forked, ("specs",)),
                               "run")
    specs = _by_key(recorded["specs"], forked["specs"], lambda spec: spec["id"])
    for spec_id, (was, now) in specs.items():
        if was is None or now is None:
            differences.append(f"{spec_id}: {'forked' if was is None else 'recorded'} only")
            continue
        differences += _differences(_without(was, ("mutations",)), _without(now, ("mutations",)),
                                    spec_id)
        mutations = _by_key(was["mutations"], now["mutations"],
                            lambda mutation: f"mutation {mutation['index']} "
                                             f"({mutation['name']!r})")
        for name, (before, after) in mutations.items():
            where = f"{spec_id} {name}"
            if before is None or after is None:
                differences.append(f"{where}: {'forked' if before is None else 'recorded'} only")
            else:
                differences += _differences(before, after, where)
    return differences


def _comparable(facts: dict[str, Any]) -> dict[str, Any]:
    """Facts without what two honest runs differ in (RUN_CONTEXT, SPEC_CONTEXT, the route a
    run took), and with the durations pytest prints in its summary line ("2 passed in
    0.12s", in a log tail) masked."""
    kept = _without(facts, RUN_CONTEXT)
    kept["specs"] = [_without(spec, SPEC_CONTEXT) for spec in facts["specs"]]
    text = re.sub(r" in \d+\.\d+s", " in Ts", json.dumps(kept))
    return json.loads(re.sub(r', "route": "(?:[^"\\]|\\.)*"', "", text))


def _without(document: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {key: value for key, value in document.items() if key not in keys}


def _by_key(recorded: list[Any], forked: list[Any],
            key: Callable[[Any], str]) -> dict[str, tuple[Any, Any]]:
    """The records of both lists paired by `key`, in the recorded order (then forked-only)."""
    was, now = {key(item): item for item in recorded}, {key(item): item for item in forked}
    return {name: (was.get(name), now.get(name)) for name in [*was, *(n for n in now
                                                                     if n not in was)]}


def _differences(recorded: Any, forked: Any, where: str) -> list[str]:
    """Each place, under `where`, at which two JSON values differ: a key one of them lacks, a
    test's outcome (lists of tests paired by node id: a baseline's per-test outcomes, a
    mutant's not-passed ones; their order compared too), or any other value compared whole
    (a failing set, a count, a verdict)."""
    if isinstance(recorded, dict) and isinstance(forked, dict):
        found: list[str] = []
        for key in sorted(recorded.keys() | forked.keys()):
            if key not in forked or key not in recorded:
                found.append(f"{where}.{key}: {'recorded' if key in recorded else 'forked'} only")
            else:
                found += _differences(recorded[key], forked[key], f"{where}.{key}")
        return found
    if _tests(recorded) and _tests(forked):
        pairs = _by_key(recorded, forked, lambda test: test["nodeid"])
        found = []
        for nodeid, (was, now) in pairs.items():
            if was is None or now is None:
                found.append(f"{where}[{nodeid}]: {'forked' if was is None else 'recorded'} "
                             "only")
            else:
                found += _differences(was, now, f"{where}[{nodeid}]")
        if not found and recorded != forked:
            found.append(f"{where}: the same tests in another order")
        return found
    return [] if recorded == forked else [f"{where}: recorded {recorded!r}, forked {forked!r}"]


def _tests(value: Any) -> bool:
    """Whether `value` is a non-empty list of tests, each named once by its node id."""
    return (isinstance(value, list) and bool(value)
            and all(isinstance(item, dict) and "nodeid" in item for item in value)
            and len({item["nodeid"] for item in value}) == len(value))


def _stale_evidence(spec_ids: list[str]) -> list[str]:
    """Each of `spec_ids` whose committed evidence is not fresh for this working tree
    (`reports.staleness`, what `mutharness evidence-check` runs), with why."""
    from mutharness.repo.git import configure_git
    from mutharness.repo.source import open_source
    from mutharness.reports.staleness import check_document

    with kept_environ():  # configure_git names the git it found in the environment
        source = open_source(REPOSITORY, configure_git(os.environ.get("PATH", os.defpath)))
        verdicts = [check_document(REPOSITORY / "evidence" / f"{spec_id}.md", source)
                    for spec_id in spec_ids]
    return [
        f"{verdict.document}: {verdict.problem or ', '.join(item.path for item in verdict.stale)}"
        for verdict in verdicts if verdict.is_stale
    ]


def test_every_bundled_pytest_spec_gets_the_facts_forked_that_its_fresh_evidence_records(
    cli: Cli, tmp_path: Path
) -> None:
    """The committed evidence is a fresh-process run (`mutharness verify specs --evidence
    evidence --pytest-runner subprocess`); while it is fresh for this tree, a run of the
    same specs by the default (every mutant a child of the fork server) must repeat its every
    fact: the run's outcome, each baseline's per-test outcomes and pin, each mutation's
    verdict, expectation, failing tests, not-passed outcomes and counts."""
    specs = _bundled_pytest_specs()
    assert len(specs) >= 8, specs
    ids = [Path(spec).stem for spec in specs]
    stale = _stale_evidence(ids)
    assert not stale, (
        "the evidence this test compares the forked runner against is stale for this tree; "
        "re-render it (`mutharness verify specs --evidence evidence --pytest-runner "
        "subprocess`, or `tox -e mutation`) "
        "and commit it:\n  " + "\n  ".join(stale)
    )
    recorded = {spec_id: json.loads((REPOSITORY / "evidence" / f"{spec_id}.json").read_text(
        "utf-8")) for spec_id in ids}
    runners = {spec_id: facts["settings"]["values"]["pytest-runner"]
               for spec_id, facts in recorded.items()}
    assert set(runners.values()) == {"subprocess"}, runners  # the evidence ran fresh processes
    out = tmp_path / "forked.json"

    # another run of this repository may hold its lock: wait for it
    done = cli(REPOSITORY, "verify", *specs, "--allow-dirty",
               "--json", str(out), "--lock-timeout", "3600",
               env={**os.environ, "PYTHONIOENCODING": "utf-8"},
               timeout=7200)  # a hang guard: 104 mutants take minutes on a loaded machine

    assert done.code == 0, done.out + done.err
    assert "note:" not in done.err, done.err  # no fall-back to fresh processes
    forked = from_json(json.loads(out.read_text("utf-8")), str(out))
    assert forked.settings["values"]["pytest-runner"] == "forked"
    assert [spec.spec.id for spec in forked.specs] == ids
    differences = [line for spec_id in ids
                   for line in runner_differences(recorded[spec_id], facts_of(forked, spec_id))]
    tools = {key: (recorded[ids[0]]["tool"].get(key), value)
             for key, value in forked.tool.items() if recorded[ids[0]]["tool"].get(key) != value
             and not key.endswith("_executable") and key != "ci"}
    assert differences == [], "\n".join(
        [*differences, f"(tools: recorded -> now: {tools or 'the same'})"])


# ------------------------------------------- the comparison with the recorded fresh run


def _evidence_copy(tmp_path: Path, spec_id: str) -> Path:
    """A test's own copy of this repository's evidence facts for `spec_id`."""
    tmp_path.mkdir(exist_ok=True)
    copy = tmp_path / f"{spec_id}.json"
    copy.write_bytes((REPOSITORY / "evidence" / f"{spec_id}.json").read_bytes())
    return copy


def _first_failing_dropped(document: dict[str, Any]) -> None:
    facts = document["specs"][0]["mutations"][0]["facts"]
    facts["failing"] = facts["failing"][1:]


def _caught_as_survived(document: dict[str, Any]) -> None:
    mutation = document["specs"][0]["mutations"][2]
    mutation.update(verdict="SURVIVED", as_expected=False)


def _not_passed_as_error(document: dict[str, Any]) -> None:
    document["specs"][0]["mutations"][7]["facts"]["not_passed"][0]["outcome"] = "error"


def _one_more_passed(document: dict[str, Any]) -> None:
    document["specs"][0]["mutations"][4]["facts"]["passed"] += 1


def _a_baseline_test_failed(document: dict[str, Any]) -> None:
    document["specs"][0]["baseline"]["tests"][3]["outcome"] = "failed"


def _baseline_reordered(document: dict[str, Any]) -> None:
    document["specs"][0]["baseline"]["tests"].reverse()


def _last_mutation_gone(document: dict[str, Any]) -> None:
    document["specs"][0]["mutations"].pop()


def _ran_elsewhere_forked(document: dict[str, Any]) -> None:
    """Everything two honest runs of one tree differ in: the command, HEAD, a dirty tree,
    the runner setting, the tools' versions, the commit measured."""
    document.update(command=["mutharness", "verify", "specs/wire-encoding.json", "--allow-dirty",
                             "--pytest-runner", "forked"], commit="f" * 40, dirty=True,
                    dirty_changes=[" M README.md"])
    document["settings"]["values"]["pytest-runner"] = "forked"
    document["settings"]["sources"]["pytest-runner"] = "command line"
    document["tool"]["pytest"] = "9.9.9"
    spec = document["specs"][0]
    spec["source_commit"] = "f" * 40
    spec["tools"][0]["value"] = "3.99.0 (CPython)"


# each edit of a forked copy, and the differences it must make (one line each, in order)
@pytest.mark.parametrize(("edit", "expected"), [
    (_first_failing_dropped, [r"^wire-encoding mutation 0 \('the flag .*'\)\.facts\.failing: "
                              r"recorded \[.*test_the_switched_frame_has_these_exact_bytes"]),
    (_caught_as_survived, [r"^wire-encoding mutation 2 \(.*\)\.as_expected: recorded True, "
                           r"forked False$",
                           r"^wire-encoding mutation 2 \(.*\)\.verdict: recorded 'CAUGHT', "
                           r"forked 'SURVIVED'$"]),
    (_not_passed_as_error, [r"^wire-encoding mutation 7 \(.*\)\.facts\.not_passed\[tests/"
                            r".*\]\.outcome: recorded 'failed', forked 'error'$"]),
    (_one_more_passed, [r"^wire-encoding mutation 4 \(.*\)\.facts\.passed: recorded \d+, "
                        r"forked \d+$"]),
    (_a_baseline_test_failed, [r"^wire-encoding\.baseline\.tests\[tests/toolwire/test_wire\.py"
                               r"::.*\]\.outcome: recorded 'passed', forked 'failed'$"]),
    (_baseline_reordered, [r"^wire-encoding\.baseline\.tests: the same tests in another order$"]),
    (_last_mutation_gone, [r"^wire-encoding mutation 8 \('SURVIVOR .*'\): recorded only$"]),
    (_ran_elsewhere_forked, []),
], ids=["failing-set", "verdict", "not-passed-outcome", "passed-count", "baseline-outcome",
        "baseline-order", "mutation-missing", "context-only"])
def test_the_runner_comparison_names_each_fact_a_forked_run_does_not_repeat(
    tmp_path: Path, edit: Callable[[dict[str, Any]], None], expected: list[str]
) -> None:
    recorded = json.loads(_evidence_copy(tmp_path, "wire-encoding").read_text("utf-8"))
    forked = edit_json(_evidence_copy(tmp_path / "edited", "wire-encoding"), edit)

    differences = runner_differences(recorded, json.loads(forked.read_text("utf-8")))

    assert len(differences) == len(expected), differences
    for line, pattern in zip(differences, expected, strict=True):
        assert re.search(pattern, line), line
