"""The tests must exercise the workspace's code, not the user's tree reached some other way."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import pytest
from conftest import PYPROJECT, Completed, Project, Recorder, Venv

from mutharness.errors import ExitCode

pytestmark = pytest.mark.skipif(
    sys.platform == "win32", reason="builds POSIX venv layouts (bin/python, lib/pythonX.Y)"
)


ProjectFactory = Callable[..., Project]
VenvFactory = Callable[..., Venv]
Cli = Callable[..., Completed]
Verify = Callable[..., tuple[Any, Recorder]]

NO_PYTHONPATH = "[tool.pytest.ini_options]\n"

EDITABLE_FINDER = '''\
"""Like setuptools' __editable___*_finder: maps a module name to a file, on sys.meta_path."""
import importlib.util
import sys

import pytest

MAPPING = {"calc": %r}


class _Finder:
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        if fullname in MAPPING:
            return importlib.util.spec_from_file_location(fullname, MAPPING[fullname])
        return None


def install():
    sys.meta_path.append(_Finder)
'''


def without_pythonpath(make_project: ProjectFactory) -> Project:
    """The calc project with no `pythonpath` in its pytest configuration."""
    project = make_project()
    project.write("pyproject.toml", NO_PYTHONPATH)
    project.commit("no pythonpath")
    return project


def test_a_pth_file_pointing_at_the_users_tree_is_refused_naming_module_file_and_entry(
    make_project: ProjectFactory, make_venv: VenvFactory, cli: Cli
) -> None:
    project = without_pythonpath(make_project)
    venv = make_venv("shadow", system_site=True)
    user_src = project.root / "src"
    venv.add_pth("fixture", str(user_src))

    done = cli(project.root, "verify", "specs/calc.json", "--python", str(venv.python))

    assert done.code == 2, done.out + done.err
    assert "CAUGHT" not in done.out and "SURVIVED" not in done.out
    assert (
        f"spec calc: the tests imported calc from {(user_src / 'calc.py').resolve()}, "
        "the user's tree, "
        f"not the workspace (it is reached through the sys.path entry {user_src})"
    ) in done.err
    assert "every mutation would SURVIVE" in done.err


def test_with_pythonpath_configured_the_workspace_wins_over_the_same_pth_file(
    make_project: ProjectFactory, make_venv: VenvFactory, cli: Cli
) -> None:
    project = without_pythonpath(make_project)
    project.write("pyproject.toml", PYPROJECT)
    project.commit("pythonpath = src")
    venv = make_venv("shadow", system_site=True)
    venv.add_pth("fixture", str(project.root / "src"))

    done = cli(project.root, "verify", "specs/calc.json", "--python", str(venv.python))

    assert done.code == 0, done.out + done.err
    assert "all 2 mutation(s) behaved as expected" in done.out


def test_a_pythonpath_variable_naming_the_users_tree_is_refused(
    make_project: ProjectFactory, verify_here: Verify
) -> None:
    project = without_pythonpath(make_project)
    environ = {**os.environ, "PYTHONPATH": str(project.root / "src")}

    run, recorder = verify_here(project, environ=environ)

    assert run.exit_code() is ExitCode.NO_VERDICT
    assert recorder.events == ["head", "baseline calc", "failed calc"]
    assert f"through the sys.path entry {project.root / 'src'}" in recorder.errors[0]


def test_an_editable_install_finder_is_refused_as_an_import_hook(
    make_project: ProjectFactory, make_venv: VenvFactory, verify_here: Verify
) -> None:
    project = without_pythonpath(make_project)
    venv = make_venv("editable")
    target = project.root / "src" / "calc.py"
    (venv.site_packages / "__editable___calc_finder.py").write_text(
        EDITABLE_FINDER % str(target), encoding="utf-8"
    )
    venv.add_pth("__editable__.calc-1.0", "import __editable___calc_finder; "
                 "__editable___calc_finder.install()")

    run, recorder = verify_here(project, python=venv.python)

    assert run.exit_code() is ExitCode.NO_VERDICT
    assert recorder.events == ["head", "baseline calc", "failed calc"]
    assert f"imported calc from {target.resolve()}" in recorder.errors[0]
    assert "an import hook (an editable install's finder)" in recorder.errors[0]
