"""The tests `suggest` runs its candidates against, unless `--test` names them: the tests of
the specs whose mutations cover a changed file, else of the specs whose committed evidence
records loading one, else the project's tests; each with the test files the change touched."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import CALC, PYPROJECT, Completed, Project, default_spec, git
from nodes import committed

Cli = Callable[..., Completed]
CAPPED = CALC.replace("    if value > high:\n", "    if value > high:  # the cap\n")
ADULT_TEST = ("from calc import is_adult\n\n\ndef test_adult_at_eighteen():\n"
              "    assert is_adult(18)\n")


def _draft(root: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(
        (root / ".mutharness/suggest/draft.json").read_text("utf-8"))
    return found


def test_a_change_to_a_file_a_spec_mutates_runs_that_spec_s_tests_and_the_change_s_own(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    project = make_project()  # specs/calc.json mutates src/calc.py; its tests tests/test_calc.py
    project.write("src/calc.py", CAPPED)
    project.write("tests/test_adult.py", ADULT_TEST)
    project.commit("the cap, and a test of adults")

    done = cli(project.root, "suggest", "--since", "HEAD~1", "--no-progress")

    assert done.code == 0, done.out + done.err
    assert _draft(project.root)["tests"] == ["tests/test_calc.py", "tests/test_adult.py"]
    assert ("  (the tests of specs/calc.json, whose mutations cover a changed file; and the "
            "test files the change touched)") in done.out


def test_with_no_spec_covering_or_recording_a_changed_file_the_project_s_tests_run(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    project = make_project(spec=default_spec(mutations=[]))
    project.write("src/calc.py", CAPPED)
    project.commit("the cap, without a test")

    done = cli(project.root, "suggest", "--since", "HEAD~1", "--no-progress")

    assert done.code == 0, done.out + done.err
    draft = _draft(project.root)
    assert draft["tests"] == ["tests"] and draft["expectBaselinePass"] == 4
    assert ("  (no spec covers a changed file and no evidence records loading one: the "
            "project's tests, tests)") in done.out


LIMITS = "HIGH = 10\n"
USES_LIMITS = CALC.replace('"""A tiny module under test."""\n',
                           '"""A tiny module under test."""\nimport limits\n')


def test_a_change_to_a_file_no_spec_mutates_runs_the_tests_whose_evidence_loaded_it(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    project = make_project()
    project.write("src/limits.py", LIMITS)
    project.write("src/calc.py", USES_LIMITS)
    project.write("src/other.py", "def twice(n):\n    return 2 * n\n")
    project.write("tests/test_other.py",
                  "from other import twice\n\n\ndef test_twice():\n    assert twice(2) == 4\n")
    project.spec("other", {"tests": ["tests/test_other.py"], "expectBaselinePass": 1,
                           "mutations": [{"name": "thrice", "file": "src/other.py",
                                          "anchor": "2 * n", "replacement": "3 * n"}]})
    project.commit("calc reads its limits; a second spec")
    verified = cli(project.root, "verify", "--evidence", "evidence", "--no-progress")
    assert verified.code == 0, verified.out + verified.err
    project.commit("evidence: the record of what each spec's tests loaded")
    project.write("src/limits.py", LIMITS + "\n\ndef over(value):\n    return value > HIGH\n"
                  "\n\nOVER = over(HIGH + 1)\n")  # run as calc imports it
    project.commit("a limit check")

    done = cli(project.root, "suggest", "--since", "HEAD~1", "--no-progress")

    assert done.code == 0, done.out + done.err
    assert _draft(project.root)["tests"] == ["tests/test_calc.py"]
    assert ("  (the tests of specs/calc.json, whose evidence records loading a changed file)"
            in done.out)


def test_a_project_with_no_test_at_all_is_told_to_name_one(
    tmp_path: Path, git_home: Path, cli: Cli
) -> None:
    root = committed(tmp_path / "bare", {"pyproject.toml": PYPROJECT, "src/calc.py": CALC,
                                          ".gitignore": ".mutharness/\n"}, "calc, untested")
    (root / "src/calc.py").write_text(CAPPED, "utf-8")
    git(root, "commit", "-q", "-am", "the cap")

    done = cli(root, "suggest", "--since", "HEAD~1")

    assert done.code == 2, done.out + done.err
    assert ("suggest --since HEAD~1: no spec covers a changed file, no evidence records "
            "loading one, and the project has no pytest test file") in done.err
    assert "name the tests with --test" in done.err
