"""The results JSON: the facts a reviewer re-derives verdicts from, and the verdicts."""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
import sys
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from conftest import Completed, Project, default_spec, git
from inproc import in_process

from mutharness.errors import ResultsError
from mutharness.model.results import from_json, to_json

ProjectFactory = Callable[..., Project]
Cli = Callable[..., Completed]


def load(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return document


def test_the_json_option_writes_versions_commit_spec_baseline_and_per_mutation_facts(
    make_project: ProjectFactory, cli: Cli, tmp_path: Path
) -> None:
    project = make_project()
    head = git(project.root, "rev-parse", "HEAD").strip()
    out = tmp_path / "out" / "results.json"

    done = cli(project.root, "verify", "specs/calc.json", "--json", str(out))

    assert done.code == 0, done.out + done.err
    assert f"results: {out}" in done.out
    assert not (project.root / ".mutharness/results.json").exists()
    results = load(out)
    tool = results["tool"]
    assert tool["mutharness"] == metadata.version("mutharness")
    assert tool["python"] == platform.python_version()
    assert tool["implementation"] == platform.python_implementation()
    assert tool["python_executable"] == sys.executable
    assert tool["pytest"] == metadata.version("pytest")
    assert "pytest-json-report" not in tool  # the probe plugin reports; nothing else needed
    git_version = subprocess.run(["git", "version"], capture_output=True, text=True).stdout
    assert git_version.split()[2].startswith(tool["git"])
    assert (results["commit"], results["dirty"], results["dirty_changes"]) == (head, False, [])
    assert results["exit_code"] == 0 and results["interrupted"] is False
    assert results["command"] == ["mutharness", "verify", "specs/calc.json"]
    assert results["notes"] == []  # nothing to tell: every run a fresh process, the default
    noted = {**results, "notes": ["pytest runs in a fresh process per run from now on: why"]}
    assert to_json(from_json(noted))["notes"] == noted["notes"]
    older = {key: value for key, value in results.items() if key != "notes"}
    assert from_json(older).notes == ()  # a file written before notes were kept

    [spec] = results["specs"]
    assert spec["id"] == "calc" and spec["path"] == "specs/calc.json" and spec["error"] == ""
    assert (spec["tests"], spec["expect_baseline_pass"]) == (["tests/test_calc.py"], 4)
    baseline = spec["baseline"]
    assert (baseline["passed"], baseline["failed"], baseline["collected"]) == (4, 0, 4)
    assert (baseline["exit_status"], baseline["report"], baseline["timed_out"]) == (0, "ok", False)
    assert baseline["duration_s"] > 0
    assert [test["outcome"] for test in baseline["tests"]] == ["passed"] * 4
    # max(floor, factor x baseline + constant), whatever the baseline took on a loaded machine
    settings = results["settings"]["values"]
    scaled = settings["timeout-factor"] * baseline["duration_s"] + settings["timeout-constant"]
    expected = max(settings["timeout-floor"], scaled)
    assert abs(spec["timeout_s"] - expected) <= 0.1

    caught, survivor = spec["mutations"]
    assert (caught["file"], caught["line"], caught["end_line"]) == ("src/calc.py", 5, 6)
    assert caught["expect_caught"] is True and caught["killed_by"] == []
    assert "-    if value < low:\n" in caught["diff"]
    facts = caught["facts"]
    assert (facts["exit_status"], facts["report"], facts["timed_out"]) == (1, "ok", False)
    # stopped at its first failing test (the default), the first of the four
    assert (facts["passed"], facts["failed"], facts["collected"]) == (0, 1, 1)
    assert facts["failing"] == ["tests/test_calc.py::test_clamp_below"]
    assert caught["first_failure"] is True and survivor["first_failure"] is True
    assert facts["duration_s"] > 0 and facts["timeout_s"] == spec["timeout_s"]
    assert (caught["verdict"], caught["as_expected"], caught["reason"]) == ("CAUGHT", True, "")

    assert (survivor["line"], survivor["expect_caught"]) == (13, False)
    assert (survivor["facts"]["passed"], survivor["facts"]["failing"]) == (4, [])
    assert (survivor["verdict"], survivor["as_expected"]) == ("SURVIVED", True)


def test_without_the_option_the_results_go_to_the_self_ignoring_run_directory(
    make_project: ProjectFactory, cli: Cli
) -> None:
    project = make_project(spec=default_spec(mutations=default_spec()["mutations"][:1]))
    project.write("NOTES.txt", "an uncommitted file\n")

    done = cli(project.root / "src", "verify", "../specs/calc.json", "--allow-dirty")

    assert done.code == 0, done.out + done.err
    path = project.root / ".mutharness/results.json"
    shown = next(line for line in done.out.splitlines() if line.startswith("results: "))
    assert (project.root / "src" / shown.removeprefix("results: ")).resolve() == path
    results = load(path)
    assert results["dirty"] is True
    assert results["dirty_changes"] == ["?? NOTES.txt"]
    assert results["specs"][0]["path"] == "specs/calc.json"
    assert [m["verdict"] for m in results["specs"][0]["mutations"]] == ["CAUGHT"]
    assert git(project.root, "status", "--porcelain") == "?? NOTES.txt\n"


def test_a_file_several_specs_mutate_is_stored_once_and_read_back_whole_as_older_files_are(
    make_project: Callable[..., Project], tmp_path: Path
) -> None:
    project = make_project()
    project.spec("calc-again", default_spec(), commit=True)  # mutating the same file

    done = in_process(project.root, "verify", "specs")

    assert done.code == 0, done.out + done.err
    document = json.loads((project.root / ".mutharness/results.json").read_text("utf-8"))
    text = (project.root / "src/calc.py").read_text("utf-8")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert document["texts"] == {digest: text}  # once, however many specs mutate it
    assert [spec["sources"] for spec in document["specs"]] == [{"src/calc.py": digest}] * 2
    assert [dict(spec.sources) for spec in from_json(document).specs] == [
        {"src/calc.py": text}] * 2
    forged = {**document, "texts": {digest: text + "# not what ran\n"}}
    with pytest.raises(ResultsError, match="texts"):
        from_json(forged)
    # a file written before the texts were stored once: no `texts`, each text in place
    older = {**{key: value for key, value in document.items() if key != "texts"},
             "specs": [{**spec, "sources": {"src/calc.py": text}} for spec in document["specs"]]}
    assert [dict(spec.sources) for spec in from_json(older).specs] == [
        {"src/calc.py": text}] * 2
