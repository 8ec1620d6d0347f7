"""The tests exercise the workspace's code even when the environment points at the user's tree
(a .pth path entry, PYTHONPATH, an editable install's finder): the workspace wins."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import pytest
from conftest import PYPROJECT, Completed, Project, Recorder, Venv
from inproc import in_process
from liverun import results_of

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


def test_a_pth_path_entry_into_the_users_tree_is_moved_to_the_workspace(
    make_project: ProjectFactory, make_venv: VenvFactory, cli: Cli
) -> None:
    project = without_pythonpath(make_project)
    venv = make_venv("shadow", system_site=True)
    venv.add_pth("fixture", str(project.root / "src"))

    done = cli(project.root, "verify", "specs/calc.json", "--python", str(venv.python))

    assert done.code == 0, done.out + done.err
    assert "all 2 mutation(s) behaved as expected" in done.out
    assert [r["loaded"] for r in results_of(project.root)["specs"][0]["mutations"]] == [True] * 2


def test_with_pythonpath_configured_the_workspace_wins_over_the_same_pth_file(
    make_project: ProjectFactory, make_venv: VenvFactory
) -> None:
    project = without_pythonpath(make_project)
    project.write("pyproject.toml", PYPROJECT)
    project.commit("pythonpath = src")
    venv = make_venv("shadow", system_site=True)
    venv.add_pth("fixture", str(project.root / "src"))

    done = in_process(project.root, "verify", "specs/calc.json", "--python", str(venv.python))

    assert done.code == 0, done.out + done.err
    assert "all 2 mutation(s) behaved as expected" in done.out


def test_a_pythonpath_variable_naming_the_users_tree_is_moved_to_the_workspace(
    make_project: ProjectFactory, verify_here: Verify
) -> None:
    project = without_pythonpath(make_project)
    environ = {**os.environ, "PYTHONPATH": str(project.root / "src")}

    run, recorder = verify_here(project, environ=environ)

    assert recorder.errors == []
    assert [(r.verdict.value, r.loaded) for r in recorder.results] == [
        ("CAUGHT", True), ("SURVIVED", True)
    ]
    assert run.exit_code() is ExitCode.OK


def test_an_editable_install_finder_into_the_users_tree_is_moved_to_the_workspace(
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

    assert recorder.errors == []
    assert [(r.verdict.value, r.loaded) for r in recorder.results] == [
        ("CAUGHT", True), ("SURVIVED", True)
    ]
    assert run.exit_code() is ExitCode.OK
