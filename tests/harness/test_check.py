"""`mutharness check`: static spec schema and exactly-once anchors; no test ever runs."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from conftest import CALC, Completed, Project, default_spec, git
from inproc import in_process

from mutharness.model.anchors import Splice, locate
from mutharness.static_check import repaired_anchor

ProjectFactory = Callable[..., Project]
Cli = Callable[..., Completed]

REPOSITORY = Path(__file__).resolve().parents[2]  # tests/harness/ -> the repository root

MARKER_CONFTEST = '''\
import pathlib

pathlib.Path(__file__).with_name("PYTEST_RAN").write_text("pytest was here")
'''


def suggestions(err: str) -> list[str]:
    """The anchors `check --suggest` proposed, decoded from their JSON strings."""
    return [json.loads(found) for found in re.findall(r"suggested anchor .*?: (\".*\")$", err,
                                                       re.MULTILINE)]


def test_check_passes_valid_specs_with_a_summary_line_and_exit_0(
    make_project: ProjectFactory, cli: Cli
) -> None:
    project = make_project()

    done = cli(project.root, "check", "specs/calc.json")

    assert done.code == 0, done.out + done.err
    assert re.search(r"^1 spec\(s\), 2 mutation\(s\): schema valid, every anchor occurs "
                     r"exactly once \(\d+\.\d\d s\)$", done.out, re.MULTILINE), done.out
    assert done.err == ""


def test_check_runs_no_tests(make_project: ProjectFactory) -> None:
    project = make_project()
    project.write("conftest.py", MARKER_CONFTEST)  # pytest would import this and leave a marker
    project.commit("a conftest that marks every pytest run")

    done = in_process(project.root, "check")

    assert done.code == 0, done.out + done.err
    assert not (project.root / "PYTEST_RAN").exists()
    assert not (project.root / ".mutharness").exists()
    assert git(project.root, "status", "--porcelain") == ""


def test_the_marker_conftest_does_mark_a_pytest_run(make_project: ProjectFactory) -> None:
    """The control for the test above: the marker appears as soon as pytest starts."""
    project = make_project()
    project.write("conftest.py", MARKER_CONFTEST)

    subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p",
                    "no:cacheprovider"], cwd=project.root, capture_output=True, check=False)

    assert (project.root / "PYTEST_RAN").exists()


def test_check_with_no_arguments_checks_every_spec_under_specs_at_the_repository_root(
    make_project: ProjectFactory
) -> None:
    project = make_project()
    project.spec("adult", default_spec(mutations=[default_spec()["mutations"][1]]), commit=True)
    (project.root / "src/deeper").mkdir()

    done = in_process(project.root / "src/deeper", "check")

    assert done.code == 0, done.out + done.err
    assert "2 spec(s), 3 mutation(s)" in done.out


def test_check_lists_every_problem_in_every_spec_at_once_and_exits_2(
    make_project: ProjectFactory
) -> None:
    project = make_project()
    calc = default_spec()
    project.spec("a-typo", {**calc, "mutations": [{**calc["mutations"][0], "expectCaugth": False}]})
    project.spec("b-drifted", {**calc, "mutations": [
        {**calc["mutations"][0], "anchor": "    if value < lowest:\n"}]})
    project.spec("c-twice", {**calc, "mutations": [
        {**calc["mutations"][0], "anchor": "return"}]})
    project.spec("d-untracked", {**calc, "mutations": [
        {**calc["mutations"][0], "file": "src/nowhere.py"}]})
    project.commit("four broken specs")

    done = in_process(project.root, "check")

    assert done.code == 2, done.out + done.err
    assert "4 problem(s)" in done.err
    assert "specs/a-typo.json#/mutations/0/expectCaugth" in done.err
    assert "specs/b-drifted.json#/mutations/0/anchor" in done.err
    assert "anchor not found (0 hits)" in done.err
    assert "specs/c-twice.json#/mutations/0/anchor" in done.err
    assert "anchor matched 4 times (need exactly 1), at lines 6, 8, 9, 13" in done.err
    assert "specs/d-untracked.json#/mutations/0/file" in done.err
    assert "Traceback" not in done.err


def test_a_drifted_anchor_is_reported_with_the_nearest_candidate_line(
    make_project: ProjectFactory
) -> None:
    project = make_project()
    project.write("src/calc.py", CALC.replace("if value < low:", "if value <= low:"))
    project.commit("drift")

    done = in_process(project.root, "check")

    assert done.code == 2, done.out + done.err
    assert "nearest line 5: '    if value <= low:'" in done.err


def test_suggest_repairs_an_anchor_whose_text_was_re_indented(make_project: ProjectFactory) -> None:
    project = make_project()
    reindented = CALC.replace("    if value < low:\n        return low\n",
                              "    if True:\n        if value < low:\n            return low\n")
    project.write("src/calc.py", reindented)
    project.commit("re-indent")

    done = in_process(project.root, "check", "--suggest")

    assert done.code == 2, done.out + done.err
    [suggested] = suggestions(done.err)
    assert suggested == "        if value < low:\n            return low\n"
    assert isinstance(locate(reindented.encode(), suggested, ""), Splice)  # exactly once


def test_suggest_repairs_an_anchor_whose_text_was_re_flowed_over_other_lines(
    make_project: ProjectFactory
) -> None:
    project = make_project()
    spec = default_spec(mutations=[{
        "name": "clamp ignores high", "file": "src/calc.py",
        "anchor": "    if value > high:\n        return high\n", "replacement": "",
    }])
    project.spec("calc", spec)
    reflowed = CALC.replace("    if value > high:\n        return high\n",
                            "    if value >  high:  return high\n")
    project.write("src/calc.py", reflowed)
    project.commit("re-flow")

    done = in_process(project.root, "check", "--suggest")

    assert done.code == 2, done.out + done.err
    [suggested] = suggestions(done.err)
    assert suggested == "    if value >  high:  return high\n"
    assert isinstance(locate(reflowed.encode(), suggested, ""), Splice)
    assert "(text now at line 7)" in done.err


def test_suggest_proposes_nothing_when_the_words_themselves_changed(
    make_project: ProjectFactory
) -> None:
    project = make_project()
    project.write("src/calc.py", CALC.replace("if value < low:", "if value < minimum:"))
    project.commit("rename")

    done = in_process(project.root, "check", "--suggest")

    assert done.code == 2, done.out + done.err
    assert suggestions(done.err) == []
    assert "nearest line" in done.err


def test_check_accepts_a_target_file_that_is_not_committed_yet_as_a_pre_commit_hook_sees_it(
    make_project: ProjectFactory
) -> None:
    project = make_project()
    project.write("src/fresh.py", "def answer():\n    return 42\n")
    project.spec("fresh", default_spec(mutations=[{
        "name": "wrong answer", "file": "src/fresh.py", "anchor": "return 42",
        "replacement": "return 41",
    }]))
    git(project.root, "add", "src/fresh.py", "specs/fresh.json")  # staged, not committed

    done = in_process(project.root, "check")

    assert done.code == 0, done.out + done.err


def test_check_reads_the_working_tree_so_an_uncommitted_drift_fails(
    make_project: ProjectFactory
) -> None:
    project = make_project()
    project.write("src/calc.py", CALC.replace("return age >= 18", "return age > 17"))

    done = in_process(project.root, "check")

    assert done.code == 2, done.out + done.err
    assert "specs/calc.json#/mutations/1/anchor" in done.err


def test_this_repository_s_own_specs_pass_check() -> None:
    assert (REPOSITORY / "specs").is_dir(), REPOSITORY

    done = in_process(REPOSITORY, "check")

    assert done.code == 0, done.out + done.err
    assert "schema valid, every anchor occurs exactly once" in done.out


# ---------------------------------------------------------------- repaired_anchor (pure)


def test_a_repaired_anchor_that_began_mid_line_keeps_the_indentation_out() -> None:
    data = b"def f(x):\n    return x  +  1\n"

    assert repaired_anchor(data, "return x + 1") == (2, "return x  +  1")


def test_no_repaired_anchor_is_offered_when_the_text_occurs_twice() -> None:
    data = b"a = 1\nb = 2\n  a  =  1\n"

    assert repaired_anchor(data, "a =\n1") is None


def test_a_repaired_anchor_in_a_crlf_file_is_written_with_lf_as_specs_are() -> None:
    """A CRLF checkout (Windows) must not suggest an anchor that an LF checkout cannot match."""
    data = b"def f(x):\r\n        if x:\r\n            return 1\r\n"

    found = repaired_anchor(data, "    if x:\n        return 1\n")

    assert found == (2, "        if x:\n            return 1\n")
    assert isinstance(locate(data, found[1], ""), Splice)
    lf_checkout = data.replace(b"\r\n", b"\n")
    assert isinstance(locate(lf_checkout, found[1], ""), Splice)


def test_check_diff_shows_each_mutation_as_a_unified_diff_and_runs_nothing(
    make_project: Callable[..., Project]
) -> None:
    project = make_project()

    done = in_process(project.root, "check", "--diff", "specs/calc.json")

    assert done.code == 0, done.out + done.err
    lines = done.out.splitlines()
    first = lines.index("calc #1 the low bound is ignored")
    assert lines[first + 1:first + 3] == ["--- a/src/calc.py", "+++ b/src/calc.py"]
    assert "-    if value < low:" in lines and "-        return low" in lines
    second = lines.index("calc #2 SURVIVOR (documented): >= to > at 18 is not pinned")
    assert "-    return age >= 18" in lines[second:] and "+    return age >= 17" in lines[second:]
    assert not (project.root / ".mutharness/results.json").exists()  # nothing ran
