"""Start-up checks of the libraries mutharness relies on, and the versions it records."""

from __future__ import annotations

import platform
import re
import sys
from collections.abc import Callable, Mapping
from importlib import metadata
from types import MappingProxyType

from mutharness.errors import EnvironmentProblem

FLOORS: Mapping[str, str] = MappingProxyType({
    "GitPython": "3.2.1",
    "filelock": "4.3.1",
    "Jinja2": "3.1.6",
    "click": "8.1.8",
})


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


_PRE_RELEASE = re.compile(r"[-_.]?(a|b|c|rc|alpha|beta|pre|preview|dev)", re.IGNORECASE)


def _is_pre_release(text: str) -> bool:
    """`3.2.1rc1`, `3.2.1.dev0`: what follows the release starts with a pre/dev marker."""
    release = re.match(r"\d+(\.\d+)*", text)
    return release is not None and _PRE_RELEASE.match(text, release.end()) is not None


def is_below(version: str, floor: str) -> bool:
    """Whether `version` is older than the final release `floor` (PEP 440, simplified).

    Missing release parts count as zeros (3.2 == 3.2.0) and a pre-release or development
    release of the floor itself (3.2.1rc1, 3.2.1.dev0) is older than the floor.
    """
    have, need = version_tuple(version.split("+")[0]), version_tuple(floor)
    if not have:
        return True
    width = max(len(have), len(need))
    have += (0,) * (width - len(have))
    need += (0,) * (width - len(need))
    return have < need or (have == need and _is_pre_release(version))


def _pip(*args: str) -> str:
    """A pip command line for this interpreter that cmd.exe, PowerShell and sh all read alike."""
    python = f'"{sys.executable}"' if " " in sys.executable else sys.executable
    return " ".join((python or "python", "-m", "pip", *args))


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
                f"{name} is not installed", remedy=_pip("install", f'"{name}>={floor}"')
            ) from None
        if is_below(version, floor):
            raise EnvironmentProblem(
                f"{name} {version or '(no version)'} is below the required {floor} "
                "(security floor)",
                remedy=_pip("install", "--upgrade", f'"{name}>={floor}"'),
            )
        found[name] = version
    return found


def tool_versions() -> dict[str, str]:
    """The harness side of the environment, for the results file."""
    try:
        own = metadata.version("mutharness")
    except metadata.PackageNotFoundError:
        own = "unknown"
    libraries: dict[str, str] = {}
    for name in FLOORS:
        try:
            libraries[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            libraries[name] = "missing"
    return {
        **libraries,
        "mutharness": own,
        "harness_python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "harness_executable": sys.executable,
    }
