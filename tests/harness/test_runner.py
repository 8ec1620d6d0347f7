"""The pytest runner: which interpreter, what environment, what order, and bytecode never stale."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    TEST_CALC,
    Completed,
    Project,
    Recorder,
    Venv,
    default_spec,
    install,
    run_cli,
)
from inproc import in_process

from mutharness.runners.base import ReportState, RunRequest
from mutharness.runners.pytest.runner import PytestRunner

pytestmark = pytest.mark.skipif(
    sys.platform == "win32", reason="builds POSIX venv layouts (bin/python) and shell stand-ins"
)


ProjectFactory = Callable[..., Project]
VenvFactory = Callable[..., Venv]
Cli = Callable[..., Completed]
Verify = Callable[..., tuple[Any, Recorder]]

CHILD_SEES = '''\
import os
import stat

STATE = []


def test_no_variable_that_steers_pytest_or_git_reaches_the_tests():
    leaked = {
        key: value for key, value in os.environ.items()
        if key.startswith("GIT_") or key in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS")
    }
    assert leaked == {"GIT_OPTIONAL_LOCKS": "0"}  # mutharness's own: git never rewrites the index


def test_no_descriptor_of_the_child_is_a_pipe():
    pipes = []
    for fd in range(256):
        try:
            mode = os.fstat(fd).st_mode
        except OSError:
            continue
        if stat.S_ISFIFO(mode):
            pipes.append(fd)
    assert pipes == []


def test_first_in_file_order():
    STATE.append("first")


def test_second_in_file_order():
    assert STATE == ["first"]
'''

FAKE_RANDOMLY = '''\
"""Stands in for pytest-randomly: registered under the same plugin name, it reverses the order."""


def pytest_collection_modifyitems(items):
    items.reverse()
'''


def fake_randomly(directory: Path) -> Path:
    """A directory holding an installed-looking plugin whose pytest11 entry point is `randomly`."""
    directory.mkdir()
    (directory / "fake_randomly.py").write_text(FAKE_RANDOMLY, encoding="utf-8")
    info = directory / "fake_randomly-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: fake-randomly\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text("[pytest11]\nrandomly = fake_randomly\n", "utf-8")
    return directory


def test_the_child_runs_in_file_order_with_no_injected_variables_and_its_output_in_a_file(
    tmp_path: Path,
) -> None:
    suite = tmp_path / "suite"
    (suite / "tests").mkdir(parents=True)
    (suite / "tests/test_child.py").write_text(CHILD_SEES, encoding="utf-8")
    plugins = fake_randomly(tmp_path / "plugins")
    environ = {
        **os.environ,
        "PYTHONPATH": str(plugins),
        "PYTEST_ADDOPTS": "-x --co",
        "PYTEST_PLUGINS": "no_such_plugin_anywhere",
        "GIT_DIR": str(tmp_path / "elsewhere/.git"),
        "GIT_WORK_TREE": str(tmp_path / "elsewhere"),
        "GIT_INDEX_FILE": str(tmp_path / "index"),
    }
    runner = PytestRunner(python=sys.executable, environ=environ, pycache=tmp_path / "pycache")
    scratch = tmp_path / "scratch"
    scratch.mkdir()

    facts = runner.run(RunRequest(("tests/test_child.py",), suite, scratch, timeout_s=120))

    assert facts.report is ReportState.OK, Path(facts.log_path).read_text("utf-8")
    assert [(o.nodeid.split("::")[1], o.outcome) for o in facts.outcomes] == [
        ("test_no_variable_that_steers_pytest_or_git_reaches_the_tests", "passed"),
        ("test_no_descriptor_of_the_child_is_a_pipe", "passed"),
        ("test_first_in_file_order", "passed"),
        ("test_second_in_file_order", "passed"),
    ]
    argv = runner.argv(["tests/test_child.py"], suite, scratch / "report.json")
    assert argv[argv.index("no:randomly") - 1:][:2] == ["-p", "no:randomly"]
    log = Path(facts.log_path)
    assert log.parent == scratch
    assert "4 passed" in log.read_text("utf-8")


def test_the_stand_in_for_pytest_randomly_does_reverse_the_order_when_not_disabled(
    tmp_path: Path,
) -> None:
    """The control for the test above: without `-p no:randomly` the fixture plugin bites."""
    suite = tmp_path / "suite"
    (suite / "tests").mkdir(parents=True)
    (suite / "tests/test_child.py").write_text(CHILD_SEES, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(fake_randomly(tmp_path / "plugins"))}
    env.pop("PYTEST_ADDOPTS", None)

    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "in_file_order",
         "-rf", "tests/test_child.py"],
        cwd=suite, env=env, capture_output=True, text=True, timeout=120,
    )

    assert done.returncode == 1, done.stdout
    assert "FAILED tests/test_child.py::test_second_in_file_order" in done.stdout
    assert "1 failed, 1 passed" in done.stdout


def test_python_option_selects_the_interpreter_that_runs_the_tests(
    make_project: ProjectFactory, make_venv: VenvFactory, cli: Cli, tmp_path: Path
) -> None:
    venv = make_venv("chosen")
    project = make_project(spec=default_spec(
        tests=["tests/test_calc.py", "tests/test_interpreter.py"], expectBaselinePass=5,
        mutations=default_spec()["mutations"][:1],
    ))
    project.write("tests/test_interpreter.py", (
        "import os, sys\n\n\n"
        "def test_runs_in_the_chosen_venv():\n"
        f"    assert os.path.realpath(sys.prefix) == {str(venv.root.resolve())!r}\n"
    ))
    project.commit("interpreter test")
    results = tmp_path / "results.json"

    default = cli(project.root, "verify", "specs/calc.json", "--json", str(results))
    chosen = cli(project.root, "verify", "specs/calc.json", "--python", str(venv.python),
                 "--json", str(results))

    assert default.code == 3, default.out + default.err
    assert "failing: tests/test_interpreter.py::test_runs_in_the_chosen_venv" in default.err
    assert chosen.code == 0, chosen.out + chosen.err
    assert "baseline 5 pass / 0 fail" in chosen.out
    tool = json.loads(results.read_text("utf-8"))["tool"]
    assert tool["python_executable"] == str(venv.python)


def test_an_interpreter_without_pytest_is_refused_with_the_install_command(
    make_project: ProjectFactory, make_venv: VenvFactory
) -> None:
    venv = make_venv("bare", with_pytest=False)
    project = make_project()

    done = in_process(project.root, "verify", "specs/calc.json", "--python", str(venv.python))

    assert done.code == 5, done.out + done.err
    assert f"pytest not installed in {venv.python}" in done.err
    assert f'{venv.python} -m pip install "pytest>=7.4"' in done.err
    assert "baseline" not in done.out


def test_an_interpreter_with_pytest_alone_runs_the_tests_and_gives_every_verdict(
    make_project: ProjectFactory, make_venv: VenvFactory, wheelhouse: Path
) -> None:
    # pytest installed into the venv itself, as a project does (no pytest-json-report, no
    # pytest-metadata); never linked from this suite's site-packages through a directory in
    # the shared temp dir, which mutharness refuses when that site-packages is in /tmp too
    venv = make_venv("pytest-alone", with_pytest=False)
    install(venv, wheelhouse, f"pytest=={pytest.__version__}")
    missing = subprocess.run([str(venv.python), "-c", "import pytest_jsonreport"],
                             capture_output=True, text=True)
    assert "No module named 'pytest_jsonreport'" in missing.stderr
    project = make_project()

    done = in_process(project.root, "verify", "specs/calc.json", "--python", str(venv.python),
                      "--no-progress")

    assert done.code == 0, done.out + done.err
    assert "CAUGHT   #1" in done.out and "SURVIVED #2" in done.out


def test_the_command_line_keeps_pytest_and_git_variables_away_from_the_tests(
    make_project: ProjectFactory
) -> None:
    project = make_project(spec=default_spec(
        tests=["tests/test_calc.py", "tests/test_child.py"], expectBaselinePass=8,
        mutations=default_spec()["mutations"][:1],
    ))
    project.write("tests/test_child.py", CHILD_SEES)
    project.commit("child probe")
    env = {
        **os.environ,
        "PYTEST_ADDOPTS": "-x --co",
        "PYTEST_PLUGINS": "no_such_plugin_anywhere",
        "GIT_DIR": str(project.root / ".git"),
        "GIT_WORK_TREE": str(project.root),
    }

    done = in_process(project.root, "verify", "specs/calc.json", env=env)

    assert done.code == 0, done.out + done.err
    assert "baseline 8 pass / 0 fail" in done.out


ORDERED_CALC = '''\
ADULT = 18


def clamp(value, low, high):
    if value < low:
        return low
    if value > high:
        return high
    return value


def is_adult(age):
    return age >= ADULT
'''

ORDERED_TESTS = TEST_CALC + '''

def test_minor_at_seventeen():
    assert not is_adult(17)
'''

# Python trusts a .pyc whose recorded source mtime (whole seconds) and size match the source. A
# same-length edit made within the second of the previous one is the trap; this conftest makes
# the trap certain by pinning the target's mtime before anything imports it.
PIN_MTIME = '''\
import os
from pathlib import Path

_TARGET = Path(__file__).parent / "src" / "calc.py"
os.utime(_TARGET, (1_600_000_000, 1_600_000_000))
'''


def _same_length(name: str, anchor: str, replacement: str, killed_by: str) -> dict[str, Any]:
    assert len(anchor) == len(replacement)
    return {"name": name, "file": "src/calc.py", "anchor": anchor, "replacement": replacement,
            "killedBy": [f"tests/test_calc.py::{killed_by}"]}


def test_same_length_mutations_back_to_back_each_run_their_own_code(
    make_project: ProjectFactory, verify_here: Verify
) -> None:
    project = make_project(spec=default_spec(expectBaselinePass=5, mutations=[
        _same_length("< becomes >", "if value < low:", "if value > low:", "test_clamp_below"),
        _same_length("> becomes <", "if value > high:", "if value < high:", "test_clamp_inside"),
        _same_length("import-time constant 18 becomes 81", "ADULT = 18", "ADULT = 81",
                     "test_adult_at_eighteen"),
        _same_length(">= becomes <=", "age >= ADULT", "age <= ADULT", "test_minor_at_seventeen"),
    ]))
    project.write("src/calc.py", ORDERED_CALC)
    project.write("tests/test_calc.py", ORDERED_TESTS)
    project.write("conftest.py", PIN_MTIME)
    project.commit("same-length targets")
    environ = {key: value for key, value in os.environ.items()
               if key != "PYTHONDONTWRITEBYTECODE"}  # bytecode is written, as on most machines

    run, recorder = verify_here(project, environ=environ)

    assert recorder.errors == []
    summary = [(r.mutation.name, r.verdict.value, r.as_expected) for r in recorder.results]
    assert summary == [
        ("< becomes >", "CAUGHT", True),
        ("> becomes <", "CAUGHT", True),
        ("import-time constant 18 becomes 81", "CAUGHT", True),
        (">= becomes <=", "CAUGHT", True),
    ]
    assert recorder.results[2].facts.failing_ids == ("tests/test_calc.py::test_adult_at_eighteen",)
    assert int(run.exit_code()) == 0


def clamp_returns_nothing(make_project: ProjectFactory, addopts: str) -> Project:
    """The calc project with one mutation every clamp test catches, and the project's own
    pytest `addopts`."""
    project = make_project(spec=default_spec(mutations=[
        {"name": "clamp returns nothing", "file": "src/calc.py",
         "anchor": "def clamp(value, low, high):\n",
         "replacement": "def clamp(value, low, high):\n    return None\n"},
    ]))
    project.write("pyproject.toml", '[tool.pytest.ini_options]\npythonpath = ["src"]\n'
                  f'addopts = "{addopts}"\n')
    return project


def test_the_projects_own_exitfirst_option_does_not_cut_mutation_runs_short(
    make_project: ProjectFactory, verify_here: Verify
) -> None:
    project = clamp_returns_nothing(make_project, "-x")
    project.commit("stop at the first failure")

    run, recorder = verify_here(project, first_failure=False)  # full counts asked for

    assert recorder.errors == []
    [result] = recorder.results
    assert (result.verdict.value, result.facts.failed, result.facts.passed) == ("CAUGHT", 3, 1)
    assert int(run.exit_code()) == 0


STYLE_RECORDING = '''\
import os


def pytest_configure(config):
    with open(os.environ["RUNS_LOG"], "a", encoding="utf-8") as log:
        log.write(config.option.tbstyle + "\\n")
'''


@pytest.mark.parametrize("runner", ["forked", "subprocess"])
def test_a_mutant_s_failures_are_reported_one_line_each_and_every_other_run_as_configured(
    make_project: ProjectFactory, runner: str
) -> None:
    # formatting tracebacks was 7.4 s of a 7.9 s mutant run that failed 124 tests (six 1.16.0)
    project = clamp_returns_nothing(make_project, "--tb=long")
    project.write("tests/conftest.py", STYLE_RECORDING)
    project.commit("long tracebacks; every run's style logged")
    log = project.root.parent / "styles.log"

    done = run_cli(project.root, "verify", "specs", "--pytest-runner", runner,
                   env={**os.environ, "RUNS_LOG": str(log)})

    assert done.code == 0, done.out + done.err
    *others, mutant = log.read_text("utf-8").split()
    assert mutant == "line"  # only the outcomes decide a verdict
    assert others and set(others) == {"long"}  # the baseline (and the forked proof)
