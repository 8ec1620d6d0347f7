"""node's rules for a spec's `tests` entries and test ids: what is safe, what runs what."""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

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
_WORD_ENDS = frozenset(" \t\n;&|()<>")  # what ends a shell word (a `#` after one is a comment)
# node options whose value may be the next word (`--import tsx`): that word is no file
_VALUED = frozenset({
    "--import", "--require", "-r", "--conditions", "-C", "--loader", "--experimental-loader",
    "--test-reporter", "--test-reporter-destination", "--test-name-pattern",
    "--test-skip-pattern", "--test-concurrency", "--test-timeout", "--test-shard",
    "--test-isolation", "--test-coverage-include", "--test-coverage-exclude", "--env-file",
    "--input-type", "--title", "--watch-path",
})


@dataclass(frozen=True)
class ScriptOptions:
    """What the first `node ... --test` command of a `package.json` script gives every run:
    its preloads (`--import`, `--require`/`-r`) and its export conditions (`--conditions`,
    `-C`), each as written."""

    imports: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    conditions: tuple[str, ...] = ()


def _uncommented(script: str) -> str:
    """A script without its comments, each newline a `;`, as a POSIX shell reads it: a `#`
    starts a comment only at the start of a word (never inside one, `--import=#r`, nor quoted
    or escaped), up to the end of its line."""
    out: list[str] = []
    quote = ""
    at = 0
    while at < len(script):
        char = script[at]
        if char == "\\" and quote != "'" and at + 1 < len(script):
            out.append(script[at:at + 2])  # one piece: what it escapes is inside a word
            at += 2
            continue
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (not out or out[-1] in _WORD_ENDS):
            end = script.find("\n", at)
            at = len(script) if end < 0 else end
            continue
        elif char == "\n":
            char = ";"
        out.append(char)
        at += 1
    return "".join(out)


def _commands(script: str) -> list[list[str]] | None:
    """A script's simple commands as a POSIX shell splits them into words (None when it
    cannot: an unclosed quote)."""
    try:
        lexer = shlex.shlex(_uncommented(script), posix=True, punctuation_chars=True)
        lexer.commenters = ""  # `_uncommented` removed what a shell reads as comments
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
    return commands


def script_options(script: str) -> ScriptOptions | None:
    """The preloads and export conditions of the first `node ... --test` command of a
    `package.json` script (`c8 node --test`, `cross-env X=1 node --test` alike); None when
    the script runs no such command or cannot be read as a shell's words."""
    for command in _commands(script) or ():
        node = next((at for at, word in enumerate(command)
                     if word.rsplit("/", 1)[-1] in ("node", "node.exe")), None)
        if node is None:
            continue
        found: dict[str, list[str]] = {"import": [], "require": [], "conditions": []}
        testing = False
        rest = iter(command[node + 1:])
        for word in rest:  # node's options, up to the first file
            name, equals, value = word.partition("=")
            if not word.startswith("-"):
                break
            testing = testing or word == "--test"
            if name not in _VALUED:
                continue
            given = value if equals else next(rest, None)
            into = {"--import": "import", "--require": "require", "-r": "require",
                    "--conditions": "conditions", "-C": "conditions"}.get(name)
            if into is not None and given:
                found[into].append(given)
        if testing:
            return ScriptOptions(tuple(found["import"]), tuple(found["require"]),
                                 tuple(found["conditions"]))
    return None


def script_preloads(script: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The `--import` and `--require` (`-r`) preloads of `script_options`."""
    found = script_options(script)
    return None if found is None else (found.imports, found.requires)


_CONDITIONS = ("--conditions", "-C")  # node's names for an export condition option


def _condition_name(value: str) -> bool:
    return bool(value) and not value.startswith("-") and not any(c.isspace() for c in value)


def split_conditions(items: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The export conditions among node option items (`--conditions=NAME`, `--conditions
    NAME` or `-C NAME`, as one item or as two) and the other items, each in order; an item
    that names no condition (`--conditions` last, `-C=NAME`, which node refuses) is other."""
    conditions: list[str] = []
    other: list[str] = []
    at = 0
    while at < len(items):
        item = items[at]
        name, equals, value = item.partition("=")
        flag, space, spaced = item.partition(" ")
        if name == "--conditions" and equals and _condition_name(value):
            conditions.append(value)
        elif flag in _CONDITIONS and space and _condition_name(spaced.strip()):
            conditions.append(spaced.strip())
        elif item in _CONDITIONS and at + 1 < len(items) and _condition_name(items[at + 1]):
            conditions.append(items[at + 1])
            at += 1
        else:
            other.append(item)
        at += 1
    return tuple(conditions), tuple(other)


def node_words(items: Sequence[str], conditions: Sequence[str] = ()) -> list[str]:
    """node option items as node's command-line words: each export condition one word
    (`--conditions=NAME`: no value is ever read as a file), the other items as they are;
    `conditions` (the test script's) only when the items name none."""
    named, other = split_conditions(items)
    return [f"--conditions={name}" for name in (named or conditions)] + list(other)


def package_conditions(root: Path) -> tuple[str, ...]:
    """The export conditions of the test script of the `package.json` at `root` (none when
    there is none, or it cannot be read)."""
    try:
        manifest = json.loads((root / "package.json").read_bytes())
    except (OSError, ValueError):
        return ()
    scripts = manifest.get("scripts") if isinstance(manifest, dict) else None
    script = scripts.get("test") if isinstance(scripts, dict) else None
    found = script_options(script) if isinstance(script, str) else None
    return () if found is None else found.conditions
