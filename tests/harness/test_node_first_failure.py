"""A node mutant's run stops once its first failing test file has ended (--first-failure)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Completed
from nodes import NODES, committed, results, spec_text

Cli = Callable[..., Completed]

ADDS = """\
const test = require('node:test');
const assert = require('node:assert');
const { add } = require('../lib/calc.js');
test('adds', () => { assert.strictEqual(add(2, 3), 5); });
test('adds zero', () => { assert.strictEqual(add(4, 0), 4); });
"""
ADDS_AGAIN = """\
const test = require('node:test');
const assert = require('node:assert');
const { add } = require('../lib/calc.js');
test('adds again', () => { assert.strictEqual(add(1, 1), 2); });
test('adds once more', () => { assert.strictEqual(add(2, 2), 4); });
test('adds negatives', () => { assert.strictEqual(add(-1, -1), -2); });
"""
MUTATIONS = [
    {"name": "adds one more", "file": "lib/calc.js", "anchor": "a + b",
     "replacement": "a + b + 1", "expectCaught": True},
    {"name": "adds one more, named", "file": "lib/calc.js", "anchor": "a + b",
     "replacement": "a + b + 1", "expectCaught": True,
     "killedBy": ["test/adds.test.js > adds"]},
    {"name": "zero is special", "file": "lib/calc.js", "anchor": "a + b",
     "replacement": "(b === 7 ? a : a + b)", "expectCaught": False},
]


def _project(root: Path) -> Path:
    return committed(root, {
        ".gitignore": ".mutharness/\n",
        "package.json": json.dumps({"name": "calc", "version": "1.0.0"}),
        "lib/calc.js": "exports.add = (a, b) => a + b;\n",
        "test/adds.test.js": ADDS,
        "test/again.test.js": ADDS_AGAIN,
        "specs/calc.json": spec_text(["test/adds.test.js", "test/again.test.js"], 5, MUTATIONS),
    }, "two test files")


@pytest.mark.parametrize("node", NODES)
def test_a_node_mutant_stops_after_its_first_failing_file_and_a_survivor_runs_every_file(
    tmp_path: Path, git_home: Path, cli: Cli, node: str
) -> None:
    project = _project(tmp_path / "calc")

    done = cli(project, "verify", "specs/calc.json", "--node", node)

    assert done.code == 0, done.out + done.err
    [spec] = results(project)["specs"]
    stopped, named, survivor = spec["mutations"]
    # the first file failed both its tests; the second file never started
    assert (stopped["verdict"], stopped["first_failure"]) == ("CAUGHT", True)
    assert (stopped["facts"]["failed"], stopped["facts"]["passed"]) == (2, 0)
    assert stopped["facts"]["runner_facts"]["stopped_after"] == "test/adds.test.js"
    log = (project / ".mutharness/runs/calc/mutant-1.log").read_text("utf-8")
    assert "adds again" not in log
    # why the tests failed is in the log, whatever node's reporter had printed when it ended
    # (node 22 and later print a failure's details only in their summary, after every file)
    assert "AssertionError" in log and "6 !== 5" in log, log
    # a mutation with killedBy keeps full counts, and so does a survivor
    assert (named["verdict"], named["first_failure"]) == ("CAUGHT", False)
    assert (named["facts"]["failed"], named["facts"]["passed"]) == (5, 0)
    assert (survivor["verdict"], survivor["facts"]["passed"]) == ("SURVIVED", 5)
    assert "stopped at its first failing test file" in done.out
    # the results re-derive: render takes them as verify wrote them
    rendered = cli(project, "render", ".mutharness/results.json", "--out", "rendered")
    assert rendered.code == 0, rendered.out + rendered.err
    document = (project / "rendered/calc.md").read_text("utf-8")
    assert "Its run stopped once its first failing test file, `test/adds.test.js`" in document


@pytest.mark.parametrize("node", NODES[:1])
def test_without_first_failure_a_node_mutant_runs_every_file(
    tmp_path: Path, git_home: Path, cli: Cli, node: str
) -> None:
    project = _project(tmp_path / "calc")

    done = cli(project, "verify", "specs/calc.json", "--node", node, "--no-first-failure")

    assert done.code == 0, done.out + done.err
    [spec] = results(project)["specs"]
    full = spec["mutations"][0]
    assert (full["verdict"], full["first_failure"]) == ("CAUGHT", False)
    assert (full["facts"]["failed"], full["facts"]["passed"]) == (5, 0)
    assert "stopped_after" not in full["facts"]["runner_facts"]
