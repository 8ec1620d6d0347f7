"""A gate never reads stale results: a refused run leaves no earlier answer behind it, and a
spec's file name never breaks the run's own paths. Real repositories, the real command line."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import (
    Completed,
    Project,
    copy_recording,
    default_spec,
)
from inproc import in_process

from mutharness.errors import ExitCode, ResultsError
from mutharness.model.results import read_results

Cli = Callable[..., Completed]
MakeProject = Callable[..., Project]


def _break(project: Project, how: str) -> None:
    """Make the next verify refuse to run, the way `how` names."""
    if how == "a broken anchor":
        calc = (project.root / "src/calc.py").read_text("utf-8")
        project.write("src/calc.py", calc.replace("return age >= 18", "return age >= 21"))
        project.commit("the anchor of the documented survivor is gone")
    elif how == "a dirty tree":
        project.write("src/calc.py", "# an uncommitted change\n")
    elif how == "a spec file that is gone":
        (project.root / "specs" / "calc.json").unlink()
        project.commit("the spec is removed")
    else:
        project.write("mutharness.toml", "timeout-facotr = 3\n")
        project.commit("a config with a misspelt key")


@pytest.mark.parametrize(("how", "code"), [
    ("a broken anchor", 2), ("a dirty tree", 5), ("a bad config", 2),
    ("a spec file that is gone", 2),
], ids=["a broken anchor", "a dirty tree", "a bad config", "a spec file that is gone"])
def test_a_refused_run_leaves_no_earlier_green_results_for_render_or_ci(
    green_calc: Path, tmp_path: Path, git_home: Path, how: str, code: int
) -> None:
    copy_recording(green_calc, tmp_path)
    project = Project(tmp_path / "repo")
    here = project.root.parent
    default, named = project.root / ".mutharness" / "results.json", here / "named.json"
    assert read_results(default).exit_code() is ExitCode.OK
    assert read_results(named).exit_code() is ExitCode.OK
    _break(project, how)

    # refused before any test runs: the command line in this process (inproc)
    refused = [in_process(project.root, "verify", "specs/calc.json", *args)
               for args in ((), ("--json", str(named)))]

    assert [done.code for done in refused] == [code, code], [d.out + d.err for d in refused]
    for path in (default, named):
        if path.exists():
            try:
                run = read_results(path)
            except ResultsError:
                continue
            assert not run.complete and run.error is not None
            assert run.exit_code() is ExitCode(code)
            assert run.mutation_results == ()
        evidence = in_process(here, "render", str(path), "--out", str(here / "evidence"))
        assert evidence.code != 0 and not (here / "evidence").exists()
        summary = in_process(here, "render", str(path), "--summary", str(here / "s.md"))
        if summary.code == 0:
            assert "all 2 mutation(s) behaved as expected" not in (here / "s.md").read_text(
                "utf-8")


@pytest.mark.skipif(sys.platform == "win32", reason="':' cannot be in a Windows file name")
@pytest.mark.parametrize("name", ["calc:add", "my spec", "calc;$(x) #'\""])
def test_a_spec_whose_file_name_holds_a_colon_a_space_or_shell_characters_runs_as_any_other(
    make_project: MakeProject, cli: Cli, name: str
) -> None:
    project = make_project()
    project.spec(name, default_spec(), commit=True)
    here = project.root.parent

    done = cli(project.root, "verify", f"specs/{name}.json", "--json", str(here / "run.json"),
               "--evidence", str(here / "evidence"))

    assert done.code == 0, done.out + done.err
    document = json.loads((here / "run.json").read_text("utf-8"))
    assert [spec["id"] for spec in document["specs"]] == [name]
    assert [m["verdict"] for m in document["specs"][0]["mutations"]] == ["CAUGHT", "SURVIVED"]
    assert (here / "evidence" / f"{name}.md").is_file()


@pytest.mark.skipif(sys.platform == "win32", reason="':' cannot be in a Windows file name")
def test_specs_with_a_colon_in_their_names_run_under_j2_as_under_j1(
    make_project: MakeProject, cli: Cli
) -> None:
    project = make_project()
    project.spec("calc:add", default_spec(), commit=True)
    here = project.root.parent

    done = cli(project.root, "verify", "specs", "-j", "2", "--json", str(here / "run.json"))

    assert done.code == 0, done.out + done.err
    document = json.loads((here / "run.json").read_text("utf-8"))
    assert [spec["id"] for spec in document["specs"]] == ["calc", "calc:add"]
