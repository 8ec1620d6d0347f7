"""Node projects with installed packages: real `npm install`s, the workspace's links to them.

Each project here is installed by the real npm (a package from the registry where the test
says so, from the cache `npmcache.py` filled before the suite when MUTHARNESS_NPM_CACHE names
it; an npm workspaces monorepo without one), committed without its `node_modules`, as
projects are, and verified by the real command line: on the node on PATH, and on each node
MUTHARNESS_NODES names (.ci/run: 22 and 24) where the test says so.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from conftest import Completed, git
from nodes import NODE, NODES, major, results, spec_text, write_files

NPM = shutil.which("npm")
NPM_CACHE = os.environ.get("MUTHARNESS_NPM_CACHE")


pytestmark = pytest.mark.skipif(
    NODE is None or NPM is None or not hasattr(os, "symlink") or os.name == "nt",
    reason="node and npm (.ci/run installs them); the links are POSIX's",
)

Cli = Callable[..., Completed]

TALLY_CJS = """\
const isNumber = require('is-number');
exports.total = (items) => items.filter(isNumber).reduce((sum, item) => sum + Number(item), 0);
"""
TALLY_ESM = """\
import isNumber from 'is-number';
export const total = (items) => items.filter(isNumber).reduce((sum, item) => sum + Number(item), 0);
"""
TEST_CJS = """\
const test = require('node:test');
const assert = require('node:assert');
const { total } = require('../lib/tally.js');
test('numbers and numeric text add up', () => { assert.strictEqual(total([1, '2', 'x']), 3); });
test('nothing adds up to zero', () => { assert.strictEqual(total([]), 0); });
"""
TEST_ESM = """\
import test from 'node:test';
import assert from 'node:assert';
import { total } from '../lib/tally.js';
test('numbers and numeric text add up', () => { assert.strictEqual(total([1, '2', 'x']), 3); });
test('nothing adds up to zero', () => { assert.strictEqual(total([]), 0); });
"""




def npm_project(root: Path, files: Mapping[str, str]) -> Path:
    """`files` committed at `root` (without `node_modules`, which .gitignore leaves out), then
    installed by the real `npm install`."""
    root.mkdir()
    write_files(root, {".gitignore": "node_modules/\n.mutharness/\n", **files})
    assert NPM is not None
    cache = ["--offline", "--cache", NPM_CACHE] if NPM_CACHE else []
    done = subprocess.run([NPM, "install", "--no-audit", "--no-fund", "--ignore-scripts",
                           *cache], cwd=root, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a project whose packages npm installed")
    return root


def tally(root: Path, kind: str) -> Path:
    """A package that uses `is-number` from the registry, its tests in `kind` modules."""
    esm = kind == "module"
    return npm_project(root, {
        "package.json": json.dumps({"name": "tally", "version": "1.0.0", "type": kind,
                                    "dependencies": {"is-number": "7.0.0"}}),
        "lib/tally.js": TALLY_ESM if esm else TALLY_CJS,
        "test/tally.test.js": TEST_ESM if esm else TEST_CJS,
        "specs/tally.json": spec_text(["test/tally.test.js"], 2, [
            {"name": "every item counts", "file": "lib/tally.js",
             "anchor": "items.filter(isNumber)", "replacement": "items",
             "expectCaught": True},
            {"name": "numeric text converted another way", "file": "lib/tally.js",
             "anchor": "sum + Number(item)", "replacement": "sum + +item",
             "expectCaught": False},
        ]),
    })



@pytest.mark.parametrize("node", NODES)
@pytest.mark.parametrize("kind", ["commonjs", "module"])
def test_a_suite_that_imports_an_installed_npm_package_runs_against_the_users_node_modules(
    tmp_path: Path, git_home: Path, cli: Cli, kind: str, node: str
) -> None:
    project = tally(tmp_path / "tally", kind)
    installed = sorted(path.name for path in (project / "node_modules").iterdir())

    done = cli(project, "verify", "specs/tally.json", "--node", node)

    [spec] = results(project)["specs"]
    assert spec["error"] == "", done.out + done.err
    assert (spec["baseline"]["passed"], spec["baseline"]["failed"]) == (2, 0)
    assert [(m["verdict"], m["facts"]["failed"]) for m in spec["mutations"]] == [
        ("CAUGHT", 1), ("SURVIVED", 0)]
    assert done.code == 0, done.out + done.err
    # the user's installed packages are as they were, the workspace's links gone with it
    assert sorted(path.name for path in (project / "node_modules").iterdir()) == installed
    assert (project / "node_modules/is-number/index.js").is_file()


MEMBER_B = """\
exports.add = (x, y) => {
  if (typeof x !== 'number' || typeof y !== 'number') throw new TypeError('numbers only');
  return x + y;
};
"""
MEMBER_A_TEST = """\
const test = require('node:test');
const assert = require('node:assert');
const { add } = require('b');
test('adds', () => { assert.strictEqual(add(2, 3), 5); });
test('refuses text', () => { assert.throws(() => add('2', 3), TypeError); });
"""


def monorepo(root: Path) -> Path:
    """An npm workspaces monorepo: package `a`'s tests use member `b` through the link npm
    put in `node_modules` (no registry needed)."""
    return npm_project(root, {
        "package.json": json.dumps({"name": "mono", "private": True,
                                    "workspaces": ["packages/*"]}),
        "packages/b/package.json": json.dumps({"name": "b", "version": "1.0.0"}),
        "packages/b/index.js": MEMBER_B,
        "packages/a/package.json": json.dumps({"name": "a", "version": "1.0.0",
                                               "dependencies": {"b": "1.0.0"}}),
        "packages/a/test/a.test.js": MEMBER_A_TEST,
        "specs/b.json": spec_text(["packages/a/test/a.test.js"], 2, [
            {"name": "b subtracts", "file": "packages/b/index.js", "anchor": "return x + y;",
             "replacement": "return x - y;", "expectCaught": True},
            {"name": "b takes text", "file": "packages/b/index.js",
             "anchor": "throw new TypeError('numbers only');", "replacement": "return NaN;",
             "expectCaught": True},
        ]),
    })


@pytest.mark.parametrize("node", NODES)
def test_a_mutant_in_an_npm_workspace_member_runs_where_node_modules_links_to_that_member(
    tmp_path: Path, git_home: Path, cli: Cli, node: str
) -> None:
    project = monorepo(tmp_path / "mono")
    assert os.readlink(project / "node_modules/b") == "../packages/b"  # as npm makes it

    done = cli(project, "verify", "specs/b.json", "--node", node)

    # the workspace's node_modules/b is the workspace's member, not the user's: the mutants
    # ran (through the user's copy each would have survived)
    [spec] = results(project)["specs"]
    assert spec["error"] == "", done.out + done.err
    assert [(m["verdict"], m["facts"]["failing"]) for m in spec["mutations"]] == [
        ("CAUGHT", ["packages/a/test/a.test.js > adds"]),
        ("CAUGHT", ["packages/a/test/a.test.js > refuses text"]),
    ]
    assert done.code == 0, done.out + done.err
    assert (project / "packages/b/index.js").read_text("utf-8") == MEMBER_B


CACHE_WRITER = """\
const test = require('node:test');
const fs = require('node:fs');
const path = require('node:path');
test('writes its cache', () => {
  const cache = path.join(__dirname, '..', 'node_modules', '.cache', 'tool');
  fs.mkdirSync(cache, { recursive: true });
  fs.writeFileSync(path.join(cache, 'run.txt'), 'written by a run');
});
"""
PACKAGE_WRITER = """\
const test = require('node:test');
const fs = require('node:fs');
const path = require('node:path');
test('writes into an installed package', () => {
  const where = path.dirname(require.resolve('is-number'));
  fs.writeFileSync(path.join(where, 'touched.txt'), 'written by a run');
});
"""


def _writer(root: Path, test: str) -> Path:
    return npm_project(root, {
        "package.json": json.dumps({"name": "writer", "version": "1.0.0",
                                    "dependencies": {"is-number": "7.0.0"}}),
        "lib/tally.js": TALLY_CJS,
        "test/writes.test.js": test,
        "specs/writes.json": spec_text(["test/writes.test.js"], 1, [
            {"name": "every item counts", "file": "lib/tally.js",
             "anchor": "items.filter(isNumber)", "replacement": "items",
             "expectCaught": False},
        ]),
    })


def test_what_a_run_writes_into_a_cache_in_node_modules_stays_in_the_workspace(
    tmp_path: Path, git_home: Path, cli: Cli
) -> None:
    project = _writer(tmp_path / "cache", CACHE_WRITER)
    (project / "node_modules/.cache/tool").mkdir(parents=True)  # the user's own cache

    done = cli(project, "verify", "specs/writes.json")

    assert done.code == 0, done.out + done.err
    assert list((project / "node_modules/.cache/tool").iterdir()) == []


def test_a_run_that_writes_into_an_installed_package_is_an_error_naming_the_file(
    tmp_path: Path, git_home: Path, cli: Cli
) -> None:
    project = _writer(tmp_path / "package", PACKAGE_WRITER)

    done = cli(project, "verify", "specs/writes.json")

    assert done.code == 5, done.out + done.err
    assert "node_modules/is-number/touched.txt" in done.err
    assert "wrote into your installed packages" in done.err
    # the summary's line names the file too, not only the sentence that leads to the list
    [summary] = [line for line in done.out.splitlines() if "wrote into your installed" in line]
    assert summary.rstrip().endswith("node_modules/is-number/touched.txt"), done.out
    assert "node_modules/is-number/touched.txt" in str(results(project)["error"])


def test_the_evidence_names_the_installed_packages_and_the_verdicts_depend_on_the_lockfile(
    tmp_path: Path, git_home: Path, cli: Cli
) -> None:
    project = tally(tmp_path / "tally", "commonjs")
    hidden = (project / "node_modules/.package-lock.json").read_bytes()
    lockfile = (project / "package-lock.json").read_bytes()

    done = cli(project, "verify", "specs/tally.json", "--evidence", "evidence")

    assert done.code == 0, done.out + done.err
    digest = hashlib.sha256(hidden).hexdigest()
    document = (project / "evidence/tally.md").read_text("utf-8")
    row = f"| installed packages | node\\_modules/.package-lock.json sha256:{digest[:16]} |"
    assert row in document  # Markdown's escape of `_`
    [spec] = results(project)["specs"]
    assert spec["depends_on"]["package-lock.json"] == hashlib.sha256(lockfile).hexdigest()


BREAKS_THE_CHECKOUT = (
    "(require('node:fs').writeFileSync(__dirname + '/../package.json', '{}'), items)"
    ".filter(isNumber)"
)


def test_after_a_run_that_changed_tracked_files_the_next_mutant_still_finds_the_packages(
    tmp_path: Path, git_home: Path, cli: Cli
) -> None:
    project = tally(tmp_path / "tally", "commonjs")
    spec = json.loads((project / "specs/tally.json").read_text("utf-8"))
    spec["mutations"].insert(0, {  # its run rewrites package.json: the workspace is reset
        "name": "package.json emptied", "file": "lib/tally.js",
        "anchor": "items.filter(isNumber)", "replacement": BREAKS_THE_CHECKOUT,
        "expectCaught": False})
    (project / "specs/tally.json").write_text(json.dumps(spec), encoding="utf-8")
    git(project, "commit", "-q", "-am", "a mutant that changes a tracked file")

    done = cli(project, "verify", "specs/tally.json")

    [spec] = results(project)["specs"]
    assert spec["error"] == "", done.out + done.err
    verdicts = [(m["verdict"], m["facts"]["failed"]) for m in spec["mutations"]]
    assert verdicts[0][0] == "UNTRUSTWORTHY"  # it changed a tracked file: drift
    assert verdicts[1:] == [("CAUGHT", 1), ("SURVIVED", 0)]


CLI_TEST = """\
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
test('the cli prints a sum', () => {
  const root = path.join(__dirname, '..', '..', '..');
  const bin = fs.realpathSync(path.join(root, 'node_modules', '.bin', 'b-sum'));
  assert.strictEqual(execFileSync(process.execPath, [bin, '2', '3']).toString().trim(), '5');
});
"""


def test_a_bin_of_a_workspace_member_runs_the_workspace_s_copy(
    tmp_path: Path, git_home: Path, cli: Cli
) -> None:
    project = npm_project(tmp_path / "bins", {
        "package.json": json.dumps({"name": "mono", "private": True,
                                    "workspaces": ["packages/*"]}),
        "packages/b/package.json": json.dumps({"name": "b", "version": "1.0.0",
                                               "bin": {"b-sum": "cli.js"}}),
        "packages/b/cli.js": "console.log(Number(process.argv[2]) + Number(process.argv[3]));\n",
        "packages/a/package.json": json.dumps({"name": "a", "version": "1.0.0",
                                               "dependencies": {"b": "1.0.0"}}),
        "packages/a/test/cli.test.js": CLI_TEST,
        "specs/cli.json": spec_text(["packages/a/test/cli.test.js"], 1, [
            {"name": "the cli subtracts", "file": "packages/b/cli.js",
             "anchor": "Number(process.argv[2]) + ", "replacement": "Number(process.argv[2]) - ",
             "expectCaught": True},
        ]),
    })
    assert os.readlink(project / "node_modules/.bin/b-sum") == "../b/cli.js"  # as npm makes it

    done = cli(project, "verify", "specs/cli.json")

    [spec] = results(project)["specs"]
    assert [m["verdict"] for m in spec["mutations"]] == ["CAUGHT"], done.out + done.err
    assert done.code == 0, done.out + done.err


CLAMP_TS = """\
export function clamp(value: number, low: number, high: number): number {
  if (value < low) return low;
  if (value > high) return high;
  return value;
}
"""
CLAMP_TEST_TS = """\
import test from 'node:test';
import assert from 'node:assert';
import { clamp } from '../src/clamp.ts';
test('below the range', () => { assert.strictEqual(clamp(-5, 0, 10), 0); });
test('above the range', () => { assert.strictEqual(clamp(50, 0, 10), 10); });
test('inside the range', () => { const n: number = clamp(5, 0, 10); assert.strictEqual(n, 5); });
"""


def _clamp(root: Path, files: Mapping[str, str]) -> Path:
    return npm_project(root, {
        "src/clamp.ts": CLAMP_TS,
        "test/clamp.test.ts": CLAMP_TEST_TS,
        "specs/clamp.json": spec_text(["test/clamp.test.ts"], 3, [
            {"name": "the high bound is ignored", "file": "src/clamp.ts",
             "anchor": "  if (value > high) return high;\n", "replacement": "",
             "expectCaught": True},
            {"name": "the low bound compared inclusively", "file": "src/clamp.ts",
             "anchor": "value < low", "replacement": "value <= low", "expectCaught": False},
        ]),
        **files,
    })


def _assert_clamp_verified(project: Path, done: Completed) -> None:
    [spec] = results(project)["specs"]
    assert spec["error"] == "", done.out + done.err
    assert spec["runner"] == "node"  # detected from the .ts entry
    assert [(m["verdict"], m["facts"]["failing"]) for m in spec["mutations"]] == [
        ("CAUGHT", ["test/clamp.test.ts > above the range"]), ("SURVIVED", [])]
    assert done.code == 0, done.out + done.err


@pytest.mark.parametrize("node", [node for node in NODES if major(node.values[0]) >= 22])
def test_typescript_tests_run_on_node_s_own_type_stripping_from_22_on(
    tmp_path: Path, git_home: Path, cli: Cli, node: str
) -> None:
    project = _clamp(tmp_path / "ts", {
        "package.json": json.dumps({"name": "ts", "version": "1.0.0", "type": "module"})})

    done = cli(project, "verify", "specs/clamp.json", "--node", node)

    _assert_clamp_verified(project, done)


@pytest.mark.parametrize("node", NODES)
def test_typescript_tests_run_through_the_loader_the_project_installed(
    tmp_path: Path, git_home: Path, cli: Cli, node: str
) -> None:
    project = _clamp(tmp_path / "ts", {
        "package.json": json.dumps({"name": "ts", "version": "1.0.0", "type": "module",
                                    "devDependencies": {"tsx": "4.19.2"}}),
        "mutharness.toml": '[node]\nimport = ["tsx"]\n',  # resolved from its node_modules
    })

    done = cli(project, "verify", "specs/clamp.json", "--node", node)

    _assert_clamp_verified(project, done)


LINKED_WRITER = """\
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { double } = require('outside');
const { add } = require('../lib/calc.js');
test('doubles, and writes into the package it used', () => {
  assert.strictEqual(double(add(1, 1)), 4);
  fs.writeFileSync(path.join(path.dirname(require.resolve('outside')), 'touched.txt'), 'run');
});
"""


def test_a_run_that_writes_into_a_package_linked_from_outside_the_repository_is_an_error(
    tmp_path: Path, git_home: Path, cli: Cli
) -> None:
    # a `file:` dependency beside the repository: npm links it, as `npm link` does
    outside = tmp_path / "outside"
    write_files(outside, {
        "package.json": json.dumps({"name": "outside", "version": "1.0.0"}),
        "index.js": "exports.double = (n) => n * 2;\n",
    })
    project = npm_project(tmp_path / "linked", {
        "package.json": json.dumps({"name": "linked", "version": "1.0.0",
                                    "dependencies": {"outside": "file:../outside"}}),
        "lib/calc.js": "exports.add = (a, b) => a + b;\n",
        "test/writes.test.js": LINKED_WRITER,
        "specs/writes.json": spec_text(["test/writes.test.js"], 1, [
            {"name": "add subtracts", "file": "lib/calc.js", "anchor": "a + b",
             "replacement": "a - b", "expectCaught": True}]),
    })
    assert os.readlink(project / "node_modules/outside") == "../../outside"  # as npm makes it

    done = cli(project, "verify", "specs/writes.json")

    assert done.code == 5, done.out + done.err
    assert "wrote into your installed packages" in done.err
    named = f"node_modules/outside/touched.txt (in {outside.resolve()}, outside the repository)"
    assert named in done.err, done.err
    assert named in str(results(project)["error"])


def test_only_links_to_directories_outside_the_repository_are_followed_when_recorded(
    tmp_path: Path,
) -> None:
    from mutharness.repo.installed import changed, record

    repository, elsewhere = tmp_path / "repo", tmp_path / "elsewhere"
    write_files(elsewhere, {"index.js": "// linked from outside\n"})
    write_files(repository, {"node_modules/.pnpm/a@1/node_modules/a/index.js": "// a\n",
                             "packages/b/index.js": "// a member\n"})
    modules = repository / "node_modules"
    os.symlink(".pnpm/a@1/node_modules/a", modules / "a")  # pnpm's: inside node_modules
    os.symlink("../packages/b", modules / "b")  # a member: the workspace points at its copy
    os.symlink(str(elsewhere), modules / "linked")  # outside: followed
    os.symlink("../..", modules / "above")  # holds the repository: never walked

    installed = record(repository, "")

    assert dict(installed.outside) == {"linked": str(elsewhere.resolve())}
    assert "linked/index.js" in installed.signatures
    (elsewhere / "index.js").write_text("// written through the link\n", encoding="utf-8")
    (modules / ".pnpm/a@1/node_modules/a/new.js").write_text("//\n", encoding="utf-8")
    assert changed(repository, installed) == (
        "node_modules/.pnpm/a@1/node_modules/a/new.js",
        f"node_modules/linked/index.js (in {elsewhere.resolve()}, outside the repository)")
