"""The warm route (`--pytest-runner warm`): the verdicts of a fresh process per mutant, with the
tests collected once and each body mutant's code swapped into a forked child."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import Completed, Project, Venv, git

from mutharness.model.results import from_json, to_json
from mutharness.runners.pytest import _warm as _warm_module

ProjectFactory = Callable[..., Project]
Cli = Callable[..., Completed]
WARM = ("--pytest-runner", "warm")

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the warm route forks")

CORE = '''\
import functools

LIMIT = 10


def doubled(function):
    def wrapper(value):
        return 2 * function(value)
    return wrapper


@doubled
def scaled(value):
    return value + 1


class Shape:
    sides = 4

    def area(self, side):
        return side * side


def clamp(x):
    if x > LIMIT:
        return LIMIT
    return x


def _table():
    return {n: n * n for n in range(5)}


SQUARES = _table()


@functools.lru_cache(maxsize=None)
def cube(n):
    return n * n * n


CUBE_TWO = cube(2)


def counter():
    total = [0]

    def add(n):
        total[0] += n
        return total[0]
    return add


TALLY = counter()


def words(text):
    for word in text.split():
        yield word.upper()


def _ids():
    yield "first"


IDS = _ids()
'''

INIT = 'from .core import *  # noqa\nfrom .core import _table\n\nVERSION = "1"\n'

TESTS = '''\
import pkg
from pkg import core


def test_limit():
    assert core.LIMIT == 10


def test_scaled():
    assert core.scaled(1) == 4


def test_shape():
    assert core.Shape.sides == 4
    assert core.Shape().area(3) == 9


def test_clamp():
    assert core.clamp(50) == 10
    assert core.clamp(3) == 3


def test_squares():
    assert core.SQUARES[3] == 9


def test_cube():
    assert core.CUBE_TWO == 8
    assert core.cube(3) == 27


def test_tally():
    assert core.TALLY(2) == 2


def test_words():
    assert list(core.words("a b")) == ["A", "B"]
    assert next(core.IDS) == "first"


def test_version():
    assert pkg.VERSION == "1"


def test_fixture(seven):
    assert seven == 7
'''

CONFTEST = '''\
import pytest


@pytest.fixture
def seven():
    return 7
'''


def _mutation(name: str, file: str, anchor: str, replacement: str,
              caught: bool = True) -> dict[str, object]:
    found: dict[str, object] = {"name": name, "file": file, "anchor": anchor,
                                "replacement": replacement}
    if not caught:
        found["expectCaught"] = False
    return found


CORE_PY = "src/pkg/core.py"
# name -> the route the warm run takes: "warm"; or, with the words of why the collected tests
# cannot run it, "configured" (a child of the configured server collected them afresh, the
# mutated file first imported then) or "fresh" (a new process: the file was loaded before)
ROUTES = {
    "a function body": ("warm", ""),
    "a method body": ("warm", ""),
    "the body of a closure a decorator made at import": ("warm", ""),
    "the body of a closure made at import": ("warm", ""),
    "a generator": ("warm", ""),
    "a comprehension of a function called at import": (
        "configured", "ran while the tests were collected"),
    "the body of a cached function called at import": (
        "configured", "ran while the tests were collected"),
    "a module constant": ("configured", "module level"),
    "a class body": ("configured", "ran while the tests were collected"),
    "the package's __init__": ("configured", "module level"),
    "a conftest fixture": ("fresh", "rewrites"),  # pytest loads conftests as it configures
    "SURVIVOR (documented): the boundary itself": ("warm", ""),
    "an equivalent change the tests cannot see": ("warm", ""),
    "a generator made at import": ("configured", "something other than a function holds"),
}
SPEC = {
    "tests": ["tests/test_pkg.py"],
    "expectBaselinePass": 10,
    "mutations": [
        _mutation("a function body", CORE_PY, "        return LIMIT\n",
                  "        return LIMIT + 1\n"),
        _mutation("a method body", CORE_PY, "return side * side", "return side + side"),
        _mutation("the body of a closure a decorator made at import", CORE_PY,
                  "return 2 * function", "return 3 * function"),
        _mutation("the body of a closure made at import", CORE_PY, "total[0] += n",
                  "total[0] -= n"),
        _mutation("a generator", CORE_PY, "word.upper()", "word.lower()"),
        _mutation("a comprehension of a function called at import", CORE_PY,
                  "n: n * n for n", "n: n + n for n"),
        _mutation("the body of a cached function called at import", CORE_PY,
                  "return n * n * n", "return n * n + n"),
        _mutation("a module constant", CORE_PY, "LIMIT = 10", "LIMIT = 11"),
        _mutation("a class body", CORE_PY, "sides = 4", "sides = 5"),
        _mutation("the package's __init__", "src/pkg/__init__.py", 'VERSION = "1"',
                  'VERSION = "2"'),
        _mutation("a conftest fixture", "tests/conftest.py", "return 7", "return 8"),
        _mutation("SURVIVOR (documented): the boundary itself", CORE_PY, "if x > LIMIT:",
                  "if x >= LIMIT:", caught=False),
        _mutation("an equivalent change the tests cannot see", CORE_PY, "    return x\n",
                  "    return x + 0\n"),
        _mutation("a generator made at import", CORE_PY, 'yield "first"', 'yield "second"'),
    ],
}


@pytest.fixture
def project(make_project: ProjectFactory) -> Project:
    """A src-layout package with body and import-time mutations of every kind."""
    made = make_project()
    made.write("pyproject.toml", '[tool.pytest.ini_options]\npythonpath = ["src"]\n')
    made.write("tests/conftest.py", CONFTEST)
    for relative, text in {"src/pkg/__init__.py": INIT, CORE_PY: CORE,
                           "tests/test_pkg.py": TESTS}.items():
        made.write(relative, text)
    made.spec("routes", SPEC)
    made.commit("a src-layout project")
    return made


def _verify(cli: Cli, project: Project, name: str, *flags: str,
            env: dict[str, str] | None = None,
            full_counts: bool = True) -> tuple[Completed, dict[str, Any]]:
    """A verify of the routes spec, with full counts (every test's outcome a fact to compare)
    unless `full_counts` is false (the default's, stopped at each first failure)."""
    here = project.root.parent
    done = cli(project.root, "verify", "specs/routes.json", "--json",
               str(here / f"{name}.json"), *(["--no-first-failure"] if full_counts else []),
               *flags,
               env={**os.environ, "PYTHONIOENCODING": "utf-8", **(env or {})})
    return done, to_json(from_json(json.loads((here / f"{name}.json").read_text("utf-8"))),
                         timings=False)


def _compared(results: dict[str, Any]) -> dict[str, Any]:
    """The results without the settings, the notes and each run's route, and with the
    durations pytest prints in its summary line masked."""
    kept = {key: value for key, value in results.items() if key not in ("settings", "notes")}
    text = re.sub(r' in \d+\.\d+s', " in Ts", json.dumps(kept))
    return json.loads(re.sub(r', "route": "[^"]*"', "", text))


def _warm_as_fresh(cli: Cli, project: Project, *flags: str) -> dict[str, Any]:
    """Verify the project with fresh processes, then by the warm route, never refused: both
    pass, with the same facts; the warm results."""
    fresh, fresh_results = _verify(cli, project, "fresh", "--pytest-runner", "subprocess",
                                   *flags)
    warm, warm_results = _verify(cli, project, "warm", *WARM, *flags)
    assert warm.code == fresh.code == 0, fresh.out + fresh.err + warm.out + warm.err
    assert "note:" not in warm.err, warm.err
    assert _compared(warm_results) == _compared(fresh_results)
    return warm_results


def _routes(results: dict[str, Any]) -> dict[str, str]:
    return {m["name"]: m["facts"].get("route", "") for spec in results["specs"]
            for m in spec["mutations"]}


def _interpreter(request: pytest.FixtureRequest, which: str) -> tuple[str, ...]:
    """The `--python` flags for the tests' interpreter: this one (traced with sys.settrace
    below 3.12) or one with `sys.monitoring`."""
    if which == "this interpreter":
        return ()
    venv: Venv = request.getfixturevalue("monitoring_venv")
    return ("--python", str(venv.python))


@pytest.mark.skipif(sys.platform == "win32", reason="no fork")
@pytest.mark.parametrize("which", ["this interpreter", "one with sys.monitoring"])
def test_each_mutant_runs_warm_only_where_a_fresh_process_would_run_the_same_code(
    project: Project, cli: Cli, request: pytest.FixtureRequest, which: str
) -> None:
    python = _interpreter(request, which)
    fresh, fresh_results = _verify(cli, project, "fresh", "--pytest-runner", "subprocess",
                                   *python)
    warm, warm_results = _verify(cli, project, "warm", *WARM, *python)

    # the equivalent change survives, unexpectedly: both runs say so
    assert fresh.code == 1, fresh.out + fresh.err
    assert warm.code == 1, warm.out + warm.err
    assert "note:" not in warm.err, warm.err  # the route was never refused
    # the console says what a fresh run says: the route is in the results (`facts.route`)
    assert re.search(r"CAUGHT +#1 src/pkg/core\.py:\d+ +a function body +\(1 of 10 tests "
                     r"failed\)\n", warm.out), warm.out
    assert _compared(warm_results) == _compared(fresh_results)
    routes = _routes(warm_results)
    assert {name: route.split(":", 1)[0] for name, route in routes.items()} == {
        name: kind for name, (kind, _) in ROUTES.items()}
    for name, (_, words) in ROUTES.items():
        assert words in routes[name], (name, routes[name])
    # the survivors' verdicts are their warm runs': a whole run of the tests with every
    # function the mutation changed running its new code, nothing else holding the old
    logs = project.root / ".mutharness" / "runs" / "routes"
    assert (logs / "mutant-13.log").exists()
    assert not list(logs.glob("mutant-*-fresh.log"))
    # a warm child's summary counts its own run, not the server's collection before it
    timed = json.loads((project.root.parent / "warm.json").read_text("utf-8"))
    took = timed["specs"][0]["mutations"][0]["facts"]["duration_s"]
    said = re.findall(r" in (\d+\.\d+)s", (logs / "mutant-1.log").read_text("utf-8"))
    assert said and float(said[-1]) <= took, (said, took)
    assert git(project.root, "status", "--porcelain") == ""


@pytest.mark.skipif(sys.platform == "win32", reason="no fork")
def test_with_the_first_failure_default_each_route_stops_where_a_fresh_process_stops(
    project: Project, cli: Cli
) -> None:
    """The default stops each mutant's run at its first failing test: warm, collected afresh
    in a child of the configured server, or fresh, each run stops on the test a fresh
    process stops on, having run the same tests before it."""
    fresh, fresh_results = _verify(cli, project, "fresh", "--pytest-runner", "subprocess",
                                   full_counts=False)
    warm, warm_results = _verify(cli, project, "warm", *WARM, full_counts=False)

    assert fresh.code == warm.code == 1, fresh.out + fresh.err + warm.out + warm.err
    assert "note:" not in warm.err, warm.err
    assert _compared(warm_results) == _compared(fresh_results)
    mutations = warm_results["specs"][0]["mutations"]
    stopped = [m for m in mutations if m["verdict"] == "CAUGHT"]
    assert stopped and all(m["first_failure"] and m["facts"]["failed"] == 1 for m in stopped)
    assert any(m["facts"]["passed"] + m["facts"]["failed"] < 10 for m in stopped)
    kinds = {route.split(":", 1)[0] for route in _routes(warm_results).values()}
    assert {"warm", "configured"} <= kinds


LOOPING = {
    "tests": ["tests/test_pkg.py"],
    "expectBaselinePass": 10,
    "mutations": [
        _mutation("a body that never returns", CORE_PY, "    return x\n",
                  "    while True: pass\n"),  # no line moves: the generator made at import
        #                                     keeps its code (a move would route it fresh)
        _mutation("a function body", CORE_PY, "        return LIMIT\n",
                  "        return LIMIT + 1\n"),
    ],
}


def test_a_warm_child_that_times_out_is_killed_and_the_server_serves_the_next_mutant(
    project: Project, cli: Cli
) -> None:
    project.spec("routes", LOOPING)
    project.commit("a mutant that loops")

    # a limit of a few seconds (3 x the baseline + 3): the other mutant takes a fraction of one
    done, results = _verify(cli, project, "warm", *WARM, "--timeout-floor", "1",
                            "--timeout-constant", "3")

    assert done.code == 4, done.out + done.err  # a timeout is no verdict
    looping, next_one = results["specs"][0]["mutations"]
    # the warm run timed out: no verdict from it; its fresh confirmation timed out too
    assert looping["verdict"] == "TIMEOUT"
    assert looping["facts"]["route"] == (
        "fresh: its warm run gave no verdict: a fresh process gives it")
    logs = project.root / ".mutharness" / "runs" / "routes"
    assert (logs / "mutant-1.log").exists() and (logs / "mutant-1-fresh.log").exists()
    assert (next_one["verdict"], next_one["facts"].get("route")) == ("CAUGHT", "warm")
    assert git(project.root, "status", "--porcelain") == ""


REFUSALS = {
    "writes into the workspace": ("tests/conftest.py", CONFTEST + (
        "\nimport pathlib\n\npathlib.Path('made-at-collection.txt').write_text('x')\n"),
        "wrote into the workspace (made-at-collection.txt)"),
    "writes into its temp directory": ("tests/conftest.py", CONFTEST + (
        "\nimport os, tempfile\n\nos.close(tempfile.mkstemp()[0])\n"), "temp or home directory"),
    "starts a thread as pytest configures": ("tests/conftest.py", CONFTEST + (
        "\nimport threading, time\n\nthreading.Thread(target=time.sleep, args=(30,), "
        "daemon=True, name='poller').start()\n"), "configuring pytest: threads a forked "
        "child would not have (poller)"),
    "writes a file outside the run's directories as pytest configures": (
        "tests/conftest.py", CONFTEST + (
            "\nimport pathlib\n\npathlib.Path(__file__).resolve().parents[2].joinpath("
            "'sessions.log').open('a').write('run')\n"),
        "configuring pytest wrote "),
    "connects a socket while a test module is collected": ("tests/test_pkg.py", TESTS + (
        "\nimport contextlib, socket\n\nwith contextlib.suppress(OSError), socket.socket() as s:"
        "\n    s.settimeout(0.1)\n    s.connect(('127.0.0.1', 9))\n"),
        "collecting the tests connected to 127.0.0.1:9"),
    "reads the target's source through its loader": ("tests/test_pkg.py", TESTS + (
        "\nSOURCE = core.__loader__.get_source(core.__name__)\n"),
        "collecting the tests read src/pkg/core.py other than by importing it"),
    "reads the target through pkgutil": ("tests/test_pkg.py", TESTS + (
        "\nimport pkgutil\n\nDATA = pkgutil.get_data('pkg', 'core.py')\n"),
        "collecting the tests read src/pkg/core.py other than by importing it"),
    "forks a process": ("tests/test_pkg.py", TESTS + (
        "\nimport os\n\nif os.fork() == 0:\n    os._exit(0)\nos.wait()\n"),
        "collecting the tests forked a process"),
    "runs code in a thread it starts without threading": ("tests/test_pkg.py", TESTS + (
        "\nimport _thread, time\n\n_thread.start_new_thread(core.clamp, (3,))\n"
        "time.sleep(0.2)\n"), "collecting the tests started a thread outside threading"),
    "turns the tracer off while it computes": ("tests/test_pkg.py", TESTS + (
        "\nimport sys\n\n_tracer = sys.gettrace()\nsys.settrace(None)\nVALUE = core.clamp(3)"
        "\nsys.settrace(_tracer)\n"), "collecting the tests replaced the trace function"),
    "starts a program and leaves it running as a test module is collected": (
        "tests/test_pkg.py", TESTS + (
            "\nimport subprocess\n\nSERVER = subprocess.Popen(['sleep', '30'])\n"),
        "the collection left a process running (pid "),
    "starts a thread as a test module is collected": ("tests/test_pkg.py", TESTS + (
        "\nimport threading, time\n\nthreading.Thread(target=time.sleep, args=(30,), "
        "daemon=True, name='poller').start()\n"), "the collection started threads a forked "
        "child would not have (poller)"),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_a_collection_that_leaves_state_a_child_would_not_share_runs_every_mutant_fresh(
    project: Project, cli: Cli, case: str
) -> None:
    path, text, words = REFUSALS[case]
    project.write(path, text)
    project.spec("routes", {**SPEC, "mutations": SPEC["mutations"][:2]})  # type: ignore[index]
    project.commit(f"a collection that {case}")

    done, results = _verify(cli, project, "warm", *WARM)

    assert done.code == 0, done.out + done.err
    assert words in done.err, done.err
    assert "note: the mutants of tests/test_pkg.py run in a fresh process each" in done.err
    assert [m["facts"].get("route", "") for m in results["specs"][0]["mutations"]] == ["", ""]
    # (refused: the runner runs fresh processes, as without the option, and says so once)


SEEN_BY_MONITORING = {
    "runs code in a thread it starts without threading": REFUSALS[
        "runs code in a thread it starts without threading"],
    "turns the tracer off while it computes": REFUSALS["turns the tracer off while it computes"],
}


@pytest.mark.parametrize("case", sorted(SEEN_BY_MONITORING))
def test_where_sys_monitoring_traces_code_run_out_of_sys_settrace_s_sight_is_seen_and_routed(
    project: Project, cli: Cli, monitoring_venv: Venv, case: str
) -> None:
    """sys.monitoring sees every thread and is not a trace function anyone can swap: the
    clamp the collection ran (in a thread of its own, or with sys.settrace off) is known to
    have run, so its mutant is collected afresh while the other stays warm."""
    path, text, _ = SEEN_BY_MONITORING[case]
    project.write(path, text)
    project.spec("routes", {**SPEC, "mutations": SPEC["mutations"][:2]})  # type: ignore[index]
    project.commit(f"a collection that {case}")
    python = ("--python", str(monitoring_venv.python))

    warm_results = _warm_as_fresh(cli, project, *python)

    assert [m["facts"]["route"] for m in warm_results["specs"][0]["mutations"]] == [
        "configured: the change is in code that ran while the tests were collected (clamp)",
        "warm"]


def test_another_sys_monitoring_tool_at_collection_monitors_beside_the_tracer(
    project: Project, cli: Cli, monitoring_venv: Venv
) -> None:
    """A tool that monitors the interpreter from pytest's configuring on (coverage's sysmon
    core, the default on Python 3.14) does in a fresh process too, and goes on in every
    forked child as it would there: the route stays, and gives the fresh process's facts."""
    project.write("tests/conftest.py", CONFTEST + (
        "\nimport sys\n\nLINES = []\nsys.monitoring.use_tool_id(1, 'coverage-like')\n"
        "sys.monitoring.register_callback(1, sys.monitoring.events.LINE, "
        "lambda code, line: LINES.append(line))\n"
        "sys.monitoring.set_events(1, sys.monitoring.events.LINE)\n"))
    project.spec("routes", {**SPEC, "mutations": SPEC["mutations"][:2]})  # type: ignore[index]
    project.commit("a conftest that monitors the interpreter")
    python = ("--python", str(monitoring_venv.python))

    warm_results = _warm_as_fresh(cli, project, *python)

    assert [m["facts"]["route"] for m in warm_results["specs"][0]["mutations"]] == [
        "warm", "warm"]


def test_a_tracer_without_a_free_sys_monitoring_tool_id_says_so(
    monitoring_venv: Venv, tmp_path: Path
) -> None:
    script = tmp_path / "taken.py"
    script.write_text(
        "import sys\n\nsys.path.insert(0, sys.argv[1])\nimport _warm\n\n"
        "for tool in _warm.TOOL_IDS:\n    sys.monitoring.use_tool_id(tool, 'another')\n"
        "print(_warm.Tracer([__file__]).start())\n", encoding="utf-8")
    package = Path(_warm_module.__file__).parent

    done = subprocess.run([str(monitoring_venv.python), str(script), str(package)],
                          capture_output=True, text=True, check=True)

    assert done.stdout.strip() == ("sys.monitoring has no free tool id (other tools hold "
                                   "4, 3): collection cannot be traced"), done.stderr


def test_where_proc_cannot_list_children_waitid_sees_a_process_left_running(
    tmp_path: Path
) -> None:
    """Without Linux's /proc list of a process's children, `os.waitid` tells whether one is
    left (it neither waits for nor reaps it): none, one running, none once it is gone; with
    neither, the route cannot be proven and is refused."""
    script = tmp_path / "left.py"
    script.write_text(
        "import subprocess, sys\n\nsys.path.insert(0, sys.argv[1])\nimport _warm\n\n"
        "_warm._child_pids = lambda: None\nprint(_warm.children_problem('collecting'))\n"
        "child = subprocess.Popen(['sleep', '30'])\nprint(_warm.children_problem('collecting'))"
        "\nprint(child.poll())\nchild.kill()\nchild.wait()\n"
        "print(_warm.children_problem('collecting'))\ndel _warm.os.waitid\n"
        "print(_warm.children_problem('collecting'))\n",
        encoding="utf-8")
    package = Path(_warm_module.__file__).parent

    done = subprocess.run([sys.executable, str(script), str(package)],
                          capture_output=True, text=True, check=True)

    assert done.stdout.splitlines() == [
        "None", "collecting left a process running that every forked child would share; a "
        "fresh process starts its own", "None", "None",
        "collecting may have left a process running that every forked child would share; a "
        "fresh process starts its own (this platform cannot list a process's children)"
    ], done.stderr


STATEFUL = """\
_CACHE = {}
REGISTRY = []


def remember(key, value):
    _CACHE[key] = value * 2
    return _CACHE[key]


def recall(key):
    return _CACHE.get(key, 0)


def register(name, into=[]):
    into.append(name)
    REGISTRY.append(name)
    return len(into)


def lookup(name):
    return REGISTRY.count(name)
"""

STATEFUL_TESTS = """\
from pkg import state


def test_a_fills_the_cache():
    assert state.remember("k", 3) == 6


def test_b_reads_what_a_left():
    assert state.recall("k") == 6


def test_c_registers_once():
    assert state.register("x") == 1


def test_d_sees_the_registration():
    assert state.lookup("x") == 1


def test_e_alone():
    assert state.recall("missing") == 0
"""

STATEFUL_SPEC = {
    "tests": ["tests/test_state.py"],
    "expectBaselinePass": 5,
    "mutations": [
        _mutation("the cache holds the value, not its double: only an earlier test's entry "
                  "shows it to the reading test", "src/pkg/state.py", "_CACHE[key] = value * 2",
                  "_CACHE[key] = value * 3"),
        _mutation("the reader's default: seen by the test that reads a missing key",
                  "src/pkg/state.py", "return _CACHE.get(key, 0)", "return _CACHE.get(key, 1)"),
        _mutation("the registry is not shared: only the later test sees it",
                  "src/pkg/state.py", "    REGISTRY.append(name)\n", "    pass\n"),
        _mutation("the mutable default made at import counts twice", "src/pkg/state.py",
                  "return len(into)", "return len(into) + 1"),
        _mutation("the mutable default starts with an entry", "src/pkg/state.py",
                  "def register(name, into=[]):", "def register(name, into=['y']):"),
        _mutation("SURVIVOR (documented): a cache write nothing reads back twice",
                  "src/pkg/state.py", "    return _CACHE[key]\n",
                  "    return value * 2\n", caught=False),
    ],
}


@pytest.mark.parametrize("which", ["this interpreter", "one with sys.monitoring"])
def test_tests_that_share_state_in_order_give_the_warm_route_a_fresh_process_s_facts(
    project: Project, cli: Cli, request: pytest.FixtureRequest, which: str
) -> None:
    """Order-dependent tests: a value one test leaves in a module's cache or registry (or in
    a mutable default made at import) is what a later test reads. Each warm child starts
    from the collected state, before any test ran, as a fresh process does: the same
    tests fail, for every kind of shared state."""
    project.write("src/pkg/state.py", STATEFUL)
    project.write("tests/test_state.py", STATEFUL_TESTS)
    project.spec("routes", STATEFUL_SPEC)
    project.commit("tests that share state in order")
    python = _interpreter(request, which)

    warm_results = _warm_as_fresh(cli, project, *python)

    failing = [m["facts"]["failing"] for m in warm_results["specs"][0]["mutations"]]
    assert failing == [
        ["tests/test_state.py::test_a_fills_the_cache",
         "tests/test_state.py::test_b_reads_what_a_left"],
        ["tests/test_state.py::test_e_alone"],
        ["tests/test_state.py::test_d_sees_the_registration"],
        ["tests/test_state.py::test_c_registers_once"],
        ["tests/test_state.py::test_c_registers_once"],
        [],
    ]
    assert [route.split(":")[0] for route in _routes(warm_results).values()] == [
        "warm", "warm", "warm", "warm", "configured", "warm"]


def test_pytest_s_session_end_hooks_run_once_per_run_and_never_in_the_server(
    project: Project, cli: Cli, tmp_path: Path
) -> None:
    """A plugin that reports at the session's end (a junit file, coverage data, a counter)
    sees one session per run, as with fresh processes: the server that collected the tests
    for the warm children leaves without ending a session of its own."""
    project.write("tests/conftest.py", CONFTEST + (
        "\n\ndef pytest_sessionfinish(session):\n    import os\n\n"
        "    with open(os.environ['MH_SESSIONS'], 'a') as log:\n"
        "        log.write(f'{session.testscollected}\\n')\n"))
    project.spec("routes", {**SPEC, "mutations": SPEC["mutations"][:2]})  # type: ignore[index]
    project.commit("a conftest that counts sessions")
    sessions = tmp_path / "sessions.log"

    done, results = _verify(cli, project, "warm", *WARM, env={"MH_SESSIONS": str(sessions)})

    assert done.code == 0, done.out + done.err
    assert [m["facts"]["route"] for m in results["specs"][0]["mutations"]] == ["warm", "warm"]
    # the fresh baseline, the warm proof and the two mutants: four sessions of 10 tests
    assert sessions.read_text("utf-8").splitlines() == ["10"] * 4


ECHO_CONFTEST = CONFTEST + '''

import os
import signal
import subprocess


def pytest_configure(config):
    config.echo = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def pytest_unconfigure(config):
    os.kill(config.echo.pid, signal.SIGTERM)


@pytest.fixture
def echo(request):
    return request.config.echo
'''

ECHO_TESTS = '''\
def test_the_echo_server_answers(echo):
    echo.stdin.write(b"ping\\n")
    echo.stdin.flush()
    assert echo.stdout.readline() == b"ping\\n"
'''


def test_a_process_configuring_pytest_started_and_left_running_keeps_every_mutant_fresh(
    project: Project, cli: Cli
) -> None:
    """A server pytest_configure starts (a program, not Python) and pytest_unconfigure stops
    is each fresh process's own; forked children would all share the configured server's
    one, and the first child that ends pytest's session stops it under every later child: a
    kill the mutant did not make. The route is refused, and the verdicts are a fresh
    process's (the survivor survives)."""
    project.write("tests/conftest.py", ECHO_CONFTEST)
    project.write("tests/test_echo.py", ECHO_TESTS)
    project.spec("routes", {**SPEC, "tests": ["tests/test_pkg.py", "tests/test_echo.py"],
                            "expectBaselinePass": 11,
                            "mutations": [SPEC["mutations"][7], SPEC["mutations"][11],
                                          SPEC["mutations"][0]]})  # type: ignore[index]
    project.commit("an echo server started as pytest configures, stopped as it unconfigures")

    fresh, fresh_results = _verify(cli, project, "fresh", "--pytest-runner", "subprocess",
                                   full_counts=False)
    warm, warm_results = _verify(cli, project, "warm", *WARM, full_counts=False)

    assert fresh.code == 0, fresh.out + fresh.err
    assert warm.code == 0, warm.out + warm.err
    assert _compared(warm_results) == _compared(fresh_results)
    assert "configuring pytest left a process running" in warm.err, warm.err


KEPT_OPEN = {
    "a test module keeps a file open to read it in a test": (
        "tests/test_kept.py",
        "import os\n\nHANDLE = open(os.path.join(os.path.dirname(__file__), 'data.txt'))\n\n\n"
        "def test_the_data_is_read():\n    assert HANDLE.read() == 'payload\\n'\n",
        "the collection left a file open (", "tests/data.txt"),
    "a conftest keeps a temporary file for the tests": (
        "tests/conftest.py", CONFTEST + (
            "\nimport tempfile\n\nSCRATCH = tempfile.TemporaryFile()\n\n\n"
            "@pytest.fixture\ndef scratch():\n    return SCRATCH\n"),
        "configuring pytest left a file open (", ""),
    "a conftest maps memory the tests write": (
        "tests/conftest.py", CONFTEST + (
            "\nimport mmap\n\nSHARED = mmap.mmap(-1, 1)\n\n\n"
            "@pytest.fixture\ndef scratch():\n    class Once:\n"
            "        def write(self, data):\n            assert SHARED[0] == 0\n"
            "            SHARED[0] = 1\n\n        def seek(self, where):\n            pass\n\n"
            "        def read(self):\n            return b'x'\n    return Once()\n"),
        "configuring pytest mapped memory", ""),
}

KEPT_TEST = '''\
def test_what_is_written_is_read_back(scratch):
    scratch.write(b"x")
    scratch.seek(0)
    assert scratch.read() == b"x"
'''


@pytest.mark.parametrize("case", sorted(KEPT_OPEN))
def test_a_file_left_open_or_memory_mapped_while_configuring_or_collecting_keeps_every_mutant_fresh(
    project: Project, cli: Cli, case: str
) -> None:
    """A file the tests' modules open and keep (read later by a test), or memory they map, is
    each fresh process's own; forked children share the open file, read position included,
    and the mapped memory, so the first child that reads the file leaves the next at its
    end, and what one writes into the memory the next finds: a kill the mutant did not make.
    The route is refused, and the verdicts are a fresh process's (the survivor survives)."""
    path, text, words, named = KEPT_OPEN[case]
    project.write("tests/data.txt", "payload\n")
    project.write(path, text)
    tests = ["tests/test_pkg.py", path]
    if path == "tests/conftest.py":
        project.write("tests/test_kept.py", KEPT_TEST)
        tests = ["tests/test_pkg.py", "tests/test_kept.py"]
    project.spec("routes", {**SPEC, "tests": tests, "expectBaselinePass": 11,
                            "mutations": [SPEC["mutations"][0], SPEC["mutations"][11],
                                          SPEC["mutations"][1]]})  # type: ignore[index]
    project.commit(f"{case}")

    fresh, fresh_results = _verify(cli, project, "fresh", "--pytest-runner", "subprocess")
    warm, warm_results = _verify(cli, project, "warm", *WARM)

    assert fresh.code == 0, fresh.out + fresh.err
    assert warm.code == 0, warm.out + warm.err
    assert _compared(warm_results) == _compared(fresh_results)
    assert words in warm.err and named in warm.err, warm.err


PLACES = '''\
import os
import stat
import tempfile


def _tree(top):
    found = []
    for root, dirs, files in os.walk(top):
        for name in dirs + files:
            path = os.path.join(root, name)
            mode = os.lstat(path).st_mode
            found.append((os.path.relpath(path, top), stat.S_IFMT(mode), stat.S_IMODE(mode)))
    return sorted(found), stat.S_IMODE(os.lstat(top).st_mode)


def test_temp_and_home_are_as_a_fresh_process_finds_them():
    home, temp = os.environ["HOME"], tempfile.gettempdir()
    assert _tree(temp)[0] == []
    assert [path for path, _, _ in _tree(home)[0]] == [
        ".cache", ".config", ".local", ".local/share", ".local/state"]
    assert len({mode for _, _, mode in _tree(home)[0]} | {_tree(home)[1]}) == 1
    with open(os.path.join(temp, "left"), "w") as handle:
        handle.write("by an earlier run")
    os.makedirs(os.path.join(home, ".cache", "empty", "dirs"))
    os.chmod(os.path.join(home, ".config"), 0o500)
    os.rmdir(os.path.join(home, ".local", "state"))
    os.symlink(temp, os.path.join(home, ".local", "state"))
'''


def test_each_warm_child_finds_temp_and_home_as_the_first_found_them(
    project: Project, cli: Cli
) -> None:
    """Whatever a run leaves in its temp and home (a file, empty directories, a directory
    made read-only, one replaced by a link) is gone for the next warm child, which finds
    them as a fresh process does: the same tests pass."""
    project.write("tests/test_places.py", PLACES)
    project.spec("routes", {**SPEC, "tests": ["tests/test_pkg.py", "tests/test_places.py"],
                            "expectBaselinePass": 11,
                            "mutations": [SPEC["mutations"][0], SPEC["mutations"][1],
                                          SPEC["mutations"][-3]]})  # type: ignore[index]
    project.commit("a test that leaves things in its temp and home")

    warm_results = _warm_as_fresh(cli, project)

    assert [m["facts"]["route"] for m in warm_results["specs"][0]["mutations"]] == [
        "warm", "warm", "warm"]
    assert [m["verdict"] for m in warm_results["specs"][0]["mutations"]] == [
        "CAUGHT", "CAUGHT", "SURVIVED"]


EXITS = '''\
import atexit
import os
import threading
import time

RUN = os.path.basename(os.path.dirname(os.environ["MUTHARNESS_REPORT_OUT"]))


def _say(what):
    with open(os.environ["MH_EXITS"], "a") as log:
        log.write(f"{RUN} {what}\\n")


class _Finalized:
    def __init__(self):
        self.path, self.line = os.environ["MH_EXITS"], f"{RUN} finalized\\n"

    def __del__(self, open=open):  # the module's names may be gone by then
        with open(self.path, "a") as log:
            log.write(self.line)


KEPT = _Finalized()
atexit.register(_say, "atexit")


def test_a_thread_outlives_its_test():
    def late():
        time.sleep(0.5)
        _say("thread")

    threading.Thread(target=late).start()
'''


def test_a_child_of_the_configured_server_ends_as_a_process_ends_but_for_its_teardown(
    project: Project, cli: Cli, tmp_path: Path
) -> None:
    """A mutant collected afresh in a child of the configured server ends as a fresh process
    ends as far as its run can show: its threads joined, then its atexit handlers run, its
    output flushed; then it leaves (`os._exit`, as the warm children do) without tearing its
    modules down, tens of milliseconds a run a finalizer of its own could only fill: one
    that runs at the teardown alone does not run there."""
    project.write("tests/test_exit.py", EXITS)
    project.spec("routes", {**SPEC, "tests": ["tests/test_exit.py", "tests/test_pkg.py"],
                            "expectBaselinePass": 11,
                            "mutations": [SPEC["mutations"][7]]})  # type: ignore[index]
    project.commit("a test whose thread outlives it, an atexit handler and a finalizer")
    exits = tmp_path / "exits.log"

    done, results = _verify(cli, project, "warm", *WARM, env={"MH_EXITS": str(exits)},
                            full_counts=False)

    assert done.code == 0, done.out + done.err
    assert results["specs"][0]["mutations"][0]["facts"]["route"].startswith("configured")
    said = exits.read_text("utf-8").splitlines()
    assert [line for line in said if line.startswith("baseline")] == [
        "baseline-1 thread", "baseline-1 atexit", "baseline-1 finalized"]
    assert [line for line in said if line.startswith("mutant")] == [
        "mutant-1 thread", "mutant-1 atexit"]


def test_empty_directories_the_collection_made_are_made_again_for_every_warm_child(
    project: Project, cli: Cli
) -> None:
    """pytest-benchmark makes `.benchmarks` at configure: a fresh process finds it made before
    its tests run, and so does every warm child (settling removes it after each run)."""
    project.write("tests/conftest.py", CONFTEST.replace(
        "import pytest\n", "import os\n\nimport pytest\n\nos.makedirs('.made/at/configure', "
        "exist_ok=True)\n").replace("    return 7", "    assert os.path.isdir('.made/at/configure')"
                                    "\n    return 7"))
    project.spec("routes", {**SPEC, "mutations": SPEC["mutations"][:2]})  # type: ignore[index]
    project.commit("a conftest that makes a directory at import")

    done, results = _verify(cli, project, "warm", *WARM)

    assert done.code == 0, done.out + done.err
    assert "note:" not in done.err, done.err
    assert [m["facts"]["route"] for m in results["specs"][0]["mutations"]] == ["warm", "warm"]
    assert git(project.root, "status", "--porcelain") == ""


UNSEEN = {
    "a subprocess run at import": (
        "import subprocess, sys\n\nFRESH = subprocess.run([sys.executable, '-c', 'import pkg."
        "core; print(pkg.core.clamp(-5))'], capture_output=True, text=True,\n"
        "                       env={'PYTHONPATH': 'src'}).stdout.strip()\n\n\n"
        "def test_the_same_in_another_interpreter():\n    from pkg import core\n"
        "    assert str(core.clamp(-5)) == FRESH\n", "started a Python interpreter"),
    "a shell that runs Python at import": (
        "import os, subprocess, sys\n\nFRESH = subprocess.run(['/bin/sh', '-c', "
        "'PYTHONPATH=\"$PYTHONPATH:src\" \"$0\" -c \"import pkg.core; "
        "print(pkg.core.clamp(-5))\"', sys.executable],\n"
        "                       capture_output=True, text=True).stdout.strip()\n\n\n"
        "def test_the_same_in_another_interpreter():\n    from pkg import core\n"
        "    assert str(core.clamp(-5)) == FRESH\n",
        "ran the workspace's code in another process"),
    "the target's source read at import": (
        "import pathlib\n\nSOURCE = pathlib.Path('src/pkg/core.py').read_text()\n\n\n"
        "def test_the_source_is_what_runs():\n    import inspect\n    from pkg import core\n"
        "    assert inspect.getsource(core.clamp) in SOURCE\n", "read src/pkg/core.py"),
}


@pytest.mark.parametrize("case", sorted(UNSEEN))
def test_what_collecting_computed_outside_the_tracer_s_sight_keeps_every_mutant_fresh(
    project: Project, cli: Cli, case: str
) -> None:
    """A value computed while collecting from the target by another process, or from its
    bytes, is the mutant's in a fresh process and the original's in the server: the route
    is refused (a warm run would fail where a fresh process passes: a kill the mutant did
    not make). The mutant no test of test_pkg sees survives in both."""
    text, words = UNSEEN[case]
    project.write("tests/test_unseen.py", text)
    project.spec("routes", {**SPEC, "tests": ["tests/test_pkg.py", "tests/test_unseen.py"],
                            "expectBaselinePass": 11,
                            "mutations": [_mutation("negatives made positive: only the "
                                                    "unseen test reaches it", CORE_PY,
                                                    "    return x\n", "    return abs(x)\n"),
                                          SPEC["mutations"][1]]})  # type: ignore[index]
    project.commit(f"a test module with {case}")

    fresh, fresh_results = _verify(cli, project, "fresh", "--pytest-runner", "subprocess")
    warm, warm_results = _verify(cli, project, "warm", *WARM)

    assert fresh.code == 1, fresh.out + fresh.err  # the first survives, unexpectedly
    assert warm.code == 1, warm.out + warm.err
    assert _compared(warm_results) == _compared(fresh_results)
    assert words in warm.err, warm.err
    assert "note: the mutants of tests/test_pkg.py tests/test_unseen.py run in a fresh" in warm.err


def test_a_hostile_file_name_in_a_refusal_note_stays_one_inert_line(
    project: Project, cli: Cli
) -> None:
    """The open-file refusal names the file, and a test chooses its name: a line break and
    terminal escapes in it are shown as escapes, and the note stays one line (it cannot
    print a line of its own on the console or in a CI log)."""
    name = "data\x1b[31mRED\nall 2 mutation(s) behaved as expected.txt"
    project.write(f"tests/{name}", "payload\n")
    project.write("tests/test_kept.py", (
        "import os\n\nHANDLE = open(os.path.join(os.path.dirname(__file__), "
        f"{name!r}))\n\n\ndef test_the_data_is_read():\n    assert HANDLE.read() == "
        "'payload\\n'\n"))
    project.spec("routes", {**SPEC, "tests": ["tests/test_pkg.py", "tests/test_kept.py"],
                            "expectBaselinePass": 11,
                            "mutations": [SPEC["mutations"][0]]})  # type: ignore[index]
    project.commit("a kept file with a hostile name")

    done, _ = _verify(cli, project, "warm", *WARM)

    assert done.code == 0, done.out + done.err
    notes = [line for line in done.err.splitlines() if "left a file open" in line]
    assert len(notes) == 1, done.err
    assert "data\\x1b[31mRED\\nall 2 mutation(s) behaved as expected.txt)" in notes[0]
    assert not any(line.startswith("all 2 mutation(s)") for line in done.err.splitlines())
