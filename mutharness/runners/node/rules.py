"""node's rules for a spec's `tests` entries and test ids: what is safe, what runs what."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from mutharness.paths import path_problem
from mutharness.runners.node.events import SEPARATOR

NAME = "node"
SUFFIXES = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts")
# what a package manager installs the packages from (the tests import them)
LOCKFILES = ("package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "yarn.lock")


def entry_problem(entry: str) -> str | None:
    """Why a `tests` entry (a file or directory for `node --test`) is unsafe to pass to node."""
    if entry.startswith("-"):
        return "starts with '-' and would be read as a command-line option"
    if "::" in entry:
        return "holds '::' (a pytest node id); node specs name test files"
    problem = path_problem(entry.rstrip("/") if entry.endswith("/") else entry)
    return None if problem is None else f"path {entry!r} {problem}"


def entry_path(entry: str) -> str:
    """The repo-relative file or directory a `tests` entry names."""
    return entry.rstrip("/")


def split_id(nodeid: str) -> tuple[str, str]:
    """A test id's (file, name): `test/a.test.js > suite > test` -> the file and
    `suite > test`."""
    file, _, name = nodeid.partition(SEPARATOR)
    return file, name


def covers(entries: Sequence[str], file: str, name: str) -> bool:
    """Whether running `entries` runs a test of `file` (the file, or a directory above it)."""
    del name  # node runs whole files
    return any(
        file == entry_path(entry) or file.startswith(entry_path(entry) + "/")
        for entry in entries
    )


def is_test_module(path: str) -> bool:
    """node's default test file names: `*.test.js`, `*-test.js`, `*_test.js`, `test-*.js`,
    `test.js` (and the other JS/TS suffixes)."""
    name = path.rsplit("/", 1)[-1]
    stem = next((name[: -len(suffix)] for suffix in SUFFIXES if name.endswith(suffix)), None)
    if stem is None:
        return False
    return stem == "test" or stem.startswith("test-") or stem.endswith(
        (".test", "-test", "_test")
    )


def config_candidates(tests: Sequence[str], tracked: frozenset[str]) -> tuple[str, ...]:
    """Every `package.json` path on the way from the root to each entry, and in a directory
    entry and below it (its `type` decides how node loads the files); every lockfile on the
    way (the installed packages the tests import come from it)."""
    found: set[str] = set()
    for entry in tests:
        path = entry_path(entry)
        parts = path.split("/")
        found.update("/".join([*parts[:depth], name]) for depth in range(len(parts))
                     for name in ("package.json", *LOCKFILES))
        if path not in tracked:  # a directory entry
            below = {item.rsplit("/", 1)[0] for item in tracked if item.startswith(f"{path}/")}
            found.update(f"{directory}/package.json" for directory in below | {path})
    return tuple(sorted(found))


def config_inputs(tests: Sequence[str], tracked: frozenset[str]) -> tuple[str, ...]:
    """The tracked ones of `config_candidates`."""
    return tuple(path for path in config_candidates(tests, tracked) if path in tracked)


_OPERATORS = frozenset({"&&", "||", ";", "|", "&", ";;", "(", ")"})


def script_preloads(script: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The `--import` and `--require` (`-r`) preloads of the first `node ... --test` command
    of a `package.json` script (`c8 node --test`, `cross-env X=1 node --test` alike); None
    when the script runs no such command or cannot be read as a shell's words."""
    try:
        lexer = shlex.shlex(script, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        return None
    commands: list[list[str]] = [[]]
    for word in words:
        if word in _OPERATORS:
            commands.append([])
        else:
            commands[-1].append(word)
    for command in commands:
        node = next((at for at, word in enumerate(command)
                     if word.rsplit("/", 1)[-1] in ("node", "node.exe")), None)
        if node is None:
            continue
        imports: list[str] = []
        requires: list[str] = []
        testing = False
        rest = iter(command[node + 1:])
        for word in rest:  # node's options, up to the first file
            name, equals, value = word.partition("=")
            into = (imports if name == "--import" else
                    requires if name in ("--require", "-r") else None)
            if into is None:
                if not word.startswith("-"):
                    break
                testing = testing or word == "--test"
                continue
            found = value if equals else next(rest, None)
            if found:
                into.append(found)
        if testing:
            return tuple(imports), tuple(requires)
    return None
