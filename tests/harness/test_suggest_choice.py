"""Which of a change's candidates `suggest` keeps: decisions before blunt changes, at most two
of one operator, every changed function before a second in any; a table of the pure rule,
then `mutharness suggest` on real fixes whose candidates used to be all of one kind."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import Completed, Project, default_spec, git
from nodes import NODE, committed, write_files

from mutharness.suggest.candidates import PER_OPERATOR, Candidate, Operator, chosen

Cli = Callable[..., Completed]
G, B, C = Operator.GUARD_REMOVED, Operator.BOUNDARY, Operator.CONSTANT_BOUNDARY
N, R, X = Operator.NEGATED_CONDITION, Operator.NEUTRAL_RETURN, Operator.CALL_BYPASSED
D = Operator.DEFAULT_CHANGED


def test_the_operators_rank_decisions_before_blunt_changes() -> None:
    ranked = sorted(Operator, key=lambda operator: -operator.value_rank)
    assert [operator.value for operator in ranked] == [
        "boundary", "negated-comparison", "constant-boundary", "boolean-swap", "call-bypassed",
        "class-narrowed", "default-changed", "branch-fixed", "else-removed", "guard-removed",
        "await-dropped", "call-removed", "negated-condition", "swapped-arguments",
        "neutral-return"]
    assert len({operator.value_rank for operator in Operator}) == len(Operator)  # no ties


def _made(rows: list[tuple[int, Operator, str]]) -> list[Candidate]:
    return [Candidate("m.py", line, line, line + 1, "x", operator, function, "")
            for line, operator, function in rows]


CHOSEN = [  # (candidates: line, operator, function), --max, what is kept: (line, operator)
    ([(10 * i, G, f"f{i}") for i in range(1, 8)], 7, [(10, G), (20, G)]),  # two of a kind
    ([row for i in range(1, 8) for row in ((10 * i, N, f"f{i}"), (10 * i + 1, G, f"f{i}"))], 7,
     [(11, G), (21, G), (30, N), (40, N)]),
    ([(1, R, "f"), (1, X, "f"), (2, R, "f")], 7, [(1, X), (2, R)]),  # a return: when alone
    ([(1, B, "f"), (2, B, "f"), (3, B, "f"), (10, R, "g")], 2, [(1, B), (10, R)]),  # spread
    ([(1, G, "f"), (10, B, "g")], 1, [(10, B)]),  # a round: the most valuable first
    ([(1, B, "f"), (1, C, "f"), (2, B, "g"), (2, C, "g"), (3, B, "h"), (3, C, "h")], 7,
     [(1, B), (2, B), (3, C)]),  # one a line; a line whose best is spent gives its next
    # every function before any has two: f, which has another choice, leaves the operator
    # to the functions that have none (pino-pretty's sanitiser call sites)
    ([(1, X, "f"), (2, D, "f"), (10, X, "g"), (20, X, "h")], 7, [(2, D), (10, X), (20, X)]),
    ([(1, X, "f"), (2, D, "f"), (3, X, "g"), (4, D, "g"), (10, X, "h"), (20, X, "i")], 7,
     [(2, D), (4, D), (10, X), (20, X)]),
    # and where the limits leave one without, the most valuable still come first
    ([(1, X, "f"), (10, X, "g"), (20, X, "h")], 7, [(1, X), (10, X)]),
]


@pytest.mark.parametrize(("rows", "most", "kept"), CHOSEN)
def test_the_kept_candidates_follow_value_cap_and_spread(
    rows: list[tuple[int, Operator, str]], most: int, kept: list[tuple[int, Operator]]
) -> None:
    assert [(c.line, c.operator) for c in chosen(_made(rows), most)] == kept


def test_no_operator_is_kept_more_than_twice_whatever_the_max() -> None:
    rows = [(line, operator, f"f{line}") for line in range(1, 60)
            for operator in (G, B, N, R)]
    kept = chosen(_made(rows), 200)
    assert max(Counter(c.operator for c in kept).values()) == PER_OPERATOR == 2
    assert len({c.line for c in kept}) == len(kept)


SANITISER_BEFORE = """\
const UNSAFE = /[<>]/g;
exports.heading = (title) => '<h1>' + title + '</h1>';
"""
SANITISER_FIXED = """\
const UNSAFE = /[<>&"]/g;

function strip(text) {
  return text.replace(UNSAFE, '');
}

function heading(title, level = 1) {
  const tag = level > 1 ? 'h2' : 'h1';
  return '<' + tag + '>' + strip(title) + '</' + tag + '>';
}

function paragraph(text) {
  return '<p>' + strip(text) + '</p>';
}

module.exports = { strip, heading, paragraph };
"""
SANITISER_TEST = """\
const test = require('node:test');
const assert = require('node:assert');
const { heading, paragraph } = require('../lib/html.js');
test('a heading is escaped', () => {
  assert.strictEqual(heading('<b>'), '<h1>b</h1>');
});
test('a paragraph loses its ampersands', () => {
  assert.strictEqual(paragraph('a & b'), '<p>a  b</p>');
});
"""


@pytest.mark.skipif(NODE is None, reason="node (.ci/run installs it)")
def test_a_sanitiser_fix_gets_its_call_bypassed_and_its_class_narrowed_not_returns_emptied(
    tmp_path: Path, git_home: Path, cli: Cli
) -> None:
    root = committed(tmp_path / "html", {
        ".gitignore": ".mutharness/\n",
        "package.json": json.dumps({"name": "html", "version": "1.0.0"}),
        "lib/html.js": SANITISER_BEFORE,
    }, "heading, unescaped")
    write_files(root, {"lib/html.js": SANITISER_FIXED, "test/html.test.js": SANITISER_TEST})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "fix: strip what HTML reads as markup")

    done = cli(root, "suggest", "--since", "HEAD~1", "--no-progress")

    assert done.code == 0, done.out + done.err
    draft = json.loads((root / ".mutharness/suggest/draft.json").read_text("utf-8"))
    kept = {(m["_line"], m["_operator"], m["replacement"].strip()) for m in draft["mutations"]}
    assert (1, "class-narrowed", "const UNSAFE = /[<>&]/g;") in kept
    assert (13, "call-bypassed", "return '<p>' + text + '</p>';") in kept  # a call site
    operators = Counter(m["_operator"] for m in draft["mutations"])
    assert "neutral-return" not in operators, draft["mutations"]
    assert max(operators.values()) <= 2, operators
    assert {"strip", "heading", "paragraph"} <= {
        m["name"].split(" in ")[1].split(":")[0] for m in draft["mutations"] if " in " in m["name"]}


GUARDED = '''\
def name(value):
    return value


def email(value):
    return value


def city(value):
    return value


def street(value):
    return value


def country(value):
    return value
'''
GUARDED_FIXED = '''\
def name(value):
    if not value:
        raise ValueError("a name")
    return value.strip()


def email(value):
    if not value:
        raise ValueError("an email")
    return value.strip()


def city(value):
    if not value:
        raise ValueError("a city")
    return value.strip()


def street(value):
    if not value:
        raise ValueError("a street")
    return value.strip()


def country(value):
    if not value:
        raise ValueError("a country")
    return value.strip()
'''
GUARDS_TEST = '''\
import pytest
from fields import city, country, email, name, street


@pytest.mark.parametrize("field", [name, email, city, street, country])
def test_an_empty_field_is_refused(field):
    with pytest.raises(ValueError):
        field("")


@pytest.mark.parametrize("field", [name, email, city, street, country])
def test_a_field_is_kept(field):
    assert field("x") == "x"
'''


def _suggested_for_a_fix(make_project: Callable[..., Project], cli: Cli, before: str,
                         after: str, tests: str) -> tuple[Completed, dict[str, Any]]:
    """`suggest --since HEAD~1` on a fix of src/fields.py (`before` -> `after`, with `tests`):
    its run and its draft."""
    project = make_project(spec=default_spec(mutations=[]))
    project.write("src/fields.py", before)
    project.commit("fields, before the fix")
    project.write("src/fields.py", after)
    project.write("tests/test_fields.py", tests)
    project.commit("fix: fields")
    done = cli(project.root, "suggest", "--since", "HEAD~1", "--no-progress")
    assert done.code == 0, done.out + done.err
    draft = json.loads((project.root / ".mutharness/suggest/draft.json").read_text("utf-8"))
    return done, draft


def test_five_guarded_functions_give_two_of_each_operator_and_each_function_a_candidate(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    done, draft = _suggested_for_a_fix(make_project, cli, GUARDED, GUARDED_FIXED, GUARDS_TEST)

    operators = Counter(m["_operator"] for m in draft["mutations"])
    assert operators == {"guard-removed": 2, "negated-condition": 2, "call-bypassed": 2}, \
        operators
    assert {m["name"].split(" in ")[1].split(":")[0] for m in draft["mutations"]} == {
        "name", "email", "city", "street", "country"}
    assert "at most 2 of an operator" in done.out


STRIPPED = "".join(f'''\
def {name}(value):
    return value.strip()


''' for name in ("name", "email", "city"))
STRIPPED_TEST = '''\
from fields import city, email, name


def test_each_field_is_stripped():
    assert name(" a ") == email(" a ") == city(" a ") == "a"
'''


def test_a_changed_function_the_tests_execute_left_without_a_candidate_is_named(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    done, draft = _suggested_for_a_fix(make_project, cli, STRIPPED.replace(
        "value.strip()", "value"), STRIPPED, STRIPPED_TEST)

    # three call sites, one operator: two are kept, and the third function is said, not lost
    assert [m["_operator"] for m in draft["mutations"]] == ["call-bypassed"] * 2
    assert draft["_without_candidate"] == [
        {"file": "src/fields.py", "function": "city", "line": 10,
         "why": "the limit of 2 of an operator"}]
    assert ("1 changed function with candidates got none in the draft: src/fields.py:10 city "
            "(the limit of 2 of an operator)") in done.out


def test_a_long_list_of_functions_left_without_a_candidate_is_counted_after_six(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    names = ("name", "email", "city", "street", "country", "phone", "zip", "state", "title")
    fixed = "".join(f"def {name}(value):\n    return value.strip()\n\n\n" for name in names)
    tests = (f"from fields import {', '.join(names)}\n\n\ndef test_each_is_stripped():\n"
             + "".join(f"    assert {name}(' a ') == 'a'\n" for name in names))

    done, draft = _suggested_for_a_fix(make_project, cli, fixed.replace("value.strip()", "value"),
                                       fixed, tests)

    assert len(draft["_without_candidate"]) == 7  # the draft keeps every one
    [line] = [line for line in done.out.splitlines() if "got none in the draft" in line]
    assert line.count("(the limit of 2 of an operator)") == 6
    assert line.endswith("and 1 more (the draft's _without_candidate lists them all)"), line
