"""A test file that fails to load: the refusal names node's cause from the log (its error code,
the file, the module) and a remedy that fits, not node's last lines.

Real `node --test` runs of small projects that fail to load as real projects do: a TypeScript
suite on a node that strips no types, a package that is not installed (ESM and CommonJS), a
module the commit lacks. Then the reader of node's log on the texts node 20, 22 and 24 print.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Completed, git
from nodes import NODE, NODES, committed, spec_text

pytestmark = pytest.mark.skipif(NODE is None, reason="node (.ci/run installs it)")

Cli = Callable[..., Completed]

CLAMP_TS = """\
export function clamp(value: number, low: number, high: number): number {
  if (value > high) return high;
  return value < low ? low : value;
}
"""
CLAMP_TEST_TS = """\
import test from 'node:test';
import assert from 'node:assert';
import { clamp } from '../src/clamp.ts';
test('above the range', () => { assert.strictEqual(clamp(50, 0, 10), 10); });
"""


def _strips_types(node: str) -> bool:
    """Whether `node` runs a .ts file without a flag (22.18+, 23.6+)."""
    said = subprocess.run([node, "--version"], capture_output=True, text=True).stdout
    version = tuple(int(part) for part in said.strip().lstrip("v").split("."))
    return version >= (23, 6) or (22, 18) <= version < (23,)


def _refusal(done: Completed) -> str:
    [line] = [line for line in done.err.splitlines() if "baseline is not trustworthy" in line]
    return line


@pytest.mark.skipif(NODE is None or _strips_types(NODE), reason="node on PATH strips types")
def test_a_typescript_suite_on_a_node_without_type_stripping_names_the_cause_and_a_loader(
    tmp_path: Path, git_home: Path, cli: Cli
) -> None:
    project = committed(tmp_path / "ts", {
        ".gitignore": ".mutharness/\n",
        "package.json": json.dumps({"name": "ts", "version": "1.0.0", "type": "module",
                                    "scripts": {"test": "node --test test/*.test.ts"}}),
        "src/clamp.ts": CLAMP_TS,
        "test/clamp.test.ts": CLAMP_TEST_TS,
        "specs/clamp.json": spec_text(["test/clamp.test.ts"], 1, [
            {"name": "no high bound", "file": "src/clamp.ts",
             "anchor": "  if (value > high) return high;\n", "replacement": ""}]),
    }, "a TypeScript suite, no loader")
    assert NODE is not None
    version = subprocess.run([NODE, "--version"], capture_output=True,
                             text=True).stdout.strip().lstrip("v")

    done = cli(project, "verify", "specs/clamp.json")

    assert done.code == 3, done.out + done.err
    refusal = _refusal(done)
    # node's words from the log, the workspace's path made the repository's
    assert ('node said: TypeError [ERR_UNKNOWN_FILE_EXTENSION]: Unknown file extension ".ts" '
            "for test/clamp.test.ts") in refusal, refusal
    assert "/mh-" not in refusal
    assert (f'remedy: node {version} strips no TypeScript types: preload a loader the project '
            'installed ([node] import = ["tsx"] in mutharness.toml, or --import tsx in '
            "package.json's test script), or run node 22.18+ or 23.6+ (--node PATH), which "
            "strip them") in refusal, refusal


TALLY = {
    "module": ("import isNumber from 'is-number';\n"
               "export const total = (items) => items.filter(isNumber).length;\n"),
    "commonjs": ("const isNumber = require('is-number');\n"
                 "exports.total = (items) => items.filter(isNumber).length;\n"),
}
TALLY_TEST = {
    "module": ("import test from 'node:test';\nimport assert from 'node:assert';\n"
               "import { total } from '../lib/tally.js';\n"
               "test('counts numbers', () => { assert.strictEqual(total([1, 'x']), 1); });\n"),
    "commonjs": ("const test = require('node:test');\nconst assert = require('node:assert');\n"
                 "const { total } = require('../lib/tally.js');\n"
                 "test('counts numbers', () => { assert.strictEqual(total([1, 'x']), 1); });\n"),
}


@pytest.mark.parametrize("node", NODES)
@pytest.mark.parametrize("kind", ["module", "commonjs"])
def test_a_package_that_is_not_installed_is_named_with_the_install_that_fits(
    tmp_path: Path, git_home: Path, cli: Cli, kind: str, node: str
) -> None:
    # declared, locked by npm, never installed (a fresh clone): no node_modules
    project = committed(tmp_path / "tally", {
        ".gitignore": ".mutharness/\nnode_modules/\n",
        "package.json": json.dumps({"name": "tally", "version": "1.0.0", "type": kind,
                                    "dependencies": {"is-number": "7.0.0"}}),
        "package-lock.json": json.dumps({"name": "tally", "lockfileVersion": 3}),
        "lib/tally.js": TALLY[kind],
        "test/tally.test.js": TALLY_TEST[kind],
        "specs/tally.json": spec_text(["test/tally.test.js"], 1, [
            {"name": "every item counts", "file": "lib/tally.js",
             "anchor": ".filter(isNumber)", "replacement": ""}]),
    }, "a package that uses is-number")

    done = cli(project, "verify", "specs/tally.json", "--node", node)

    assert done.code == 3, done.out + done.err
    refusal = _refusal(done)
    code = "ERR_MODULE_NOT_FOUND" if kind == "module" else "MODULE_NOT_FOUND"
    assert f"node said: Error [{code}]: Cannot find " in refusal, refusal
    assert "'is-number'" in refusal and "lib/tally.js" in refusal, refusal
    assert ("remedy: 'is-number' is not installed (the repository has no node_modules): "
            "install the project's packages (npm ci installs package-lock.json's), then run "
            "again") in refusal, refusal
    assert "/mh-" not in refusal


@pytest.mark.parametrize("node", NODES)
def test_a_module_the_commit_lacks_is_named_and_found_untracked_in_the_tree(
    tmp_path: Path, git_home: Path, cli: Cli, node: str
) -> None:
    project = committed(tmp_path / "calc", {
        ".gitignore": ".mutharness/\n",
        "package.json": json.dumps({"name": "calc", "version": "1.0.0", "type": "module"}),
        "lib/calc.js": "export { add } from './add.js';\n",
        "test/calc.test.js": ("import test from 'node:test';\nimport assert from 'node:assert';\n"
                              "import { add } from '../lib/calc.js';\n"
                              "test('adds', () => { assert.strictEqual(add(2, 3), 5); });\n"),
        "specs/calc.json": spec_text(["test/calc.test.js"], 1, [
            {"name": "nothing exported", "file": "lib/calc.js", "anchor": "{ add }",
             "replacement": "{}"}]),
    }, "lib/add.js forgotten")
    (project / "lib/add.js").write_text("export const add = (a, b) => a + b;\n", "utf-8")
    (project / ".git/info/exclude").write_text("lib/add.js\n", "utf-8")  # not even dirty

    done = cli(project, "verify", "specs/calc.json", "--node", node)

    assert done.code == 3, done.out + done.err
    refusal = _refusal(done)
    assert ("node said: Error [ERR_MODULE_NOT_FOUND]: Cannot find module 'lib/add.js' "
            "imported from lib/calc.js") in refusal, refusal
    assert ("remedy: lib/add.js is in your tree but not in the commit a run checks out: "
            "commit it") in refusal, refusal
    assert git(project, "status", "--porcelain") == ""


NODE20_TS = """\
node:internal/modules/run_main:123
    triggerUncaughtException(
    ^
TypeError [ERR_UNKNOWN_FILE_EXTENSION]: Unknown file extension ".tsx" for /w/test/app.test.tsx
    at Object.getFileProtocolModuleFormat [as file:] (node:internal/modules/esm/get_format:189:9)
  code: 'ERR_UNKNOWN_FILE_EXTENSION'
}

Node.js v20.20.2
✖ /w/test/app.test.tsx (73.094978ms)
  'test failed'
"""
NODE22_STRIP = """\
file:///w/src/kinds.ts:1
enum Kind { A, B }
^^^^
SyntaxError [ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX]: TypeScript enum is not supported in strip-only mode
    at parseTypeScript (node:internal/modules/typescript:68:40)
  code: 'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX'
}
"""
ASSERTION_FIRST = """\
AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:
Error [ERR_REQUIRE_ESM]: require() of ES Module /w/lib/esm.js from /w/test/a.test.js not supported.
"""

READS = [
    ("a .tsx file: no node strips it", NODE20_TS, (20, 20, 2),
     'TypeError [ERR_UNKNOWN_FILE_EXTENSION]: Unknown file extension ".tsx" for '
     "test/app.test.tsx; remedy: node 20.20.2 runs no .tsx file by itself: preload a loader the "
     'project installed ([node] import = ["tsx"] in mutharness.toml, or --import tsx in '
     "package.json's test script)"),
    ("a .ts file on 22.12: the flag", NODE20_TS.replace(".tsx", ".ts"), (22, 12, 0),
     'TypeError [ERR_UNKNOWN_FILE_EXTENSION]: Unknown file extension ".ts" for '
     "test/app.test.ts; remedy: node 22.12.0 strips TypeScript types only with "
     '--experimental-strip-types ([node] options = ["--experimental-strip-types"] in '
     "mutharness.toml); or preload a loader the project installed ([node] import = "
     "[\"tsx\"] in mutharness.toml, or --import tsx in package.json's test script), or run "
     "node 22.18+ or 23.6+ (--node PATH), which strip them"),
    ("syntax node does not strip", NODE22_STRIP, (22, 23, 5),
     "SyntaxError [ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX]: TypeScript enum is not supported in "
     "strip-only mode; remedy: node strips types but transforms no other TypeScript syntax: "
     'preload a loader the project installed ([node] import = ["tsx"] in mutharness.toml, or '
     "--import tsx in package.json's test script)"),
    ("another code: named, no remedy guessed", ASSERTION_FIRST, (20, 20, 2),
     "Error [ERR_REQUIRE_ESM]: require() of ES Module lib/esm.js from test/a.test.js not "
     "supported."),
    ("nothing coded", "✖ failing tests:\nSyntaxError: Unexpected token\n", (20, 20, 2), ""),
]


@pytest.mark.parametrize(("case", "log", "version", "expected"), READS,
                         ids=[row[0] for row in READS])
def test_node_s_cause_is_read_from_the_log_with_the_remedy_that_fits(
    tmp_path: Path, case: str, log: str, version: tuple[int, int, int], expected: str
) -> None:
    del case
    from mutharness.runners.node import causes

    (tmp_path / "node.log").write_text(log, encoding="utf-8")

    found = causes.load_cause(tmp_path / "node.log", Path("/w"), version, tmp_path)

    assert found == expected
