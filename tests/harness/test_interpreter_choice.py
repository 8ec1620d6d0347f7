"""Which interpreter runs the tests when nothing names one: mutharness installed as a tool
(pipx, `uv tool`) beside a project that keeps its own virtual environment.

The command line here runs with the suite's interpreter, as a tool install's own; each
project's venv is real (`make_venv`: pytest linked in) and holds a module only it has, which
the project's tests import, so a run with any other interpreter cannot pass its baseline.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import Completed, Project, create_venv, default_spec, git, install, pip

REPOSITORY = Path(__file__).resolve().parents[2]

Cli = Callable[..., Completed]

ONLY_HERE = '''\
from only_in_the_project_venv import VALUE

from calc import clamp


def test_the_project_venv_runs_these_tests():
    assert clamp(VALUE, 0, 10) == VALUE
'''


def _project(make_project: Callable[..., Project]) -> Project:
    spec = default_spec(tests=["tests/test_calc.py", "tests/test_venv.py"], expectBaselinePass=5)
    project = make_project(spec=spec)
    project.write("tests/test_venv.py", ONLY_HERE)
    project.write(".gitignore", ".venv/\n")
    project.commit("a test that needs the project's own venv")
    return project


def _own(venv: Any) -> None:
    (venv.site_packages / "only_in_the_project_venv.py").write_text("VALUE = 3\n", "utf-8")


def _with_dotvenv(make_project: Callable[..., Project], make_venv: Callable[..., Any],
                  owned: bool = True) -> tuple[Project, Path]:
    """The project with a real venv as its `.venv` (holding the project's module when
    `owned`), and that venv's python."""
    project = _project(make_project)
    venv = make_venv("dotvenv")
    if owned:
        _own(venv)
    venv.root.rename(project.root / ".venv")
    return project, project.root / ".venv" / venv.python.relative_to(venv.root)


def _environment(**extra: str) -> dict[str, str]:
    """This environment without an active virtual environment and without what a tox running
    this suite sets: a tox started here would read its TOX_WORK_DIR as its own (`--workdir`)
    and rebuild that tox's environment, the one running the suite, in place."""
    env = {key: value for key, value in os.environ.items()
           if key != "VIRTUAL_ENV" and not key.startswith("TOX_")}
    return {**env, **extra}


def test_a_venv_at_the_repository_root_runs_the_tests_and_the_run_says_so(
    make_project: Callable[..., Project], make_venv: Callable[..., Any], cli: Cli
) -> None:
    project, python = _with_dotvenv(make_project, make_venv)

    done = cli(project.root, "verify", "specs/calc.json", env=_environment())

    assert done.code == 0, done.out + done.err
    assert (f"mutharness: note: the tests run with {python} (the repository's .venv; "
            "--python chooses another)") in done.err
    results = json.loads((project.root / ".mutharness/results.json").read_text("utf-8"))
    assert results["settings"]["sources"]["python"] == ".venv"
    assert "--python" not in " ".join(results["settings"]["rederive_flags"])


def test_an_active_virtual_environment_runs_the_tests(
    make_project: Callable[..., Project], make_venv: Callable[..., Any], cli: Cli
) -> None:
    project = _project(make_project)
    venv = make_venv("active")  # somewhere else, activated: VIRTUAL_ENV names it
    _own(venv)

    done = cli(project.root, "verify", "specs/calc.json",
               env=_environment(VIRTUAL_ENV=str(venv.root)))

    assert done.code == 0, done.out + done.err
    assert f"the tests run with {venv.python} (the active virtual environment" in done.err


def test_python_named_on_the_command_line_wins_over_a_repository_venv(
    make_project: Callable[..., Project], make_venv: Callable[..., Any], cli: Cli
) -> None:
    # the .venv lacks the project's module: a baseline run with it would fail
    project, _ = _with_dotvenv(make_project, make_venv, owned=False)
    chosen = make_venv("chosen")
    _own(chosen)

    done = cli(project.root, "verify", "specs/calc.json", "--python", str(chosen.python),
               env=_environment())

    assert done.code == 0, done.out + done.err
    assert "the tests run with" not in done.err


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory, wheelhouse: Path) -> Path:
    """This repository built into a wheel, as a user installs it (its build backend from the
    wheelhouse)."""
    dist = tmp_path_factory.mktemp("dist")
    pip("wheel", "--quiet", "--no-deps", "--no-index", "--find-links", wheelhouse,
        "--wheel-dir", dist, REPOSITORY)
    [built] = dist.glob("mutharness-*.whl")
    return built


def _script(venv: Any, name: str) -> Path:
    """A console script installed beside the venv's python."""
    return venv.python.parent / (f"{name}.exe" if sys.platform == "win32" else name)


@pytest.fixture(scope="session", params=["uv", "pipx"])
def tool_install(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                 wheelhouse: Path, wheel: Path) -> Path:
    """The `mutharness` command of a real `uv tool install` or `pipx install` of the wheel
    (the tool and every dependency from the wheelhouse, offline): its own environment, with
    no pytest in it."""
    tool = request.param
    base = tmp_path_factory.mktemp(f"{tool}-tool")
    tool_venv = create_venv(base / tool)
    install(tool_venv, wheelhouse, tool)
    env = {**os.environ, "UV_TOOL_DIR": str(base / "tools"), "UV_TOOL_BIN_DIR": str(base / "bin"),
           "UV_CACHE_DIR": str(base / "cache"), "UV_PYTHON": sys.executable,
           "PIPX_HOME": str(base / "tools"), "PIPX_BIN_DIR": str(base / "bin"),
           "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse)}
    argv = ([str(_script(tool_venv, "uv")), "tool", "install", "--offline", "--find-links",
             str(wheelhouse), str(wheel)] if tool == "uv" else
            [str(_script(tool_venv, "pipx")), "install", "--python", sys.executable, str(wheel)])
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return base / "bin" / ("mutharness.exe" if sys.platform == "win32" else "mutharness")


def test_a_tool_install_runs_a_project_s_tests_with_its_own_venv(
    make_project: Callable[..., Project], make_venv: Callable[..., Any], tool_install: Path
) -> None:
    project, _ = _with_dotvenv(make_project, make_venv)

    done = subprocess.run([str(tool_install), "verify", "specs/calc.json"], cwd=project.root,
                          env=_environment(), capture_output=True, text=True)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "(the repository's .venv; --python chooses another)" in done.stderr
    assert "all 2 mutation(s) behaved as expected" in done.stdout


UV_PROJECT = '''\
[project]
name = "calc"
version = "0.1.0"
requires-python = ">=3.11"
dependencies = []

[dependency-groups]
dev = ["pytest>=9"]

[tool.uv]
package = false
environments = ["sys_platform == '{platform}'"]  # the wheelhouse holds this platform's wheels

[tool.pytest.ini_options]
pythonpath = ["src"]
'''


def _installed(venv: Path) -> list[str]:
    """The distributions a venv holds, by their metadata directories."""
    return sorted(path.name for path in venv.rglob("*.dist-info"))


def _tool(tmp_path_factory: pytest.TempPathFactory, wheelhouse: Path, name: str) -> Path:
    """The command of a real tool installed from the wheelhouse into a venv of its own."""
    venv = create_venv(tmp_path_factory.mktemp(name) / "venv")
    install(venv, wheelhouse, name)
    return _script(venv, name)


@pytest.fixture(scope="session")
def uv(tmp_path_factory: pytest.TempPathFactory, wheelhouse: Path) -> Path:
    """The real uv, from the wheelhouse."""
    return _tool(tmp_path_factory, wheelhouse, "uv")


def test_uv_run_with_mutharness_verifies_a_uv_project_and_its_environment_gains_nothing(
    make_project: Callable[..., Project], uv: Path, wheelhouse: Path, wheel: Path,
    tmp_path: Path
) -> None:
    """A uv project as uv makes it (`uv lock`, `uv sync`: pytest in its locked dev group), and
    mutharness brought in for one command by `uv run --with`: the tests run in the project's
    environment, which holds the same distributions after as before, and uv.lock is as it was."""
    project = make_project()
    project.write("pyproject.toml", UV_PROJECT.replace("{platform}", sys.platform))
    project.write(".gitignore", ".venv/\n")
    offline = ["--offline", "--no-index", "--find-links", str(wheelhouse)]
    env = {**_environment(), "UV_CACHE_DIR": str(tmp_path / "uv-cache"),
           "UV_PYTHON": sys.executable, "UV_NO_CONFIG": "1"}
    for command in (["lock"], ["sync"]):
        done = subprocess.run([str(uv), *command, *offline], cwd=project.root, env=env,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
    project.commit("a uv project, locked")
    before = _installed(project.root / ".venv")
    assert any(name.startswith("pytest-") for name in before)

    done = subprocess.run([str(uv), "run", *offline, "--with", str(wheel), "mutharness",
                           "verify", "specs/calc.json"], cwd=project.root, env=env,
                          capture_output=True, text=True)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "all 2 mutation(s) behaved as expected" in done.stdout
    assert "(the environment `uv run --with` extends; --python chooses another)" in done.stderr
    assert "run in a fresh process each" not in done.stderr  # the warm route: a plain venv
    assert _installed(project.root / ".venv") == before
    assert git(project.root, "status", "--porcelain") == ""


TOX_INI = """\
[tox]
env_list = py

[testenv]
skip_install = true
deps = pytest
commands = pytest {posargs}
"""


@pytest.fixture(scope="session")
def tox(tmp_path_factory: pytest.TempPathFactory, wheelhouse: Path) -> Path:
    """The real tox, from the wheelhouse."""
    return _tool(tmp_path_factory, wheelhouse, "tox")


def test_a_tox_environment_runs_the_tests_named_by_python_and_gains_nothing(
    make_project: Callable[..., Project], tox: Path, wheelhouse: Path, cli: Cli
) -> None:
    """A tox project as tox makes it (its environment in `.tox/py`, inside the repository,
    git-ignored): `--python` names that environment's interpreter; the tests run there, and
    it holds the same distributions after as before."""
    project = make_project()
    project.write("tox.ini", TOX_INI)
    project.write(".gitignore", ".tox/\n")
    project.commit("a tox project")
    env = {**_environment(), "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse)}
    done = subprocess.run([str(tox), "-e", "py"], cwd=project.root, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    python = project.root / ".tox" / "py" / ("Scripts/python.exe" if sys.platform == "win32"
                                             else "bin/python")
    before = _installed(project.root / ".tox" / "py")
    assert any(name.startswith("pytest-") for name in before)
    # tox's own run left bytecode beside the sources (this project ignores no __pycache__):
    # untracked bytecode is no change of the tree mutharness measures
    status = git(project.root, "status", "--porcelain")
    assert "__pycache__/" in status

    verified = cli(project.root, "verify", "specs/calc.json", "--python", str(python),
                   env=_environment())

    assert verified.code == 0, verified.out + verified.err
    assert "all 2 mutation(s) behaved as expected" in verified.out
    assert _installed(project.root / ".tox" / "py") == before
    assert git(project.root, "status", "--porcelain") == status
