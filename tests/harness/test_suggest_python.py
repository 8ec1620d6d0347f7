"""`suggest`'s Python candidates: a table per operator and per suppression rule, the anchors
grown to occur exactly once (as `check` counts them), and which candidates are kept."""

from __future__ import annotations

import ast

import pytest

from mutharness.model.anchors import Splice, locate
from mutharness.suggest.candidates import Candidate, Operator, anchored, chosen
from mutharness.suggest.python import python_candidates


def _all(text: str) -> list[tuple[str, str, str]]:
    """(operator, the text replaced, its replacement) of every candidate on every line."""
    lines = range(1, text.count("\n") + 2)
    return [(c.operator.value, text[c.start:c.end], c.replacement)
            for c in python_candidates("m.py", text, lines)]


OPERATORS = [  # (source, one candidate it must yield)
    ("def f(a, b):\n    return a < b\n", ("boundary", "a < b", "a <= b")),
    ("def f(a, b):\n    return a >= b\n", ("boundary", "a >= b", "a > b")),
    ("def f(a, b):\n    return a == b\n", ("negated-comparison", "a == b", "a != b")),
    ("def f(a):\n    return a is None\n", ("negated-comparison", "a is None", "a is not None")),
    ("def f(a, b):\n    return a not in b\n", ("negated-comparison", "a not in b", "a in b")),
    ("def f(a):\n    return a < 10\n", ("constant-boundary", "10", "11")),
    ("def f(a, b):\n    if a and b:\n        g()\n", ("boolean-swap", "a and b", "a or b")),
    ("def f(a):\n    if a.ok:\n        g()\n", ("negated-condition", "a.ok", "not (a.ok)")),
    ("def f(a):\n    while not a.done:\n        a.step()\n",
     ("negated-condition", "not a.done", "a.done")),
    ("def f(a):\n    if a < 0:\n        raise ValueError(a)\n    return a\n",
     ("guard-removed", "raise ValueError(a)", "pass")),
    ("def f(a):\n    if not a:\n        return 0\n    return 1 / a\n",
     ("guard-removed", "return 0", "pass")),
    ("def f(a):\n    return a + 1\n", ("neutral-return", "a + 1", "None")),
    ("def f(a):\n    return True\n", ("neutral-return", "True", "False")),
    ("def f(a):\n    validate(a)\n    return a\n", ("call-removed", "validate(a)", "pass")),
    ("def f(a, retries=3):\n    return a\n", ("default-changed", "3", "4")),
    ("def f(a, *, strict=False):\n    return a\n", ("default-changed", "False", "True")),
    ("def f(a, b):\n    return g(a, b)\n", ("swapped-arguments", "g(a, b)", "g(b, a)")),
    # a call whose result is used, bypassed: its argument (or its receiver) as it came in
    ("def f(x):\n    return '<p>' + strip(x)\n", ("call-bypassed", "strip(x)", "x")),
    ("def f(x):\n    return html.escape(x.body)\n",
     ("call-bypassed", "html.escape(x.body)", "x.body")),
    ("def f(x):\n    return x.strip().lower()\n",
     ("call-bypassed", "x.strip().lower()", "x.strip()")),
    ("def f(x):\n    return _UNSAFE.sub('', x)\n", ("call-bypassed", "_UNSAFE.sub('', x)", "x")),
    ("def f(x):\n    return re.sub(r'[<>]', '', x)\n",
     ("call-bypassed", "re.sub(r'[<>]', '', x)", "x")),
    # a regular expression's character class loses its last member
    ("UNSAFE = re.compile(r'[<>&]')\n", ("class-narrowed", "r'[<>&]'", "r'[<>]'")),
    ("def f(s):\n    return re.sub('[^a-z0-9_]', '', s)\n",
     ("class-narrowed", "'[^a-z0-9_]'", "'[^a-z0-9]'")),
    ("WORD = re.compile(r'\\w[\\w\\-]*', re.I)\n",
     ("class-narrowed", "r'\\w[\\w\\-]*'", "r'\\w[\\w]*'")),
    ("def f(s):\n    return re.match(r'[a-f0-9]+', s)\n",
     ("class-narrowed", "r'[a-f0-9]+'", "r'[a-f]+'")),
    # a default of another kind than a number or a boolean
    ("def f(a, sep=','):\n    return a\n", ("default-changed", "','", "''")),
    ("def f(a, *, encoding=\"utf-8\"):\n    return a\n", ("default-changed", '"utf-8"', '""')),
    # a conditional expression always takes one branch
    ("def f(a):\n    return a if a > 0 else 0\n", ("branch-fixed", "a if a > 0 else 0", "a")),
    ("def f(a):\n    return a if a > 0 else 0\n", ("branch-fixed", "a if a > 0 else 0", "0")),
    # an if's else taken out: its body never runs
    ("def f(a):\n    if a:\n        b = 1\n    else:\n        b = 2\n        c = 3\n    return b\n",
     ("else-removed", "b = 2\n        c = 3", "pass")),
    ("def f(a):\n    if a: b = 1\n    else: b = 2\n    return b\n",
     ("else-removed", "b = 2", "pass")),
]


@pytest.mark.parametrize(("source", "expected"), OPERATORS)
def test_each_operator_makes_its_candidate_from_the_syntax_tree(
    source: str, expected: tuple[str, str, str]
) -> None:
    assert expected in _all(source)


SUPPRESSED = [  # (source, the operator that must not appear, why)
    ("def f(a):\n    logger.info('a is %s', a < 3)\n", "boundary", "a logging call"),
    ("def f(a):\n    logging.warning('x', a == 1)\n", "negated-comparison", "a logging call"),
    ("def f(a):\n    print(a > 2)\n", "boundary", "print"),
    ("def f(a: int = 3) -> bool:\n    return a\n", "none-in-annotation", "an annotation"),
    ("class C:\n    def __repr__(self):\n        return f'C({self.a > 1})'\n", "boundary",
     "a __repr__"),
    ("def f(a):\n    assert a < 3, 'debugging'\n    return a\n", "boundary",
     "an assert in the code"),
    ("def f(a):\n    return a == a\n", "negated-comparison", "a value compared with itself"),
    ("def f(a):\n    return g(a, a)\n", "swapped-arguments", "the same argument twice"),
    ("def f(a):\n    return g(a, 1)\n", "swapped-arguments", "arguments of two kinds"),
    ("def f(a, b):\n    return 1 < a < b\n", "boundary", "a chained comparison"),
    ("@cache(size=3 > 2)\ndef f(a):\n    return a\n", "boundary", "a decorator"),
    ("def f(a):\n    return\n", "neutral-return", "a bare return"),
    ("def f(a):\n    return None\n", "neutral-return", "a return of None"),
    ("def f(a):\n    return len(a)\n", "call-bypassed", "a builtin that changes the type"),
    ("def f(a):\n    return lookup('name')\n", "call-bypassed", "a literal argument"),
    ("def f(a):\n    return ', '.join(a)\n", "call-bypassed", "a container method"),
    ("def f(a):\n    return a.get(1)\n", "call-bypassed", "a lookup is no transformation"),
    ("async def f(a):\n    await save(a)\n", "call-bypassed", "an awaited call for its effect"),
    ("def f(a):\n    return re.compile('[a]')\n", "class-narrowed", "a class of one member"),
    ("def f(a):\n    return f'[{a}b]'\n", "class-narrowed", "no regular expression"),
    ("def f(a):\n    if a:\n        g()\n    elif a > 1:\n        h()\n", "else-removed",
     "an elif is no else"),
    ("def f(a, b=''):\n    return a\n", "default-changed", "an empty default has no emptier"),
]


@pytest.mark.parametrize(("source", "operator", "why"), SUPPRESSED)
def test_what_reviewers_do_not_want_is_never_suggested(
    source: str, operator: str, why: str
) -> None:
    made = _all(source)
    assert operator not in [found for found, _, _ in made], why
    if operator == "none-in-annotation":  # the default is still mutated, not the annotation
        assert made and all(replaced != "int" and "bool" not in replaced
                            for _, replaced, _ in made), made


def test_only_the_changed_lines_get_candidates() -> None:
    source = "def f(a, b):\n    x = a < b\n    return a == b\n"
    found = python_candidates("m.py", source, [3])
    assert {c.line for c in found} == {3}
    assert next(c.operator for c in found if c.line == 3) in {Operator.NEGATED_COMPARISON,
                                                            Operator.NEUTRAL_RETURN}


def test_every_candidate_is_the_file_s_own_text_and_parses_after_its_splice() -> None:
    source = ("import logging\n\n\nclass Account:\n    def withdraw(self, amount, fee=1):\n"
              "        if amount <= 0 or amount > self.balance:\n"
              "            raise ValueError('no')  # guard\n"
              "        self.audit(amount, fee)\n        self.balance -= amount + fee\n"
              "        return self.balance >= 0\n")
    found = python_candidates("m.py", source, range(1, 20))
    assert len(found) >= 8
    for candidate in found:
        mutated = source[:candidate.start] + candidate.replacement + source[candidate.end:]
        ast.parse(mutated)
        assert mutated != source
    assert {c.function for c in found} == {"Account.withdraw"}


def test_a_file_that_does_not_parse_has_no_candidates() -> None:
    assert python_candidates("m.py", "def f(:\n", [1]) == []


GROWN = [  # (text, the span's text, the anchor it grows to)
    ("a = 1\nb = 2\n", "1", "a = 1\n"),  # its own line occurs once
    ("if x:\n    return 0\nif y:\n    return 0\n", "0", "if y:\n    return 0\n"),  # at the end
    ("x\nreturn 0\nx\nreturn 0\ny\n", "0", "return 0\ny\n"),  # below first
    ("a\nreturn 0\nb\nreturn 0\nb\n", "0", "b\nreturn 0\n"),  # below is no help: above
    ("return 0\nreturn 0", "0", "return 0\nreturn 0"),  # the last line, no newline
]


@pytest.mark.parametrize(("text", "span", "anchor"), GROWN)
def test_an_anchor_grows_by_whole_lines_until_check_finds_it_exactly_once(
    text: str, span: str, anchor: str
) -> None:
    start = text.rindex(span)
    candidate = Candidate("m.py", 1, start, start + len(span), "9", Operator.BOUNDARY, "", "")
    made = anchored(text, candidate)
    assert made is not None and made.anchor == anchor
    splice = locate(text.encode(), made.anchor, made.replacement)
    assert isinstance(splice, Splice)
    assert splice.apply(text.encode()).decode() == text[:start] + "9" + text[start + len(span):]


def _candidate(line: int, operator: Operator, function: str) -> Candidate:
    return Candidate("m.py", line, 0, 1, "x", operator, function, "")


def test_one_candidate_is_kept_per_line_the_most_valuable() -> None:
    kept = chosen([_candidate(2, Operator.NEUTRAL_RETURN, "f"),
                   _candidate(2, Operator.BOUNDARY, "f"),
                   _candidate(3, Operator.CALL_REMOVED, "f")], 7)
    assert [(c.line, c.operator) for c in kept] == [(2, Operator.BOUNDARY),
                                                     (3, Operator.CALL_REMOVED)]


def test_the_kept_candidates_spread_over_the_functions_before_any_has_two() -> None:
    candidates = [_candidate(1, Operator.GUARD_REMOVED, "f"), _candidate(2, Operator.BOUNDARY, "f"),
                  _candidate(3, Operator.BOUNDARY, "f"), _candidate(10, Operator.CALL_REMOVED, "g"),
                  _candidate(20, Operator.SWAPPED_ARGUMENTS, "h")]
    assert [(c.function, c.line) for c in chosen(candidates, 3)] == [
        ("f", 2), ("g", 10), ("h", 20)]
    assert [(c.function, c.line) for c in chosen(candidates, 4)] == [
        ("f", 2), ("f", 3), ("g", 10), ("h", 20)]
    assert len(chosen(candidates, 99)) == 5


def test_parentheses_a_semicolon_and_a_byte_order_mark_keep_their_candidates() -> None:
    assert ("boundary", "x < 3", "x <= 3") in _all("def f(x):\n    if (x < 3):\n        g()\n")
    assert ("boolean-swap", "x and y", "x or y") in _all("def f(x, y):\n    return (x and y)\n")
    assert ("call-removed", "g(x)", "pass") in _all("def f(x):\n    g(x); h(x)\n")
    source = "\ufeffdef f(x):\n    return x < 3\n"
    [boundary] = [c for c in python_candidates("m.py", source, [2])
                  if c.operator is Operator.BOUNDARY]
    assert (source[boundary.start:boundary.end], boundary.replacement) == ("x < 3", "x <= 3")


def test_a_crlf_file_s_anchor_is_in_lf_form_which_check_finds_in_both_checkouts() -> None:
    crlf = "def f(x):\r\n    return x\r\ndef g(x):\r\n    return x\r\n"
    start = crlf.rindex("x\r\n")
    made = anchored(crlf, Candidate("m.py", 4, start, start + 1, "None",
                                    Operator.NEUTRAL_RETURN, "g", ""))
    assert made is not None
    assert (made.anchor, made.replacement) == ("def g(x):\n    return x\n",
                                               "def g(x):\n    return None\n")
    for text in (crlf, crlf.replace("\r\n", "\n")):
        assert isinstance(locate(text.encode(), made.anchor, made.replacement), Splice), text


def test_a_name_shows_source_text_inert_and_short() -> None:
    candidate = Candidate("m.py", 1, 0, 1, "x", Operator.SWAPPED_ARGUMENTS, "f",
                          "('\x1b[31m', '" + "y" * 200 + "')")
    assert "\x1b" not in candidate.name and "\\x1b" in candidate.name
    assert len(candidate.name) < 120


def test_a_line_repeated_hundreds_of_times_still_grows_an_anchor_that_occurs_once() -> None:
    text = "x = 1\n" * 300 + "y = 2\n" + "x = 1\n" * 300
    start = text.index("y = 2") - 6  # the x = 1 just above y
    made = anchored(text, Candidate("m.py", 300, start + 4, start + 5, "2", Operator.BOUNDARY,
                                    "", ""))
    assert made is not None and made.anchor == "x = 1\ny = 2\n"


def test_two_removed_calls_and_a_negated_condition_are_named_by_their_own_text() -> None:
    source = ("def save(record, log):\n    if record.ready:\n        record.flush()\n"
              "    store.put(record)\n")
    names = {c.line: c.name for c in python_candidates("m.py", source, range(1, 5))
             if c.operator in (Operator.CALL_REMOVED, Operator.NEGATED_CONDITION)}
    assert names == {
        2: "the condition is negated in save: not (record.ready) (negated-condition)",
        3: "the call is skipped in save: record.flush(...) removed (call-removed)",
        4: "the call is skipped in save: store.put(...) removed (call-removed)",
    }
