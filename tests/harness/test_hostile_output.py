"""What reaches a terminal, a CI log or a report is data, never markup or commands.

The tests' own names (file names here: pytest escapes the ids it makes) and a spec's texts
are chosen by whoever wrote them, and a CI log obeys some of its lines (GitHub's workflow
commands: `::add-mask::`, `::error::` at a line's start, `##[...]` anywhere in it). The tests
run on a real committed repository whose test files are named to break lines, move the
cursor, forge workflow commands and hold bytes that are not UTF-8. The console test runs the
real command line in a child; the summary and reports tests replay the real runs of the same
repository, recorded once a session (`replay`), in this process, and most render refusals run
`render` in this process too (one value stays on the child).
"""

from __future__ import annotations

import json
import os
import re
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import (
    Completed,
    Project,
    calc_project,
    copy_recording,
    default_spec,
    project_copy,
)
from inproc import in_process
from replay import Recording, recorded_verify, replaying

from mutharness.model.results import read_results

Cli = Callable[..., Completed]

POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32",
                                reason="file names with line breaks and control characters")

TEST_LOW = '''\
from calc import clamp


def test_low():
    assert clamp(-5, 0, 10) == 0
'''
HOSTILE_TESTS = (  # each holds one test, failed by the mutant that ignores the low bound
    "test_a\n::add-mask::secret.py",  # a line break, then a workflow command
    "test_b\x1b[2J\x1b]0;pwned\x07.py",  # clear the screen, set the window title
    "test_c ##[error]forged\u009b\u202e.py",  # a legacy workflow command, a C1 CSI, a bidi
    os.fsdecode(b"test_d\xff.py"),  # not UTF-8
)
FORGED_NAME = ("::add-mask::secret ##[error]forged: ask @octocat or @org/team, see "
               "https://evil.example and www.evil.example")
HOSTILE_SPEC = default_spec(tests=["tests"], expectBaselinePass=4, mutations=[
    {"name": "the low bound is ignored", "file": "src/calc.py",
     "anchor": "    if value < low:\n        return low\n", "replacement": ""},
    {"name": FORGED_NAME, "file": "src/calc.py",  # caught, documented as a survivor
     "anchor": "        return low\n", "replacement": "        return high\n",
     "expectCaught": False},
])
OUR_COLOURS = re.compile(r"\x1b\[[0-9;]*m")  # the console's own colours, asked for (--color)
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _hostile(root: Path) -> Project:
    project = calc_project(root, HOSTILE_SPEC)
    (project.root / "tests" / "test_calc.py").unlink()
    for name in HOSTILE_TESTS:
        (project.root / "tests" / name).write_text(TEST_LOW, encoding="utf-8")
    # every hostile test id reaches the reports: each mutant runs every test
    (project.root / "mutharness.toml").write_text("first-failure = false\n", encoding="utf-8")
    project.commit("tests whose names are hostile")
    return project


@pytest.fixture
def hostile(tmp_path: Path, git_home: Path) -> Project:
    return _hostile(tmp_path / "repo")


@pytest.fixture(scope="session")
def hostile_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Recording]:
    """Made once a session: the `hostile` repository as committed, and the real runs of its
    verify (an unexpected CAUGHT: exit 1), for `replay.replaying`."""
    if sys.platform == "win32":
        pytest.skip("file names with line breaks and control characters")
    return recorded_verify(tmp_path_factory, "hostile-runs",
                           lambda base: _hostile(base / "repo").root, "specs/calc.json",
                           exit_code=1)


def _commands(line: str) -> bool:
    """Whether GitHub's runner would take `line` as a workflow command."""
    return line.lstrip().startswith("::") or "##[" in line


@POSIX_ONLY
def test_test_ids_and_spec_texts_reach_the_console_as_inert_text_one_line_each(
    hostile: Project, cli: Cli
) -> None:
    done = cli(hostile.root, "verify", "specs/calc.json", "--color")

    assert done.code == 1, done.out + done.err  # the forged name is an unexpected CAUGHT
    for stream in (done.out, done.err):
        lines = OUR_COLOURS.sub("", stream).split("\n")
        assert not [line for line in lines if CONTROL.search(line.rstrip("\r"))], stream
        assert not [line for line in lines if _commands(line)], stream
        assert "\r" not in stream
    plain = OUR_COLOURS.sub("", done.out)
    failing = [line for line in plain.splitlines() if line.endswith("::test_low")]
    assert len(failing) == 8, plain  # both mutants fail the four tests: a line each
    assert all("tests/test_" in line for line in failing)
    assert "\\x1b" in plain and "\\xff" in plain  # shown, not obeyed or dropped
    assert sum("add-mask" in line for line in plain.splitlines()) >= 3  # named, as data


@POSIX_ONLY
def test_the_summary_neutralises_mentions_team_mentions_and_links_in_spec_text(
    hostile_runs: tuple[Path, Recording], tmp_path: Path, git_home: Path
) -> None:
    hostile = project_copy(hostile_runs[0], tmp_path)
    summary = hostile.root.parent / "run.md"

    with replaying(hostile_runs[1]):
        done = in_process(hostile.root, "verify", "specs/calc.json", "--summary", str(summary))

    assert done.code == 1, done.out + done.err
    text = summary.read_text("utf-8")
    assert "ask " in text  # the forged name is listed: not as expected
    assert "@octocat" not in text and "@org/team" not in text
    assert "https://evil.example" not in text and "www.evil.example" not in text
    assert not [line for line in text.splitlines() if _commands(line)]


@POSIX_ONLY
def test_every_report_is_written_from_a_run_whose_test_ids_hold_undecodable_bytes_and_controls(
    hostile_runs: tuple[Path, Recording], tmp_path: Path, git_home: Path
) -> None:
    hostile = project_copy(hostile_runs[0], tmp_path)
    here = hostile.root.parent
    reports = ("--junit", "run.xml", "--summary", "run.md", "--report-stryker",
               "run.stryker.json", "--report-html", "run.html")

    with replaying(hostile_runs[1]):
        done = in_process(
            hostile.root, "verify", "specs/calc.json", "--json", str(here / "run.json"),
            *(str(here / word) if word.startswith("run.") else word for word in reports))
    again = in_process(here, "render", "run.json", *(word.replace("run.", "again.")
                                                     for word in reports))

    assert done.code == 1, done.out + done.err
    assert "Traceback" not in done.err
    assert again.code == 0, again.out + again.err
    assert read_results(here / "run.json").specs[0].mutations[0].facts.failed == 4
    for name in ("run", "again"):
        ET.parse(here / f"{name}.xml")
        assert (here / f"{name}.md").read_text("utf-8").startswith("## ")
        report = json.loads((here / f"{name}.stryker.json").read_text("utf-8"))
        assert len(report["files"]["src/calc.py"]["mutants"]) == 2
        assert (here / f"{name}.html").read_text("utf-8").startswith("<!DOCTYPE html>")
    assert (here / "again.md").read_bytes() == (here / "run.md").read_bytes()


def _older(here: Path) -> None:
    """`named.json` as a mutharness older than the mutation report wrote it: no columns."""
    document = json.loads((here / "named.json").read_text("utf-8"))
    for spec in document["specs"]:
        del spec["sources"]
        for mutation in spec["mutations"]:
            del mutation["location"]
    (here / "old.json").write_text(json.dumps(document), "utf-8")


def test_when_the_last_asked_report_cannot_be_rendered_no_report_or_evidence_is_written(
    green_calc: Path, tmp_path: Path, git_home: Path, cli: Cli
) -> None:
    copy_recording(green_calc, tmp_path)
    here = tmp_path
    _older(here)  # evidence, JUnit and the summary can be made of it; the HTML page cannot

    render = cli(here, "render", "old.json", "--out", "evidence", "--junit", "old.xml",
                 "--summary", "old.md", "--report-html", "old.html")

    assert render.code == 2, render.out + render.err
    assert "Traceback" not in render.err
    assert not {"evidence", "old.xml", "old.md", "old.html"} & {
        path.name for path in here.iterdir()}


@pytest.mark.parametrize("value", ["Infinity", "-Infinity", "NaN", "-1.5"])
def test_render_refuses_results_with_non_finite_or_negative_durations(
    green_calc: Path, tmp_path: Path, git_home: Path, cli: Cli, value: str
) -> None:
    copy_recording(green_calc, tmp_path)
    here = tmp_path
    text = (here / "named.json").read_text("utf-8")
    forged, count = re.subn(r'"duration_s": [0-9.e-]+', f'"duration_s": {value}', text,
                            count=1)
    assert count == 1
    (here / "forged.json").write_text(forged, "utf-8")

    run = cli if value == "Infinity" else in_process  # one a real child, the rest in process
    render = run(here, "render", "forged.json", "--out", "evidence", "--junit", "f.xml",
                 "--summary", "f.md", "--report-stryker", "f.json", "--report-html", "f.html")

    assert render.code == 2, render.out + render.err
    assert "Traceback" not in render.err and "duration_s" in render.err
    assert not {"evidence", "f.xml", "f.md", "f.json", "f.html"} & {
        path.name for path in here.iterdir()}


def test_render_writes_every_report_of_results_whose_texts_hold_lone_surrogates_nul_and_esc(
    green_calc: Path, tmp_path: Path, git_home: Path, cli: Cli
) -> None:
    copy_recording(green_calc, tmp_path)
    here = tmp_path
    document = json.loads((here / "named.json").read_text("utf-8"))
    caught = document["specs"][0]["mutations"][0]
    odd = "\ud800 \x00 \x1b[2J \udcff"
    failing = caught["facts"]["not_passed"][0]
    for test in document["specs"][0]["baseline"]["tests"]:  # the same test in the baseline:
        if test["nodeid"] == failing["nodeid"]:  # a record consistent with its facts
            test["nodeid"] += odd
    failing["nodeid"] += odd
    failing["reason"] = odd
    caught["reason"] = odd
    (here / "odd.json").write_text(json.dumps(document), "utf-8")  # \ud800 as JSON writes it

    render = cli(here, "render", "odd.json", "--out", "evidence", "--junit", "o.xml",
                 "--summary", "o.md", "--report-stryker", "o.json", "--report-html", "o.html")

    assert render.code == 0, render.out + render.err
    ET.parse(here / "o.xml")
    killed = json.loads((here / "o.json").read_text("utf-8"))["files"]["src/calc.py"]["mutants"]
    assert any("\\x00" in test or "\\ud800" in test or "\\xed" in test
               for mutant in killed for test in mutant["killedBy"]), killed
    for name in ("o.md", "o.html", "evidence/calc.md", "evidence/index.md"):
        text = (here / name).read_text("utf-8")
        assert "\x00" not in text and "\x1b" not in text


def test_a_console_that_cannot_encode_a_character_shows_it_as_an_escape_and_the_run_goes_on(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    spec = default_spec()
    spec["mutations"][1]["name"] = "SURVIVOR \u2716 (documented): >= to > at 18 is not pinned"
    project = make_project(spec=spec)

    # a Windows console's code page: what it cannot encode (a test's, a spec's, node's own
    # glyphs) never stops the run
    done = cli(project.root, "verify", "specs/calc.json",
               env={**os.environ, "PYTHONIOENCODING": "cp1252"})

    assert done.code == 0, done.out + done.err
    assert "SURVIVOR \\u2716 (documented)" in done.out
