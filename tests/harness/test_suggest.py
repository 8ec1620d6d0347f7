"""`mutharness suggest` end to end on real git repositories: the candidates on a fix's changed
lines run against its tests, the draft (survivors first) verifies to the same verdicts, and
what cannot be set up says what to do."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import CALC, Completed, Project, default_spec, git
from nodes import NODE, committed, write_files

from mutharness.commands.suggest import _runners_of
from mutharness.repo.source import added_lines

Cli = Callable[..., Completed]

BUGGY = CALC.replace("return age >= 18", "return age > 18")
TESTS_OF_THE_FIX = '''\
from calc import is_adult


def test_adult_at_eighteen():
    assert is_adult(18)
'''


def _fixed(make_project: Callable[..., Project]) -> Project:
    """The calc project whose `is_adult` said `age > 18`; the fix commit makes it `>=`, adds
    a test of 18, and also touches a line of `clamp` that no test of the fix pins."""
    project = make_project(spec=default_spec(mutations=[]))
    project.write("src/calc.py", BUGGY)
    project.commit("is_adult, as first written")
    project.write("src/calc.py", CALC.replace("    if value > high:\n",
                                              "    if value > high:  # the cap\n"))
    project.write("tests/test_adult.py", TESTS_OF_THE_FIX)
    project.commit("fix: 18 is an adult")
    return project


def _draft(project: Project) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(
        (project.root / ".mutharness/suggest/draft.json").read_text("utf-8"))
    return found


def test_a_fix_s_changed_lines_get_candidates_the_draft_lists_survivors_first_and_verifies_alike(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    project = _fixed(make_project)

    done = cli(project.root, "suggest", "--since", "HEAD~1", "--no-progress")

    assert done.code == 0, done.out + done.err
    draft = _draft(project)
    assert draft["tests"] == ["tests"]  # no spec covers calc.py: the project's tests
    assert draft["expectBaselinePass"] == 5  # measured
    survivor, caught = draft["mutations"]
    assert (survivor["_operator"], survivor["_line"], survivor["anchor"]) == (
        "boundary", 7, "    if value > high:  # the cap\n")
    assert survivor["replacement"] == "    if value >= high:  # the cap\n"
    assert survivor["_review"].startswith("SURVIVED: no test failed")
    assert (caught["_operator"], caught["anchor"], caught["replacement"]) == (
        "boundary", "    return age >= 18\n", "    return age > 18\n")
    assert "_review" not in caught and all(m["expectCaught"] for m in draft["mutations"])
    # the console ends with the survivor: where, and the diff
    tail = done.out[done.out.index("results: .mutharness/suggest/results.json"):]
    assert "SURVIVED src/calc.py:7  the boundary moves in clamp: > -> >= (boundary)" in tail
    assert "-    if value > high:  # the cap\n+    if value >= high:  # the cap" in tail
    # the user's own results file is not the suggestion's
    assert not (project.root / ".mutharness/results.json").exists()

    again = cli(project.root, "verify", ".mutharness/suggest/draft.json", "--no-progress")

    results = json.loads((project.root / ".mutharness/results.json").read_text("utf-8"))
    assert [m["verdict"] for m in results["specs"][0]["mutations"]] == ["SURVIVED", "CAUGHT"]
    assert again.code == 1, again.out + again.err  # the survivor stays red until reviewed


def test_max_keeps_the_most_valuable_candidate(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    project = _fixed(make_project)

    done = cli(project.root, "suggest", "--since", "HEAD~1", "--max", "1",
               "--out", "suggested.json", "--no-progress")

    assert done.code == 0, done.out + done.err
    draft = json.loads((project.root / "suggested.json").read_text("utf-8"))
    assert [m["_line"] for m in draft["mutations"]] == [7]  # one function each, clamp first
    assert not (project.root / ".mutharness/suggest/draft.json").exists()  # only --out's
    assert "spec suggested (" in done.out


def test_a_run_that_fails_leaves_the_last_draft_as_it_was(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    project = _fixed(make_project)
    first = cli(project.root, "suggest", "--since", "HEAD~1", "--no-progress")
    assert first.code == 0, first.out + first.err
    before = (project.root / ".mutharness/suggest/draft.json").read_bytes()

    failed = cli(project.root, "suggest", "--since", "HEAD~1", "--no-progress", "--python",
                 str(project.root / "no-such-python"))

    assert failed.code != 0
    assert (project.root / ".mutharness/suggest/draft.json").read_bytes() == before
    assert b"_review" in before


def test_nothing_changed_since_the_revision_is_said_as_such(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    done = cli(make_project().root, "suggest", "--since", "HEAD")

    assert done.code == 2
    assert "suggest --since HEAD: nothing changed since: there is no line to mutate" in done.err


def test_a_file_no_test_imports_is_a_coverage_gap_and_gets_no_candidate(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    project = make_project()
    project.write("src/extra.py", "def positive(n):\n    return n > 0\n")
    project.write("src/unused.py", "def negative(n):\n    return n < 0")  # no last newline
    project.write("src/empty.py", "")
    project.write("tests/test_extra.py",
                  "from extra import positive\n\n\ndef test_one():\n    assert positive(1)\n")

    done = cli(project.root, "suggest", "--since", "HEAD", "--no-progress")

    assert done.code == 0, done.out + done.err
    draft = _draft(project)
    assert [m["file"] for m in draft["mutations"]] == ["src/extra.py"]
    [gap] = draft["_not_executed"]
    assert (gap["file"], gap["line"], gap["function"]) == ("src/unused.py", 2, "negative")
    assert gap["why"] == "not executed by any test (a coverage gap)"
    assert "_left_out" not in draft
    assert "SURVIVED src/unused.py" not in done.out  # never a survivor
    assert "  src/unused.py:2  in negative" in done.out
    # git's count of the new files' lines: 2, 2 (the last without a newline), none (empty)
    assert "candidate(s) on 2 of 4 changed line(s) since HEAD" in done.out
    assert "in 3 file(s); 2 kept" in done.out


# a test that starts a program that is not Python: what it runs, no line record sees
STARTS_GIT = ("import subprocess\n\n\ndef test_git():\n"
              "    subprocess.run(['git', '--version'], check=True, capture_output=True)\n")


def test_where_the_line_record_cannot_speak_code_no_test_imports_is_left_out_saying_why(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    project = make_project()
    project.write("src/extra.py", "def positive(n):\n    return n > 0\n")
    project.write("src/unused.py", "def negative(n):\n    return n < 0\n")
    project.write("tests/test_extra.py",
                  "from extra import positive\n\n\ndef test_one():\n    assert positive(1)\n")
    project.write("tests/test_git.py", STARTS_GIT)

    done = cli(project.root, "suggest", "--since", "HEAD", "--no-progress")

    assert done.code == 0, done.out + done.err
    draft = _draft(project)
    assert [m["file"] for m in draft["mutations"]] == ["src/extra.py"]
    [left] = draft["_left_out"]
    assert (left["file"], left["line"], left["verdict"]) == ("src/unused.py", 2, "SURVIVED")
    assert left["why"].startswith("no process of the tests' run loaded this file")
    assert "SURVIVED src/unused.py" not in done.out  # not among the survivors to act on
    assert "_not_executed" not in draft
    assert {entry["file"] for entry in draft["_not_recorded"]} == {"src/extra.py",
                                                                   "src/unused.py"}
    assert all("a test started git" in entry["why"] for entry in draft["_not_recorded"])
    assert ("the line record cannot speak for src/unused.py (a test started git, a program "
            "that is not Python: what it runs, no line record sees): its candidates are kept"
            ) in done.out


def test_when_no_candidate_run_has_a_verdict_to_pin_no_draft_is_written_and_each_says_why(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    project = make_project()
    project.write("src/unused.py", "def negative(n):\n    return n < 0\n")
    project.write("tests/test_more.py",
                  "from calc import clamp\n\n\ndef test_one():\n    assert clamp(1, 0, 2) == 1\n")
    project.write("tests/test_git.py", STARTS_GIT)  # the line record cannot speak
    earlier = project.write(".mutharness/suggest/draft.json", '{"an": "earlier draft"}')

    done = cli(project.root, "suggest", "--since", "HEAD", "--no-progress")

    assert done.code == 0, done.out + done.err
    assert "no draft: none of the 1 candidate(s) run has a verdict to pin" in done.out
    assert "  SURVIVED src/unused.py:2  the boundary moves in negative: < -> <= (boundary): " \
           "no process of the tests' run loaded this file" in done.out
    assert earlier.read_text("utf-8") == '{"an": "earlier draft"}'  # not this run's
    assert (".mutharness/suggest/draft.json still holds an earlier run's draft, not one of "
            "this change") in done.out


def test_the_runners_of_changed_files_are_told_by_their_suffixes() -> None:
    assert _runners_of(["src/a.py", "README.md"]) == {"pytest"}
    assert _runners_of(["lib/b.mjs", "src/a.py", "src/c.ts"]) == {"pytest", "node"}
    assert _runners_of(["docs/x.md", "setup.cfg"]) == frozenset()


def test_without_since_suggest_says_to_name_the_revision(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    done = cli(make_project().root, "suggest")

    assert done.code == 2
    assert "no revision to start from" in done.err and "--since REV" in done.err


def test_an_untracked_source_file_counts_as_changed_in_every_line(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    project = make_project()
    project.write("src/extra.py", "def positive(n):\n    return n > 0\n")
    project.write("tests/test_extra.py",
                  "from extra import positive\n\n\ndef test_one():\n    assert positive(1)\n")

    done = cli(project.root, "suggest", "--since", "HEAD", "--no-progress")

    assert done.code == 0, done.out + done.err
    [survivor] = [m for m in _draft(project)["mutations"] if m["file"] == "src/extra.py"]
    assert (survivor["anchor"], survivor["replacement"]) == ("    return n > 0\n",
                                                             "    return n >= 0\n")
    assert "_review" in survivor  # positive(0) is never tested


ADDED = [  # (a zero-context diff, the new side's lines it adds)
    ("", set()),
    ("@@ -3 +3 @@\n-a\n+b\n", {3}),
    ("@@ -1,0 +2,3 @@\n+a\n+b\n+c\n", {2, 3, 4}),
    ("@@ -5,2 +4,0 @@\n-a\n-b\n", set()),  # lines removed: nothing new to mutate
    ("@@ -1 +1 @@\n-a\n+b\n@@ -9,0 +10,2 @@\n+c\n+d\n", {1, 10, 11}),
]


@pytest.mark.parametrize(("diff", "lines"), ADDED)
def test_the_changed_lines_are_the_new_side_of_each_hunk(diff: str, lines: set[int]) -> None:
    assert added_lines(diff) == lines


def test_a_draft_named_onto_a_directory_is_refused_before_anything_runs(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    project = _fixed(make_project)

    done = cli(project.root, "suggest", "--since", "HEAD~1", "--out", "specs")

    assert done.code == 2
    assert "'specs' is not a file" in done.err
    assert not (project.root / ".mutharness/suggest").exists()


ADULT_BUGGY = "exports.isAdult = (age) => age > 18;\n"
ADULT_FIXED = "exports.isAdult = (age) => age >= 18;\nexports.positive = (n) => n > 0;\n"
ADULT_TEST = """\
const test = require('node:test');
const assert = require('node:assert');
const { isAdult, positive } = require('../lib/calc.js');
test('eighteen is an adult', () => { assert.strictEqual(isAdult(18), true); });
test('seventeen is not', () => { assert.strictEqual(isAdult(17), false); });
test('one is positive', () => { assert.strictEqual(positive(1), true); });
"""


@pytest.mark.skipif(NODE is None, reason="node (.ci/run installs it)")
def test_a_node_fix_s_changed_lines_get_candidates_from_its_javascript_tree(
    tmp_path: Path, git_home: Path, cli: Cli
) -> None:
    root = committed(tmp_path / "adults", {
        ".gitignore": ".mutharness/\n",
        "package.json": json.dumps({"name": "adults", "version": "1.0.0"}),
        "lib/calc.js": ADULT_BUGGY,
    }, "isAdult, as first written")
    write_files(root, {"lib/calc.js": ADULT_FIXED, "test/calc.test.js": ADULT_TEST})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "fix: eighteen is an adult")

    done = cli(root, "suggest", "--since", "HEAD~1", "--no-progress")

    assert done.code == 0, done.out + done.err
    draft = json.loads((root / ".mutharness/suggest/draft.json").read_text("utf-8"))
    assert draft["tests"] == ["test/calc.test.js"] and draft["expectBaselinePass"] == 3
    survivor, caught = draft["mutations"]
    assert (survivor["_operator"], survivor["anchor"], survivor["replacement"]) == (
        "boundary", "exports.positive = (n) => n > 0;\n", "exports.positive = (n) => n >= 0;\n")
    assert "_review" in survivor  # no test of the fix calls positive(0)
    assert (caught["_operator"], caught["anchor"], caught["replacement"]) == (
        "boundary", "exports.isAdult = (age) => age >= 18;\n",
        "exports.isAdult = (age) => age > 18;\n")
    assert caught["name"] == "the boundary moves in isAdult: >= -> > (boundary)"
    assert "SURVIVED lib/calc.js:2" in done.out


def test_a_run_whose_baseline_is_refused_says_so_and_exits_as_verify_would(
    make_project: Callable[..., Project], cli: Cli, tmp_path: Path
) -> None:
    counter = tmp_path / "runs"
    project = make_project(spec=default_spec(mutations=[]))
    project.write("src/calc.py", BUGGY)
    project.commit("is_adult, as first written")
    project.write("src/calc.py", CALC)
    project.write("tests/test_adult.py", TESTS_OF_THE_FIX + f'''

def test_only_once():  # passes in the pin's measurement, fails in the run's baseline
    import pathlib
    runs = pathlib.Path({str(counter)!r})
    seen = int(runs.read_text()) if runs.exists() else 0
    runs.write_text(str(seen + 1))
    assert seen == 0
''')
    project.commit("fix: 18 is an adult")

    done = cli(project.root, "suggest", "--since", "HEAD~1", "--no-progress")

    assert done.code == 3, done.out + done.err  # a baseline that cannot be trusted
    assert "no draft: " in done.out and "internal error" not in done.err
    assert not (project.root / ".mutharness/suggest/draft.json").exists()


def test_a_survivor_is_named_at_the_line_verify_names_and_the_line_it_changes(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    project = make_project()
    twice = "\n\ndef positive(n):\n    return n > 0\n\n\ndef also_positive(n):\n    return n > 0\n"
    project.write("src/calc.py", CALC + twice)
    project.write("tests/test_adult.py", TESTS_OF_THE_FIX)
    project.write("tests/test_positive.py", "from calc import also_positive, positive\n\n\n"
                  "def test_one():\n    assert positive(1) and also_positive(1)\n")
    project.commit("two positives, tested at 1 alone")
    last = (CALC + twice).count("\n")  # the second `return n > 0`, the file's last line

    done = cli(project.root, "suggest", "--since", "HEAD~1", "--no-progress")

    assert done.code == 0, done.out + done.err
    # its anchor starts a line above it (the line alone occurs twice; nothing follows it)
    assert (f"SURVIVED src/calc.py:{last - 1} (line {last} changes)  the boundary moves in "
            "also_positive") in done.out
    assert f"SURVIVED src/calc.py:{last - 4}  the boundary moves in positive" in done.out
