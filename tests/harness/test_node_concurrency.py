"""`node.concurrency`: test files run at once only where the counts stay those of one at a time.

Above 1, the baseline (one file at a time) is followed by a run at the asked concurrency; the
mutants run so only when every test's outcome is the same, else one file at a time with a note.
Real node on PATH and on each node MUTHARNESS_NODES names (.ci/run: 22 and 24).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import Completed
from nodes import NODE, NODES, committed, results, spec_text

pytestmark = pytest.mark.skipif(NODE is None, reason="node (.ci/run installs it)")

Cli = Callable[..., Completed]

SHAPES = """\
exports.area = (w, h) => w * h;
exports.perimeter = (w, h) => 2 * (w + h);
exports.square = (s) => exports.area(s, s);
"""


def _file(name: str, expression: str, expected: int) -> str:
    return (
        "const test = require('node:test');\n"
        "const assert = require('node:assert');\n"
        "const shapes = require('../lib/shapes.js');\n"
        f"test('{name}', () => {{ assert.strictEqual({expression}, {expected}); }});\n"
    )


# Two files that see each other when they run at once: each leaves a mark in the run's temp
# directory and watches for the other's (`first` 3 s, `second` 1 s) before removing its own.
# One at a time, neither sees the other; at once (node starts both within milliseconds) one
# of them, or both, fail.
BESIDE = """\
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const mark = (name) => path.join(os.tmpdir(), `${name}.running`);
exports.alone = async (me, other, watchMs) => {
  fs.writeFileSync(mark(me), '');
  const until = Date.now() + watchMs;
  try {
    while (Date.now() < until) {
      if (fs.existsSync(mark(other))) throw new Error(`${other} ran beside ${me}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  } finally {
    fs.rmSync(mark(me), { force: true });
  }
};
"""


def _beside(name: str, me: str, other: str, watch_ms: int, expression: str,
            expected: int) -> str:
    return (
        "const test = require('node:test');\n"
        "const assert = require('node:assert');\n"
        "const shapes = require('../lib/shapes.js');\n"
        "const { alone } = require('./beside.js');\n"
        f"test('{name}', async () => {{\n"
        f"  await alone('{me}', '{other}', {watch_ms});\n"
        f"  assert.strictEqual({expression}, {expected});\n"
        "});\n"
    )



MUTATIONS = [
    {"name": "area adds", "file": "lib/shapes.js", "anchor": "w * h", "replacement": "w + h",
     "expectCaught": True},
    {"name": "perimeter once", "file": "lib/shapes.js", "anchor": "2 * (w + h)",
     "replacement": "(w + h)", "expectCaught": True},
]


def shapes_project(root: Path) -> Path:
    files = {
        ".gitignore": ".mutharness/\n",
        "package.json": json.dumps({"name": "shapes", "version": "1.0.0"}),
        "lib/shapes.js": SHAPES,
        "test/area.test.js": _file("area", "shapes.area(2, 3)", 6),
        "test/perimeter.test.js": _file("perimeter", "shapes.perimeter(2, 3)", 10),
        "test/square.test.js": _file("square", "shapes.square(3)", 9),
        "test/beside.js": BESIDE,
        "test/first.test.js": _beside("first area", "first", "second", 3000,
                                      "shapes.area(1, 1)", 1),
        "test/second.test.js": _beside("second perimeter", "second", "first", 1000,
                                       "shapes.perimeter(1, 1)", 4),
        "specs/apart.json": spec_text(["test/area.test.js", "test/perimeter.test.js",
                                   "test/square.test.js"], 3, MUTATIONS),
        "specs/broken.json": spec_text(["test/area.test.js", "test/perimeter.test.js"], 2, [
            {"name": "shapes does not parse", "file": "lib/shapes.js",
             "anchor": "exports.perimeter = (w, h) =>", "replacement": "exports.perimeter = (w, h",
             "expectCaught": True}]),
        "specs/beside.json": spec_text(["test/first.test.js", "test/second.test.js"], 2, MUTATIONS),
    }
    return committed(root, files, "shapes and their tests")



def _verdicts(spec: dict[str, Any]) -> list[tuple[str, list[str]]]:
    return [(m["verdict"], m["facts"]["failing"]) for m in spec["mutations"]]


@pytest.mark.parametrize("node", NODES)
def test_test_files_that_share_nothing_run_at_once_with_the_counts_of_one_at_a_time(
    tmp_path: Path, git_home: Path, cli: Cli, node: str
) -> None:
    project = shapes_project(tmp_path / "shapes")

    # full counts (a run one file at a time otherwise stops after its first failing file)
    alone = cli(project, "verify", "specs/apart.json", "--node", node, "--no-first-failure")
    one_at_a_time = results(project)["specs"][0]
    done = cli(project, "verify", "specs/apart.json", "--node", node, "--node-concurrency", "3")

    assert (alone.code, done.code) == (0, 0), alone.err + done.out + done.err
    [spec] = results(project)["specs"]
    assert _verdicts(spec) == _verdicts(one_at_a_time) == [
        ("CAUGHT", ["test/area.test.js > area", "test/square.test.js > square"]),
        ("CAUGHT", ["test/perimeter.test.js > perimeter"]),
    ]
    # the baseline one file at a time, every mutant three at once
    assert spec["baseline"]["runner_facts"]["concurrency"] == 1
    assert [m["facts"]["runner_facts"]["concurrency"] for m in spec["mutations"]] == [3, 3]
    assert [m["facts"]["runner_facts"]["concurrency"]
            for m in one_at_a_time["mutations"]] == [1, 1]
    assert "one at a time" not in done.err
    # files run at once all run: the mutants keep full counts, and nothing says they stopped
    assert [m["first_failure"] for m in spec["mutations"]] == [False, False]
    assert "stopped" not in done.out
    assert "(2 of 3 tests failed)" in done.out


@pytest.mark.parametrize("node", NODES)
def test_test_files_that_fail_beside_each_other_run_one_at_a_time_and_say_why(
    tmp_path: Path, git_home: Path, cli: Cli, node: str
) -> None:
    project = shapes_project(tmp_path / "shapes")

    done = cli(project, "verify", "specs/beside.json", "--node", node, "--node-concurrency", "2")

    [spec] = results(project)["specs"]
    assert spec["error"] == "", done.out + done.err
    assert (spec["baseline"]["passed"], spec["baseline"]["failed"]) == (2, 0)
    # no mutant ran beside another file: each failing test is the mutant's alone
    assert _verdicts(spec) == [
        ("CAUGHT", ["test/first.test.js > first area"]),
        ("CAUGHT", ["test/second.test.js > second perimeter"]),
    ]
    assert [m["facts"]["runner_facts"]["concurrency"] for m in spec["mutations"]] == [1, 1]
    assert done.code == 0, done.out + done.err
    # each watches for the other: which of them sees it first is the machine's timing
    assert re.search(
        r"test/first\.test\.js test/second\.test\.js run one file at a time: at "
        r"--node-concurrency 2, test/(first\.test\.js > first area|second\.test\.js > "
        r"second perimeter) failed", done.err), done.err


@pytest.mark.parametrize("node", NODES)
def test_a_mutant_that_gives_no_verdict_at_once_is_judged_by_a_run_one_file_at_a_time(
    tmp_path: Path, git_home: Path, cli: Cli, node: str
) -> None:
    project = shapes_project(tmp_path / "shapes")

    done = cli(project, "verify", "specs/broken.json", "--node", node, "--node-concurrency", "2")

    [spec] = results(project)["specs"]
    [mutation] = spec["mutations"]
    # a file that fails to load is no verdict: the run kept is the one like the baseline's
    assert mutation["verdict"] == "UNTRUSTWORTHY", done.out + done.err
    assert mutation["facts"]["runner_facts"]["concurrency"] == 1
    logs = sorted(path.name for path in (project / ".mutharness/runs/broken").iterdir())
    assert logs == ["baseline-1.log", "mutant-1-fresh.log", "mutant-1.log"], logs
    assert done.code != 0
