"""The wheels the suite's real installs use, downloaded once before it runs (tox's
commands_pre): `python tests/harness/wheelhouse.py DIR`. The suite itself then needs no
package index (conftest's `wheelhouse` reads MUTHARNESS_WHEELHOUSE)."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

TOOLS = ("pytest-json-report", "pytest-xdist", "pytest-cov", "setuptools", "hatchling", "editables",
         "wheel")
FLOOR_PYTEST = "7.4.4"  # the oldest pytest mutharness claims (runner.MIN_PYTEST)
FLOOR_TOOLS = (f"pytest=={FLOOR_PYTEST}",)  # the tests' interpreter needs pytest alone
TOO_OLD_PYTEST = "7.3.2"
_PROJECT = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text(
    encoding="utf-8"))
MUTHARNESS = (  # what installing mutharness itself needs: its dependencies, its build backend
    *_PROJECT["project"]["dependencies"], *_PROJECT["build-system"]["requires"])
UV, PIPX = "uv", "pipx"  # tool installs of mutharness, as users make them
TOX = "tox"
SETS = (  # pip resolves each set on its own: the floor's pins never meet this pytest
    (f"pytest=={pytest.__version__}", *TOOLS),
    FLOOR_TOOLS,
    (f"pytest=={TOO_OLD_PYTEST}",),
    MUTHARNESS,
    (UV,),
    (PIPX, "pip"),  # pipx upgrades its shared pip from the wheelhouse too
    ("build", "twine"),  # the release's sdist and wheel, checked as an index would
    (TOX,),  # a project whose tests run in a tox environment
)


def download(directory: Path) -> Path:
    """Every wheel of `SETS` (and what they need) into `directory`, from the package index."""
    directory.mkdir(parents=True, exist_ok=True)
    for packages in SETS:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "--disable-pip-version-check", "download",
             "--quiet", "--dest", str(directory), *packages],
            capture_output=True, text=True,
        )
        if done.returncode != 0:
            raise RuntimeError(f"pip download {' '.join(packages)} failed:\n{done.stdout}\n"
                               f"{done.stderr}")
    return directory


def _wheel_name(requirement: str) -> str:
    """The distribution a requirement names, as wheel file names spell it (`Jinja2>=3` ->
    `jinja2`)."""
    return re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].lower().replace("-", "_")


def holds_every_set(directory: Path) -> bool:
    """Whether `directory` holds a wheel of each pytest the sets pin (this one included), of
    each tool, and of each of mutharness's own dependencies (a new one: download again)."""
    names = {path.name.lower() for path in directory.glob("*.whl")}
    return all(any(name.startswith(f"pytest-{version}-") for name in names)
               for version in (pytest.__version__, FLOOR_PYTEST, TOO_OLD_PYTEST)) and all(
        any(name.startswith(f"{tool}-") for name in names)
        for tool in (UV, PIPX, TOX, *map(_wheel_name, MUTHARNESS)))


if __name__ == "__main__":
    print(f"wheelhouse: {download(Path(sys.argv[1]))}")
