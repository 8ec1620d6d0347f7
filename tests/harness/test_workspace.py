"""The disposable workspace: where it lives, what it is built from, and what it leaves behind.

Every test here runs the real command line against a real committed repository and proves
its claim by hashing the user's whole working tree *and* `.git` (bytes + mode of every file)
before and after.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import CALC, TEST_CALC, Completed, Project, default_spec, git
from inproc import in_process
from liverun import ONE_MUTATION_SPEC, Sandbox, add_probes, git_status, snapshot

from mutharness.digest import changed_paths

Cli = Callable[..., Completed]
MakeProject = Callable[..., Project]


def _results(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


def test_a_passing_run_leaves_tree_and_git_dir_byte_identical_but_for_run_dir_and_named_output(
    make_project: MakeProject, cli: Cli, tmp_path: Path
) -> None:
    project = make_project()
    add_probes(project)
    # Same bytes, older mtime: a `git status` that refreshes the index would rewrite .git/index.
    touched = project.root / "src/calc.py"
    os.utime(touched, (touched.stat().st_atime, touched.stat().st_mtime - 10))
    sandbox = Sandbox.under(tmp_path)
    before = snapshot(project.root)

    done = cli(project.root, "verify", "specs/calc.json", "--json", "out/results.json",
               env=sandbox.env())

    assert done.code == 0, done.out + done.err
    after = snapshot(project.root)
    assert changed_paths(before, after) == ("out", "out/results.json")
    assert _results(project.root / "out/results.json")["exit_code"] == 0
    ignore = (project.root / ".mutharness/.gitignore").read_text().splitlines()
    assert "*" in ignore
    assert git_status(project.root) == "?? out/results.json\n"


def test_each_run_happens_in_a_checkout_under_TMPDIR_that_is_removed_afterwards(
    make_project: MakeProject, tmp_path: Path
) -> None:
    project = make_project()
    add_probes(project)
    sandbox = Sandbox.under(tmp_path)

    done = in_process(project.root, "verify", "specs/calc.json", "--pytest-runner",
                      "subprocess", env=sandbox.env())  # a session per run

    assert done.code == 0, done.out + done.err
    sessions = sandbox.sessions()
    assert len(sessions) == 3  # the baseline, two mutations
    for session in sessions:
        checkout = Path(session["cwd"])
        assert checkout.parent.parent == sandbox.tmpdir
        assert checkout.parent.name.startswith("mh-")
    assert sandbox.workspaces() == []


def test_every_mutation_runs_on_the_restored_original_with_only_its_own_splice(
    make_project: MakeProject, tmp_path: Path
) -> None:
    project = make_project()
    add_probes(project)
    sandbox = Sandbox.under(tmp_path)

    done = in_process(project.root, "verify", "specs/calc.json", "--pytest-runner",
                      "subprocess", env=sandbox.env())  # a session per run

    assert done.code == 0, done.out + done.err
    seen = [session["calc"] for session in sandbox.sessions()]
    assert seen == [
        CALC,
        CALC.replace("    if value < low:\n        return low\n", ""),
        CALC.replace("return age >= 18", "return age >= 17"),
    ]


LITTER_SPEC = {
    "tests": ["tests/test_calc.py"],
    "expectBaselinePass": 4,
    "mutations": [
        {"name": "a harmless comment whose run leaves litter.txt behind",
         "file": "src/calc.py", "anchor": "return age >= 18",
         "replacement": "return age >= 18  # LITTER", "expectCaught": False},
        {"name": "the low bound is ignored", "file": "src/calc.py",
         "anchor": "    if value < low:\n        return low\n", "replacement": ""},
    ],
}


def test_files_a_run_writes_are_removed_before_the_next_run_and_are_no_drift(
    make_project: MakeProject, tmp_path: Path
) -> None:
    project = make_project(spec=LITTER_SPEC)
    add_probes(project)
    sandbox = Sandbox.under(tmp_path)

    done = in_process(project.root, "verify", "specs/calc.json", "--pytest-runner",
                      "subprocess", env=sandbox.env())  # a session per run

    assert done.code == 0, done.out + done.err
    first, second = _results(project.root / ".mutharness/results.json")["specs"][0]["mutations"]
    assert (first["verdict"], first["removed"]) == ("SURVIVED", ["litter.txt"])
    assert (second["verdict"], second["removed"]) == ("CAUGHT", [])
    assert ["litter.txt" in session["files"] for session in sandbox.sessions()] == [
        False, False, False  # the baseline, the littering mutant, the next
    ]


def test_a_dirty_tree_is_refused_listing_its_changes_before_anything_runs(
    make_project: MakeProject, tmp_path: Path
) -> None:
    project = make_project()
    project.write("src/calc.py", CALC + "\n# an uncommitted edit\n")
    project.write("notes/todo.txt", "untracked\n")
    sandbox = Sandbox.under(tmp_path)
    before = snapshot(project.root)

    done = in_process(project.root, "verify", "specs/calc.json", env=sandbox.env())

    assert done.code == 5, done.out + done.err
    assert " M src/calc.py" in done.err
    assert "?? notes/todo.txt" in done.err
    assert "--allow-dirty" in done.err
    assert "baseline" not in done.out
    assert sandbox.sessions() == []
    assert snapshot(project.root) == before
    assert not (project.root / ".mutharness").exists()


def test_allow_dirty_runs_the_uncommitted_bytes_records_them_and_leaves_them_untouched(
    make_project: MakeProject, tmp_path: Path
) -> None:
    project = make_project()
    add_probes(project)
    # An uncommitted test pins the documented survivor, so it is now caught: exit 1.
    project.write("tests/test_calc.py", TEST_CALC.replace(
        "def test_adult_at_eighteen():\n    assert is_adult(18)\n",
        "def test_adult_at_eighteen():\n    assert is_adult(18)\n    assert not is_adult(17)\n",
    ))
    edited = CALC + "# an uncommitted comment\n"
    project.write("src/calc.py", edited)
    project.write("NOTES.txt", "an untracked file\n")
    sandbox = Sandbox.under(tmp_path)
    before = snapshot(project.root)
    status_before = git_status(project.root)

    done = in_process(project.root, "verify", "--allow-dirty", "specs/calc.json", env=sandbox.env())

    assert done.code == 1, done.out + done.err
    results = _results(project.root / ".mutharness/results.json")
    assert results["dirty"] is True
    assert results["dirty_changes"] == [" M src/calc.py", " M tests/test_calc.py", "?? NOTES.txt"]
    baseline = sandbox.sessions()[0]
    assert baseline["calc"] == edited
    assert "NOTES.txt" in baseline["files"]
    survivor = results["specs"][0]["mutations"][1]
    assert survivor["verdict"] == "CAUGHT"
    assert survivor["facts"]["failing"] == ["tests/test_calc.py::test_adult_at_eighteen"]
    assert snapshot(project.root) == before
    assert git_status(project.root) == status_before
    assert sandbox.workspaces() == []


def test_a_red_baseline_leaves_tree_and_git_dir_identical_and_no_workspace(
    make_project: MakeProject, tmp_path: Path
) -> None:
    project = make_project()
    project.write("tests/test_calc.py", TEST_CALC.replace("== 5", "== 6"))
    project.commit("a test that fails")
    sandbox = Sandbox.under(tmp_path)
    before = snapshot(project.root)

    done = in_process(project.root, "verify", "specs/calc.json", env=sandbox.env())

    assert done.code == 3, done.out + done.err
    assert "baseline is not trustworthy" in done.err
    assert "CAUGHT" not in done.out
    assert snapshot(project.root) == before
    assert git_status(project.root) == ""
    assert sandbox.workspaces() == []


def test_a_shallow_clone_is_verified_and_its_git_dir_is_not_touched(
    make_project: MakeProject, tmp_path: Path
) -> None:
    origin = make_project("origin", spec=ONE_MUTATION_SPEC)
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", origin.root.as_uri(), str(shallow))
    assert (shallow / ".git/shallow").is_file()
    sandbox = Sandbox.under(tmp_path)
    before = snapshot(shallow)

    done = in_process(shallow, "verify", "specs/calc.json", env=sandbox.env())

    assert done.code == 0, done.out + done.err
    assert "CAUGHT" in done.out
    assert snapshot(shallow) == before
    assert git_status(shallow) == ""
    assert sandbox.workspaces() == []


def test_what_the_baseline_writes_never_reaches_a_mutant_run(
    make_project: MakeProject, tmp_path: Path
) -> None:
    project = make_project(spec={**LITTER_SPEC, "mutations": LITTER_SPEC["mutations"][:1]})
    # A cache the first session warms (as .hypothesis/ or a plugin's cache does) must not
    # decide a later run: a session that finds it warm fails.
    project.write("tests/conftest.py", (
        "import pathlib\n"
        "root = pathlib.Path(__file__).resolve().parent.parent\n"
        "def pytest_sessionstart(session):\n"
        "    cache = root / '.cache-dir' / 'state'\n"
        "    if cache.exists():\n"
        "        raise SystemExit('a warm cache from an earlier run')\n"
        "    cache.parent.mkdir(exist_ok=True)\n"
        "    cache.write_text('warm')\n"
    ))
    project.commit("a conftest that warms a cache")
    sandbox = Sandbox.under(tmp_path)

    done = in_process(project.root, "verify", "specs/calc.json", env=sandbox.env())

    assert done.code == 0, done.out + done.err
    [survivor] = _results(project.root / ".mutharness/results.json")["specs"][0]["mutations"]
    assert (survivor["verdict"], survivor["removed"]) == ("SURVIVED", [".cache-dir"])


WRITES_DATA = '''\
from pathlib import Path


def test_keeps_an_account():
    Path("accounts.json").write_text("{}")
    (Path("logs") / "today").mkdir(parents=True, exist_ok=True)
    assert Path("accounts.json").read_text() == "{}"
'''


def test_files_the_baseline_writes_into_the_workspace_are_named_on_the_console(
    make_project: MakeProject
) -> None:
    spec = default_spec(tests=["tests/test_calc.py", "tests/test_data.py"], expectBaselinePass=5)
    project = make_project(spec=spec)
    project.write("tests/test_data.py", WRITES_DATA)
    project.commit("a test that writes its data into the checkout")

    done = in_process(project.root, "verify", "specs/calc.json")

    assert done.code == 0, done.out + done.err
    assert ("mutharness: note: the baseline of calc wrote into the workspace: accounts.json, "
            "logs (deleted before each next run; data a test writes into the checkout is often "
            "the sign of a missing preload or setting that points it elsewhere)") in done.err
