"""`mutharness redfirst`: real repositories with a real fix commit, on both runners."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable

import pytest
from conftest import Completed, Project, default_spec, git
from inproc import in_process

ProjectFactory = Callable[..., Project]
Cli = Callable[..., Completed]

BUGGY = '''\
"""A tiny module under test."""


def clamp(value, low, high):
    if value > high:
        return high
    return value


def is_adult(age):
    return age >= 18
'''

OLD_TESTS = '''\
from calc import clamp, is_adult


def test_clamp_above():
    assert clamp(50, 0, 10) == 10


def test_adult_at_eighteen():
    assert is_adult(18)
'''

NEW_TESTS = OLD_TESTS + '''

def test_clamp_below():
    assert clamp(-5, 0, 10) == 0
'''

LINE = ("red-first: 1 of 3 test(s) fail with the fix reverted "
        "(HEAD: 3 pass / 0 fail; reverted: 2 pass / 1 fail)")


def fixed_project(make_project: ProjectFactory) -> tuple[Project, str]:
    """A base commit with the low-bound bug, then the fix with its new test."""
    project = make_project(spec=default_spec(expectBaselinePass=3, mutations=[
        default_spec()["mutations"][0]]))
    project.write("src/calc.py", BUGGY)
    project.write("tests/test_calc.py", OLD_TESTS)
    project.commit("the bug")
    base = git(project.root, "rev-parse", "HEAD").strip()
    project.write("src/calc.py", (project.root / "src/calc.py").read_text().replace(
        "def clamp(value, low, high):\n",
        "def clamp(value, low, high):\n    if value < low:\n        return low\n"))
    project.write("tests/test_calc.py", NEW_TESTS)
    project.commit("the fix, and the test that pins it")
    return project, base


def test_the_fix_s_new_test_is_red_first_and_the_old_ones_are_invariants(
    make_project: ProjectFactory, cli: Cli
) -> None:
    project, base = fixed_project(make_project)

    done = cli(project.root, "redfirst", "--base", base, "specs/calc.json")

    assert done.code == 0, done.out + done.err
    assert done.out.splitlines()[-1] == LINE
    assert "RED-FIRST   tests/test_calc.py::test_clamp_below: HEAD passed, reverted failed" \
        in done.out
    assert "INVARIANT   tests/test_calc.py::test_clamp_above" in done.out
    assert "the fix is 1 file(s): src/calc.py" in done.out
    record = json.loads((project.root / ".mutharness/redfirst.json").read_text("utf-8"))
    assert record["red_first"]["line"] == LINE
    assert record["red_first"]["before"] == "tests 3 / pass 2 / fail 1"
    assert record["red_first"]["after"] == "3 / 3"
    assert record["red_first"]["reverted_files"] == ["src/calc.py"]
    assert git(project.root, "status", "--porcelain") == ""  # the checkout is never touched


def test_tests_that_pass_with_the_fix_reverted_do_not_pin_it(
    make_project: ProjectFactory
) -> None:
    project, base = fixed_project(make_project)

    done = in_process(project.root, "redfirst", "--base", base,
                      "--test", "tests/test_calc.py::test_clamp_above")

    assert done.code == 1, done.out + done.err
    assert done.out.splitlines()[-1] == (
        "red-first: 0 of 1 test(s) fail with the fix reverted "
        "(HEAD: 1 pass / 0 fail; reverted: 1 pass / 0 fail)")
    assert "do not pin the fix" in done.out


def test_an_expected_red_test_that_stays_green_is_a_failure(
    make_project: ProjectFactory
) -> None:
    project, base = fixed_project(make_project)

    done = in_process(project.root, "redfirst", "--base", base, "specs/calc.json",
                      "--expect-red", "tests/test_calc.py::test_clamp_above")

    assert done.code == 1, done.out + done.err
    assert "--expect-red test(s) not red" in done.out


def test_the_changed_test_files_are_the_default_tests(
    make_project: ProjectFactory
) -> None:
    project, base = fixed_project(make_project)

    done = in_process(project.root, "redfirst", "--base", base)

    assert done.code == 0, done.out + done.err
    assert "tests (pytest): tests/test_calc.py" in done.out
    assert done.out.splitlines()[-1] == LINE


def test_a_test_red_at_head_gives_no_answer(make_project: ProjectFactory) -> None:
    project, base = fixed_project(make_project)
    project.write("tests/test_calc.py", NEW_TESTS + "\n\ndef test_broken():\n    assert False\n")
    project.commit("a red test")

    done = in_process(project.root, "redfirst", "--base", base, "specs/calc.json")

    assert done.code == 4, done.out + done.err
    assert "do not pass at HEAD: tests/test_calc.py::test_broken" in done.out


LOADING_TESTS = '''\
from calc import clamp_low


def test_clamp_low():
    assert clamp_low(-5, 0) == 0
'''


def test_a_test_file_that_needs_the_fix_to_load_is_red_only_when_opted_in(
    make_project: ProjectFactory
) -> None:
    project, base = fixed_project(make_project)
    project.write("src/calc.py", (project.root / "src/calc.py").read_text()
                  + "\n\ndef clamp_low(value, low):\n    return max(value, low)\n")
    project.write("tests/test_low.py", LOADING_TESTS)
    project.commit("a new export and its test")

    plain = in_process(project.root, "redfirst", "--base", base, "--test", "tests/test_low.py",
                       "--test", "tests/test_calc.py")
    opted = in_process(project.root, "redfirst", "--base", base, "--test", "tests/test_low.py",
                       "--test", "tests/test_calc.py", "--load-error-is-red")

    assert plain.code == 4, plain.out + plain.err
    assert "LOAD-ERROR  tests/test_low.py::test_clamp_low: HEAD passed, reverted load-error" \
        in plain.out
    assert "pass --load-error-is-red" in plain.out
    assert opted.code == 0, opted.out + opted.err
    assert opted.out.splitlines()[-1] == (
        "red-first: 2 of 4 test(s) fail with the fix reverted "
        "(HEAD: 4 pass / 0 fail; reverted: 2 pass / 2 fail)")


def test_a_base_with_no_fix_since_is_refused(make_project: ProjectFactory) -> None:
    project, _ = fixed_project(make_project)

    done = in_process(project.root, "redfirst", "--base", "HEAD", "specs/calc.json")
    only_tests = in_process(project.root, "redfirst", "--base", "HEAD~1", "specs/calc.json",
                            "--keep", "src")
    git(project.root, "checkout", "-q", "HEAD~1")
    behind = in_process(project.root, "redfirst", "--base", "main", "--test",
                        "tests/test_calc.py")

    assert done.code == 2 and "there is no fix to revert" in done.err
    assert only_tests.code == 2 and "there is no fix to revert" in only_tests.err
    assert behind.code == 2 and "is a descendant of HEAD: HEAD holds no fix" in behind.err


def test_the_proof_is_a_section_of_the_spec_s_evidence_with_its_own_digests(
    make_project: ProjectFactory
) -> None:
    project, base = fixed_project(make_project)
    project.write(".gitignore", ".mutharness/\n")
    project.commit("ignore the run directory")
    assert in_process(project.root, "verify", "specs", "--evidence", "evidence").code == 0
    project.commit("evidence")

    done = in_process(project.root, "redfirst", "--base", base, "specs/calc.json",
                      "--evidence", "evidence", "--timeout-floor", "25")
    project.commit("red-first evidence")
    fresh = in_process(project.root, "evidence-check")
    again = in_process(project.root, "verify", "specs", "--evidence", "evidence")

    assert done.code == 0, done.out + done.err
    document = (project.root / "evidence/calc.md").read_text(encoding="utf-8")
    assert "## Red first" in document and LINE in document
    assert "| before (fix reverted) | tests 3 / pass 2 / fail 1 |" in document
    assert "| after (HEAD) | 3 / 3 |" in document
    assert "- `tests/test_calc.py::test_clamp_below`: HEAD passed, reverted failed" in document
    assert (f"mutharness redfirst --base {base} specs/calc.json --timeout-floor 25 --evidence "
            "evidence`") in document  # the re-derive command repeats every option
    assert fresh.code == 0, fresh.out
    assert again.code == 0 and git(project.root, "status", "--porcelain") == ""  # kept as is
    project.write("tests/test_calc.py", NEW_TESTS + "\n# edited\n")
    stale = in_process(project.root, "evidence-check")
    assert stale.code == 1
    assert "tests/test_calc.py changed (stales: verdicts, baseline line, red first)" in stale.out


NODE_BUGGY = "export function clamp(value, low, high) {\n  return Math.min(value, high);\n}\n"
NODE_FIXED = ("export function clamp(value, low, high) {\n"
              "  return Math.max(low, Math.min(value, high));\n}\n")
NODE_OLD = '''\
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clamp } from '../src/clamp.js';

test('clamps above', () => { assert.equal(clamp(50, 0, 10), 10); });
'''
NODE_NEW = NODE_OLD + "test('clamps below', () => { assert.equal(clamp(-5, 0, 10), 0); });\n"


def node_bug(make_project: ProjectFactory) -> tuple[Project, str]:
    """A node project whose clamp ignores the low bound, committed: (project, that commit)."""
    project = make_project()
    project.write("package.json", '{"type": "module"}\n')
    project.write("src/clamp.js", NODE_BUGGY)
    project.write("test/clamp.test.js", NODE_OLD)
    project.commit("the node bug")
    return project, git(project.root, "rev-parse", "HEAD").strip()


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_tests_prove_a_fix_red_first_too(make_project: ProjectFactory, cli: Cli) -> None:
    project, base = node_bug(make_project)
    project.write("src/clamp.js", NODE_FIXED)
    project.write("test/clamp.test.js", NODE_NEW)
    project.commit("the node fix")

    done = cli(project.root, "redfirst", "--base", base, "--test", "test/clamp.test.js")

    assert done.code == 0, done.out + done.err
    assert "tests (node): test/clamp.test.js" in done.out
    assert "RED-FIRST   test/clamp.test.js > clamps below" in done.out
    assert done.out.splitlines()[-1] == (
        "red-first: 1 of 2 test(s) fail with the fix reverted "
        "(HEAD: 2 pass / 0 fail; reverted: 1 pass / 1 fail)")


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_a_node_test_file_that_cannot_load_without_the_fix_is_a_load_error(
    make_project: ProjectFactory
) -> None:
    project, base = node_bug(make_project)
    project.write("src/clamp.js", NODE_FIXED + "export const LOW = 0;\n")
    project.write("test/low.test.js", NODE_OLD.replace(
        "import { clamp } from '../src/clamp.js';",
        "import { clamp, LOW } from '../src/clamp.js';").replace("0, 10", "LOW, 10"))
    project.commit("the node fix with a new export")

    plain = in_process(project.root, "redfirst", "--base", base, "--test", "test/low.test.js",
                       "--test", "test/clamp.test.js")
    opted = in_process(project.root, "redfirst", "--base", base, "--test", "test/low.test.js",
                       "--test", "test/clamp.test.js", "--load-error-is-red")

    assert plain.code == 4, plain.out + plain.err
    assert "LOAD-ERROR  test/low.test.js > clamps above" in plain.out
    assert opted.code == 0, opted.out + opted.err


def test_a_base_branch_that_moved_on_is_reverted_to_where_head_left_it(
    make_project: ProjectFactory
) -> None:
    project, base = fixed_project(make_project)
    git(project.root, "branch", "-q", "feature")
    git(project.root, "reset", "-q", "--hard", base)  # main is back at the bug...
    project.write("src/other.py", "VALUE = 1\n")
    project.commit("main moves on without the fix")  # ...and moves on
    git(project.root, "checkout", "-q", "feature")

    done = in_process(project.root, "redfirst", "--base", "main", "specs/calc.json")

    assert done.code == 0, done.out + done.err
    assert "main (" in done.out and "is not an ancestor of HEAD: the fix is reverted to " \
        f"their merge base {base[:12]}" in done.out
    assert "the fix is 1 file(s): src/calc.py" in done.out  # not main's src/other.py
    assert done.out.splitlines()[-1] == LINE


def test_a_helper_in_a_tests_directory_above_the_tests_is_never_reverted(
    make_project: ProjectFactory
) -> None:
    project = make_project()
    project.write("tests/helpers.py", "EXPECTED = 0\n")
    project.write("tests/unit/test_low.py",
                  "import sys, pathlib\nsys.path.insert(0, str(pathlib.Path(__file__).parents[1]))"
                  "\nfrom helpers import EXPECTED\nfrom calc import clamp\n\n\n"
                  "def test_low():\n    assert clamp(-5, 0, 10) == EXPECTED\n")
    project.commit("a helper above the tests")
    base = git(project.root, "rev-parse", "HEAD").strip()
    project.write("tests/helpers.py", "EXPECTED = 0  # the same value\n")
    project.write("NOTES.md", "notes\n")
    project.commit("only the helper and notes change")

    done = in_process(project.root, "redfirst", "--base", base, "--test", "tests/unit/test_low.py")

    assert done.code == 1, done.out + done.err  # NOTES.md is all the "fix": nothing is red
    assert "the fix is 1 file(s): NOTES.md" in done.out


def test_tests_beside_the_code_prove_a_fix_in_that_directory(
    make_project: ProjectFactory
) -> None:
    project = make_project()
    project.write("calc/ops.py", "def low(value):\n    return value\n")
    project.write("calc/test_ops.py", "from calc.ops import low\n\n\ndef test_same():\n"
                  "    assert low(3) == 3\n")
    project.write("calc/__init__.py", "")
    project.commit("a bug beside its test")
    base = git(project.root, "rev-parse", "HEAD").strip()
    project.write("calc/ops.py", "def low(value):\n    return max(value, 0)\n")
    project.write("calc/test_ops.py", "from calc.ops import low\n\n\ndef test_same():\n"
                  "    assert low(3) == 3\n\n\ndef test_negative():\n    assert low(-1) == 0\n")
    project.commit("the fix beside its test")

    done = in_process(project.root, "redfirst", "--base", base)

    assert done.code == 0, done.out + done.err
    assert "the fix is 1 file(s): calc/ops.py" in done.out
    assert "RED-FIRST   calc/test_ops.py::test_negative" in done.out


def test_an_uncommitted_fix_counts_under_allow_dirty(
    make_project: ProjectFactory
) -> None:
    project, base = fixed_project(make_project)
    git(project.root, "reset", "-q", "--soft", base)  # the fix and its test, uncommitted

    done = in_process(project.root, "redfirst", "--base", base, "specs/calc.json", "--allow-dirty")

    assert done.code == 0, done.out + done.err
    assert "the fix is 1 file(s): src/calc.py" in done.out
    assert done.out.splitlines()[-1] == LINE


def test_a_test_or_expected_red_id_that_names_nothing_is_refused(
    make_project: ProjectFactory
) -> None:
    project, base = fixed_project(make_project)

    missing = in_process(project.root, "redfirst", "--base", base, "--test",
                         "tests/test_nothing.py")  # refused before any test runs
    unknown = in_process(project.root, "redfirst", "--base", base, "specs/calc.json",
                         "--expect-red", "tests/test_calc.py::test_nothing")

    assert missing.code == 2 and "names nothing HEAD tracks" in missing.err
    assert "HEAD " not in missing.out  # refused before anything ran
    assert unknown.code == 4, unknown.out
    assert "--expect-red tests/test_calc.py::test_nothing names no test that ran" in unknown.out


def test_a_kept_red_first_section_goes_stale_on_its_own_after_a_test_edit(
    make_project: ProjectFactory
) -> None:
    project, base = fixed_project(make_project)
    project.write(".gitignore", ".mutharness/\n")
    project.commit("ignore the run directory")
    assert in_process(project.root, "verify", "specs", "--evidence", "evidence").code == 0
    project.commit("evidence")
    assert in_process(project.root, "redfirst", "--base", base, "specs/calc.json",
                      "--evidence", "evidence").code == 0
    project.commit("red-first evidence")
    project.write("tests/test_calc.py", NEW_TESTS + "\n# a comment\n")
    project.commit("the tests are edited")

    assert in_process(project.root, "verify", "specs", "--evidence", "evidence").code == 0
    done = in_process(project.root, "evidence-check")

    assert done.code == 1, done.out
    assert "    tests/test_calc.py changed (stales: red first)" in done.out.splitlines()


def test_a_fix_that_adds_a_package_is_reverted_without_its_directory(
    make_project: ProjectFactory
) -> None:
    project, base = fixed_project(make_project)
    git(project.root, "reset", "-q", "--hard", base)
    project.write("src/bounds/__init__.py", "def low(value, low):\n    return max(value, low)\n")
    project.write("src/calc.py", BUGGY.replace(
        "def clamp(value, low, high):\n",
        "def clamp(value, low, high):\n    from bounds import low as lower\n"
        "    value = lower(value, low)\n"))
    project.write("tests/test_calc.py", NEW_TESTS)
    project.commit("the fix, in a new package")

    done = in_process(project.root, "redfirst", "--base", base, "--test", "tests/test_calc.py")

    assert done.code == 0, done.out + done.err
    assert "the fix is 2 file(s): src/bounds/__init__.py, src/calc.py" in done.out
    assert done.out.splitlines()[-1] == LINE
