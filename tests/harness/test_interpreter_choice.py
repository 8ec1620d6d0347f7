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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from conftest import Completed, Project, create_venv, default_spec, git, install, pip
from filelock import FileLock
from inproc import in_process

from mutharness.runners.pytest.runner import install_remedy

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


POINTER_SAID = "(the environment the repository's .venv file names; --python chooses another)"


def _tox_like(project: Project, make_venv: Callable[..., Any], name: str = "py") -> Any:
    """A real venv holding the project's module at `.tox/NAME`, where tox keeps its
    environments (with tox's own `.gitignore` of `*`)."""
    venv = make_venv(f"tox-{name}")
    _own(venv)
    (project.root / ".tox").mkdir(exist_ok=True)
    (project.root / ".tox" / ".gitignore").write_text("*\n", "utf-8")
    venv.root.rename(project.root / ".tox" / name)
    return replace(venv, root=project.root / ".tox" / name,
                   python=project.root / ".tox" / name / venv.python.relative_to(venv.root))


@pytest.mark.parametrize("where", ["inside", "outside"])
def test_a_venv_file_naming_an_environment_chooses_its_interpreter_and_is_no_change(
    make_project: Callable[..., Project], make_venv: Callable[..., Any], cli: Cli,
    tmp_path: Path, where: str,
) -> None:
    """A PEP 832 redirect file, `.venv`, untracked: one line naming an environment, relative
    to the repository root as tox writes it (`.tox/py`), or absolute, outside the
    repository."""
    project = _project(make_project)  # its .gitignore names the directory `.venv/` alone
    if where == "inside":
        venv, line = _tox_like(project, make_venv), ".tox/py"
    else:
        venv = make_venv("elsewhere")
        _own(venv)
        line = str(venv.root)
    (project.root / ".venv").write_text(f"{line}\n", "utf-8")

    done = cli(project.root, "verify", "specs/calc.json", env=_environment())

    assert done.code == 0, done.out + done.err
    assert f"mutharness: note: the tests run with {venv.python} {POINTER_SAID}" in done.err
    assert f"left out (environments, not changes): .venv (points at {line})\n" in done.out
    results = json.loads((project.root / ".mutharness/results.json").read_text("utf-8"))
    assert results["settings"]["sources"]["python"] == ".venv file"
    assert "--python" not in " ".join(results["settings"]["rederive_flags"])


NO_POINTERS = {  # `.venv` files that name no environment: each stays a change
    "a symlink to a pointer": None,
    "two lines": b".tox/py\n.tox/py\n",
    "over 512 bytes": b"./" * 300 + b".tox/py\n",
    "a directory without pyvenv.cfg": b"src\n",
    "not UTF-8": b".tox/p\xffy\n",
    "empty": b"",
    "whitespace around the path": b" .tox/py\n",
}


@pytest.mark.parametrize("content", NO_POINTERS.values(), ids=list(NO_POINTERS))
def test_a_venv_file_that_names_no_environment_is_a_change_and_chooses_nothing(
    make_project: Callable[..., Project], make_venv: Callable[..., Any], cli: Cli,
    tmp_path: Path, content: bytes | None,
) -> None:
    project = _project(make_project)
    _tox_like(project, make_venv)  # what a pointer would name is there
    pointer = project.root / ".venv"
    if content is None:  # never read through a link, whatever it leads to
        (tmp_path / "pointer").write_bytes(b".tox/py\n")
        pointer.symlink_to(tmp_path / "pointer")
    else:
        pointer.write_bytes(content)

    refused = cli(project.root, "verify", "specs/calc.json", env=_environment())
    dirty = cli(project.root, "verify", "specs/calc.json", "--allow-dirty", env=_environment())

    assert refused.code == 5, refused.out + refused.err
    assert "1 uncommitted change(s)" in refused.err and "?? .venv\n" in refused.err, refused.err
    assert "the tests run with" not in dirty.err, dirty.err


def test_an_install_s_egg_info_is_no_change_but_a_stray_file_still_is(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    """setuptools' `pip install -e .` writes `NAME.egg-info/` (PKG-INFO, SOURCES.txt...)
    beside the package, untracked; a directory so named without a PKG-INFO is no install's."""
    project = make_project()
    for name in ("PKG-INFO", "SOURCES.txt", "top_level.txt"):
        project.write(f"src/calc.egg-info/{name}", "Metadata-Version: 2.4\nName: calc\n")
    project.write("notes.egg-info/notes.txt", "mine\n")
    refused = cli(project.root, "verify", "specs/calc.json", env=_environment())
    (project.root / "notes.egg-info" / "notes.txt").unlink()

    done = cli(project.root, "verify", "specs/calc.json", env=_environment())

    assert refused.code == 5, refused.out + refused.err
    assert "1 uncommitted change(s)" in refused.err and "notes.egg-info/notes.txt" in refused.err
    assert done.code == 0, done.out + done.err
    assert ("left out (environments, not changes): src/calc.egg-info (an install's metadata)\n"
            in done.out), done.out


@pytest.mark.parametrize("tool_install", ["pipx"], indirect=True)
def test_a_tool_install_that_nothing_chose_and_lacks_pytest_names_the_repository_s_environments(
    make_project: Callable[..., Project], make_venv: Callable[..., Any], tool_install: Path
) -> None:
    """A tool install (no pytest in its environment) at the root of a project with no active
    environment, no `.venv`, and tox's environments (`.tox/.pkg` is tox's packaging one)."""
    project = _project(make_project)
    _tox_like(project, make_venv, "py")
    _tox_like(project, make_venv, "lint")
    _tox_like(project, make_venv, ".pkg")

    done = subprocess.run([str(tool_install), "verify"], cwd=project.root, env=_environment(),
                          capture_output=True, text=True)

    assert done.returncode == 5, done.stdout + done.stderr
    assert "pytest not installed in" in done.stderr and "the interpreter running mutharness" \
        in done.stderr, done.stderr
    for name in ("lint", "py"):
        python = _python(Path(".tox") / name)
        assert f"--python {python} (tox's {name} environment)" in done.stderr, done.stderr
    assert ".pkg" not in done.stderr
    assert "-m pip install" not in done.stderr, done.stderr  # never into mutharness's own


@pytest.mark.parametrize("tool_install", ["pipx"], indirect=True)
def test_a_tool_install_that_nothing_chose_and_lacks_pytest_says_how_to_make_the_environment(
    make_project: Callable[..., Project], tool_install: Path
) -> None:
    """As above, in a project with no environment at all: the remedy makes the `.venv`
    mutharness then finds (run in a subdirectory: its paths work from there)."""
    project = make_project()

    done = subprocess.run([str(tool_install), "verify"], cwd=project.root / "tests",
                          env=_environment(), capture_output=True, text=True)

    assert done.returncode == 5, done.stdout + done.stderr
    python = _python(Path("..") / ".venv")
    assert (f"python -m venv {Path('..') / '.venv'}, then {python} -m pip install -e .. pytest"
            in done.stderr), done.stderr
    assert done.stderr.count("-m pip install") == 1, done.stderr  # never into mutharness's own


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory, wheelhouse: Path) -> Path:
    """This repository built into a wheel, as a user installs it (its build backend from the
    wheelhouse). The build writes into the repository's own `build/`: one build at a time
    (each xdist worker's session makes its own wheel)."""
    dist = tmp_path_factory.mktemp("dist")
    with FileLock(tmp_path_factory.getbasetemp().parent / "mutharness-wheel.lock"):
        pip("wheel", "--quiet", "--no-deps", "--no-index", "--find-links", wheelhouse,
            "--wheel-dir", dist, REPOSITORY)
    [built] = dist.glob("mutharness-*.whl")
    return built


def _script(venv: Any, name: str) -> Path:
    """A console script installed beside the venv's python."""
    return _beside(venv.python, name)


def _beside(python: Path, name: str) -> Path:
    """The console script `name` installed beside `python`."""
    return python.parent / (f"{name}.exe" if sys.platform == "win32" else name)


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

TOX_INI = """\
[tox]
env_list = py

[testenv]
skip_install = true
deps = pytest
commands = pytest {posargs}

[testenv:mutation]
skip_install = true
deps =
    pytest
    {wheel}
commands = mutharness verify {posargs}
"""


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


@pytest.fixture(scope="session")
def tox(tmp_path_factory: pytest.TempPathFactory, wheelhouse: Path) -> Path:
    """The real tox, from the wheelhouse."""
    return _tool(tmp_path_factory, wheelhouse, "tox")


@dataclass(frozen=True)
class Made:
    """A project as its own tool made it: where its environment is, the flags that name that
    environment to a mutharness installed elsewhere (none where mutharness finds it itself),
    and the environment every command here runs with (offline, from the wheelhouse)."""

    root: Path
    environment: Path
    flags: tuple[str, ...]
    env: Mapping[str, str]
    offline: tuple[str, ...]  # uv's flags: the wheelhouse alone


def _python(environment: Path) -> Path:
    return environment / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def _run(argv: list[str | Path], made: Made) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(arg) for arg in argv], cwd=made.root, env=dict(made.env),
                          capture_output=True, text=True, encoding="utf-8")


def _offline(wheelhouse: Path, scratch: Path) -> tuple[dict[str, str], tuple[str, ...]]:
    """The environment (pip's and uv's: the wheelhouse alone, uv's own cache and no user
    config, this interpreter) and uv's flags every command of a made project runs with."""
    env = {**_environment(), "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse),
           "UV_CACHE_DIR": str(scratch / "uv-cache"), "UV_PYTHON": sys.executable,
           "UV_NO_CONFIG": "1"}
    return env, ("--offline", "--no-index", "--find-links", str(wheelhouse))


def _uv_project(project: Project, uv: Path, wheelhouse: Path, scratch: Path) -> Made:
    """A uv project as uv makes it (`uv lock`, `uv sync`: pytest in its locked dev group, the
    environment in `.venv`, which mutharness finds itself)."""
    project.write("pyproject.toml", UV_PROJECT.replace("{platform}", sys.platform))
    project.write(".gitignore", ".venv/\n")
    made = Made(project.root, project.root / ".venv", (), *_offline(wheelhouse, scratch))
    for command in ("lock", "sync"):
        done = _run([uv, command, *made.offline], made)
        assert done.returncode == 0, done.stdout + done.stderr
    project.commit("a uv project, locked")
    return made


def _tox_project(project: Project, tox: Path, wheelhouse: Path, wheel: Path,
                 scratch: Path) -> Made:
    """A tox project as tox makes it (its environments in `.tox`, inside the repository,
    git-ignored; `tox -e py` run once): `--python` names `.tox/py`'s interpreter to a
    mutharness installed elsewhere."""
    project.write("tox.ini", TOX_INI.replace("{wheel}", str(wheel)))
    project.write(".gitignore", ".tox/\n")
    project.commit("a tox project")
    environment = project.root / ".tox" / "py"
    made = Made(project.root, environment, ("--python", str(_python(environment))),
                *_offline(wheelhouse, scratch))
    done = _run([tox, "-e", "py"], made)
    assert done.returncode == 0, done.stdout + done.stderr
    return made


@pytest.fixture(params=["uv", "tox"])
def made(request: pytest.FixtureRequest, make_project: Callable[..., Project],
         wheelhouse: Path, wheel: Path, tmp_path: Path) -> Made:
    """A real uv project, or a real tox project, made by the real tool."""
    tool = request.getfixturevalue(request.param)
    project = make_project()
    if request.param == "uv":
        return _uv_project(project, tool, wheelhouse, tmp_path)
    return _tox_project(project, tool, wheelhouse, wheel, tmp_path)


def _verified(made: Made, argv: list[str | Path]) -> subprocess.CompletedProcess[str]:
    """`argv` (a mutharness command line ending in `verify`) run on the project's spec: it
    passes, and neither the project's environment nor its tree gains anything (tox's and uv's
    own runs may leave untracked bytecode beside the sources: no change of the tree
    mutharness measures)."""
    before = _installed(made.environment)
    assert any(name.startswith("pytest-") for name in before)
    status = git(made.root, "status", "--porcelain")

    done = _run([*argv, "specs/calc.json"], made)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "all 2 mutation(s) behaved as expected" in done.stdout
    assert _installed(made.environment) == before
    assert git(made.root, "status", "--porcelain") == status
    return done


def test_a_tool_install_verifies_a_uv_or_tox_project_with_the_project_s_environment(
    made: Made, tool_install: Path
) -> None:
    done = _verified(made, [tool_install, "verify", *made.flags])

    if not made.flags:  # nothing named it: the run says which it chose
        assert "(the repository's .venv; --python chooses another)" in done.stderr


def test_uv_run_with_mutharness_verifies_a_uv_or_tox_project(
    made: Made, uv: Path, wheel: Path
) -> None:
    """mutharness brought in for one command by `uv run --with`: in a uv project, uv runs it
    in the project's environment, which it extends (and uv.lock stays as it was); elsewhere in
    an environment of its own (`--no-project`), the project's named by `--python`."""
    project = () if not made.flags else ("--no-project",)
    done = _verified(made, [uv, "run", *made.offline, *project, "--with", wheel, "mutharness",
                            "verify", *made.flags])

    if not made.flags:
        assert "(the environment `uv run --with` extends; --python chooses another)" \
            in done.stderr
        assert "new interpreter per run" not in done.stderr  # the fork server: a plain venv


def test_mutharness_installed_into_the_project_s_own_environment_verifies_it(
    made: Made, uv: Path, tox: Path, wheel: Path
) -> None:
    """pip (uv's, in a uv project, whose venv has none) installs the wheel into the project's
    environment; in a tox project, a tox environment lists it among its deps and runs it."""
    if made.flags:  # tox: `tox -e mutation -- ARGS` runs `mutharness verify ARGS` there
        made = replace(made, environment=made.root / ".tox" / "mutation")
        created = _run([tox, "-e", "mutation", "--notest"], made)
        assert created.returncode == 0, created.stdout + created.stderr
        _verified(made, [tox, "-e", "mutation", "--"])
        return
    added = _run([uv, "pip", "install", *made.offline, "--python",
                  _python(made.environment), wheel], made)
    assert added.returncode == 0, added.stdout + added.stderr
    _verified(made, [_beside(_python(made.environment), "mutharness"), "verify"])


def test_a_venv_and_node_modules_nothing_ignores_are_environments_not_changes_and_said_once(
    make_project: Callable[..., Project], make_venv: Callable[..., Any], cli: Cli
) -> None:
    project, _ = _with_dotvenv(make_project, make_venv)
    git(project.root, "rm", "-q", ".gitignore")  # Python 3.11's and 3.12's venv write none
    git(project.root, "commit", "-q", "-m", "no .gitignore")
    (project.root / "node_modules" / "left-pad").mkdir(parents=True)
    (project.root / "node_modules" / "left-pad" / "index.js").write_text("module.exports = 1\n")
    project.write("notes.txt", "mine\n")
    refused = cli(project.root, "verify", "specs/calc.json", env=_environment())
    (project.root / "notes.txt").unlink()

    done = cli(project.root, "verify", "specs/calc.json", env=_environment())

    # a stray file is still a change, and the only one named
    assert refused.code == 5, refused.out + refused.err
    assert "1 uncommitted change(s)" in refused.err and "notes.txt" in refused.err
    assert done.code == 0, done.out + done.err
    assert done.out.count("left out") == 1, done.out
    assert ("left out (environments, not changes): .venv (a virtual environment), "
            "node_modules") in done.out
    assert "uncommitted" not in done.err


def test_a_uv_environment_without_pytest_is_refused_with_uv_s_install_command(
    make_project: Callable[..., Project], uv: Path, tmp_path: Path
) -> None:
    environment = tmp_path / "uvenv"
    subprocess.run([str(uv), "venv", "--quiet", "--offline", "--python", sys.executable,
                    str(environment)], check=True, capture_output=True)
    python = environment / "bin" / "python"
    project = make_project()

    done = in_process(project.root, "verify", "specs/calc.json", "--python", str(python))

    assert done.code == 5, done.out + done.err
    assert f"pytest not installed in {python}" in done.err
    # uv's environments have no pip: its own command installs into them
    assert f'uv pip install --python {python} "pytest>=7.4"' in done.err, done.err
    assert "-m pip install" not in done.err


def test_a_tox_environment_without_pytest_is_refused_with_tox_s_own_remedy(
    make_project: Callable[..., Project], tox: Path, wheelhouse: Path, tmp_path: Path
) -> None:
    """pip into a tox environment is undone when tox recreates it: the remedy is its deps."""
    project = make_project()
    project.write("tox.ini", "[tox]\nenv_list = lint\n\n[testenv:lint]\nskip_install = true\n"
                             "deps =\ncommands = python -c pass\n")
    project.commit("a tox environment without pytest")
    made = Made(project.root, project.root / ".tox" / "lint", (),
                *_offline(wheelhouse, tmp_path))
    created = _run([tox, "-e", "lint"], made)
    assert created.returncode == 0, created.stdout + created.stderr
    python = _python(made.environment)

    done = in_process(project.root, "verify", "specs/calc.json", "--python", str(python))

    assert done.code == 5, done.out + done.err
    assert f"pytest not installed in {python}" in done.err
    assert ('install (the environment is tox\'s lint): list "pytest>=7.4" in the deps of '
            "tox's lint environment, then recreate it: tox -e lint --recreate --notest") \
        in done.err, done.err
    assert "-m pip install" not in done.err


@pytest.mark.parametrize(("found", "remedy"), [
    ({"has_pip": "yes", "made_by_uv": "", "made_by_tox": ""},
     'install: PY -m pip install "pytest>=7.4"'),
    ({"has_pip": "", "made_by_uv": "yes", "made_by_tox": ""},
     'install (the environment is uv\'s): uv pip install --python PY "pytest>=7.4"'),
    ({"has_pip": "", "made_by_uv": "", "made_by_tox": ""},
     'install: PY -m ensurepip, then PY -m pip install "pytest>=7.4" (the environment has no '
     "pip)"),
    ({"has_pip": "yes", "made_by_uv": "", "made_by_tox": "py312"},
     'install (the environment is tox\'s py312): list "pytest>=7.4" in the deps of tox\'s '
     "py312 environment, then recreate it: tox -e py312 --recreate --notest"),
    # a name no remedy repeats (a file's word, as written): pip's command instead
    ({"has_pip": "yes", "made_by_uv": "", "made_by_tox": "x; rm -rf ~"},
     'install: PY -m pip install "pytest>=7.4"'),
], ids=["pip", "uv", "no-pip", "tox", "tox-name-no-shell-may-read"])
def test_the_install_remedy_is_the_command_of_the_tool_that_made_the_environment(
    found: dict[str, str], remedy: str
) -> None:
    assert install_remedy("PY", found) == remedy
