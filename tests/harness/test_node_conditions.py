"""node's export conditions (`--conditions development`): from the project config's `[node]
options` and from the package.json test script, carried to every test file's process.

The project resolves its own name through its `exports` (a self-reference): the `development`
condition maps it to `src/` (the code the mutants change), the default to a committed build
in `dist/` (the same code, built before). Without the condition every test file runs the
build, and every mutant survives; with it in each test file's process, the mutants are caught
by the tests of both files. Real `node --test` runs, on node on PATH (and each node
MUTHARNESS_NODES names where the test says so).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Completed
from nodes import NODE, NODES, committed, results, spec_text

from mutharness.options import resolve
from mutharness.runners.node import rules

pytestmark = pytest.mark.skipif(NODE is None, reason="node (.ci/run installs it)")

Cli = Callable[..., Completed]

CALC = """\
export const add = (a, b) => a + b;
export const half = (n) => n / 2;
"""
ADD_TEST = """\
import test from 'node:test';
import assert from 'node:assert';
import { add } from 'calc';
test('adds', () => { assert.strictEqual(add(2, 3), 5); });
"""
HALF_TEST = """\
import test from 'node:test';
import assert from 'node:assert';
import { half } from 'calc';
test('halves', () => { assert.strictEqual(half(8), 4); });
"""


def conditioned(root: Path, script: str, config: str = "") -> Path:
    """A package whose `development` condition maps it to src/, its default to dist/."""
    files = {
        ".gitignore": ".mutharness/\n",
        "package.json": json.dumps({
            "name": "calc", "version": "1.0.0", "type": "module",
            "exports": {".": {"development": "./src/calc.js", "default": "./dist/calc.js"}},
            "scripts": {"test": script}}),
        "src/calc.js": CALC,
        "dist/calc.js": CALC,  # the build, committed: without the condition, what runs
        "test/add.test.js": ADD_TEST,
        "test/half.test.js": HALF_TEST,
        "specs/calc.json": spec_text(["test/add.test.js", "test/half.test.js"], 2, [
            {"name": "add subtracts", "file": "src/calc.js", "anchor": "a + b",
             "replacement": "a - b", "expectCaught": True},
            {"name": "half doubles", "file": "src/calc.js", "anchor": "n / 2",
             "replacement": "n * 2", "expectCaught": True},
        ]),
        **({"mutharness.toml": config} if config else {}),
    }
    return committed(root, files, "a package with a development condition")


def _assert_caught_in_both_files(project: Path, done: Completed) -> None:
    [spec] = results(project)["specs"]
    assert spec["error"] == "", done.out + done.err
    assert [(m["verdict"], m["facts"]["failing"]) for m in spec["mutations"]] == [
        ("CAUGHT", ["test/add.test.js > adds"]), ("CAUGHT", ["test/half.test.js > halves"])]
    assert done.code == 0, done.out + done.err


SCRIPTS = [
    "node --test --conditions development test/",
    "node --test --conditions=development test/",
    "node -C development --test test/",
]


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_export_conditions_of_the_test_script_reach_every_test_file_s_process(
    tmp_path: Path, git_home: Path, cli: Cli, script: str
) -> None:
    project = conditioned(tmp_path / "calc", script)

    done = cli(project, "verify", "specs/calc.json")

    _assert_caught_in_both_files(project, done)
    said = ("node conditions from package.json's test script: --conditions=development (a "
            "--conditions in [node] options replaces them)")
    assert said in done.err
    assert said in results(project)["notes"]


CONFIGS = [
    '[node]\noptions = ["--conditions=development"]\n',
    '[node]\noptions = ["--conditions development"]\n',
    '[node]\noptions = ["-C", "development"]\n',
    '[node]\noptions = ["-C development", "--enable-source-maps"]\n',
]


@pytest.mark.parametrize("config", CONFIGS)
def test_the_export_conditions_of_the_project_config_reach_every_test_file_s_process(
    tmp_path: Path, git_home: Path, cli: Cli, config: str
) -> None:
    # the script names another condition: the config's replace it
    project = conditioned(tmp_path / "calc", "node --test -C production test/", config)

    done = cli(project, "verify", "specs/calc.json")

    _assert_caught_in_both_files(project, done)
    assert "node conditions from package.json" not in done.err


@pytest.mark.parametrize("node", NODES)
def test_the_export_conditions_reach_every_test_file_on_each_node(
    tmp_path: Path, git_home: Path, cli: Cli, node: str
) -> None:
    project = conditioned(tmp_path / "calc", "node --test --conditions development test/")

    done = cli(project, "verify", "specs/calc.json", "--node", node)

    _assert_caught_in_both_files(project, done)


def test_without_the_condition_the_build_runs_and_every_mutant_survives(
    tmp_path: Path, git_home: Path, cli: Cli
) -> None:
    project = conditioned(tmp_path / "calc", "node --test test/")

    done = cli(project, "verify", "specs/calc.json")

    [spec] = results(project)["specs"]
    assert [m["verdict"] for m in spec["mutations"]] == ["SURVIVED", "SURVIVED"]
    assert done.code == 1, done.out + done.err


def test_a_conditions_option_without_a_name_is_refused_naming_it() -> None:
    with pytest.raises(Exception, match="'--conditions' is not allowed"):
        resolve({}, {"node.options": ("--conditions",)}, "mutharness.toml")
    with pytest.raises(Exception, match="'-C=development' is not allowed"):
        resolve({}, {"node.options": ("-C=development",)}, "mutharness.toml")


WORDS = [
    (("--conditions=development",), ["--conditions=development"]),
    (("--conditions development",), ["--conditions=development"]),
    (("-C development", "--no-warnings"), ["--conditions=development", "--no-warnings"]),
    (("-C", "development", "--conditions", "test"),
     ["--conditions=development", "--conditions=test"]),
    (("--enable-source-maps",), ["--enable-source-maps"]),
]


@pytest.mark.parametrize(("items", "words"), WORDS)
def test_node_options_items_become_node_s_words_each_condition_one_word(
    items: tuple[str, ...], words: list[str]
) -> None:
    assert rules.node_words(items) == words


def test_the_conditions_of_a_script_are_read_with_its_preloads() -> None:
    found = rules.script_options("cross-env A=1 node -C development --import tsx "
                           "--conditions=test --test")
    assert found is not None
    assert (found.imports, found.conditions) == (("tsx",), ("development", "test"))
