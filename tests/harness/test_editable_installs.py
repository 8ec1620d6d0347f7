"""The mutant must run: with `pip install -e .` (src and flat layouts, setuptools and hatchling)
the tests, and every Python process they start, import the workspace's copy; an installed copy
that is not the user's tree is refused before anything is mutated.

Every venv here is real and every install a real `pip install` from PyPI's wheels.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import CALC, Completed, Project, Venv, git, install
from inproc import in_process
from liverun import mutations_of, snapshot

ProjectFactory = Callable[..., Project]
VenvFactory = Callable[..., Venv]
Cli = Callable[..., Completed]

pytestmark = pytest.mark.skipif(
    sys.platform == "win32", reason="builds POSIX venv layouts (bin/python)"
)

CORE = CALC  # the code under test: clamp() and is_adult()

CLI = '''\
"""A command line that only child processes run."""

import sys

from {package}.core import clamp


def main():
    print("clamped:", clamp(int(sys.argv[1]), 0, 10))
'''

MAIN = '''\
from {package}.cli import main

main()
'''

TEST_CORE = '''\
from {package}.core import clamp


def test_clamp_below():
    assert clamp(-5, 0, 10) == 0


def test_clamp_inside():
    assert clamp(5, 0, 10) == 5
'''

TEST_CHILDREN = '''\
import os
import subprocess
import sys
import sysconfig
from pathlib import Path


def run(argv, tmp_path):
    # from another directory, as a CLI test does: only the installed package can be found
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_the_module_runs_as_a_child(tmp_path):
    assert run([sys.executable, "-m", "{package}", "50"], tmp_path) == "clamped: 10"


def test_the_console_script_runs_as_a_child(tmp_path):
    script = Path(sysconfig.get_path("scripts")) / "{package}-cli"
    assert run([str(script), "-5"], tmp_path) == "clamped: 0"
'''

SETUPTOOLS = '''\
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "{package}"
version = "1.0"

[project.scripts]
{package}-cli = "{package}.cli:main"
'''

HATCHLING = '''\
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[project]
name = "{package}"
version = "1.0"

[project.scripts]
{package}-cli = "{package}.cli:main"

[tool.hatch.build.targets.wheel]
packages = ["{source}{package}"]
'''


def package_spec(package: str, source: str) -> dict[str, Any]:
    """One mutation the in-process tests catch, one in code only a child process runs, one in
    `__main__` (only `python -m` runs it)."""
    where = f"{source}{package}"
    return {
        "tests": ["tests"],
        "expectBaselinePass": 4,
        "mutations": [
            {"name": "the low bound is ignored", "file": f"{where}/core.py",
             "anchor": "    if value < low:\n        return low\n", "replacement": ""},
            {"name": "the command line prints the wrong word (only children run it)",
             "file": f"{where}/cli.py", "anchor": '"clamped:"', "replacement": '"limited:"'},
            {"name": "python -m runs nothing", "file": f"{where}/__main__.py",
             "anchor": "main()\n", "replacement": "pass\n"},
        ],
    }


def package_project(
    make_project: ProjectFactory, package: str, source: str, backend: str
) -> Project:
    """A committed project with the package under `source` ("src/" or "") and its tests."""
    project = make_project()
    for stale in ("src/calc.py", "tests/test_calc.py", "specs/calc.json", "pyproject.toml"):
        (project.root / stale).unlink()
    where = f"{source}{package}"
    project.write("pyproject.toml", backend.format(package=package, source=source))
    project.write(f"{where}/__init__.py", "")
    project.write(f"{where}/core.py", CORE)
    project.write(f"{where}/cli.py", CLI.format(package=package))
    project.write(f"{where}/__main__.py", MAIN.format(package=package))
    project.write("tests/test_core.py", TEST_CORE.format(package=package))
    project.write("tests/test_children.py", TEST_CHILDREN.format(package=package))
    project.write(".gitignore", "build/\n*.egg-info/\n")
    project.spec(package, package_spec(package, source))
    project.commit("a package with a command line")
    return project


def editable(project: Project, make_venv: VenvFactory, tool_site: Path, wheelhouse: Path,
             *config: str) -> Venv:
    """A venv with the project installed as the user would: `pip install -e .`."""
    venv = make_venv("dev", tools=tool_site)
    install(venv, wheelhouse, "--no-deps", *config, "-e", project.root)
    return venv


def verdicts(project: Project) -> list[tuple[str, bool | None]]:
    return [(m["verdict"], m["loaded"]) for m in mutations_of(project.root)]


XDIST = '\n[tool.pytest.ini_options]\naddopts = "-n 2"\n'


@pytest.mark.parametrize(
    ("backend", "source", "config"),
    [
        pytest.param(SETUPTOOLS, "src/", (), id="setuptools-src-layout"),
        pytest.param(SETUPTOOLS + XDIST, "src/", (), id="setuptools-src-layout-xdist-workers"),
        pytest.param(SETUPTOOLS, "src/", ("--config-settings", "editable_mode=strict"),
                     id="setuptools-src-layout-strict-links"),
        pytest.param(HATCHLING, "", (), id="hatchling-flat-layout"),
    ],
)
def test_an_editable_install_runs_end_to_end_against_the_workspace_in_every_child(
    make_project: ProjectFactory, make_venv: VenvFactory, tool_site: Path, wheelhouse: Path,
    cli: Cli, backend: str, source: str, config: tuple[str, ...],
) -> None:
    project = package_project(make_project, "shapes", source, backend)
    venv = editable(project, make_venv, tool_site, wheelhouse, *config)
    before, status = snapshot(project.root), git(project.root, "status", "--porcelain",
                                                  "--ignored")

    done = cli(project.root, "verify", "specs/shapes.json", "--python", str(venv.python))

    assert done.code == 0, done.out + done.err
    assert verdicts(project) == [("CAUGHT", True)] * 3
    assert "all 3 mutation(s) behaved as expected" in done.out
    assert snapshot(project.root) == before  # every file and .git, but for .mutharness/
    assert git(project.root, "status", "--porcelain", "--ignored") == "!! .mutharness/\n" + status


def test_a_pythonpath_variable_into_the_repository_is_moved_to_the_workspace(
    make_project: ProjectFactory, make_venv: VenvFactory, tool_site: Path, cli: Cli
) -> None:
    project = package_project(make_project, "shapes", "src/", SETUPTOOLS)
    venv = make_venv("plain", tools=tool_site)  # no install: PYTHONPATH finds the package
    env_path = str(project.root / "src")
    script = venv.root / "bin" / "shapes-cli"
    script.write_text(f"#!{venv.python}\nfrom shapes.cli import main\nmain()\n")
    script.chmod(0o755)

    done = cli(project.root, "verify", "specs/shapes.json", "--python", str(venv.python),
               env={**os.environ, "PYTHONPATH": env_path})

    assert done.code == 0, done.out + done.err
    assert verdicts(project) == [("CAUGHT", True)] * 3


def test_a_pth_file_that_imports_the_package_at_start_up_is_refused_naming_it(
    make_project: ProjectFactory, make_venv: VenvFactory, tool_site: Path, wheelhouse: Path,
) -> None:
    project = package_project(make_project, "shapes", "src/", SETUPTOOLS)
    venv = editable(project, make_venv, tool_site, wheelhouse)
    venv.add_pth("zz_eager", "import shapes.core")  # imported before any hook could move it

    done = in_process(project.root, "verify", "specs/shapes.json", "--python", str(venv.python))

    assert done.code == 3, done.out + done.err
    assert "CAUGHT" not in done.out and "SURVIVED" not in done.out
    init = (project.root / "src/shapes/__init__.py").resolve()
    assert f"the tests imported shapes from {init} (in " in done.err
    assert "a .pth file run while Python started" in done.err


def test_a_non_editable_install_is_refused_before_any_mutant_naming_module_copy_and_fix(
    make_project: ProjectFactory, make_venv: VenvFactory, tool_site: Path, wheelhouse: Path,
) -> None:
    project = package_project(make_project, "shapes", "src/", SETUPTOOLS)
    venv = make_venv("tox-like", tools=tool_site)
    install(venv, wheelhouse, "--no-deps", project.root)  # a copy in site-packages, as tox does

    done = in_process(project.root, "verify", "specs/shapes.json", "--python", str(venv.python))

    assert done.code == 3, done.out + done.err
    assert "CAUGHT" not in done.out and "SURVIVED" not in done.out
    copy = venv.site_packages / "shapes" / "core.py"
    assert f"the tests imported shapes.core from {copy} (in the pytest process), a copy " \
           "outside this repository, not the workspace's src/shapes/core.py" in done.err
    assert "pip install -e ." in done.err and "--python" in done.err
    assert mutations_of(project.root) == []


def test_an_installed_copy_only_a_child_imports_is_refused_too(
    make_project: ProjectFactory, make_venv: VenvFactory, tool_site: Path, wheelhouse: Path,
    cli: Cli,
) -> None:
    project = package_project(make_project, "shapes", "src/", SETUPTOOLS)
    project.write("pyproject.toml", SETUPTOOLS.format(package="shapes")
                  + '\n[tool.pytest.ini_options]\npythonpath = ["src"]\n')
    project.commit("pytest finds src/ itself; the children use the installed copy")
    venv = make_venv("tox-like", tools=tool_site)
    install(venv, wheelhouse, "--no-deps", project.root)

    done = cli(project.root, "verify", "specs/shapes.json", "--python", str(venv.python))

    assert done.code == 3, done.out + done.err
    assert "CAUGHT" not in done.out and "SURVIVED" not in done.out
    assert "(in a child process (pid " in done.err
    assert "site-packages/shapes/" in done.err


def _unused_module(make_project: ProjectFactory, name: str, expect_caught: bool) -> Project:
    """The calc project with a module no test imports, its spec's one mutation there."""
    project = make_project()
    project.write("src/unused.py", "LIMIT = 10\n")
    project.spec("calc", {
        "tests": ["tests/test_calc.py"], "expectBaselinePass": 4,
        "mutations": [{"name": name, "file": "src/unused.py", "anchor": "10",
                       "replacement": "11", "expectCaught": expect_caught}],
    })
    project.commit("a module no test imports")
    return project


def test_a_mutant_in_a_module_no_test_imports_is_reported_as_never_imported(
    make_project: ProjectFactory
) -> None:
    project = _unused_module(
        make_project, "SURVIVOR (documented): nothing uses this module yet", False)

    done = in_process(project.root, "verify", "specs/calc.json", "--evidence", "../evidence")

    assert done.code == 0, done.out + done.err
    assert verdicts(project) == [("SURVIVED", False)]
    assert "never imported: the mutant did not run" in done.out
    assert "note: 1 mutant(s) never imported" in done.out
    evidence = (project.root.parent / "evidence/calc.md").read_text("utf-8")
    assert "never imported: the mutant did not run" in evidence and "| **never** |" in evidence


def test_an_expected_catch_never_imported_gets_its_note_not_the_hint_to_add_an_assertion(
    make_project: ProjectFactory
) -> None:
    project = _unused_module(make_project, "the limit moves", True)

    done = in_process(project.root, "verify", "specs/calc.json")

    assert done.code == 1, done.out + done.err
    assert "note: 1 mutant(s) never imported" in done.out
    assert "hint: a survivor means" not in done.out

def _installed_copy(make_project: ProjectFactory, make_venv: VenvFactory, tool_site: Path,
                    wheelhouse: Path) -> tuple[Project, Venv]:
    """The package project, installed into a venv as a copy (as tox does by default)."""
    project = package_project(make_project, "shapes", "src/", SETUPTOOLS)
    venv = make_venv("tox-like", tools=tool_site)
    install(venv, wheelhouse, "--no-deps", project.root)
    return project, venv


def test_baseline_names_the_remedy_of_an_installed_copy_under_its_untrustworthy_line(
    make_project: ProjectFactory, make_venv: VenvFactory, tool_site: Path, wheelhouse: Path,
) -> None:
    project, venv = _installed_copy(make_project, make_venv, tool_site, wheelhouse)

    done = in_process(project.root, "baseline", "specs/shapes.json", "--python",
                      str(venv.python))

    assert done.code == 3, done.out + done.err
    lines = done.out.splitlines()
    [at] = [n for n, line in enumerate(lines) if line.startswith("UNTRUSTWORTHY ")]
    assert "a copy outside this repository" in lines[at]
    assert lines[at + 1].startswith("    use an editable install of this checkout (pip "
                                    "install -e ."), done.out


def test_suggest_names_the_remedy_of_an_installed_copy_not_a_failing_test(
    make_project: ProjectFactory, make_venv: VenvFactory, tool_site: Path, wheelhouse: Path,
) -> None:
    project, venv = _installed_copy(make_project, make_venv, tool_site, wheelhouse)
    core = project.root / "src/shapes/core.py"
    core.write_text(core.read_text("utf-8").replace("return low", "return low  # floor"),
                    "utf-8")

    done = in_process(project.root, "suggest", "--since", "HEAD", "--test", "tests/test_core.py",
                      "--python", str(venv.python))

    assert done.code == 2, done.out + done.err
    assert "a copy outside this repository" in done.err
    assert "pip install -e ." in done.err
    assert "make the tests pass" not in done.err
