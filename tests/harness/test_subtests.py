"""pytest 9's own subtests (unittest's subTest): a suite that uses them is measured, and a test
with a failing subtest, which pytest-json-report words as passed, is a failing test: CAUGHT."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from conftest import Completed, Project

Cli = Callable[..., Completed]

SUBTESTS = '''\
import unittest

from calc import clamp


class ClampTests(unittest.TestCase):
    def test_inside_the_bounds(self):
        for value in (1, 5, 9):
            with self.subTest(value=value):
                self.assertEqual(clamp(value, 0, 10), value)

    def test_never_below_the_low_bound(self):
        for value in (-1, 4):  # the last subtest passes even when the first fails
            with self.subTest(value=value):
                self.assertEqual(clamp(value, 0, 10), max(value, 0))

    def test_above_the_high_bound(self):
        for value in (11, 20):  # every subtest fails together
            with self.subTest(value=value):
                self.assertEqual(clamp(value, 0, 10), 10)
'''
SPEC = {
    "tests": ["tests/test_subtests.py"],
    "expectBaselinePass": 3,
    "mutations": [
        {"name": "the low bound is ignored: a subtest fails, then one passes",
         "file": "src/calc.py", "anchor": "    if value < low:\n        return low\n",
         "replacement": ""},
        {"name": "the high bound is ignored: every subtest of a test fails",
         "file": "src/calc.py", "anchor": "    if value > high:\n        return high\n",
         "replacement": ""},
    ],
}


def test_a_suite_with_subtests_is_measured_and_a_failing_subtest_fails_its_test(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    pytest_version = tuple(int(part) for part in pytest.__version__.split(".")[:2])
    if pytest_version < (9, 0):
        pytest.skip("subtests are built into pytest from 9.0")
    project = make_project()
    project.write("tests/test_subtests.py", SUBTESTS)
    project.spec("calc", SPEC)
    project.commit("unittest subtests")

    done = cli(project.root, "verify", "specs/calc.json")

    results = json.loads((project.root / ".mutharness/results.json").read_text("utf-8"))
    [spec] = results["specs"]
    assert spec["error"] == "", done.out + done.err  # the baseline is not refused
    assert spec["baseline"]["passed"] == 3
    hidden, whole = spec["mutations"]
    # pytest-json-report words the test after its last subtest, which passed; pytest's own
    # reports (read by mutharness's probe plugin) say a subtest of it failed
    assert hidden["verdict"] == "CAUGHT", hidden["reason"]
    assert hidden["facts"]["failing"] == [
        "tests/test_subtests.py::ClampTests::test_never_below_the_low_bound"
    ]
    assert whole["verdict"] == "CAUGHT"
    assert whole["facts"]["failing"] == [
        "tests/test_subtests.py::ClampTests::test_above_the_high_bound"
    ]
    assert done.code == 0, done.out + done.err
