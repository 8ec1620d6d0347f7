"""The first try: a pip, a uv and a tox project, each set up as its users set it up from
their tool's own docs, verified by the first mutharness command they would type, with no
flag and no edit of the project.

Every tool is real and offline (the wheelhouse, `_offline`): pip in a `python -m venv .venv`
that nothing ignores, uv's `init`/`add --dev`/`sync`, tox's `tox -e py`; mutharness is the
built wheel, installed as a tool (pipx for pip's and tox's users, as the Python Packaging User
Guide and tox's docs install applications; `uv tool` for uv's), brought in by `uv run --with`,
or listed in a tox environment's deps.
Each project is the calc package in a src layout, with one mutation its tests catch and one
documented survivor.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import test_interpreter_choice as choice
from conftest import CALC, TEST_CALC, Project, default_spec, git
from test_interpreter_choice import Made, _installed, _offline, _python, _run

# test_interpreter_choice's session fixtures (the wheel, the tool installs, uv, tox), found
# here as this module's attributes: a process that runs both modules makes each once for each
wheel, tool_install, uv, tox = choice.wheel, choice.tool_install, choice.uv, choice.tox

PACKAGE = "src/calc/__init__.py"  # the code under test, as a src-layout package

BACKENDS = {  # pyproject.toml as each backend's docs write it
    "hatchling": '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n',
    "setuptools": ('[build-system]\nrequires = ["setuptools"]\n'
                   'build-backend = "setuptools.build_meta"\n'),
}
PROJECT = '''
[project]
name = "calc"
version = "0.1.0"
requires-python = ">=3.11"
'''

TOX_INI = """\
[tox]
env_list = py

[testenv]
description = run the tests
{package}deps = pytest
commands = pytest {posargs:tests}

[testenv:mutation]
description = verify the mutation specs
package = editable
deps =
    pytest
    mutharness
commands = mutharness verify {posargs}
"""

PACKAGING = {  # how tox installs the package for the tests: its default (built), or editable
    "built": "",
    "editable": "package = editable\n",
}

ALL_AS_EXPECTED = "all 2 mutation(s) behaved as expected"
DOTVENV_SAID = "(the repository's .venv; --python chooses another)"
POINTER_SAID = "(the environment the repository's .venv file names; --python chooses another)"


def _spec() -> dict[str, Any]:
    """The calc spec (one caught mutation, one documented survivor) on the package."""
    spec = default_spec()
    for mutation in spec["mutations"]:
        mutation["file"] = PACKAGE
    return spec


def _package(make_project: Callable[..., Project], backend: str) -> Project:
    """The calc project as a src-layout package built by `backend`, committed: no pytest
    `pythonpath`, so only an install of the package lets the tests import it."""
    project = make_project(spec=_spec())
    (project.root / "src" / "calc.py").unlink()
    project.write(PACKAGE, CALC)
    project.write("pyproject.toml", BACKENDS[backend] + PROJECT)
    project.commit("calc, a src-layout package")
    return project


def _ok(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stdout + done.stderr


def _first_try(made: Made, argv: Sequence[str | Path],
               environments: Sequence[Path] = ()) -> subprocess.CompletedProcess[str]:
    """`argv` run once at the project's root: it exits 0 with every mutation as expected,
    and neither the tree's status nor any of the project's environments (its own, and
    `environments`) changes."""
    watched = (made.environment, *environments)
    before = [_installed(environment) for environment in watched]
    assert any(name.startswith("pytest-") for name in before[0]), before[0]
    status = git(made.root, "status", "--porcelain")

    done = _run(list(argv), made)

    _ok(done)
    assert ALL_AS_EXPECTED in done.stdout, done.stdout
    assert git(made.root, "status", "--porcelain") == status
    assert [_installed(environment) for environment in watched] == before
    return done


# -- pip ----------------------------------------------------------------------------------

@pytest.mark.parametrize("tool_install", ["pipx"], indirect=True)
@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_a_pip_project_with_an_editable_install_in_a_venv_nothing_ignores_verifies_first_time(
    make_project: Callable[..., Project], wheelhouse: Path, tool_install: Path,
    tmp_path: Path, backend: str,
) -> None:
    """`python -m venv .venv` in the repository (no .gitignore names it), then
    `.venv/bin/python -m pip install -e . pytest`, as pip's docs make a development install;
    then `mutharness verify` at the root."""
    project = _package(make_project, backend)
    made = Made(project.root, project.root / ".venv", (), *_offline(wheelhouse, tmp_path))
    _ok(_run([sys.executable, "-m", "venv", ".venv"], made))
    # Python 3.13's venv writes a .gitignore of `*` into it; 3.11's and 3.12's write none
    (made.environment / ".gitignore").unlink(missing_ok=True)
    _ok(_run([_python(made.environment), "-m", "pip", "install", "--quiet", "-e", ".",
              "pytest"], made))

    done = _first_try(made, [tool_install, "verify"])

    assert DOTVENV_SAID in done.stderr, done.stderr
    # setuptools writes the install's metadata beside the package: no change either
    metadata = ", src/calc.egg-info (an install's metadata)" if backend == "setuptools" else ""
    assert (f"left out (environments, not changes): .venv (a virtual environment){metadata}\n"
            in done.stdout), done.stdout


# -- uv -----------------------------------------------------------------------------------

@pytest.fixture
def uv_made(uv: Path, wheelhouse: Path, tmp_path: Path, git_home: Path) -> Made:
    """A uv project as uv makes it: `uv init --lib` (its own git repository and .gitignore),
    the calc package and its tests written in, `uv add --dev pytest`, `uv sync`, everything
    committed (uv.lock too). The build backend is hatchling (`--build-backend hatch`): the
    default, uv_build, is pinned to uv's own version, which the package index may not have yet
    (it is the build, not mutharness, that would then fail offline)."""
    env, offline = _offline(wheelhouse, tmp_path)
    made = Made(tmp_path / "calc", tmp_path / "calc" / ".venv", (), env, offline)
    _ok(_run([uv, "init", "--offline", "--lib", "--build-backend", "hatch", "calc"],
             Made(tmp_path, made.environment, (), env, offline)))
    project = Project(made.root)
    project.write(PACKAGE, CALC)
    project.write("tests/test_calc.py", TEST_CALC)
    project.spec("calc", _spec())
    _ok(_run([uv, "add", *offline, "--dev", "pytest"], made))
    _ok(_run([uv, "sync", *offline], made))
    project.commit("a uv project: calc, its tests, its spec, locked")
    return made


@pytest.mark.parametrize("tool_install", ["uv"], indirect=True)
def test_a_uv_project_verifies_first_time_with_mutharness_installed_by_uv_tool(
    uv_made: Made, tool_install: Path
) -> None:
    done = _first_try(uv_made, [tool_install, "verify"])

    assert DOTVENV_SAID in done.stderr, done.stderr


def test_a_uv_project_verifies_first_time_with_uv_run_with_mutharness(
    uv_made: Made, uv: Path, wheel: Path
) -> None:
    done = _first_try(uv_made, [uv, "run", *uv_made.offline, "--with", wheel, "mutharness",
                                "verify"])

    assert ("(the environment `uv run --with` extends; --python chooses another)"
            in done.stderr), done.stderr


# -- tox ----------------------------------------------------------------------------------

@pytest.fixture(params=sorted(PACKAGING))
def tox_made(request: pytest.FixtureRequest, make_project: Callable[..., Project], tox: Path,
             wheelhouse: Path, wheel: Path, tmp_path: Path) -> Made:
    """A tox project as tox's docs make it, with getting-started's `mutation` environment:
    the calc package (hatchling), a tox.ini whose `py` environment runs pytest on the package
    as tox installs it (built and installed, tox's default; or editable, `package = editable`)
    and whose `mutation` environment installs it editable (as mutharness's refusal of an
    installed copy advises) and lists mutharness among its deps (from an index: here the
    wheel's directory beside the wheelhouse), `tox -e py` run once. tox ignores its own `.tox`
    (a .gitignore of `*` in it); the project ignores nothing. tox (the wheelhouse's, 4.67.17)
    points a PEP 832 redirect file, `.venv`, at the first editable environment it made."""
    project = _package(make_project, "hatchling")
    project.write("tox.ini", TOX_INI.replace("{package}", PACKAGING[request.param]))
    project.commit("tox: the tests, and the mutation specs")
    env, offline = _offline(wheelhouse, tmp_path)
    env["PIP_FIND_LINKS"] = f"{wheelhouse} {wheel.parent}"  # pip's list: space-separated
    made = Made(project.root, project.root / ".tox" / "py", (), env, offline)
    _ok(_run([tox, "-e", "py"], made))
    return made


def test_a_tox_project_verifies_first_time_in_its_editable_mutation_environment(
    tox_made: Made, tox: Path
) -> None:
    """`tox -e mutation`, getting-started's recipe: mutharness runs in that environment, which
    has the project's pytest and its package installed editable (made first, `--notest`, so
    that what the run itself installs there can be told), whatever the `py` environment
    does."""
    mutation = tox_made.root / ".tox" / "mutation"
    _ok(_run([tox, "-e", "mutation", "--notest"], tox_made))

    done = _first_try(tox_made, [tox, "-e", "mutation"], environments=(mutation,))

    assert "left out (environments, not changes): .venv (points at .tox/" in done.stdout, \
        done.stdout


@pytest.mark.parametrize("tox_made", ["editable"], indirect=True)
@pytest.mark.parametrize("tool_install", ["pipx"], indirect=True)
def test_a_tool_install_with_no_flag_runs_the_tests_in_the_tox_environment_the_venv_file_names(
    tox_made: Made, tool_install: Path
) -> None:
    """`mutharness verify` of a tool install at the root of a tox project whose `py`
    environment is editable (no active environment, no `.venv` directory): tox's `.venv`
    redirect file names `.tox/py`, which runs the tests, and is no change of the tree."""
    assert (tox_made.root / ".venv").read_text("utf-8") == ".tox/py\n"  # as tox wrote it

    done = _first_try(tox_made, [tool_install, "verify"])

    assert f"the tests run with {_python(tox_made.environment)} {POINTER_SAID}" in done.stderr, \
        done.stderr
    assert "left out (environments, not changes): .venv (points at .tox/py)\n" in done.stdout, \
        done.stdout


@pytest.mark.parametrize("tox_made", ["built"], indirect=True)
@pytest.mark.parametrize("tool_install", ["pipx"], indirect=True)
def test_a_tool_install_with_no_flag_beside_a_built_tox_environment_is_refused_naming_it(
    tox_made: Made, tool_install: Path
) -> None:
    """`mutharness verify` of a tool install at the root of a tox project whose environments
    tox built (no `.venv` of any kind): nothing chose the tests' interpreter, and the one
    running mutharness has no pytest; the refusal names tox's environment (`--python`), the
    remedy a tox user can follow, never an install into mutharness's own environment; nothing
    changes."""
    before = _installed(tox_made.environment)
    status = git(tox_made.root, "status", "--porcelain")

    done = _run([tool_install, "verify"], tox_made)

    assert done.returncode == 5, done.stdout + done.stderr
    python = _python(tox_made.environment).relative_to(tox_made.root)
    assert f"--python {python} (tox's py environment)" in done.stderr, done.stderr
    assert "the interpreter running mutharness" in done.stderr, done.stderr
    assert "-m pip install" not in done.stderr, done.stderr
    assert git(tox_made.root, "status", "--porcelain") == status
    assert _installed(tox_made.environment) == before
