"""The node load record: which files of the checkout each test file's processes loaded and
read (ES modules, CommonJS, fs reads, node children), and what `--since` and `loaded` make of
it, with real `node --test` runs."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Completed, Project, git

pytestmark = pytest.mark.skipif(shutil.which("node") is None,
                                reason="node is not installed (.ci/run installs it)")

Cli = Callable[..., Completed]

RATES = """\
import fs from 'node:fs';
export const rates = JSON.parse(fs.readFileSync(new URL('./rates.json', import.meta.url)));
export function add(x, y) { return x + y; }
"""
TWICE = """\
exports.twice = (x) => 2 * x;
"""
TEST_A = """\
import test from 'node:test';
import assert from 'node:assert';
import { add, rates } from '../lib/a.mjs';
test('adds', () => { assert.equal(add(1, 2), 3); assert.equal(rates.floor, 0); });
"""
TEST_B = """\
const test = require('node:test');
const assert = require('node:assert');
const { spawnSync } = require('node:child_process');
test('twice, in a node child', () => {
  const code = "process.exit(require('./lib/b.cjs').twice(2))";
  const child = spawnSync(process.execPath, ['-e', code]);
  assert.equal(child.status, 4);
});
"""


def _project(root: Path) -> Project:
    root.mkdir()
    git(root, "init", "-q")
    project = Project(root)
    project.write("package.json", json.dumps({"name": "loads", "private": True}))
    project.write("lib/a.mjs", RATES)
    project.write("lib/rates.json", '{"floor": 0}\n')
    project.write("lib/b.cjs", TWICE)
    project.write("lib/unused.mjs", "export const never = 1;\n")
    project.write("test/a.test.mjs", TEST_A)
    project.write("test/b.test.cjs", TEST_B)
    project.write("README.md", "loads\n")
    project.spec("loads", {"tests": ["test/a.test.mjs", "test/b.test.cjs"],
                           "expectBaselinePass": 2, "mutations": [
        {"name": "add subtracts", "file": "lib/a.mjs", "anchor": "x + y", "replacement": "x - y"},
        {"name": "twice triples (in a node child)", "file": "lib/b.cjs", "anchor": "2 * x",
         "replacement": "3 * x"},
        {"name": "code no test loads", "file": "lib/unused.mjs", "anchor": "= 1",
         "replacement": "= 2", "expectCaught": False},
    ]})
    project.commit("a node project whose code reads a data file at import")
    return project


def test_each_test_file_s_loads_and_reads_are_recorded_children_included(
    tmp_path: Path, git_home: Path, cli: Cli
) -> None:
    project = _project(tmp_path / "repo")

    done = cli(project.root, "verify", "--evidence", "evidence")

    assert done.code == 0, done.out + done.err
    [spec] = json.loads((project.root / "evidence/loads.json").read_text("utf-8"))["specs"]
    loads = spec["baseline"]["runner_facts"]["loads"]
    assert loads["test/a.test.mjs"]["loaded"] == ["lib/a.mjs", "test/a.test.mjs"]
    assert loads["test/a.test.mjs"]["read"] == ["lib/rates.json"]
    assert "lib/b.cjs" in loads["test/b.test.cjs"]["loaded"]  # by its node child
    assert spec["recorded"] == ["imports", "reads"]
    assert "lib/rates.json" in spec["depends_on"] and "README.md" not in spec["depends_on"]
    loaded = [mutation["loaded"] for mutation in spec["mutations"]]
    assert loaded == [True, True, False]  # the last: code no process loaded


def test_since_follows_a_node_spec_s_record_to_a_data_file_and_past_a_readme(
    tmp_path: Path, git_home: Path, cli: Cli
) -> None:
    project = _project(tmp_path / "repo")
    assert cli(project.root, "verify", "--evidence", "evidence").code == 0
    project.commit("evidence")
    base = git(project.root, "rev-parse", "HEAD").strip()
    project.write("README.md", "loads, documented\n")
    project.commit("the readme")
    readme = cli(project.root, "check", "--since", base)
    project.write("lib/rates.json", '{"floor": 1}\n')
    project.commit("the data file")

    data = cli(project.root, "verify", "--since", base)

    assert "no spec is affected" in readme.out, readme.out
    assert "lib/rates.json, which its last recorded run depended on, changed" in data.out
    assert data.code == 3, data.out + data.err  # the suite is red now: measured, not skipped


TEST_C = """\
const test = require('node:test');
const assert = require('node:assert');
const { execFileSync } = require('node:child_process');
test('a program that is not node', () => {
  assert.ok(execFileSync('git', ['--version']).length > 0);
});
"""


def test_a_node_mutant_runs_only_the_test_files_that_loaded_or_read_its_file(
    tmp_path: Path, git_home: Path, cli: Cli
) -> None:
    """The others were given the same input by construction: their baseline outcomes stand.
    A file that started a program no hook sees always runs; every verdict is a whole run's."""
    project = _project(tmp_path / "repo")
    project.write("test/c.test.cjs", TEST_C)
    spec = json.loads((project.root / "specs/loads.json").read_text("utf-8"))
    spec["tests"].append("test/c.test.cjs")
    spec["expectBaselinePass"] = 3
    spec["mutations"].append({"name": "the data file read at import", "file": "lib/rates.json",
                              "anchor": '"floor": 0', "replacement": '"floor": 1'})
    project.spec("loads", spec)
    project.commit("a test file that starts a program, and a mutant of the data file")

    done = cli(project.root, "verify", "--evidence", "evidence")

    assert done.code == 0, done.out + done.err
    [result] = json.loads((project.root / ".mutharness/results.json").read_text("utf-8"))["specs"]
    subsets = [m["facts"]["runner_facts"].get("subset") for m in result["mutations"]]
    assert subsets == [
        {"ran": ["test/a.test.mjs", "test/c.test.cjs"], "stood": ["test/b.test.cjs"]},
        {"ran": ["test/b.test.cjs", "test/c.test.cjs"], "stood": ["test/a.test.mjs"]},
        {"ran": ["test/c.test.cjs"], "stood": ["test/a.test.mjs", "test/b.test.cjs"]},
        {"ran": ["test/a.test.mjs", "test/c.test.cjs"], "stood": ["test/b.test.cjs"]},
    ]
    verdicts = [m["verdict"] for m in result["mutations"]]
    assert verdicts == ["CAUGHT", "CAUGHT", "SURVIVED", "CAUGHT"]
    # each caught run stopped after its first failing file: its own, then the stood ones
    counts = [(m["facts"]["passed"], m["facts"]["failed"]) for m in result["mutations"]]
    assert counts == [(1, 1), (1, 1), (3, 0), (1, 1)]
    assert [m["facts"]["runner_facts"].get("stopped_after") for m in result["mutations"]] == [
        "test/a.test.mjs", "test/b.test.cjs", None, "test/a.test.mjs"]
    evidence = (project.root / "evidence/loads.md").read_text("utf-8")
    assert ("Its run ran the 2 test file(s) whose processes loaded or read `lib/a.mjs` in the "
            "baseline (`test/a.test.mjs`, `test/c.test.cjs`), in that order up to the first "
            "that failed, `test/a.test.mjs`; the baseline's outcomes stand for "
            "the 1 other(s), which neither loaded nor read it") in evidence
