"""Start-up checks of the libraries mutharness relies on, and the versions it records."""

from __future__ import annotations

import platform
import re
import sys
from collections.abc import Callable, Mapping
from importlib import metadata

from mutharness.errors import EnvironmentProblem

FLOORS: Mapping[str, str] = {
    "GitPython": "3.2.1",
    "filelock": "4.3.1",
    "Jinja2": "3.1.6",
    "click": "8.1.8",
}


def version_tuple(text: str) -> tuple[int, ...]:
    """`3.1.45.post1` -> (3, 1, 45): the leading numeric release parts."""
    numbers: list[int] = []
    for part in text.split("."):
        match = re.match(r"\d+", part)
        if match is None:
            break
        numbers.append(int(match.group()))
        if match.end() != len(part):
            break
    return tuple(numbers)


def check_floors(
    floors: Mapping[str, str] = FLOORS,
    installed: Callable[[str], str] = metadata.version,
) -> dict[str, str]:
    """Installed versions of `floors`; a one-line error when one is missing or below its floor."""
    found: dict[str, str] = {}
    for name, floor in floors.items():
        try:
            version = installed(name)
        except metadata.PackageNotFoundError:
            raise EnvironmentProblem(
                f"{name} is not installed", remedy=f"pip install '{name}>={floor}'"
            ) from None
        if version_tuple(version) < version_tuple(floor):
            raise EnvironmentProblem(
                f"{name} {version} is below the required {floor} (security floor)",
                remedy=f"pip install --upgrade '{name}>={floor}'",
            )
        found[name] = version
    return found


def tool_versions() -> dict[str, str]:
    """The harness side of the environment, for the results file."""
    try:
        own = metadata.version("mutharness")
    except metadata.PackageNotFoundError:
        own = "unknown"
    return {
        "mutharness": own,
        "harness_python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "harness_executable": sys.executable,
    }
