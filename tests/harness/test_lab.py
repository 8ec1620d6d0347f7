"""The lab end to end: every spec problem at once, honest closing lines, runs judged one by one."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import TEST_CALC, Completed, Project, default_spec
from inproc import in_process

from mutharness.model.anchors import AnchorMiss, locate
from mutharness.model.results import from_json, to_json

Cli = Callable[..., Completed]
MakeProject = Callable[..., Project]

HANGS_IN_THE_FIRST_RUN = '''\
import os, pathlib, time


def test_hangs_in_the_first_run():
    counter = pathlib.Path(os.environ["RUN_COUNTER"])
    count = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(count + 1))
    if count == 0:  # the first baseline run
        time.sleep(3600)
'''


def test_verify_reports_every_problem_of_every_spec_at_once_anchors_included(
    make_project: MakeProject
) -> None:
    project = make_project()
    project.spec("typo", default_spec(expectCaugth=True))
    missing = default_spec()
    missing["mutations"][0]["anchor"] = "    if value < lowest:\n"
    project.spec("drifted", missing, commit=True)

    done = in_process(project.root, "verify", "specs")

    assert done.code == 2
    assert "specs/typo.json#/expectCaugth: unknown key" in done.err
    assert "specs/drifted.json#/mutations/0/anchor: mutation 1 (" in done.err
    assert "anchor not found (0 hits)" in done.err
    assert done.err.count("specs/typo.json#/expectCaugth") == 1  # said once


def test_the_closing_line_names_a_dirty_tree_included_with_allow_dirty(
    make_project: MakeProject, cli: Cli
) -> None:
    project = make_project()
    project.write("NOTES.txt", "not committed\n")

    done = cli(project.root, "verify", "specs/calc.json", "--allow-dirty")

    assert done.code == 0, done.out + done.err
    assert "tree clean" not in done.out
    assert ("all 2 mutation(s) behaved as expected; dirty tree: 1 uncommitted change(s) "
            "included") in done.out


def test_a_baseline_run_that_times_out_among_several_is_named_as_a_timeout_not_flakiness(
    make_project: MakeProject, cli: Cli, tmp_path: Path
) -> None:
    project = make_project()
    project.write("tests/test_hang.py", HANGS_IN_THE_FIRST_RUN)
    project.spec("calc", default_spec(tests=["tests/test_calc.py", "tests/test_hang.py"],
                                      expectBaselinePass=5))
    project.commit("a test that hangs in the first baseline run")
    env = {**os.environ, "RUN_COUNTER": str(tmp_path / "counter")}

    # The first run hangs, so it times out whatever the limit and the machine's load; the
    # second passes (or, on a slow enough machine, times out too): either way the first run
    # is the one named, and no test is called unstable for the outcome it never reached.
    done = cli(project.root, "verify", "specs/calc.json", "--baseline-runs", "2",
               "--baseline-timeout", "3", env=env)

    assert done.code == 3, done.out + done.err
    assert "baseline run 1 of 2: timed out after 3 s" in done.err
    assert "unstable" not in done.err
    assert "failing:" not in done.err  # a run cut short lists no tests as failing
    runs = project.root / ".mutharness" / "runs" / "calc"
    assert (runs / "baseline-2.log").is_file()  # both runs ran before the first was judged


SESSIONS = '''\
import os


def pytest_sessionstart(session):
    with open(os.environ["SESSIONS_LOG"], "a", encoding="utf-8") as log:
        log.write(("collect only" if session.config.option.collectonly else "run") + "\\n")
'''


def test_a_verify_starts_the_tests_once_per_baseline_run_and_once_per_mutant(
    make_project: MakeProject, verify_here: Callable[..., Any], tmp_path: Path
) -> None:
    project = make_project()
    project.write("tests/conftest.py", SESSIONS)
    project.commit("every pytest session logged")
    log = tmp_path / "sessions.log"

    # the subprocess runner: a fresh pytest per run (the fork server's proof runs the tests
    # once more per test set; its own tests count what it runs)
    _, recorder = verify_here(project, environ={**os.environ, "SESSIONS_LOG": str(log)},
                              baseline_runs=2, pytest_runner="subprocess")

    assert [outcome.verdict.value for outcome in recorder.results] == ["CAUGHT", "SURVIVED"]
    # two baseline runs and two mutants; the tests' collection is checked by the first run
    assert log.read_text("utf-8").splitlines() == ["run"] * 4


def test_results_read_back_with_from_json_give_the_same_document(
    make_project: MakeProject, cli: Cli
) -> None:
    project = make_project()
    done = cli(project.root, "verify", "specs/calc.json")
    assert done.code == 0, done.out + done.err
    written = json.loads((project.root / ".mutharness/results.json").read_text("utf-8"))

    again = to_json(from_json(written, "results.json"))

    assert again == written


def test_an_anchor_hit_count_is_exact_however_many_hits_there_are() -> None:
    miss = locate(b"x = 1\n" * 5000, "x = 1", "x = 2")

    assert isinstance(miss, AnchorMiss)
    assert miss.hits == 5000
    assert "anchor matched 5000 times" in miss.describe()


def test_check_numbers_mutations_from_one_as_the_evidence_does(make_project: MakeProject) -> None:
    spec = default_spec()
    spec["mutations"][1]["file"] = "src/absent.py"
    project = make_project(spec=spec)

    done = in_process(project.root, "check")

    assert done.code == 2
    assert "#/mutations/1/file: mutation 2 (" in done.err


def test_check_in_a_repository_without_a_specs_directory_says_what_to_do(
    make_project: MakeProject
) -> None:
    project = make_project()
    (project.root / "specs/calc.json").rename(project.root / "calc.json")
    (project.root / "specs").rmdir()
    project.commit("specs elsewhere")

    done = in_process(project.root, "check")

    assert done.code == 2
    assert "specs: is not a directory: name the spec files" in done.err
    assert "or set specs-dir" in done.err


def test_verify_help_points_to_the_spec_format_and_says_what_the_interpreter_needs(
    tmp_path: Path
) -> None:
    done = in_process(tmp_path, "verify", "--help")

    assert done.code == 0
    text = " ".join(done.out.split())
    assert "format: docs/spec-format.md" in text
    assert "pytest 7.4 or newer, nothing else" in text
    assert "--config" in text and "--node" in text


def test_a_spec_whose_baseline_is_red_is_reported_once_then_summarised(
    make_project: MakeProject, cli: Cli
) -> None:
    project = make_project()
    project.write("tests/test_calc.py", TEST_CALC + "\n\ndef test_red():\n    assert False\n")
    project.commit("a red test")

    done = cli(project.root, "verify", "specs/calc.json")

    assert done.code == 3
    output = done.out + done.err
    assert output.count("not green: 1 test(s) failed") == 1, output
    assert "spec calc: no verdict, for the reason printed on stderr" in done.out
