"""The pytest versions real projects pin: mutharness runs with the oldest it claims (7.4), refuses
an older one clearly, never upgrades a project's pytest when installed beside it, and lets the
project neutralise an `addopts` that fails a subset for reasons unrelated to the tests."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import (
    Completed,
    Project,
    Venv,
    gate_project,
    install,
    pip,
)
from wheelhouse import FLOOR_PYTEST, TOO_OLD_PYTEST

from mutharness.runners.pytest.runner import MIN_PYTEST

ProjectFactory = Callable[..., Project]
VenvFactory = Callable[..., Venv]
Cli = Callable[..., Completed]
ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    sys.platform == "win32", reason="builds POSIX venv layouts (bin/python)"
)


def test_the_floor_the_tests_use_is_the_one_the_runner_claims() -> None:
    assert FLOOR_PYTEST.startswith(MIN_PYTEST + ".")


def test_verify_runs_end_to_end_with_the_oldest_pytest_it_supports(
    make_project: ProjectFactory, make_venv: VenvFactory, floor_site: Path, cli: Cli
) -> None:
    project = make_project()
    venv = make_venv("floor", tools=floor_site)

    done = cli(project.root, "verify", "specs/calc.json", "--python", str(venv.python))

    assert done.code == 0, done.out + done.err
    results = json.loads((project.root / ".mutharness/results.json").read_text("utf-8"))
    assert results["tool"]["pytest"] == FLOOR_PYTEST
    assert [m["verdict"] for m in results["specs"][0]["mutations"]] == ["CAUGHT", "SURVIVED"]


def test_a_pytest_older_than_the_floor_is_refused_naming_both_versions(
    make_project: ProjectFactory, make_venv: VenvFactory, wheelhouse: Path, cli: Cli
) -> None:
    project = make_project()
    venv = make_venv("too-old", with_pytest=False)
    install(venv, wheelhouse, f"pytest=={TOO_OLD_PYTEST}")

    done = cli(project.root, "verify", "specs/calc.json", "--python", str(venv.python))

    assert done.code == 5, done.out + done.err
    assert f"pytest {TOO_OLD_PYTEST} in {venv.python} is older than {MIN_PYTEST}" in done.err
    assert f'pip install "pytest>={MIN_PYTEST}"' in done.err


def test_installing_mutharness_into_a_project_environment_keeps_its_pinned_pytest(
    make_venv: VenvFactory, wheelhouse: Path, tmp_path: Path
) -> None:
    venv = make_venv("project", with_pytest=False)
    install(venv, wheelhouse, f"pytest=={FLOOR_PYTEST}")
    report = tmp_path / "report.json"

    pip("--python", venv.python, "install", "--dry-run", "--quiet", "--no-index",
        "--find-links", wheelhouse, "--report", report, ROOT)

    planned = {item["metadata"]["name"].lower(): item["metadata"]["version"]
               for item in json.loads(report.read_text("utf-8"))["install"]}
    assert "mutharness" in planned
    assert "pytest" not in planned  # the project's pytest 7.4 stays


def test_an_addopts_gate_unrelated_to_the_tests_shows_pytests_reason_and_can_be_neutralised(
    make_project: ProjectFactory, cli: Cli, tmp_path: Path,
) -> None:
    project = gate_project(make_project, "--min-tests=99")

    refused = cli(project.root, "verify", "specs/calc.json")

    assert refused.code == 3, refused.out + refused.err
    assert "pytest said: FAIL Required 99 tests not reached" in refused.err

    gate = (project.root / "pyproject.toml").read_text("utf-8")
    project.write("pyproject.toml", gate + (
        '\n[tool.mutharness]\n# a reviewed change: mutation runs need no suite-wide gate\n'
        'pytest-addopts = "-ra"\n'
    ))
    project.commit("mutharness runs without the suite's gate")

    done = cli(project.root, "verify", "specs/calc.json", "--evidence", str(tmp_path / "evidence"))

    assert done.code == 0, done.out + done.err
    results = json.loads((project.root / ".mutharness/results.json").read_text("utf-8"))
    assert results["settings"]["changed"] == {"pytest-addopts": "-ra"}
    assert results["settings"]["sources"]["pytest-addopts"] == "config"
    assert results["settings"]["config_file"] == "pyproject.toml [tool.mutharness]"
    evidence = (tmp_path / "evidence/calc.md").read_text("utf-8")
    assert "`pytest-addopts = -ra` (config)" in evidence
    assert "config file `pyproject.toml [tool.mutharness]`" in evidence
    assert "--pytest-addopts -ra" in evidence  # the re-derive command repeats it


def test_an_unknown_key_in_the_project_settings_is_refused(
    make_project: ProjectFactory, cli: Cli
) -> None:
    project = make_project()
    project.write("pyproject.toml", (project.root / "pyproject.toml").read_text()
                  + '\n[tool.mutharness]\npytest-adopts = ""\n')
    project.commit("a typo")

    done = cli(project.root, "verify", "specs/calc.json")

    assert done.code == 2, done.out + done.err
    assert "pyproject.toml [tool.mutharness]: pytest-adopts: is not a mutharness option" in done.err
