"""The release: the sdist and the wheel `python -m build` makes pass `twine check` (what a
package index checks), and the release workflow builds them on a tag and publishes them by
trusted publishing, never on any other event."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from conftest import create_venv, install

REPOSITORY = Path(__file__).resolve().parents[2]
WORKFLOW = REPOSITORY / ".github/workflows/release.yml"


def test_the_sdist_and_the_wheel_build_and_pass_twine_check(
    tmp_path: Path, wheelhouse: Path
) -> None:
    venv = create_venv(tmp_path / "release")
    install(venv, wheelhouse, "build", "twine")
    offline = {**os.environ, "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse)}

    built = subprocess.run(
        [str(venv.python), "-m", "build", "--sdist", "--wheel", "--outdir", str(tmp_path / "dist"),
         str(REPOSITORY)], env=offline, capture_output=True, text=True)

    assert built.returncode == 0, built.stdout + built.stderr
    made = sorted(path.name for path in (tmp_path / "dist").iterdir())
    assert made == ["mutharness-0.1.0-py3-none-any.whl", "mutharness-0.1.0.tar.gz"]
    checked = subprocess.run(
        [str(venv.python), "-m", "twine", "check", "--strict",
         *(str(path) for path in sorted((tmp_path / "dist").iterdir()))],
        capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("PASSED") == 2, checked.stdout


def test_the_release_workflow_publishes_on_a_version_tag_alone_by_trusted_publishing() -> None:
    text = WORKFLOW.read_text("utf-8")

    on = text.split("\non:", 1)[1].split("\njobs:", 1)[0]
    assert "tags:" in on and '"v*"' in on
    assert not any(event in on for event in ("pull_request", "branches", "schedule",
                                             "workflow_dispatch"))
    assert "id-token: write" in text  # trusted publishing: no token stored anywhere
    assert "pypa/gh-action-pypi-publish" in text
    assert "twine check --strict" in text
    assert "password" not in text.lower()
