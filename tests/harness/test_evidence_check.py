"""`mutharness evidence-check`: evidence is stale once a file whose digest it records changes."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import (
    CALC,
    Completed,
    Project,
    calc_project,
    git,
    project_copy,
    recording,
    run_cli,
)
from inproc import in_process

from mutharness.digest import file_digest
from mutharness.reports.evidence import sha256sum

Cli = Callable[..., Completed]

ADULT = "def is_adult(age):\n    return age >= 18\n"
TEST_ADULT = '''\
from adult import is_adult


def test_eighteen_is_adult():
    assert is_adult(18)


def test_seventeen_is_not():
    assert not is_adult(17)
'''
ADULT_SPEC = {
    "tests": ["tests/test_adult.py"],
    "expectBaselinePass": 2,
    "mutations": [{"name": "the age limit moves", "file": "src/adult.py",
                   "anchor": "age >= 18", "replacement": "age >= 17"}],
}


def _measure(base: Path) -> None:
    project = calc_project(base / "repo")
    project.write("src/adult.py", ADULT)
    project.write("tests/test_adult.py", TEST_ADULT)
    project.spec("adult", ADULT_SPEC)
    project.commit("a second spec")
    done = run_cli(project.root, "verify", "specs", "--evidence", "evidence")
    assert done.code == 0, done.out + done.err
    project.commit("evidence")


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository with two specs, verified once with --evidence and the evidence committed."""
    return recording(tmp_path_factory, "measured", _measure)


@pytest.fixture
def repo(measured: Path, tmp_path: Path, git_home: Path) -> Project:
    """This test's own copy of the measured repository (history and evidence included)."""
    return project_copy(measured, tmp_path)


def stale_line(document: str, commits: int | str) -> re.Pattern[str]:
    return re.compile(
        rf"^{re.escape(document)}: STALE \(measured at [0-9a-f]{{12}}; {commits} commit\(s\) "
        r"since touched these files\)$", re.MULTILINE,
    )


def test_fresh_evidence_passes_with_exit_0(repo: Project) -> None:
    done = in_process(repo.root, "evidence-check")

    assert done.code == 0, done.out + done.err
    assert "adult.md: fresh" in done.out
    assert "calc.md: fresh" in done.out
    assert "0 of 2 evidence document(s) stale" in done.out


def test_a_committed_edit_to_a_target_makes_its_evidence_stale_naming_file_and_commits(
    repo: Project, cli: Cli
) -> None:
    repo.write("src/calc.py", CALC.replace("return value\n", "return value  # clamped\n"))
    repo.commit("touch the target")

    done = cli(repo.root, "evidence-check")

    assert done.code == 1, done.out + done.err
    assert stale_line("calc.md", 1).search(done.out), done.out
    assert "    src/calc.py changed" in done.out
    assert "adult.md: fresh" in done.out
    assert "1 of 2 evidence document(s) stale" in done.out


def test_commits_that_touched_a_test_file_are_counted(repo: Project) -> None:
    repo.write("tests/test_adult.py", TEST_ADULT + "\n\ndef test_more():\n    assert True\n")
    repo.commit("a test more")
    repo.write("README.md", "unrelated\n")
    repo.commit("unrelated")
    repo.write("tests/test_adult.py", TEST_ADULT + "\n\ndef test_most():\n    assert True\n")
    repo.commit("another test")

    done = in_process(repo.root, "evidence-check")

    assert done.code == 1, done.out + done.err
    assert stale_line("adult.md", 2).search(done.out), done.out
    assert "    tests/test_adult.py changed" in done.out
    assert "calc.md: fresh" in done.out


def test_an_edit_to_the_spec_itself_makes_its_evidence_stale(repo: Project) -> None:
    repo.spec("adult", {**ADULT_SPEC, "_provenance": "re-measured by nobody"}, commit=True)

    done = in_process(repo.root, "evidence-check")

    assert done.code == 1, done.out + done.err
    assert "    specs/adult.json changed" in done.out


def test_an_unrelated_change_leaves_the_evidence_fresh(repo: Project) -> None:
    repo.write("README.md", "a readme\n")
    repo.write("src/other.py", "VALUE = 1\n")
    repo.commit("unrelated files")
    repo.write("notes.txt", "uncommitted and unrelated\n")

    done = in_process(repo.root, "evidence-check")

    assert done.code == 0, done.out + done.err
    assert "0 of 2 evidence document(s) stale" in done.out


def test_a_deleted_dependency_is_reported_missing(repo: Project) -> None:
    git(repo.root, "rm", "-q", "tests/test_adult.py")
    repo.commit("drop a test file")

    done = in_process(repo.root, "evidence-check")

    assert done.code == 1, done.out + done.err
    assert stale_line("adult.md", 1).search(done.out), done.out
    assert "    tests/test_adult.py missing" in done.out


def test_an_uncommitted_edit_makes_evidence_stale_and_says_no_commit_has_it_yet(
    repo: Project
) -> None:
    repo.write("src/adult.py", ADULT.replace("18", "21"))

    done = in_process(repo.root, "evidence-check")

    assert done.code == 1, done.out + done.err
    assert re.search(r"^adult\.md: STALE \(measured at [0-9a-f]{12}; the files below differ "
                     r"from it in the working tree, not yet committed\)$", done.out, re.MULTILINE)
    assert "    src/adult.py changed" in done.out


def test_a_measured_commit_the_repository_lacks_gives_an_unknown_count(repo: Project) -> None:
    facts = repo.root / "evidence/calc.json"
    text = facts.read_text(encoding="utf-8")
    commit = json.loads(text)["commit"]
    facts.write_text(text.replace(commit, "f" * 40), encoding="utf-8")
    repo.write("src/calc.py", CALC + "\n")
    repo.commit("evidence from elsewhere, and a change")

    done = in_process(repo.root, "evidence-check")

    assert done.code == 1, done.out + done.err
    assert stale_line("calc.md", "an unknown number of").search(done.out), done.out


def test_a_markdown_file_that_is_not_evidence_is_reported_unreadable(repo: Project) -> None:
    repo.write("evidence/notes.md", "# notes by hand\n")

    done = in_process(repo.root, "evidence-check")

    assert done.code == 1, done.out + done.err
    assert ("notes.md: UNREADABLE (its facts file notes.json is missing (re-render the "
            "evidence))") in done.out
    assert "index.md" not in done.out  # the index records no digests and is not evidence


def test_a_recorded_path_leading_out_of_the_repository_is_refused_not_read(repo: Project) -> None:
    facts = repo.root / "evidence/calc.json"
    text = facts.read_text(encoding="utf-8")
    facts.write_text(text.replace('"src/calc.py"', '"../outside.py"'), encoding="utf-8")

    done = in_process(repo.root, "evidence-check")

    assert done.code == 1, done.out + done.err
    assert "calc.md: UNREADABLE (records a path outside the repository: '../outside.py')" \
        in done.out


def test_the_evidence_option_names_another_directory_and_a_missing_one_exits_2(
    repo: Project
) -> None:
    shutil.move(repo.root / "evidence", repo.root / "docs")

    found = in_process(repo.root, "evidence-check", "--evidence", "docs")
    missing = in_process(repo.root, "evidence-check")

    assert found.code == 0, found.out + found.err
    assert "0 of 2 evidence document(s) stale" in found.out
    assert missing.code == 2, missing.out + missing.err
    assert "is not a directory of evidence" in missing.err


def test_the_evidence_check_runs_from_a_subdirectory_against_the_repository_root(
    repo: Project
) -> None:
    done = in_process(repo.root / "src", "evidence-check")

    assert done.code == 0, done.out + done.err


REPOSITORY = Path(__file__).resolve().parents[2]  # tests/harness/ -> the repository root


@pytest.mark.skipif(not (REPOSITORY / "evidence").is_dir(),
                    reason="this repository has no evidence/ committed yet")
def test_this_repository_s_own_evidence_is_fresh(cli: Cli) -> None:
    done = cli(REPOSITORY, "evidence-check")

    assert done.code == 0, done.out + done.err


# ---------------------------------------------------------------- the digest list (pure)


@pytest.mark.parametrize(
    "path",
    [
        "tests/test_a`b`c.py", "tests/with space.py", "tests/pipe|and<angle>.py",
        "tests/back\\slash.py", "tests/new\nline.py", "tests/carriage\rreturn.py",
        "tests/```fence.py", "tests/ü n i c ö d e.py",
    ],
)
def test_the_digest_list_in_a_document_is_checked_by_sha256sum_for_any_file_name(
    path: str, tmp_path: Path
) -> None:
    sha256sum_tool = shutil.which("sha256sum")
    if sha256sum_tool is None:
        pytest.skip("GNU sha256sum is not installed")
    (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / path).write_bytes(b"one\n")
    (tmp_path / "src").mkdir(exist_ok=True)
    (tmp_path / "src/calc.py").write_bytes(b"two\n")
    digests = {path: file_digest(b"one\n"), "src/calc.py": file_digest(b"two\n")}
    (tmp_path / "SUMS").write_text(sha256sum(digests), encoding="utf-8")

    done = subprocess.run([sha256sum_tool, "-c", "SUMS"], cwd=tmp_path, capture_output=True)

    assert done.returncode == 0, done.stdout + done.stderr


def _configure(base: Path) -> None:
    project = calc_project(base / "repo")
    project.write(".gitignore", ".mutharness/\n")
    project.write("conftest.py", "# the root conftest\n")
    project.write("tests/conftest.py", "# the tests' conftest\n")
    project.write("elsewhere/conftest.py", "# not on the way to the tests\n")
    project.write("specs/platform-skips.json", '{"version": 1, "platforms": {}}\n')
    project.commit("configuration")
    done = run_cli(project.root, "verify", "specs", "--evidence", "evidence")
    assert done.code == 0, done.out + done.err
    project.commit("evidence")


@pytest.fixture(scope="module")
def configured(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository with every file that configures a run (and a conftest off the tests'
    way), verified once with --evidence and the evidence committed."""
    return recording(tmp_path_factory, "configured", _configure)


@pytest.fixture
def configured_repo(configured: Path, tmp_path: Path, git_home: Path) -> Project:
    """This test's own copy of the configured repository."""
    return project_copy(configured, tmp_path)


@pytest.mark.parametrize(("edited", "stales"), [
    ("tests/conftest.py", "verdicts, baseline line"),
    ("conftest.py", "verdicts, baseline line"),
    ("pyproject.toml", "verdicts, baseline line"),
    ("specs/platform-skips.json", "verdicts, baseline line"),
], ids=["tests-conftest", "root-conftest", "pytest-config", "skip-policy"])
def test_editing_what_configures_the_run_makes_the_evidence_stale(
    configured_repo: Project, edited: str, stales: str
) -> None:
    project = configured_repo
    facts = json.loads((project.root / "evidence/calc.json").read_text("utf-8"))
    assert "elsewhere/conftest.py" not in facts["specs"][0]["depends_on"]

    project.write(edited, (project.root / edited).read_text("utf-8") + "\n")
    done = in_process(project.root, "evidence-check")

    assert done.code == 1, done.out
    assert f"    {edited} changed (stales: {stales})" in done.out.splitlines()


def test_a_conftest_off_the_tests_path_leaves_the_evidence_fresh(
    configured_repo: Project
) -> None:
    project = configured_repo
    project.write("elsewhere/conftest.py", "# edited\n")
    done = in_process(project.root, "evidence-check")

    assert done.code == 0, done.out


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
@pytest.mark.parametrize("edited", ["package.json", "mutharness.toml"])
def test_a_node_spec_s_evidence_depends_on_its_package_json_and_project_config(
    node_project: Path, cli: Cli, edited: str
) -> None:
    (node_project / ".gitignore").write_text(".mutharness/\n", encoding="utf-8")
    git(node_project, "add", "-A")
    git(node_project, "commit", "-q", "-m", "ignore runs")
    cli(node_project, "verify", "specs/retry-after.json", "--evidence", "evidence")
    git(node_project, "add", "-A")
    git(node_project, "commit", "-q", "-m", "evidence")
    facts = json.loads((node_project / "evidence/retry-after.json").read_text("utf-8"))
    assert "test/setup-env.mjs" in facts["specs"][0]["depends_on"]  # the preload

    path = node_project / edited
    path.write_text(path.read_text("utf-8") + "\n", encoding="utf-8")
    done = in_process(node_project, "evidence-check")

    assert done.code == 1, done.out
    assert f"    {edited} changed (stales: verdicts, baseline line)" in done.out.splitlines()


def test_a_conftest_added_on_the_tests_path_makes_the_evidence_stale(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    project = make_project()
    project.write(".gitignore", ".mutharness/\n")
    project.commit("ignore the run directory")
    assert cli(project.root, "verify", "specs", "--evidence", "evidence").code == 0
    project.commit("evidence")

    project.write("tests/conftest.py", "import pytest\n\n\n@pytest.fixture(autouse=True)\n"
                  "def broken():\n    raise RuntimeError\n")
    done = in_process(project.root, "evidence-check")

    assert done.code == 1, done.out
    assert "    tests/conftest.py added (stales: verdicts, baseline line)" in done.out.splitlines()
