"""The project's own, reviewed settings for mutharness runs: `[tool.mutharness]` in pyproject.toml.

They live in the repository (so a change to them is a reviewed change, and they are read from
the committed tree, as the workspace holds it), never in a spec (specs choose no options).
"""

from __future__ import annotations

import stat
import tomllib
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from mutharness.errors import EnvironmentProblem

FILE = "pyproject.toml"
TABLE = "tool.mutharness"
KEYS: Final = MappingProxyType({
    "pytest-addopts": "replaces the project's pytest `addopts` in every run of its tests "
                      "(for options that make a subset of the suite fail for reasons unrelated "
                      "to the tests, such as --cov-fail-under)",
})
MAX_BYTES = 1024 * 1024


@dataclass(frozen=True)
class ProjectConfig:
    """`[tool.mutharness]` as read from the workspace's pyproject.toml."""

    pytest_addopts: str | None = None

    def recorded(self) -> dict[str, str]:
        """The settings in force, as the results record them (only those set)."""
        return {} if self.pytest_addopts is None else {"pytest-addopts": self.pytest_addopts}


def _problem(text: str) -> EnvironmentProblem:
    return EnvironmentProblem(f"{FILE} [{TABLE}]: {text}",
                              remedy=f"known keys: {', '.join(KEYS)}")


def read_project_config(root: Path) -> ProjectConfig:
    """The `[tool.mutharness]` table of `root/pyproject.toml`; empty when there is none."""
    path = root / FILE
    try:
        info = path.lstat()
    except FileNotFoundError:
        return ProjectConfig()
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
        return ProjectConfig()  # a link or a huge file is not read; pytest reports on its own
    try:
        document: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise EnvironmentProblem(f"{FILE} cannot be read as TOML: {error}") from None
    tool = document.get("tool")
    table = tool.get("mutharness") if isinstance(tool, dict) else None
    if table is None:
        return ProjectConfig()
    if not isinstance(table, dict):
        raise _problem("is not a table")
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise _problem(f"unknown key(s) {', '.join(map(repr, unknown))}")
    addopts = table.get("pytest-addopts")
    if addopts is not None and not isinstance(addopts, str):
        raise _problem("pytest-addopts must be a string (pytest's addopts syntax)")
    return ProjectConfig(pytest_addopts=addopts)
