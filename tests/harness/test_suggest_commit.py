"""`mutharness suggest --commit REV`: one commit's change alone (its parent to it), its lines
followed to where they are at HEAD, run at HEAD; a revision that is no commit, a merge, and
`--since` with `--commit` are refused with what to do instead."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from conftest import CALC, Completed, Project, default_spec, git

from mutharness.suggest.lines import carried

Cli = Callable[..., Completed]

BUGGY = CALC.replace("return age >= 18", "return age > 18")
ADULT_TEST = ("from calc import is_adult\n\n\ndef test_adult_at_eighteen():\n"
              "    assert is_adult(18)\n")
CAP_TEST = ("from calc import clamp\n\n\ndef test_capped():\n"
            "    assert clamp(11, 0, 10) == 10\n")
HELPER = '''\


def double(n):
    return n * 2 if n > 0 else 0
'''


def _fix_then_later(make_project: Callable[..., Project]) -> Project:
    """The calc project with `is_adult` off by one; the fix (`>` made `>=`, a test of 18);
    then a later commit that touches `clamp` and adds its own test, and one that inserts a
    helper at the top of the file (the fix's line moves down)."""
    project = make_project(spec=default_spec(mutations=[]))
    project.write("src/calc.py", BUGGY)
    project.commit("is_adult, as first written")
    project.write("src/calc.py", CALC)
    project.write("tests/test_adult.py", ADULT_TEST)
    project.commit("fix: 18 is an adult")
    project.write("src/calc.py", CALC.replace("    if value > high:\n",
                                              "    if value > high:  # the cap\n"))
    project.write("tests/test_cap.py", CAP_TEST)
    project.commit("later: the cap, with its test")
    text = (project.root / "src/calc.py").read_text("utf-8")
    head, rest = text.split("\n\n\n", 1)
    project.write("src/calc.py", head + HELPER + "\n\n" + rest)
    project.commit("later still: a helper above")
    return project


def _draft(project: Project) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(
        (project.root / ".mutharness/suggest/draft.json").read_text("utf-8"))
    return found


def test_commit_suggests_for_that_commit_s_lines_alone_where_they_are_at_head(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    project = _fix_then_later(make_project)
    fix = git(project.root, "rev-parse", "HEAD~2").strip()
    moved = (project.root / "src/calc.py").read_text("utf-8").splitlines().index(
        "    return age >= 18") + 1

    done = cli(project.root, "suggest", "--commit", "HEAD~2", "--no-progress")

    assert done.code == 0, done.out + done.err
    draft = _draft(project)
    assert draft["tests"] == ["tests"]  # no spec covers calc.py: the project's tests
    [caught] = draft["mutations"]
    assert (caught["_operator"], caught["_line"], caught["anchor"]) == (
        "boundary", moved, "    return age >= 18\n")
    assert draft["_suggested"]["commit"] == "HEAD~2" and draft["_suggested"]["sha"] == fix
    assert f"changed line(s) of commit HEAD~2 ({fix[:12]})" in done.out
    assert "the cap" not in json.dumps(draft) and "double" not in json.dumps(draft)


def test_commit_leaves_out_its_lines_a_later_commit_changed_and_says_how_many(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    project = _fix_then_later(make_project)
    text = (project.root / "src/calc.py").read_text("utf-8")
    project.write("src/calc.py", text.replace("return age >= 18", "return age >= 18  # adult"))
    project.commit("a comment on the fixed line")

    done = cli(project.root, "suggest", "--commit", "HEAD~3", "--no-progress")

    assert done.code == 0, done.out + done.err
    assert "1 of the commit's changed line(s) changed again since: left out" in done.out
    assert "no candidate to run: nothing is drafted" in done.out


def test_since_sweeps_in_the_later_commits_that_commit_leaves_out(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    project = _fix_then_later(make_project)

    done = cli(project.root, "suggest", "--since", "HEAD~3", "--no-progress")

    assert done.code == 0, done.out + done.err
    draft = _draft(project)
    names = " ".join(m["name"] for m in draft["mutations"])
    assert "in clamp" in names and "in is_adult" in names
    # the helper's line, which no test calls, is there as a coverage gap
    assert [gap["function"] for gap in draft["_not_executed"]] == ["double"]


REFUSED = [  # (arguments, what the error says, its remedy)
    (("--commit", "no-such-rev"), "suggest --commit no-such-rev: names no commit",
     "check the name"),
    (("--commit", "HEAD", "--since", "HEAD~1"),
     "suggest --commit HEAD: --since HEAD~1 names a change too",
     "give one: --commit REV for that commit's change alone"),
]


@pytest.mark.parametrize(("arguments", "said", "remedy"), REFUSED)
def test_a_commit_that_names_no_single_change_is_refused_with_a_remedy(
    make_project: Callable[..., Project], cli: Cli, arguments: tuple[str, ...], said: str,
    remedy: str
) -> None:
    done = cli(make_project().root, "suggest", *arguments)

    assert done.code == 2, done.out + done.err
    assert said in done.err and remedy in done.err
    assert "explained: mutharness explain SuggestError" in done.err


def test_a_merge_commit_is_refused_naming_its_parents(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    project = make_project()
    git(project.root, "switch", "-q", "-c", "side")
    project.write("src/side.py", "def one():\n    return 1\n")
    project.commit("side")
    git(project.root, "switch", "-q", "-")
    project.write("src/main.py", "def two():\n    return 2\n")
    project.commit("main")
    git(project.root, "merge", "-q", "--no-edit", "side")

    done = cli(project.root, "suggest", "--commit", "HEAD")

    assert done.code == 2, done.out + done.err
    assert "suggest --commit HEAD: is a merge of 2 commits" in done.err
    assert "name one of the commits it merges" in done.err


CARRIED = [  # (the commit's lines, the diff from the commit to now, now's lines, lost)
    ({3, 4}, "", {3, 4}, 0),  # nothing changed since
    ({3, 4}, "@@ -0,0 +1,2 @@\n+a\n+b\n", {5, 6}, 0),  # two lines inserted above
    ({3, 4}, "@@ -4 +4 @@\n-x\n+y\n", {3}, 1),  # one of them changed again
    ({3, 4}, "@@ -1,2 +0,0 @@\n-a\n-b\n", {1, 2}, 0),  # two lines removed above
    ({3, 4}, "@@ -3,0 +4 @@\n+a\n", {3, 5}, 0),  # a line inserted between them
    ({3, 4}, "@@ -9 +9,3 @@\n-a\n+b\n+c\n+d\n", {3, 4}, 0),  # below them: no move
]


@pytest.mark.parametrize(("lines", "diff", "now", "lost"), CARRIED)
def test_a_commit_s_lines_are_followed_through_the_changes_since(
    lines: set[int], diff: str, now: set[int], lost: int
) -> None:
    assert carried(lines, diff) == (now, lost)
