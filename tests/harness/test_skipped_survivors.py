"""A mutant that turns passing tests into skips is a survivor the tests do not catch, named so."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from conftest import Completed, Project, default_spec
from inproc import in_process

ProjectFactory = Callable[..., Project]
Cli = Callable[..., Completed]

FORMATS = '''\
"""Format checkers by name, as jsonschema keeps them."""

CHECKERS = {"date": lambda text: len(text.split("-")) == 3}


def check(name, text):
    return CHECKERS[name](text)
'''

TEST_FORMATS = '''\
import random

import pytest

from formats import CHECKERS, check


def checker(name):
    if name not in CHECKERS:
        pytest.skip(REASON)
    return name


def test_a_date_has_three_parts():
    assert check(checker("date"), "2026-12-02")


def test_a_word_is_no_date():
    assert not check(checker("date"), "today")
'''

MISNAMED = {"name": "the date checker is registered under another name",
            "file": "src/formats.py", "anchor": '{"date":', "replacement": '{"dat":'}


def project_with(make_project: ProjectFactory, reason: str, **mutation: Any) -> Project:
    project = make_project(spec=default_spec(
        tests=["tests/test_formats.py"], expectBaselinePass=2,
        mutations=[{**MISNAMED, **mutation}],
    ))
    project.write("src/formats.py", FORMATS)
    project.write("tests/test_formats.py", TEST_FORMATS.replace("REASON", reason))
    project.commit("format checkers")
    return project


def only_mutation(project: Project) -> dict[str, Any]:
    results = json.loads((project.root / ".mutharness/results.json").read_text("utf-8"))
    (mutation,) = results["specs"][0]["mutations"]
    return mutation


@pytest.mark.parametrize(("expect_caught", "code"), [(True, 1), (False, 0)])
def test_a_mutant_whose_tests_skip_instead_of_running_survived_and_names_them(
    make_project: ProjectFactory, cli: Cli, expect_caught: bool, code: int
) -> None:
    project = project_with(make_project, "\"Format checker 'date' not found\"",
                           expectCaught=expect_caught)

    done = cli(project.root, "verify", "specs/calc.json")

    assert done.code == code, done.out + done.err
    mutation = only_mutation(project)
    assert mutation["verdict"] == "SURVIVED"
    assert "tests/test_formats.py::test_a_date_has_three_parts" in mutation["reason"]
    assert "tests/test_formats.py::test_a_date_has_three_parts" in done.out
    assert {test["outcome"] for test in mutation["facts"]["not_passed"]} == {"skipped"}


def test_a_mutant_whose_skip_reason_differs_between_runs_stays_untrustworthy(
    make_project: ProjectFactory
) -> None:
    project = project_with(make_project, "f'not found (try {random.random()})'")

    done = in_process(project.root, "verify", "specs/calc.json")

    assert done.code == 4, done.out + done.err
    assert only_mutation(project)["verdict"] == "UNTRUSTWORTHY"
