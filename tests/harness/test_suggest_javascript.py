"""`suggest`'s JavaScript and TypeScript candidates: a table per operator and per suppression
rule (tree-sitter's grammars), each candidate the file's own text and parsing after its splice."""

from __future__ import annotations

import pytest

from mutharness.suggest.javascript import javascript_candidates


def _all(text: str, path: str = "m.js") -> list[tuple[str, str, str]]:
    """(operator, the text replaced, its replacement) of every candidate on every line."""
    lines = range(1, text.count("\n") + 2)
    return [(c.operator.value, text[c.start:c.end], c.replacement)
            for c in javascript_candidates(path, text, lines)]


OPERATORS = [  # (source, one candidate it must yield)
    ("function f(a, b) { return a < b; }\n", ("boundary", "<", "<=")),
    ("const f = (a, b) => a >= b;\n", ("boundary", ">=", ">")),
    ("function f(a, b) { return a === b; }\n", ("negated-comparison", "===", "!==")),
    ("function f(a) { return a != null; }\n", ("negated-comparison", "!=", "==")),
    ("function f(a) { return a < 10; }\n", ("constant-boundary", "10", "11")),
    ("function f(a, b) { if (a && b) { g(); } }\n", ("boolean-swap", "&&", "||")),
    ("function f(a) { if (a.ok) { g(); } }\n", ("negated-condition", "a.ok", "!(a.ok)")),
    ("function f(a) { while (!a.done) { a.step(); } }\n",
     ("negated-condition", "!a.done", "a.done")),
    ("function f(a) {\n  if (a < 0) {\n    throw new RangeError('no');\n  }\n  return a;\n}\n",
     ("guard-removed", "throw new RangeError('no');", ";")),
    ("function f(a) {\n  if (!a) return 0;\n  return 1 / a;\n}\n",
     ("guard-removed", "return 0;", "{}")),
    ("function f(a) { return a + 1; }\n", ("neutral-return", "a + 1", "undefined")),
    ("function f() { return true; }\n", ("neutral-return", "true", "false")),
    ("function f(a) { validate(a); return a; }\n", ("call-removed", "validate(a);", ";")),
    ("async function f(a) { return await load(a); }\n",
     ("await-dropped", "await load(a)", "load(a)")),
    ("function f(a, retries = 3) { return a; }\n", ("default-changed", "3", "4")),
    ("function f(a, b) { return g(a, b); }\n", ("swapped-arguments", "(a, b)", "(b, a)")),
    # a call whose result is used, bypassed: its argument (or its receiver) as it came in
    ("function f(x) { return '<p>' + strip(x); }\n", ("call-bypassed", "strip(x)", "x")),
    ("const f = (x) => x.trim().toLowerCase();\n",
     ("call-bypassed", "x.trim().toLowerCase()", "x.trim()")),
    ("const f = (x) => x.replace(UNSAFE, '');\n",
     ("call-bypassed", "x.replace(UNSAFE, '')", "x")),
    ("const f = (items) => items.filter(isVisible);\n",
     ("call-bypassed", "items.filter(isVisible)", "items")),
    # a regular expression's character class loses its last member
    ("const UNSAFE = /[<>&]/g;\n", ("class-narrowed", "[<>&]", "[<>]")),
    ("const ID = /^[a-z0-9_-]+$/;\n", ("class-narrowed", "^[a-z0-9_-]+$", "^[a-z0-9_]+$")),
    # a default of another kind than a number or a boolean, and one in a destructured parameter
    ("function f(a, sep = ',') { return a; }\n", ("default-changed", "','", "''")),
    ("function f({ retries = 3 } = {}) { return retries; }\n", ("default-changed", "3", "4")),
    # a conditional expression always takes one branch
    ("const f = (a) => a > 0 ? a : 0;\n", ("branch-fixed", "a > 0 ? a : 0", "a")),
    ("const f = (a) => a > 0 ? a : 0;\n", ("branch-fixed", "a > 0 ? a : 0", "0")),
    # an if's else taken out: its body never runs
    ("function f(a) {\n  if (a) { g(); } else { h(); }\n}\n",
     ("else-removed", "else { h(); }", "")),
]


@pytest.mark.parametrize(("source", "expected"), OPERATORS)
def test_each_operator_makes_its_candidate_from_the_syntax_tree(
    source: str, expected: tuple[str, str, str]
) -> None:
    assert expected in _all(source)


def test_typescript_is_read_with_its_own_grammar_and_its_types_are_never_mutated() -> None:
    source = ("export function clamp(value: number, low: number, high: number): number {\n"
              "  if (value > high) return high;\n  return value;\n}\n"
              "type Small = Array<1 | 2>;\n")
    found = _all(source, "src/clamp.ts")
    assert ("boundary", ">", ">=") in found
    assert ("guard-removed", "return high;", "{}") in found
    assert all("number" not in replaced and "Array" not in replaced
               for _, replaced, _ in found), found


SUPPRESSED = [  # (source, the operator that must not appear, why)
    ("function f(a) { console.log('a is', a < 3); }\n", "boundary", "a console call"),
    ("function f(a) { this.logger.warn('x', a === 1); }\n", "negated-comparison",
     "a logger call"),
    ("class C { toString() { return `C(${this.a > 1})`; } }\n", "boundary", "a toString"),
    ("function f(a) { return a === a; }\n", "negated-comparison", "a value compared with itself"),
    ("function f(a) { return g(a, a); }\n", "swapped-arguments", "the same argument twice"),
    ("function f(a) { return g(a, 1); }\n", "swapped-arguments", "arguments of two kinds"),
    ("function f(a) { return; }\n", "neutral-return", "a bare return"),
    ("function f(a) { return undefined; }\n", "neutral-return", "a return of undefined"),
    ("function f(a) { console.info(a); return a; }\n", "call-removed", "a logging call"),
    ("function f(a) {\n  if (a) { throw new Error('x'); } else { g(); }\n}\n", "guard-removed",
     "an if with an else is no guard"),
    ("function f(a) { return String(a); }\n", "call-bypassed", "a conversion changes the type"),
    ("function f(a) { return lookup('name'); }\n", "call-bypassed", "a literal argument"),
    ("const m = require(name);\n", "call-bypassed", "a module loaded"),
    ("function f(a) { return a.get(key); }\n", "call-bypassed", "a lookup is no transformation"),
    ("const ONE = /[a]/;\n", "class-narrowed", "a class of one member"),
    ("function f(a) {\n  if (a) { g(); } else if (a > 1) { h(); }\n}\n", "else-removed",
     "an else if is another decision"),
]


@pytest.mark.parametrize(("source", "operator", "why"), SUPPRESSED)
def test_what_reviewers_do_not_want_is_never_suggested(
    source: str, operator: str, why: str
) -> None:
    assert operator not in [found for found, _, _ in _all(source)], why


def test_every_candidate_is_the_file_s_own_text_and_names_its_function() -> None:
    source = ("// café: non-ASCII before the code\nexport const withdraw = async (account, "
              "amount, fee = 1) => {\n  if (amount <= 0 || amount > account.balance) {\n"
              "    throw new Error('no');\n  }\n  await account.audit(amount, fee);\n"
              "  account.balance -= amount + fee;\n  return account.balance >= 0;\n};\n")
    found = javascript_candidates("m.mjs", source, range(1, 20))
    assert len(found) >= 7
    for candidate in found:
        assert source[candidate.start:candidate.end] != candidate.replacement
    assert {c.function for c in found} == {"withdraw"}
    assert {c.line for c in found if c.operator.value == "await-dropped"} == {6}


def test_only_the_changed_lines_get_candidates_and_a_file_that_does_not_parse_has_none() -> None:
    source = "function f(a, b) {\n  const x = a < b;\n  return a === b;\n}\n"
    assert {c.line for c in javascript_candidates("m.js", source, [3])} == {3}
    assert javascript_candidates("m.js", "function f( {\n", [1]) == []


def test_two_removed_calls_and_a_negated_condition_are_named_by_their_own_text() -> None:
    source = ("function save(record) {\n  if (record.ready) {\n    record.flush();\n  }\n"
              "  store.put(record);\n}\n")
    names = {c.line: c.name for c in javascript_candidates("m.js", source, range(1, 7))
             if c.operator.value in ("call-removed", "negated-condition")}
    assert names == {
        2: "the condition is negated in save: !(record.ready) (negated-condition)",
        3: "the call is skipped in save: record.flush(...) removed (call-removed)",
        5: "the call is skipped in save: store.put(...) removed (call-removed)",
    }
