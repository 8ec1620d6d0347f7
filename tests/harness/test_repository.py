"""The repository's own set-up stays repeatable: the README's commands can run twice in a row."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("kind", ["directory", "file"])
def test_a_venv_at_the_root_is_ignored_whether_a_directory_or_a_file(
    tmp_path: Path, kind: str
) -> None:
    repo = tmp_path / "clone"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".gitignore").write_bytes((ROOT / ".gitignore").read_bytes())
    venv = repo / ".venv"
    if kind == "directory":
        venv.mkdir()
        (venv / "pyvenv.cfg").write_text("home = /usr\n")
    else:
        venv.write_text("a file some tools leave at .venv\n")

    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"],
                            cwd=repo, capture_output=True, text=True, check=True).stdout

    assert status == "?? .gitignore\n"


def test_the_main_command_compares_every_evidence_document_index_included() -> None:
    tox = (ROOT / "tox.ini").read_text("utf-8")
    mutation = tox.split("[testenv:mutation]", 1)[1]
    assert "git diff --exit-code --stat -- evidence\n" in mutation
    assert "exclude" not in mutation
