"""CRLF checkouts and non-UTF-8 targets, end to end through the command line (real git and pytest).

A spec's anchors are written with LF. When the user's checkout has CRLF line endings (Windows'
`core.autocrlf=true`, or `.gitattributes` `eol=crlf` on any platform) the anchor is matched with
its newlines read as CRLF and the replacement is spliced the same way (DESIGN.md, section 2).
Each test proves, from inside the workspace (a spy conftest records the bytes every pytest
session saw), that: the workspace holds exactly the user's working-tree bytes; each mutant
holds exactly its own splice and only CRLF line endings (a test in the suite asserts that too,
and must never fail); the results and the evidence record the translation; and the user's tree
and `.git` are byte-identical afterwards. A latin-1 target is spliced byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import Completed, Project, git
from inproc import in_process, kept_environ
from liverun import Sandbox, git_status, snapshot

from mutharness.digest import changed_paths

Cli = Callable[..., Completed]
MakeProject = Callable[..., Project]

SPY_CONFTEST = '''\
import json
import os
import pathlib
import time

import pytest


@pytest.fixture(autouse=True, scope="session")
def _bytes_spy():
    spy = os.environ.get("MH_SPY_DIR")
    if spy:
        files = {
            path.as_posix(): path.read_bytes().hex()
            for path in sorted(pathlib.Path().rglob("*"))
            if path.is_file() and ".git" not in path.parts and "__pycache__" not in path.parts
        }
        name = f"session-{time.time_ns():020d}-{os.getpid()}.json"
        pathlib.Path(spy, name).write_text(json.dumps({"files": files}), encoding="utf-8")
    yield
'''

TEST_ENDINGS = '''\
import pathlib


def test_the_module_under_test_has_only_crlf_line_endings():
    data = pathlib.Path("src/calc.py").read_bytes()
    assert data.count(b"\\n") == data.count(b"\\r\\n") > 0, "mixed or LF line endings"
'''

ENDINGS_TEST_ID = "tests/test_endings.py::test_the_module_under_test_has_only_crlf_line_endings"

# anchor (LF), replacement (LF), the test it must fail, whether the splice is CRLF-translated
CRLF_MUTATIONS: list[tuple[str, str, str, bool]] = [
    ("    if value < low:\n        return low\n", "", "test_clamp_below", True),
    ("return age >= 18", "return age > 18", "test_adult_at_eighteen", False),
    ("        return high\n", "        pass\n        return value\n", "test_clamp_above", True),
    ("return value", "value = low\n    return value", "test_clamp_inside", True),
]

CRLF_SPEC: dict[str, Any] = {
    "tests": ["tests/test_calc.py", "tests/test_endings.py"],
    "expectBaselinePass": 5,
    "mutations": [
        {"name": f"mutation {index}: {anchor.strip()!r}", "file": "src/calc.py",
         "anchor": anchor, "replacement": replacement}
        for index, (anchor, replacement, _, _) in enumerate(CRLF_MUTATIONS)
    ],
}


def _crlf(text: str) -> bytes:
    return text.replace("\n", "\r\n").encode("utf-8")


def _only_crlf(data: bytes) -> bool:
    return data.count(b"\n") == data.count(b"\r\n") > 0


def _tracked(root: Path) -> list[str]:
    return git(root, "ls-files", "-z").strip("\0").split("\0")


def _checkout_again(project: Project) -> None:
    """Delete every tracked file and check it out again, so that the EOL settings apply."""
    for path in _tracked(project.root):
        (project.root / path).unlink()
    git(project.root, "checkout", "-q", "--", ".")


def _sessions(sandbox: Sandbox) -> list[dict[str, bytes]]:
    """The bytes of every file each pytest session saw in its workspace, in start order."""
    return [
        {path: bytes.fromhex(data) for path, data in session["files"].items()}
        for session in sandbox.sessions()
    ]


def _verify(project: Project, cli: Cli, sandbox: Sandbox, out: Path,
            spec: str) -> tuple[Completed, dict[str, Any], str]:
    """Verify `spec`, writing results and evidence outside the repository."""
    # a fresh process per run: the spy records each run's files as its session starts
    done = cli(project.root, "verify", f"specs/{spec}.json", "--json", str(out / "results.json"),
               "--evidence", str(out / "evidence"), "--pytest-runner", "subprocess",
               env=sandbox.env())
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    evidence = (out / "evidence" / f"{spec}.md").read_text(encoding="utf-8")
    return done, results, evidence


def _crlf_project(make_project: MakeProject, setup: str) -> Project:
    project = make_project()
    project.write("tests/conftest.py", SPY_CONFTEST)
    project.write("tests/test_endings.py", TEST_ENDINGS)
    project.spec("crlf", CRLF_SPEC)
    project.commit("a CRLF spec")
    if setup == "autocrlf":  # the user's repository config, as Git for Windows sets it up
        git(project.root, "config", "core.autocrlf", "true")
    elif setup == "info-attributes":  # the user's own, uncommitted attributes
        (project.root / ".git/info").mkdir(exist_ok=True)
        (project.root / ".git/info/attributes").write_text("*.py eol=crlf\n")
    else:  # committed LF, checked out CRLF on every platform
        project.write(".gitattributes", "*.py eol=crlf\n")
        project.commit("eol=crlf")
    _checkout_again(project)
    return project


@pytest.mark.parametrize("setup", ["autocrlf", "gitattributes", "info-attributes"])
def test_lf_anchors_land_on_a_crlf_checkout_with_crlf_splices_and_restore_byte_identical(
    make_project: MakeProject, tmp_path: Path, setup: str
) -> None:
    project = _crlf_project(make_project, setup)
    original = (project.root / "src/calc.py").read_bytes()
    assert _only_crlf(original), "the fixture checkout must have CRLF line endings"
    assert git_status(project.root) == ""
    user_bytes = {path: (project.root / path).read_bytes() for path in _tracked(project.root)}
    sandbox = Sandbox.under(tmp_path)
    before = snapshot(project.root)

    done, results, evidence = _verify(project, in_process, sandbox, tmp_path, "crlf")

    assert done.code == 0, done.out + done.err
    mutations = results["specs"][0]["mutations"]
    for result, (_, _, killer, translated) in zip(mutations, CRLF_MUTATIONS, strict=True):
        assert result["verdict"] == "CAUGHT", result
        assert result["facts"]["failing"] == [f"tests/test_calc.py::{killer}"], result
        assert result["crlf_translated"] is translated, result
    assert evidence.count("(anchor matched with CRLF line endings)") == sum(
        translated for *_, translated in CRLF_MUTATIONS
    )
    baseline, *mutants = _sessions(sandbox)
    assert {path: baseline[path] for path in user_bytes} == user_bytes  # the user's bytes
    assert len(mutants) == len(CRLF_MUTATIONS)
    for seen, (anchor, replacement, _, _) in zip(mutants, CRLF_MUTATIONS, strict=True):
        assert original.count(_crlf(anchor)) == 1
        assert seen["src/calc.py"] == original.replace(_crlf(anchor), _crlf(replacement))
        assert _only_crlf(seen["src/calc.py"])
        assert {path: seen[path] for path in user_bytes if path != "src/calc.py"} == {
            path: data for path, data in user_bytes.items() if path != "src/calc.py"
        }  # every other file is restored to the user's bytes before the next mutant
    assert changed_paths(before, snapshot(project.root)) == ()
    assert git_status(project.root) == ""
    assert sandbox.workspaces() == []


def test_check_accepts_lf_anchors_on_a_crlf_checkout(make_project: MakeProject) -> None:
    project = _crlf_project(make_project, "gitattributes")

    done = in_process(project.root, "check", "specs/crlf.json")

    assert done.code == 0, done.out + done.err


# ---------------------------------------------------------------------------------------------
# A target that is not UTF-8

LEGACY = (
    b"# -*- coding: latin-1 -*-\n"
    b"# caf\xe9 cr\xe8me br\xfbl\xe9e\n"
    b"GREETING = 'caf\xe9'\n"
    b"\n"
    b"\n"
    b"def answer():\n"
    b"    return 42  # \xbfqu\xe9?\n"
)

TEST_LEGACY = '''\
from legacy import GREETING, answer


def test_the_answer():
    assert answer() == 42


def test_the_greeting_is_read_as_latin_1():
    assert GREETING == "caf\\u00e9"
'''


def _latin_1_project(make_project: MakeProject, mutations: list[dict[str, Any]]) -> Project:
    project = make_project()
    project.write("tests/conftest.py", SPY_CONFTEST)
    project.write("src/legacy.py", LEGACY)
    project.write("tests/test_legacy.py", TEST_LEGACY)
    project.spec("legacy", {"tests": ["tests/test_legacy.py"], "expectBaselinePass": 2,
                            "mutations": mutations})
    project.commit("a latin-1 module")
    return project


def test_an_ascii_anchor_in_a_latin_1_target_lands_leaving_every_other_byte_and_restores_exactly(
    make_project: MakeProject, tmp_path: Path
) -> None:
    project = _latin_1_project(make_project, [
        {"name": "the answer is off by one", "file": "src/legacy.py",
         "anchor": "return 42", "replacement": "return 41"},
    ])
    sandbox = Sandbox.under(tmp_path)
    before = snapshot(project.root)

    done, results, evidence = _verify(project, in_process, sandbox, tmp_path, "legacy")

    assert done.code == 0, done.out + done.err
    (result,) = results["specs"][0]["mutations"]
    assert (result["verdict"], result["crlf_translated"], result["line"]) == ("CAUGHT", False, 7)
    assert result["facts"]["failing"] == ["tests/test_legacy.py::test_the_answer"]
    baseline, mutant = _sessions(sandbox)
    assert baseline["src/legacy.py"] == LEGACY
    assert mutant["src/legacy.py"] == LEGACY.replace(b"return 42", b"return 41")
    assert "return 41" in evidence
    assert changed_paths(before, snapshot(project.root)) == ()
    assert (project.root / "src/legacy.py").read_bytes() == LEGACY
    assert sandbox.workspaces() == []


@pytest.mark.parametrize("command", ["verify", "check"])
def test_a_non_ascii_anchor_that_cannot_match_a_latin_1_target_is_a_clear_zero_hit_miss(
    make_project: MakeProject, cli: Cli, tmp_path: Path, command: str
) -> None:
    project = _latin_1_project(make_project, [
        {"name": "the greeting in UTF-8", "file": "src/legacy.py",
         "anchor": "GREETING = 'caf\u00e9'", "replacement": "GREETING = 'cafe'"},
        {"name": "the replacement character", "file": "src/legacy.py",
         "anchor": "# caf\ufffd", "replacement": "# cafe"},
    ])
    sandbox = Sandbox.under(tmp_path)
    before = snapshot(project.root)

    done = cli(project.root, command, "specs/legacy.json", env=sandbox.env())

    assert done.code == 2, done.out + done.err
    assert "Traceback" not in done.err
    assert "2 problem(s) in the spec(s); nothing was run:" in done.err
    for index in (0, 1):
        (line,) = [line for line in done.err.splitlines()
                   if f"specs/legacy.json#/mutations/{index}/anchor:" in line]
        assert "file src/legacy.py: anchor not found (0 hits)" in line, line
    assert "baseline:" not in done.out
    assert list(sandbox.tmpdir.iterdir()) == []
    assert changed_paths(before, snapshot(project.root)) == ()


EOL_SETTINGS = {
    "none set": [],
    "autocrlf alone": [("core.autocrlf", "true")],
    "all three": [("core.autocrlf", "input"), ("core.eol", "lf"), ("core.safecrlf", "warn")],
    "a key given twice (the last wins)": [("core.eol", "crlf"), ("core.eol", "lf")],
}


@pytest.mark.parametrize("case", sorted(EOL_SETTINGS))
def test_the_workspace_checks_out_with_each_eol_setting_git_config_get_gives(
    tmp_path: Path, case: str
) -> None:
    """The end-of-line settings the workspace's checkout is given are, key by key, what
    `git config --get` gives in the user's repository (one git call reads all three)."""
    import os
    import subprocess

    from mutharness.repo.git import configure_git
    from mutharness.repo.source import open_source

    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    for key, value in EOL_SETTINGS[case]:
        git(repo, "config", "--add", key, value)
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-q", "-m", "a")
    expected: list[str] = []
    for key in ("core.autocrlf", "core.eol", "core.safecrlf"):
        got = subprocess.run(["git", "config", "--get", key], cwd=repo, capture_output=True,
                             text=True, check=False)
        if got.returncode == 0:
            expected += ["-c", f"{key}={got.stdout.strip()}"]

    with kept_environ():  # configure_git names the git it found in the environment
        source = open_source(repo, configure_git(os.environ["PATH"]))
        found = source.eol_config()

    assert found == tuple(expected)
