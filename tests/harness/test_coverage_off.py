"""Coverage is never measured in a run mutharness makes: it serves no verdict and slows every run.

pytest-cov in the project's addopts is switched off (as `--no-cov` would), coverage's and
pytest-cov's start-up lines (`.pth` files, inert unless their variables are set) are vouched
for by their exact text, and those variables never reach a run: the fork server serves, and
the verdicts are those of a run without coverage. Real pytest-cov, real venvs and real pytest
children.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import Completed, Project, Venv
from inproc import in_process
from test_clean_state import coverage_floor_project

pytestmark = pytest.mark.skipif(sys.platform == "win32",
                                reason="builds POSIX venv layouts (bin/python)")

# pytest-cov 2.12 to 6.3's pytest-cov.pth, byte for byte (7.0 ships none)
PYTEST_COV_PTH = (
    "import os, sys;exec('if \\'COV_CORE_SOURCE\\' in os.environ:\\n try:\\n  from "
    "pytest_cov.embed import init\\n  init()\\n except Exception as exc:\\n  "
    "sys.stderr.write(\\n   \"pytest-cov: "
    "Failed to setup subprocess coverage. \"\\n   \"Environ: {0!r} \"\\n   \"Exception: {1!r}"
    "\\\\n\".format(\\n    dict((k, v) for k, v in os.environ.items() if k.startswith(\\'COV_CORE"
    "\\')),\\n    exc\\n   )\\n  )\\n')"
)
# coverage 7.18's a1_coverage.pth
COVERAGE_PTH = (
    "import sys; exec('import os\\n\\nif os.getenv(\"COVERAGE_PROCESS_START\") or os.getenv("
    "\"COVERAGE_PROCESS_CONFIG\"):\\n try:\\n  import coverage\\n except:\\n  pass\\n else:\\n  "
    "coverage.process_startup(slug=\"pth\")')"
)


def _verify(project: Project, venv: Venv, name: str, *flags: str,
            **env: str) -> tuple[Completed, dict[str, Any]]:
    out = project.root.parent / f"{name}.json"
    done = in_process(project.root, "verify", "specs/calc.json", "--python", str(venv.python),
                      "--json", str(out), *flags,
                      env={**os.environ, "PYTHONIOENCODING": "utf-8", **env})
    return done, json.loads(out.read_text("utf-8"))


def _verdicts(results: dict[str, Any]) -> list[tuple[object, ...]]:
    return [(m["verdict"], m["facts"].get("failing"), m["facts"].get("passed"))
            for spec in results["specs"] for m in spec["mutations"]]


def _logs(project: Project) -> str:
    return "".join(path.read_text("utf-8", "replace")
                   for path in sorted((project.root / ".mutharness").rglob("*.log")))


def test_pytest_cov_in_addopts_and_coverage_s_start_up_lines_change_no_verdict_and_measure_nothing(
    make_project: Callable[..., Project], make_venv: Callable[..., Venv], tool_site: Path
) -> None:
    # a floor the spec's tests do not reach: with coverage measured, every run fails on it
    project = coverage_floor_project(
        make_project, "--cov=calc --cov-report=term-missing --cov-fail-under=100")
    venv = make_venv("cov", tools=tool_site)
    venv.add_pth("pytest-cov", PYTEST_COV_PTH)
    venv.add_pth("a1_coverage", COVERAGE_PTH)
    rc = project.root.parent / "coveragerc"
    rc.write_text("[run]\nparallel = true\n", encoding="utf-8")
    # what a CI job sets for coverage of subprocesses: never passed on to a run
    started = {"COVERAGE_PROCESS_START": str(rc), "COV_CORE_SOURCE": "calc"}

    default, default_results = _verify(project, venv, "default", **started)
    logs = _logs(project)
    bare, bare_results = _verify(project, venv, "bare", "--pytest-runner", "subprocess",
                                 "--pytest-addopts", "-p no:pytest_cov")

    assert bare.code == 0, bare.out + bare.err
    assert _verdicts(bare_results) == [("CAUGHT", ["tests/test_calc.py::test_clamp_below"], 0),
                                       ("SURVIVED", [], 4)]
    assert default.code == 0, default.out + default.err
    assert _verdicts(default_results) == _verdicts(bare_results)
    # the fork server served: no start-up line it could not vouch for, no note
    assert "note:" not in default.err, default.err
    assert default_results["notes"] == []
    # nothing was measured: no report in any run's output, no data file left
    assert "coverage: platform" not in logs and "Required test coverage" not in logs, logs
    assert "TOTAL" not in logs
    assert [m["removed"] for spec in default_results["specs"] for m in spec["mutations"]] == [
        [], []]  # no .coverage written
