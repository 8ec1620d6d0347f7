"""Start-up checks of the libraries mutharness relies on, and the versions it records."""

from __future__ import annotations

import os
import platform
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from importlib import metadata
from types import MappingProxyType

from mutharness.errors import EnvironmentProblem

FLOORS: Mapping[str, str] = MappingProxyType({
    "GitPython": "3.2.1",
    "filelock": "4.3.1",
    "Jinja2": "3.1.6",
    "click": "8.1.8",
    "libcst": "1.8",  # suggest's Python trees
    "tree-sitter": "0.25",  # suggest's JavaScript and TypeScript trees, with their grammars
    "tree-sitter-javascript": "0.23",
    "tree-sitter-typescript": "0.23",
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


def installed_versions(
    names: Iterable[str], installed: Callable[[str], str] = metadata.version
) -> dict[str, str | None]:
    """Each distribution's installed version, None where it is not installed."""
    versions: dict[str, str | None] = {}
    for name in names:
        try:
            versions[name] = installed(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def check_floors(
    floors: Mapping[str, str] = FLOORS,
    installed: Callable[[str], str] = metadata.version,
) -> dict[str, str]:
    """Installed versions of `floors`; one error naming every library missing or below its floor."""
    versions = installed_versions(floors, installed)
    missing = [name for name, version in versions.items() if version is None]
    below = [
        name for name, version in versions.items()
        if version is not None and is_below(version, floors[name])
    ]
    if missing or below:
        problems = [f"{name} is not installed" for name in missing] + [
            f"{name} {versions[name] or '(no version)'} is below the required {floors[name]} "
            "(security floor)"
            for name in below
        ]
        verb = ("install", "--upgrade") if below else ("install",)
        wanted = [f'"{name}>={floors[name]}"' for name in missing + below]
        raise EnvironmentProblem("; ".join(problems), remedy=_pip(*verb, *wanted))
    return {name: version for name, version in versions.items() if version is not None}


def tool_versions() -> dict[str, str]:
    """The harness side of the environment, for the results file."""
    own = installed_versions(["mutharness"])["mutharness"] or "unknown"
    libraries = {
        name: version or "missing" for name, version in installed_versions(FLOORS).items()
    }
    return {
        **libraries,
        "mutharness": own,
        "harness_python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "harness_executable": sys.executable,
        "ci": "true" if in_ci(os.environ) else "false",
    }


CI_VARIABLES = ("GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "TF_BUILD", "JENKINS_URL",
                "CIRCLECI", "TRAVIS", "TEAMCITY_VERSION")


def in_ci(environ: Mapping[str, str]) -> bool:
    """Whether a CI system runs this (its usual variables; a best guess, as reports say)."""
    return (environ.get("CI", "").lower() in ("1", "true", "yes")
            or any(environ.get(name) for name in CI_VARIABLES))


def prepare_process() -> None:
    """Start-up of every process that touches git: the library floors first (before GitPython
    is imported, so a missing library is one clear line), then git's environment: GIT_DIR,
    GIT_INDEX_FILE... set by a hook or a shell must not redirect our git calls."""
    os.environ.setdefault("GIT_PYTHON_REFRESH", "quiet")  # a missing git is our error to report
    check_floors()
    for key in [key for key in os.environ if key.startswith("GIT_")]:
        if not key.startswith("GIT_PYTHON_"):
            del os.environ[key]
