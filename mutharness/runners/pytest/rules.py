"""pytest's rules for a spec's `tests` entries and test ids: what is safe, what runs what."""

from __future__ import annotations

import re
from collections.abc import Sequence

from mutharness.paths import path_problem

NAME = "pytest"


def entry_problem(entry: str) -> str | None:
    """Why a `tests` entry (a path or a pytest node id) is unsafe to hand to pytest."""
    if entry.startswith("-"):
        return "starts with '-' and would be read as a command-line option"
    if entry.startswith("@"):
        return "starts with '@' and would be read as an argument file of options"
    file_part = entry.split("::", 1)[0]
    if "::" in entry and not entry.split("::", 1)[1]:
        return "has an empty node id after '::'"
    file_problem = path_problem(file_part.rstrip("/") if file_part.endswith("/") else file_part)
    if file_problem is not None:
        return f"path {file_part!r} {file_problem}"
    return None


def entry_path(entry: str) -> str:
    """The repo-relative file or directory a `tests` entry names (a node id's file part)."""
    return entry.split("::", 1)[0].rstrip("/")


def split_id(nodeid: str) -> tuple[str, str]:
    """A node id's (file, name): `tests/a.py::Class::test[1]` -> the file and `Class::test[1]`."""
    file, _, name = nodeid.partition("::")
    return file, name


def covers(entries: Sequence[str], file: str, name: str) -> bool:
    """Whether running `entries` runs the test `file` + `name` (a file, a directory above
    it, or a node id naming it or its class)."""
    nodeid = f"{file}::{name}"
    for entry in entries:
        path = entry_path(entry)
        if "::" in entry:
            if nodeid == entry or nodeid.startswith((f"{entry}::", f"{entry}[")):
                return True
        elif file == path or file.startswith(f"{path}/") or not path:
            return True
    return False


TEST_MODULE = re.compile(r"(^|/)(test_[^/]*|[^/]*_test)\.py$")


def is_test_module(path: str) -> bool:
    """pytest's default test module names: `test_*.py`, `*_test.py`."""
    return bool(TEST_MODULE.search(path))


CONFIG_NAMES = ("conftest.py", "pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini",
                "pyproject.toml", "tox.ini", "setup.cfg")


def config_candidates(tests: Sequence[str], tracked: frozenset[str]) -> tuple[str, ...]:
    """Every path where a file would configure a run of `tests`: a `conftest.py` or a pytest
    configuration file in any directory on the way from the repository root to an entry,
    and a `conftest.py` in a directory entry and every directory below it."""
    found: set[str] = set()
    for entry in tests:
        path = entry_path(entry)
        parts = path.split("/")
        for depth in range(len(parts)):
            found.update("/".join([*parts[:depth], name]) for name in CONFIG_NAMES)
        if path not in tracked:  # a directory entry: pytest loads every conftest.py below
            below = {item.rsplit("/", 1)[0] for item in tracked if item.startswith(f"{path}/")}
            found.update(f"{directory}/conftest.py" for directory in below | {path})
    return tuple(sorted(found))


def config_inputs(tests: Sequence[str], tracked: frozenset[str]) -> tuple[str, ...]:
    """Every tracked `conftest.py` pytest loads for `tests`: those on the path from the
    repository root to each entry, and those inside a directory entry."""
    return tuple(path for path in config_candidates(tests, tracked)
                 if path in tracked and path.rsplit("/", 1)[-1] == "conftest.py")
