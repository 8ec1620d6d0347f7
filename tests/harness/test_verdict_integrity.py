"""Verdicts the suite's own exit paths cannot fake, mutations that mutate nothing refused, anchors
checked on the bytes the workspace holds, and a commit fixed when the run starts."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import CALC, Completed, Project, default_spec, git
from inproc import in_process
from liverun import (
    HANG_GUARD,
    Sandbox,
    add_probes,
    mutations_of,
    no_strays,
    results_of,
    spawn,
    wait_for,
)

ProjectFactory = Callable[..., Project]
Cli = Callable[..., Completed]


def test_pytest_exit_0_inside_the_last_test_is_untrustworthy_never_survived(
    make_project: ProjectFactory, cli: Cli
) -> None:
    project = make_project(spec=default_spec(mutations=[{
        "name": "is_adult ends the session as a success (pytest.exit with returncode 0)",
        "file": "src/calc.py", "anchor": "    return age >= 18\n",
        "replacement": "    __import__('pytest').exit('bye', returncode=0)\n",
        "expectCaught": False,
    }]))

    done = cli(project.root, "verify", "specs/calc.json")

    assert done.code == 4, done.out + done.err
    [result] = mutations_of(project.root)
    assert result["verdict"] == "UNTRUSTWORTHY"
    assert "1 test(s) reported as passed never ran their body" in result["reason"]
    assert "tests/test_calc.py::test_adult_at_eighteen" in result["reason"]


@pytest.mark.parametrize(("text", "anchor", "replacement", "reason"), [
    pytest.param(CALC, "return age >= 18", "return age >= 18",
                 "equals the anchor: the mutation changes nothing", id="same-text"),
    pytest.param(CALC.replace("\n", "\r\n"), "return low\n", "return low\r\n",
                 "leaves the file's bytes unchanged once line endings are translated: the "
                 "mutation would mutate nothing",
                 id="only-a-line-ending-the-crlf-policy-normalises"),
])
def test_a_mutation_whose_splice_gives_the_original_bytes_is_refused_before_any_run(
    make_project: ProjectFactory, text: str, anchor: str, replacement: str,
    reason: str,
) -> None:
    project = make_project(spec=default_spec(mutations=[
        {"name": "changes nothing", "file": "src/calc.py", "anchor": anchor,
         "replacement": replacement},
    ]))
    if text != CALC:
        project.write("src/calc.py", text.encode())
        project.commit("the target with CRLF line endings")

    checked = in_process(project.root, "check")
    verified = in_process(project.root, "verify", "specs/calc.json")

    for done in (checked, verified):
        assert done.code == 2, done.out + done.err
        assert reason in done.err
    assert "baseline" not in verified.out
    assert not (project.root / ".mutharness").exists()


def test_anchors_are_checked_on_heads_bytes_not_the_working_tree(
    make_project: ProjectFactory
) -> None:
    project = make_project(spec=default_spec(mutations=[
        {"name": "only in the working tree", "file": "src/calc.py",
         "anchor": "# a local experiment\n", "replacement": ""},
    ]))
    # git status stays clean, but the working tree's bytes are not the committed ones
    git(project.root, "update-index", "--assume-unchanged", "src/calc.py")
    project.write("src/calc.py", CALC + "# a local experiment\n")

    checked = in_process(project.root, "check")  # a pre-commit hook sees the working tree
    verified = in_process(project.root, "verify", "specs/calc.json")

    assert checked.code == 0, checked.out + checked.err
    assert verified.code == 2, verified.out + verified.err
    assert "anchor not found (0 hits)" in verified.err and "nothing was run" in verified.err
    assert "baseline" not in verified.out


def test_a_commit_made_during_the_run_never_enters_its_results(
    make_project: ProjectFactory, tmp_path: Path
) -> None:
    project = make_project()
    add_probes(project)
    start = git(project.root, "rev-parse", "HEAD").strip()
    calc_measured = git(project.root, "log", "-1", "--format=%H", start, "--", "src/calc.py",
                        "specs/calc.json", "tests/test_calc.py", "tests/conftest.py",
                        "pyproject.toml").strip()  # the spy conftest configures calc's tests
    sandbox = Sandbox.under(tmp_path)

    with no_strays(sandbox.spy):
        proc = spawn(project.root, "verify", "specs/gate.json", "specs/calc.json", *HANG_GUARD,
                     env=sandbox.env(MH_BLOCK="mutant"))
        try:
            wait_for((sandbox.spy / "mutant.pids").exists, proc, "the mutant's tests")
            project.write("src/calc.py", CALC + "# committed while the run goes on\n")
            project.commit("a commit during a long run, touching the target")
            sandbox.open_gate()
            out, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()

    assert proc.returncode == 0, out + err
    assert f"HEAD {start[:12]}" in out
    results = results_of(project.root)
    assert results["commit"] == start
    # the newest commit touching each spec's files, at or before the run's start
    assert [spec["source_commit"] for spec in results["specs"]] == [start, calc_measured]
    during = git(project.root, "rev-parse", "HEAD").strip()
    assert during != start and during not in json.dumps(results)


RANDOM_IDS = '''\
import os

import pytest


@pytest.mark.parametrize("value", [1], ids=[os.urandom(4).hex()])
def test_with_an_id_that_changes_every_run(value):
    assert value == 1
'''


def test_parametrized_ids_that_change_between_runs_are_named_as_such(
    make_project: ProjectFactory
) -> None:
    project = make_project(spec=default_spec(
        tests=["tests/test_calc.py", "tests/test_random.py"], expectBaselinePass=5,
    ))
    project.write("tests/test_random.py", RANDOM_IDS)
    project.commit("a random parametrize id")

    # every test runs (--no-first-failure): a run stopped at the caught test never reaches them
    done = in_process(project.root, "verify", "specs/calc.json", "--no-first-failure")

    assert done.code == 4, done.out + done.err
    caught, survivor = mutations_of(project.root)
    # a test the baseline passed failed: caught, the difference named
    assert caught["verdict"] == "CAUGHT"
    # nothing failed, and not the baseline's tests: no survivor can be claimed
    assert survivor["verdict"] == "UNTRUSTWORTHY"
    for result in (caught, survivor):
        assert result["reason"].startswith("test ids differ between runs")
        assert "missing tests/test_random.py::test_with_an_id_that_changes_every_run[" in \
            result["reason"]
