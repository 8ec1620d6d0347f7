"""`suggest` reads a source file as its language does (Python: UTF-8 or the encoding a PEP 263
coding cookie declares; node: UTF-8), names a file it cannot read instead of dropping it, and
grows anchors that `verify` finds in the file's own bytes whatever its line endings (a CRLF
function pasted into an LF file included): its own run never refuses its own anchors."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import CALC, Completed, Project, git
from nodes import NODE, committed

from mutharness.model.anchors import Splice, locate
from mutharness.suggest.candidates import Candidate, Operator, anchored
from mutharness.suggest.python import python_candidates
from mutharness.suggest.sources import Source, read_source

Cli = Callable[..., Completed]
COOKIE = b"# -*- coding: latin-1 -*-\n"

READ = [  # (path, bytes, the text read, or the reason it is not)
    ("m.py", b"x = 1\n", "x = 1\n"),
    ("m.py", COOKIE + b'CITY = "Z\xfcrich"\n', COOKIE.decode() + 'CITY = "Z\u00fcrich"\n'),
    ("m.py", b"# vim: set fileencoding=cp1252 :\nQUOTE = '\x93'\n",
     "# vim: set fileencoding=cp1252 :\nQUOTE = '\u201c'\n"),
    ("m.py", b"\xef\xbb\xbfx = 1\n", "\ufeffx = 1\n"),  # a byte order mark stays in the text
    ("m.py", b"x = 1\ny = '\xe9'\n",
     "not UTF-8 (byte 0xe9 on line 2) and no coding cookie (PEP 263) names its encoding"),
    ("m.py", b"# coding: utf-8\ny = '\xe9'\n",
     "not UTF-8 (byte 0xe9 on line 2), the encoding its coding cookie names"),
    ("m.py", b"# coding: klingon\ny = 1\n",
     "its coding cookie (PEP 263) names an encoding Python does not know: klingon"),
    ("m.js", b"const x = '\xe9';\n", "not UTF-8 (byte 0xe9 on line 1), as node reads it"),
    ("m.js", b"// -*- coding: latin-1 -*-\nconst x = '\xe9';\n",
     "not UTF-8 (byte 0xe9 on line 2), as node reads it"),  # no cookie in JavaScript
]


@pytest.mark.parametrize(("path", "data", "read"), READ)
def test_a_source_file_is_read_in_its_language_s_encoding_or_says_why_not(
    path: str, data: bytes, read: str
) -> None:
    found = read_source(path, data)
    assert (found.text if isinstance(found, Source) else found) == read


def _candidate(text: str, span: str, replacement: str, line: int) -> Candidate:
    start = text.index(span)
    return Candidate("m.py", line, start, start + len(span), replacement, Operator.BOUNDARY,
                     "f", "")


LF_FUNCTION = "def f(x):\n    return x > 1\n"
CRLF_FUNCTION = "def g(x):\r\n    return x > 2\r\n"
ENDINGS = [  # (the file's text, the span replaced, what the anchor is)
    (LF_FUNCTION + CRLF_FUNCTION, "x > 2", "    return x > 2\r\n"),  # the pasted part: as is
    (LF_FUNCTION + CRLF_FUNCTION, "x > 1", "    return x > 1\n"),  # the LF part: LF
    (LF_FUNCTION + CRLF_FUNCTION.replace("2", "1"),  # its LF form also occurs, elsewhere
     "x > 1", "    return x > 1\r\n"),
    (CRLF_FUNCTION + CRLF_FUNCTION.replace("g", "h"), "x > 2", "def h(x):\n    return x > 2\n"),
]


@pytest.mark.parametrize(("text", "span", "anchor"), ENDINGS)
def test_an_anchor_is_the_form_verify_finds_at_the_candidate_in_the_file_s_bytes(
    text: str, span: str, anchor: str
) -> None:
    start = text.rindex(span)
    candidate = Candidate("m.py", 1, start, start + len(span), "x >= 9", Operator.BOUNDARY,
                          "f", "")
    made = anchored(text, candidate)
    assert made is not None and made.anchor == anchor
    data = text.encode()
    splice = locate(data, made.anchor, made.replacement)
    assert isinstance(splice, Splice)
    assert splice.apply(data) == (text[:start] + "x >= 9" + text[start + len(span):]).encode()


def test_a_latin_1_file_s_anchors_are_its_own_text_and_a_line_no_utf_8_anchor_can_name_has_none(
) -> None:
    data = COOKIE + b'def f(x):\n    return x > 1 and x != "\xe9t\xe9"\n    return x > 1\n'
    source = read_source("m.py", data)
    assert isinstance(source, Source)
    made = {c.line: anchored(source, c) for c in python_candidates("m.py", source.text, [3, 4])
            if c.operator is Operator.BOUNDARY}
    assert made[3] is None  # the line holds latin-1 bytes: verify reads anchors as UTF-8
    fourth = made[4]
    assert fourth is not None and fourth.anchor == "    return x > 1\n"
    splice = locate(data, fourth.anchor, fourth.replacement)
    assert isinstance(splice, Splice)
    assert splice.apply(data).endswith(b"    return x >= 1\n")


LATIN_CALC = (b"# -*- coding: latin-1 -*-\n# Z\xfcrich's own calc\n"
              + CALC.encode().replace(b'"""A tiny module under test."""\n', b""))
LATIN_TEST = ("from calc import is_adult\n\n\ndef test_adult_at_eighteen():\n"
              "    assert is_adult(18)\n")


def test_a_latin_1_python_file_gets_candidates_whose_anchors_verify(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    project = make_project()
    project.write("src/calc.py", LATIN_CALC.replace(b"age >= 18", b"age > 18"))
    project.commit("calc, in latin-1")
    project.write("src/calc.py", LATIN_CALC)
    project.write("tests/test_adult.py", LATIN_TEST)
    project.commit("fix: 18 is an adult")

    done = cli(project.root, "suggest", "--since", "HEAD~1", "--no-progress")

    assert done.code == 0, done.out + done.err
    assert "in 1 file(s)" in done.out and "not read" not in done.out
    draft = json.loads((project.root / ".mutharness/suggest/draft.json").read_text("utf-8"))
    [caught] = draft["mutations"]
    assert (caught["anchor"], caught["replacement"]) == ("    return age >= 18\n",
                                                         "    return age > 18\n")
    again = cli(project.root, "verify", ".mutharness/suggest/draft.json", "--no-progress")
    assert again.code == 0, again.out + again.err


def test_a_python_file_that_cannot_be_decoded_is_named_never_dropped_silently(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    project = make_project()
    project.write("src/legacy.py", b"def name():\n    return '\xe9t\xe9' if True else ''\n")
    project.write("tests/test_legacy.py", "def test_nothing():\n    pass\n")
    project.commit("a latin-1 file with no coding cookie")

    done = cli(project.root, "suggest", "--since", "HEAD~1", "--no-progress")

    assert done.code == 0, done.out + done.err
    assert ("  1 file not read: src/legacy.py (not UTF-8 (byte 0xe9 on line 2) and no coding "
            "cookie (PEP 263) names its encoding)") in done.out
    assert "on 0 of 0 changed line(s)" in done.out


@pytest.mark.skipif(NODE is None, reason="node (.ci/run installs it)")
def test_a_node_file_that_is_not_utf_8_is_named_never_dropped_silently(
    tmp_path: Path, git_home: Path, cli: Cli
) -> None:
    root = committed(tmp_path / "names", {
        ".gitignore": ".mutharness/\n",
        "package.json": json.dumps({"name": "names", "version": "1.0.0"}),
        "test/names.test.js": "require('node:test')('nothing', () => {});\n",
    }, "a test")
    (root / "lib").mkdir()
    (root / "lib/names.js").write_bytes(b"exports.name = (n) => n > 0 ? '\xe9t\xe9' : '';\n")
    (root / "test/names.test.js").write_text("require('node:test')('one', () => {});\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a latin-1 file")

    done = cli(root, "suggest", "--since", "HEAD~1", "--no-progress")

    assert done.code == 0, done.out + done.err
    assert ("  1 file not read: lib/names.js (not UTF-8 (byte 0xe9 on line 1), as node reads "
            "it)") in done.out


PASTED = CALC + "\r\n\r\ndef is_senior(age):\r\n    return age >= 65\r\n"
SENIOR_TEST = ("from calc import is_senior\n\n\ndef test_senior_at_sixty_five():\n"
               "    assert is_senior(65)\n")


def test_a_function_pasted_with_crlf_lines_into_an_lf_file_gets_anchors_its_run_finds(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    project = make_project()
    project.write("src/calc.py", PASTED.encode())
    project.write("tests/test_senior.py", SENIOR_TEST)
    project.commit("is_senior, pasted from a Windows editor")

    done = cli(project.root, "suggest", "--since", "HEAD~1", "--no-progress")

    assert done.code == 0, done.out + done.err
    draft = json.loads((project.root / ".mutharness/suggest/draft.json").read_text("utf-8"))
    [caught] = draft["mutations"]
    assert (caught["anchor"], caught["replacement"]) == ("    return age >= 65\r\n",
                                                         "    return age > 65\r\n")
    again = cli(project.root, "verify", ".mutharness/suggest/draft.json", "--no-progress")
    assert again.code == 0, again.out + again.err
    checked = cli(project.root, "check", ".mutharness/suggest/draft.json")
    assert checked.code == 0, checked.out + checked.err
