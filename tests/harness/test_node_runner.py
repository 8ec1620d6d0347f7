"""The node runner end to end: the fixture Node project's specs verify unchanged, as by hand."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import NODE_FIXTURE, Completed, git
from inproc import in_process
from nodes import NODES, committed, results, spec_text

FIXTURE = NODE_FIXTURE
TRUTH: dict[str, Any] = json.loads((FIXTURE / "TRUTH.json").read_text("utf-8"))
SPECS = sorted(name for name in TRUTH if not name.startswith("_"))
NODE = shutil.which("node")

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed (.ci/run installs it)")

Cli = Callable[..., Completed]


def node_major() -> int:
    assert NODE is not None
    version = subprocess.run([NODE, "--version"], capture_output=True, text=True).stdout
    return int(version.strip().lstrip("v").split(".")[0])


def expected_verdict(truth: dict[str, Any]) -> str:
    if truth["file_failure"] or truth.get("cancelled"):
        return "UNTRUSTWORTHY"
    return "CAUGHT" if truth["failed"] else "SURVIVED"


@pytest.mark.parametrize("spec_id", SPECS)
def test_a_node_spec_verifies_unchanged_with_the_counts_and_names_node_really_gives(
    node_project: Path, cli: Cli, spec_id: str
) -> None:
    truth = TRUTH[spec_id]
    raw = (node_project / "specs" / f"{spec_id}.json").read_bytes()

    done = cli(node_project, "verify", f"specs/{spec_id}.json", "--evidence", "evidence")

    results = json.loads((node_project / ".mutharness/results.json").read_text("utf-8"))
    [spec] = results["specs"]
    assert spec["runner"] == "node"  # detected: no "runner" key in the spec
    assert spec["error"] == "", done.out + done.err
    baseline = spec["baseline"]
    assert (baseline["passed"], baseline["failed"]) == (
        truth["baseline"]["passed"], truth["baseline"]["failed"]
    )
    assert len(spec["skipped"]) == truth["baseline"]["skipped"]
    verdicts = []
    for mutation, expected in zip(spec["mutations"], truth["mutations"], strict=True):
        assert mutation["name"] == expected["name"]
        verdict = expected_verdict(expected)
        assert mutation["verdict"] == verdict, mutation["reason"]
        verdicts.append(verdict)
        facts = mutation["facts"]
        if verdict != "UNTRUSTWORTHY":
            assert (facts["passed"], facts["failed"]) == (expected["passed"], expected["failed"])
            assert facts["failing"] == expected["failing"]
        else:
            assert "collection error in " in mutation["reason"]
            assert facts["collection_errors"] == expected["file_failures"]
    code = 4 if "UNTRUSTWORTHY" in verdicts else 0
    assert done.code == code, done.out + done.err
    assert (node_project / "specs" / f"{spec_id}.json").read_bytes() == raw
    assert git(node_project, "status", "--porcelain", "--untracked-files=no") == ""
    document = (node_project / "evidence" / f"{spec_id}.md").read_text("utf-8")
    assert f"| node | {results['tool']['node']} |" in document
    assert "| Python |" not in document and "| pytest |" not in document
    assert results["tool"]["node"].split(".")[0] == str(node_major())


def test_without_its_preload_the_node_baseline_is_refused_as_red(
    node_project: Path
) -> None:
    (node_project / "mutharness.toml").unlink()
    manifest = json.loads((node_project / "package.json").read_text("utf-8"))
    manifest["scripts"]["test"] = "node --test --test-concurrency=1 test/*.test.js"
    (node_project / "package.json").write_text(json.dumps(manifest), encoding="utf-8")
    git(node_project, "commit", "-q", "-am", "no preload, neither configured nor scripted")

    done = in_process(node_project, "verify", "specs/app-mode.json")

    assert done.code == 3
    assert "not green: 1 test(s) failed" in done.err
    assert "failing: test/config.test.js > the preload puts the app in test mode" in done.err


def test_without_a_config_file_the_preloads_of_the_package_json_test_script_are_used(
    node_project: Path, cli: Cli
) -> None:
    (node_project / "mutharness.toml").unlink()  # the script names --import ./test/setup-env.mjs
    git(node_project, "commit", "-q", "-am", "no config file: the test script's preload")

    done = cli(node_project, "verify", "specs/app-mode.json", "--evidence", "evidence")

    assert done.code == 0, done.out + done.err
    said = ("node preloads from package.json's test script: --import ./test/setup-env.mjs (a "
            "[node] import or require setting in the project config replaces them)")
    assert said in done.err  # where notes go
    results = json.loads((node_project / ".mutharness/results.json").read_text("utf-8"))
    assert said in results["notes"]
    settings = results["settings"]
    assert settings["values"]["node.import"] == ["./test/setup-env.mjs"]
    assert settings["sources"]["node.import"] == "package.json"
    # the same commit's package.json gives the preload again: no flag re-derives it
    assert "--node-import" not in " ".join(settings["rederive_flags"])
    [spec] = results["specs"]
    assert "test/setup-env.mjs" in spec["depends_on"]
    document = (node_project / "evidence/app-mode.md").read_text("utf-8")
    assert "--node-import" not in document


def test_a_configured_preload_wins_over_the_test_script_s(node_project: Path, cli: Cli) -> None:
    (node_project / "mutharness.toml").write_text('[node]\nrequire = ["./test/none.cjs"]\n',
                                                  encoding="utf-8")
    (node_project / "test/none.cjs").write_text("// preloads nothing\n", encoding="utf-8")
    git(node_project, "add", "-A")
    git(node_project, "commit", "-q", "-m", "a configured preload that does not set the mode")

    done = cli(node_project, "verify", "specs/app-mode.json")

    assert done.code == 3, done.out + done.err  # the script's preload was not taken
    assert "node preloads from package.json" not in done.out + done.err


def test_a_node_run_s_kept_log_holds_node_s_own_account_of_its_failing_test(
    node_project: Path, cli: Cli
) -> None:
    done = cli(node_project, "verify", "specs/app-mode.json")

    assert done.code == 0, done.out + done.err
    log = (node_project / ".mutharness/runs/app-mode/mutant-1.log").read_text("utf-8")
    # what a user reads to see why the mutant was caught: the test, its assertion, and why
    # node's totals are not there (the run stopped once the failing file ended)
    assert "✖ the preload puts the app in test mode" in log, log
    assert "AssertionError" in log
    stop = ("mutharness: stopped once the first test file with a failing test had ended "
            '(--first-failure; --no-first-failure runs every file): "test/config.test.js"\n'
            "its failing tests:\n\N{HEAVY MULTIPLICATION X} the preload puts the app in test mode\n"
            "  AssertionError")
    assert stop in log, log
    full = cli(node_project, "verify", "specs/app-mode.json", "--no-first-failure")
    assert full.code == 0, full.out + full.err
    log = (node_project / ".mutharness/runs/app-mode/mutant-1.log").read_text("utf-8")
    assert "\N{INFORMATION SOURCE} fail 1" in log


def test_node_and_pytest_specs_verify_in_one_invocation(
    node_project: Path
) -> None:
    (node_project / "tests").mkdir()
    (node_project / "tests/test_py.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    (node_project / "specs/py.json").write_text(json.dumps({
        "tests": ["tests/test_py.py"], "expectBaselinePass": 1,
        "mutations": [{"name": "one plus one is three", "file": "tests/test_py.py",
                       "anchor": "1 + 1 == 2", "replacement": "1 + 1 == 3"}],
    }))
    git(node_project, "add", "-A")
    git(node_project, "commit", "-q", "-m", "a pytest spec beside the node ones")

    done = in_process(node_project, "verify", "specs/app-mode.json", "specs/py.json")

    assert done.code == 0, done.out + done.err
    results = json.loads((node_project / ".mutharness/results.json").read_text("utf-8"))
    assert [spec["runner"] for spec in results["specs"]] == ["node", "pytest"]
    assert "node" in results["tool"] and "pytest" in results["tool"]
    assert [m["verdict"] for spec in results["specs"] for m in spec["mutations"]] == [
        "CAUGHT", "CAUGHT", "CAUGHT", "CAUGHT"
    ]


@pytest.mark.skipif(os.name == "nt", reason="a POSIX shell script stands in for node")
def test_an_old_node_is_refused_naming_its_version(
    node_project: Path, tmp_path: Path
) -> None:
    fake = tmp_path / "bin" / "node"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho v18.19.0\n")
    fake.chmod(0o755)

    done = in_process(node_project, "verify", "specs/app-mode.json", "--node", str(fake))

    assert done.code == 5
    assert "node v18.19.0" in done.err and "older than 20" in done.err


def test_node_options_off_the_allow_list_are_refused_before_anything_runs(
    node_project: Path
) -> None:
    done = in_process(node_project, "verify", "specs/app-mode.json", "--node-options",
                      "--test-force-exit")

    assert done.code == 2
    assert "'--test-force-exit' is not allowed" in done.err


def _original_layout(node_project: Path) -> None:
    """The fixture project as the original harness lays it out: specs in test/mutations/, no
    specs/ and no config file (the test script names the preload)."""
    (node_project / "test/mutations").mkdir()
    for spec in (node_project / "specs").glob("*.json"):
        spec.rename(node_project / "test/mutations" / spec.name)
    (node_project / "specs").rmdir()
    (node_project / "mutharness.toml").unlink()
    git(node_project, "add", "-A")
    git(node_project, "commit", "-q", "-m", "the original harness's layout")


def test_a_project_in_the_original_layout_needs_no_flags_and_no_config_file(
    node_project: Path, cli: Cli
) -> None:
    _original_layout(node_project)
    shipped = sorted(path.name for path in (node_project / "test/mutations").glob("*.json"))

    checked = cli(node_project, "check")
    measured = cli(node_project, "baseline", "--all")
    done = cli(node_project, "verify")

    assert checked.code == 0, checked.out + checked.err
    assert f"{len(shipped)} spec(s)" in checked.out
    assert measured.code == 0, measured.out + measured.err
    results = json.loads((node_project / ".mutharness/results.json").read_text("utf-8"))
    assert sorted(Path(spec["path"]).name for spec in results["specs"]) == shipped
    assert all(spec["error"] == "" for spec in results["specs"]), done.out + done.err
    assert done.code == 4, done.out + done.err  # the fixture's load-failure mutants, by hand
    settings = results["settings"]
    assert settings["values"]["specs-dir"] == "test/mutations"
    assert settings["values"]["platform-skips"] == "test/mutations/platform-skips.json"
    assert settings["sources"]["specs-dir"] == "layout"
    assert "--specs-dir" not in " ".join(settings["rederive_flags"])


def test_specs_dir_in_the_project_config_names_where_the_specs_and_the_skip_policy_are(
    node_project: Path, cli: Cli
) -> None:
    (node_project / "qa").mkdir()
    (node_project / "specs").rename(node_project / "qa/specs")
    with (node_project / "mutharness.toml").open("a", encoding="utf-8") as config:
        config.write('\n')
    text = (node_project / "mutharness.toml").read_text("utf-8")
    (node_project / "mutharness.toml").write_text('specs-dir = "qa/specs"\n' + text, "utf-8")
    git(node_project, "add", "-A")
    git(node_project, "commit", "-q", "-m", "specs under qa/")

    done = cli(node_project, "check")

    assert done.code == 0, done.out + done.err
    listed = sorted(path.name for path in (node_project / "qa/specs").glob("*.json"))
    assert f"{len(listed)} spec(s)" in done.out


LATE_CHECK = """\
const test = require('node:test');
const assert = require('node:assert');
const { add, half } = require('../lib/calc.js');
test('adds', () => {
  assert.strictEqual(add(2, 3), 5);
  // checked once the test has ended, as a debounced or queued check is
  setTimeout(() => { if (add(1, 1) !== 2) throw new Error('late check failed'); }, 100);
});
test('halves', () => { assert.strictEqual(half(8), 4); });
"""
LATE_TOP = """\
const test = require('node:test');
const assert = require('node:assert');
const { add } = require('../lib/calc.js');
test('adds zero', () => { assert.strictEqual(add(4, 0), 4); });
// a check the file schedules beside its tests, outside any of them
setTimeout(() => { if (add(2, 2) !== 4) throw new Error('late check failed'); }, 100);
"""


@pytest.mark.parametrize("node", NODES)
def test_an_error_a_timer_throws_after_a_file_s_last_test_fails_that_file_as_node_says(
    tmp_path: Path, git_home: Path, cli: Cli, node: str
) -> None:
    project = committed(tmp_path / "late", {
        ".gitignore": ".mutharness/\n",
        "package.json": json.dumps({"name": "late", "version": "1.0.0"}),
        "lib/calc.js": "exports.add = (a, b) => a + b;\nexports.half = (n) => n / 2;\n",
        "test/late.test.js": LATE_CHECK,
        "test/top.test.js": LATE_TOP,
        "specs/late.json": spec_text(["test/late.test.js", "test/top.test.js"], 3, [
            # only the late checks see 1 + 1 and 2 + 2: node reports one pass and one fail
            {"name": "two ones make three", "file": "lib/calc.js", "anchor": "(a, b) => a + b",
             "replacement": "(a, b) => (a === 1 && b === 1 ? 3 : a + b)", "expectCaught": True},
            {"name": "two twos make five", "file": "lib/calc.js", "anchor": "(a, b) => a + b",
             "replacement": "(a, b) => (a === 2 && b === 2 ? 5 : a + b)", "expectCaught": True},
        ]),
    }, "checks that run after the tests")

    done = cli(project, "verify", "specs/late.json", "--node", node)

    [spec] = results(project)["specs"]
    assert spec["error"] == "", done.out + done.err
    # node names the test whose timer threw; a timer of no test fails the file's last test
    assert [(m["verdict"], m["facts"]["failing"], m["facts"]["passed"])
            for m in spec["mutations"]] == [
        ("CAUGHT", ["test/late.test.js > adds"], 2),
        ("CAUGHT", ["test/top.test.js > adds zero"], 2)], done.out + done.err
    assert done.code == 0, done.out + done.err


METHODS_CHECK = """\
const test = require('node:test');
const assert = require('node:assert');
const { METHODS, allowed } = require('../lib/methods.js');

for (const method of METHODS) {
  test(`${method} is allowed`, () => assert.ok(allowed(method)));
}
test('PROPFIND is among them', () => assert.ok(allowed('PROPFIND')));
"""


@pytest.mark.parametrize("node", NODES[:1])
def test_a_mutant_that_drops_a_generated_test_and_fails_another_is_caught_naming_both(
    tmp_path: Path, git_home: Path, cli: Cli, node: str
) -> None:
    project = committed(tmp_path / "methods", {
        ".gitignore": ".mutharness/\n",
        "package.json": json.dumps({"name": "methods", "version": "1.0.0"}),
        "lib/methods.js": "const METHODS = ['GET', 'PROPFIND'];\n"
                          "exports.METHODS = METHODS;\n"
                          "exports.allowed = (m) => METHODS.includes(m);\n",
        "test/methods.test.js": METHODS_CHECK,
        "specs/methods.json": spec_text(["test/methods.test.js"], 3, [
            # a test is made per method: without PROPFIND node runs 2 tests, one failing
            {"name": "PROPFIND is dropped", "file": "lib/methods.js",
             "anchor": "['GET', 'PROPFIND']", "replacement": "['GET']", "expectCaught": True},
            {"name": "a method is added", "file": "lib/methods.js",
             "anchor": "['GET', 'PROPFIND']", "replacement": "['GET', 'PROPFIND', 'PUT']",
             "expectCaught": False},
        ]),
    }, "a test per method")

    # full counts: a run stopped at its first failing file lacks the later files anyway
    done = cli(project, "verify", "specs/methods.json", "--node", node, "--no-first-failure")

    [spec] = results(project)["specs"]
    assert spec["error"] == "", done.out + done.err
    dropped, added = spec["mutations"]
    # as node says (it exits 1): a test the baseline passed failed
    assert dropped["verdict"] == "CAUGHT", done.out + done.err
    assert dropped["facts"]["failing"] == ["test/methods.test.js > PROPFIND is among them"]
    assert dropped["reason"] == ("ran 2 tests, not the baseline's 3: missing "
                                 "test/methods.test.js > PROPFIND is allowed")
    # nothing failed but a test more ran: no survivor can be claimed from other tests
    assert added["verdict"] == "UNTRUSTWORTHY"
    assert "new test/methods.test.js > PUT is allowed" in added["reason"]
    assert done.code == 4, done.out + done.err
    # the results file names the tests such a run ran, so its verdict re-derives from them
    rendered = cli(project, "render", ".mutharness/results.json", "--out", "rendered")
    assert rendered.code == 0, rendered.out + rendered.err
    assert "ran 2 tests, not the baseline" in (project / "rendered/methods.md").read_text("utf-8")
