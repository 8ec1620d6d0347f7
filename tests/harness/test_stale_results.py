"""A gate never reads stale results: a spec's file name never breaks the run's own paths.
Real repositories, the real command line."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

import pytest
from conftest import Completed, Project, default_spec

Cli = Callable[..., Completed]
MakeProject = Callable[..., Project]


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
