"""A flaky baseline is detected by --baseline-runs and reported as unstable (exit 2)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from conftest import Completed, Project, default_spec
from madefacts import pytest_facts

from mutharness.model.verdict import unstable_tests
from mutharness.runners.base import Outcome, RunFacts, TestOutcome

FLAKY_TEST = '''\
import os
import pathlib


def test_fails_one_run_in_three():
    counter = pathlib.Path(os.environ["FLAKY_COUNTER"])
    count = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(count + 1))
    assert count % 3 != 1
'''


def _run(*outcomes: tuple[str, str]) -> RunFacts:
    return pytest_facts(
        outcomes=tuple(TestOutcome(nodeid, Outcome(kind), 0.0) for nodeid, kind in outcomes),
    )


def test_a_test_with_the_same_outcome_in_every_run_is_stable() -> None:
    runs = [_run(("t::a", "passed"), ("t::b", "failed"))] * 3
    assert unstable_tests(runs) == ()


def test_a_test_whose_outcome_varies_or_that_a_run_lacks_is_unstable() -> None:
    runs = [
        _run(("t::a", "passed"), ("t::b", "passed"), ("t::c", "passed")),
        _run(("t::a", "passed"), ("t::b", "failed"), ("t::c", "passed")),
        _run(("t::a", "passed"), ("t::b", "passed")),
    ]
    assert unstable_tests(runs) == ("t::b", "t::c")


def _flaky_project(make_project: Callable[..., Project]) -> Project:
    spec = default_spec(tests=["tests/test_calc.py", "tests/test_flaky.py"], expectBaselinePass=5)
    project = make_project(spec=spec)
    project.write("tests/test_flaky.py", FLAKY_TEST)
    project.commit("a flaky test")
    return project


def test_three_baseline_runs_expose_a_test_that_fails_one_run_in_three(
    make_project: Callable[..., Project], cli: Callable[..., Completed], tmp_path: Path
) -> None:
    project = _flaky_project(make_project)
    env = {**os.environ, "FLAKY_COUNTER": str(tmp_path / "counter")}

    done = cli(project.root, "verify", "specs/calc.json", "--baseline-runs", "3", env=env)

    assert done.code == 3, done.out + done.err
    assert "unstable: 1 test(s) did not have the same outcome in all 3 baseline runs" in done.err
    assert "tests/test_flaky.py::test_fails_one_run_in_three" in done.err
    results = json.loads((project.root / ".mutharness/results.json").read_text())
    assert results["specs"][0]["mutations"] == []
    assert results["settings"]["values"]["baseline-runs"] == 3
    assert results["settings"]["sources"]["baseline-runs"] == "command line"
    assert results["settings"]["rederive_flags"] == ["--baseline-runs", "3"]


def test_one_baseline_run_cannot_see_the_flakiness(
    make_project: Callable[..., Project], cli: Callable[..., Completed], tmp_path: Path
) -> None:
    project = _flaky_project(make_project)
    env = {**os.environ, "FLAKY_COUNTER": str(tmp_path / "counter")}

    done = cli(project.root, "verify", "specs/calc.json", env=env)

    # The flaky test fails in the first mutation's run (count 1), so that run is "caught" by a
    # flaky test: exactly the false verdict that --baseline-runs 3 exists to prevent.
    assert "unstable" not in done.err
    assert "baseline 5 pass / 0 fail" in done.out
