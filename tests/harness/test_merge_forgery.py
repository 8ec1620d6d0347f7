"""`merge` and `render` re-derive what they report: edited, swapped or foreign results refused."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    Completed,
    Project,
    calc_project,
    copy_recording,
    default_spec,
    edit_json,
    git,
    recording,
    run_cli,
)
from inproc import in_process

ProjectFactory = Callable[..., Project]
Cli = Callable[..., Completed]


def _record(base: Path) -> None:
    spec = default_spec()
    del spec["mutations"][1]["expectCaught"]  # `>= 17` survives, but is expected caught
    made = calc_project(base / "repo", spec)
    for k in (1, 2):
        out = base / f"shard-{k}.json"
        done = run_cli(made.root, "verify", "specs", "--shard", f"{k}/2", "--json", str(out))
        assert done.code in (0, 1), done.out + done.err


@pytest.fixture(scope="session")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Made once a session: calc with an undocumented survivor (the whole run exits 1, one
    unexpected result), and its real shards 1/2 and 2/2 beside it."""
    return recording(tmp_path_factory, "forgery", _record)


@pytest.fixture
def project(recorded: Path, tmp_path: Path, git_home: Path) -> Project:
    """A copy of the recorded project and its shards: a test edits its own."""
    copy_recording(recorded, tmp_path)
    return Project(tmp_path / "repo")


def shards(project: Project) -> tuple[Path, Path]:
    """The recorded shards, copied beside `project`."""
    return project.root.parent / "shard-1.json", project.root.parent / "shard-2.json"


def survivor(document: dict[str, Any]) -> dict[str, Any]:
    """The record of the undocumented survivor (calc #2), wherever its shard put it."""
    found = [m for s in document["specs"] for m in s["mutations"] if m["index"] == 1]
    assert len(found) == 1
    return found[0]


def holding_survivor(first: Path, second: Path) -> Path:
    for path in (first, second):
        if any(m["index"] == 1 for s in json.loads(path.read_text("utf-8"))["specs"]
               for m in s["mutations"]):
            return path
    raise AssertionError("no shard ran calc #2")


def merge(project: Project, cli: Cli, *paths: Path, extra: tuple[str, ...] = ()) -> Completed:
    out = project.root.parent / "merged.json"
    out.unlink(missing_ok=True)
    return cli(project.root, "merge", *map(str, paths), "--json", str(out), *extra)


def test_honest_shards_of_an_unexpected_result_merge_and_exit_1(
    project: Project, cli: Cli
) -> None:
    first, second = shards(project)

    done = merge(project, cli, first, second)

    assert done.code == 1, done.out + done.err
    assert (project.root.parent / "merged.json").exists()


def test_a_survivor_edited_into_a_caught_verdict_is_refused_naming_it(project: Project) -> None:
    first, second = shards(project)

    def forge(document: dict[str, Any]) -> None:
        survivor(document).update(verdict="CAUGHT", as_expected=True)

    edit_json(holding_survivor(first, second), forge)
    done = merge(project, in_process, first, second)

    assert done.code == 2
    assert "calc #2" in done.err and "SURVIVED" in done.err
    assert not (project.root.parent / "merged.json").exists()


def test_an_expectation_flag_edited_alone_is_refused(project: Project) -> None:
    first, second = shards(project)
    edit_json(holding_survivor(first, second), lambda d: survivor(d).update(as_expected=True))

    done = merge(project, in_process, first, second)

    assert done.code == 2
    assert "calc #2" in done.err
    assert not (project.root.parent / "merged.json").exists()


def test_an_expectation_edited_in_the_record_and_its_declaration_is_refused_by_the_checkout(
    project: Project
) -> None:
    first, second = shards(project)

    def forge(document: dict[str, Any]) -> None:
        for spec in document["specs"]:
            spec["declared"][1]["expect_caught"] = False
            for record in spec["mutations"]:
                if record["index"] == 1:
                    record.update(expect_caught=False, as_expected=True)

    for path in (first, second):
        edit_json(path, forge)
    done = merge(project, in_process, first, second)

    assert done.code == 2
    assert "specs/calc.json" in done.err
    assert not (project.root.parent / "merged.json").exists()


def test_swapped_records_are_refused_though_their_indices_are_in_place(
    make_project: ProjectFactory, cli: Cli
) -> None:
    project = make_project()  # calc: #1 caught, #2 a documented survivor; one shard runs both
    out = project.root.parent / "whole.json"
    assert cli(project.root, "verify", "specs", "--shard", "1/1", "--json", str(out)).code == 0

    def swap(document: dict[str, Any]) -> None:
        one, two = document["specs"][0]["mutations"]
        for key in ("verdict", "as_expected", "facts", "diff", "line", "end_line"):
            one[key], two[key] = two[key], one[key]

    edit_json(out, swap)
    done = merge(project, in_process, out)

    assert done.code == 2
    assert "calc #1" in done.err or "calc #2" in done.err
    assert not (project.root.parent / "merged.json").exists()


def test_a_baseline_edited_off_its_pinned_count_is_refused(project: Project) -> None:
    first, second = shards(project)

    def forge(document: dict[str, Any]) -> None:
        for spec in document["specs"]:
            if spec["mutations"]:
                spec["baseline"]["tests"].pop()

    for path in (first, second):  # every shard alike: no shard disagrees with another
        edit_json(path, forge)
    done = merge(project, in_process, first, second)

    assert done.code == 2
    assert "its baseline is not one verdicts can rest on" in done.err
    assert not (project.root.parent / "merged.json").exists()


def test_shards_of_another_repository_are_refused(
    project: Project, make_project: ProjectFactory
) -> None:
    first, second = shards(project)
    other = make_project("other")

    done = in_process(other.root, "merge", str(first), str(second), "--json",
                      str(other.root.parent / "merged.json"))

    assert done.code == 2
    assert "commit" in done.err
    assert not (other.root.parent / "merged.json").exists()


def test_shards_of_an_older_commit_merge_only_when_it_is_named_and_never_into_evidence(
    project: Project
) -> None:
    first, second = shards(project)
    measured = git(project.root, "rev-parse", "HEAD").strip()
    project.write("README.md", "a later commit\n")
    project.commit("later")

    assert merge(project, in_process, first, second).code == 2
    done = merge(project, in_process, first, second, extra=("--commit", measured))
    assert done.code == 1, done.out + done.err
    evidence = project.root.parent / "evidence"
    done = merge(project, in_process, first, second,
                 extra=("--commit", measured, "--evidence", str(evidence)))
    assert done.code == 2
    assert not evidence.exists()


def test_shards_whose_target_changed_at_the_named_commit_are_refused(project: Project) -> None:
    first, second = shards(project)
    project.write("src/calc.py", (project.root / "src/calc.py").read_text("utf-8") + "\n# x\n")
    project.commit("the target changed")
    for path in (first, second):  # as if measured here: only the target's bytes differ
        head = git(project.root, "rev-parse", "HEAD").strip()
        edit_json(path, lambda d, head=head: d.update(commit=head))

    done = merge(project, in_process, first, second)

    assert done.code == 2
    assert "src/calc.py" in done.err


def test_render_refuses_a_results_file_whose_verdict_was_edited_and_writes_nothing(
    project: Project
) -> None:
    results = holding_survivor(*shards(project))  # render makes a shard's reports, as a run's
    honest = project.root.parent / "honest.xml"
    assert in_process(project.root, "render", str(results), "--junit", str(honest)).code == 0
    assert honest.exists()  # the control: unedited, the same file renders
    edit_json(results, lambda d: survivor(d).update(verdict="CAUGHT", as_expected=True))
    junit = project.root.parent / "junit.xml"

    done = in_process(project.root, "render", str(results), "--junit", str(junit))

    assert done.code == 2
    assert "calc #2" in done.err
    assert not junit.exists()


def test_shards_run_with_first_failure_merge_and_lose_that_right_when_their_settings_lose_it(
    make_project: ProjectFactory
) -> None:
    project = make_project()
    out = project.root.parent / "whole.json"
    done = in_process(project.root, "verify", "specs", "--first-failure", "--shard", "1/1",
                      "--json", str(out))
    assert done.code == 0, done.out + done.err
    assert any(m["first_failure"] for s in json.loads(out.read_text("utf-8"))["specs"]
               for m in s["mutations"])

    assert merge(project, in_process, out).code == 0

    edit_json(out, lambda d: d["settings"]["values"].update({"first-failure": False}))
    assert merge(project, in_process, out).code == 2
