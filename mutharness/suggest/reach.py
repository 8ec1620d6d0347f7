"""Where the chosen tests reach: the line record `suggest`'s baseline run wrote (`LineAsk`), the
lines of each changed file that count as executed, and the candidates set apart on the lines no
test executes (a coverage gap, never a mutation finding).

A line counts as executed when code on it ran and no function with code on it went uncalled:
an uncalled function's header ran as it was defined (a default, a decorator), and a one-line
function's line ran for the code around it, yet none of its own code did. Python's line events
are widened to whole statements (a comparison on a multi-line `if`'s second line ran when the
`if` did) and a compound statement's header; its functions are read from the file's syntax
tree, each called when the record saw it begin (its first line and name) or a line of its body
ran. A file the record cannot speak for keeps every candidate.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mutharness.suggest.candidates import Candidate

GAP = "not executed by any test (a coverage gap)"


@dataclass(frozen=True)
class Function:
    """A function's lines (its decorators and header to its last line), and whether any run
    called it."""

    first: int
    last: int
    called: bool


def executed(ran: Iterable[int], functions: Iterable[Function]) -> frozenset[int]:
    """The lines that count as executed: those where code ran, but for the lines of a
    function never called."""
    uncalled = [function for function in functions if not function.called]
    return frozenset(line for line in ran
                     if not any(f.first <= line <= f.last for f in uncalled))


BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")  # a compound statement's own


def _header_end(node: ast.stmt) -> int:
    """The last line of a compound statement's header: of its own line and every part of it
    that is no block of statements (an `if`'s test, a `def`'s parameters)."""
    ends = [node.lineno]
    for name, value in ast.iter_fields(node):
        if name in BLOCKS or name == "decorator_list":
            continue
        for part in value if isinstance(value, list) else [value]:
            if isinstance(part, ast.AST):
                ends += [end for inner in ast.walk(part)
                         if isinstance(end := getattr(inner, "end_lineno", None), int)]
    return max(ends)


def _spans(tree: ast.AST) -> list[tuple[int, int]]:
    """The line spans that run as one: each simple statement's, each compound statement's
    header, each decorator's."""
    spans: list[tuple[int, int]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        compound = any(isinstance(getattr(node, name, None), list) for name in BLOCKS)
        spans.append((node.lineno, _header_end(node) if compound
                      else node.end_lineno or node.lineno))
        for decorator in getattr(node, "decorator_list", ()):
            spans.append((decorator.lineno, decorator.end_lineno or decorator.lineno))
    return spans


def _function_nodes(tree: ast.AST) -> Iterable[ast.FunctionDef | ast.AsyncFunctionDef |
                                                 ast.Lambda]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            yield node


def _header_last(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> int:
    """The last line of what runs as a function is defined: its decorators, defaults and
    annotations (a lambda's too)."""
    parts: list[ast.AST] = [node.args]
    if not isinstance(node, ast.Lambda):
        parts += [*node.decorator_list, *([node.returns] if node.returns else [])]
    ends = [getattr(part, "end_lineno", None) for whole in parts for part in ast.walk(whole)]
    return max([node.lineno, *[end for end in ends if isinstance(end, int)]])


def python_lines(text: str, ran: Collection[int], called: Collection[tuple[int, str]]) -> (
        tuple[frozenset[int], tuple[Function, ...]] | str):
    """Python's record of a file as lines where code ran (each line event widened to its
    statement's span) and its functions (from the file's syntax tree: a function is called
    when a call was recorded at its first line, from its first decorator to its `def`, by its
    name, or when a line of its body ran); a text that does not parse: why."""
    try:
        tree = ast.parse(text.removeprefix("\ufeff"))
    except (SyntaxError, ValueError, MemoryError, RecursionError) as error:
        return f"its syntax tree does not read for the line record: {error}"
    spans = _spans(tree)
    seen = set(ran)
    widened = set(seen)
    for first, last in spans:
        if any(line in seen for line in range(first, last + 1)):
            widened.update(range(first, last + 1))
    functions = []
    for node in _function_nodes(tree):
        name = "<lambda>" if isinstance(node, ast.Lambda) else node.name
        decorators = [] if isinstance(node, ast.Lambda) else node.decorator_list
        first = min([node.lineno, *(decorator.lineno for decorator in decorators)])
        last = node.end_lineno or node.lineno
        header = _header_last(node)
        began = any(name == named and first <= line <= node.lineno for line, named in called)
        body_ran = any(header < line <= last for line in seen)
        functions.append(Function(first, last, began or body_ran))
    return frozenset(widened), tuple(functions)


@dataclass(frozen=True)
class Reach:
    """The line record as `suggest` reads it: each file it speaks for with the lines that
    count as executed, and each it cannot speak for with why."""

    executed: Mapping[str, frozenset[int]]
    silent: Mapping[str, str]

    def reached(self, candidate: Candidate) -> bool:
        """Whether a test executes the candidate's line, or the record cannot say."""
        lines = self.executed.get(candidate.file)
        return lines is None or candidate.line in lines


def _ints(value: object) -> list[int]:
    if not isinstance(value, list) or not all(type(item) is int for item in value):
        raise ValueError("not a list of line numbers")
    return value


def _file(facts: object, text: str) -> frozenset[int] | str:
    """The lines of one file that count as executed, from a runner's facts (`LineAsk`)."""
    if not isinstance(facts, Mapping):
        raise ValueError("no facts")
    ran = _ints(facts.get("ran"))
    if "called" in facts:  # pytest's: line events and the functions that began
        called = facts["called"]
        if not isinstance(called, list) or not all(
                isinstance(pair, list) and len(pair) == 2 and type(pair[0]) is int
                and isinstance(pair[1], str) for pair in called):
            raise ValueError("calls that do not read")
        found = python_lines(text, ran, [(line, name) for line, name in called])
        if isinstance(found, str):
            return found
        return executed(*found)
    given = facts.get("functions")
    if not isinstance(given, list) or not all(
            isinstance(entry, list) and len(entry) == 3 and type(entry[0]) is int
            and type(entry[1]) is int and isinstance(entry[2], bool) for entry in given):
        raise ValueError("functions that do not read")
    return executed(ran, (Function(*entry) for entry in given))


def read_reach(path: Path, texts: Mapping[str, str]) -> Reach:
    """The record at `path` for the files of `texts` (repo-relative path -> its text): every
    one is either spoken for or silent, with why (the whole record when it is missing or does
    not read: the run kept none)."""
    try:
        document: Any = json.loads(path.read_text(encoding="utf-8"))
        files, silent = document["files"], document["silent"]
        if not isinstance(files, Mapping) or not isinstance(silent, Mapping):
            raise ValueError("not a line record")
    except FileNotFoundError:
        return Reach({}, dict.fromkeys(texts, "the run kept no line record"))
    except (OSError, ValueError, KeyError, TypeError) as error:
        return Reach({}, dict.fromkeys(texts, f"the line record does not read: {error}"))
    spoken: dict[str, frozenset[int]] = {}
    quiet: dict[str, str] = {}
    for file, text in texts.items():
        if file in files:
            try:
                found = _file(files[file], text)
            except (ValueError, TypeError, AttributeError) as error:
                found = f"its line record does not read: {error}"
            if isinstance(found, str):
                quiet[file] = found
            else:
                spoken[file] = found
        else:
            quiet[file] = str(silent.get(file) or "the line record does not name it")
    return Reach(spoken, quiet)


def split(candidates: Sequence[Candidate], reach: Reach) -> tuple[
        list[Candidate], list[Candidate]]:
    """(the candidates on lines a test executes or the record cannot speak for, those on
    lines no test executes)."""
    kept = [candidate for candidate in candidates if reach.reached(candidate)]
    return kept, [candidate for candidate in candidates if not reach.reached(candidate)]
