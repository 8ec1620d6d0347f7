"""anchors.locate / anchors.unified_diff: exactly-once anchors, spliced literally."""

from __future__ import annotations

import pytest

from mutharness.model.anchors import (
    MAX_HIT_LINES,
    AnchorMiss,
    Splice,
    locate,
    unified_diff,
    uses_crlf,
)

SOURCE = (
    b'"""A tiny module under test."""\n'
    b"\n"
    b"\n"
    b"def clamp(value, low, high):\n"
    b"    if value < low:\n"
    b"        return low\n"
    b"    if value > high:\n"
    b"        return high\n"
    b"    return value\n"
)


def splice_of(data: bytes, anchor: str, replacement: str) -> Splice:
    found = locate(data, anchor, replacement)
    assert isinstance(found, Splice), found
    return found


def miss_of(data: bytes, anchor: str, replacement: str = "X") -> AnchorMiss:
    found = locate(data, anchor, replacement)
    assert isinstance(found, AnchorMiss), found
    return found


def endings(data: bytes) -> set[str]:
    """The kinds of line ending in `data`: 'crlf' and/or 'lf' (a bare LF)."""
    kinds = set()
    if b"\r\n" in data:
        kinds.add("crlf")
    if data.replace(b"\r\n", b"").count(b"\n"):
        kinds.add("lf")
    return kinds


# --- exactly once ---------------------------------------------------------------------------


def test_an_anchor_found_once_is_spliced_in_place() -> None:
    anchor = "    if value < low:\n        return low\n"

    splice = splice_of(SOURCE, anchor, "")

    start = SOURCE.index(anchor.encode())
    assert (splice.start, splice.end) == (start, start + len(anchor))
    assert (splice.line, splice.end_line) == (5, 6)
    assert splice.crlf is False
    assert splice.apply(SOURCE) == SOURCE.replace(anchor.encode(), b"")


def test_a_single_line_anchor_starts_and_ends_on_its_line() -> None:
    splice = splice_of(SOURCE, "value > high", "value >= high")

    assert (splice.line, splice.end_line) == (7, 7)
    assert splice.apply(SOURCE).splitlines()[6] == b"    if value >= high:"


@pytest.mark.parametrize(
    "replacement",
    [
        pytest.param("$'", id="dollar-quote"),
        pytest.param("$&", id="dollar-ampersand"),
        pytest.param("$$", id="double-dollar"),
        pytest.param("$1", id="dollar-group"),
        pytest.param("\\1", id="backslash-group"),
        pytest.param("\\g<0>", id="python-group-zero"),
        pytest.param("\\n", id="backslash-n-two-characters"),
        pytest.param("\\", id="lone-backslash"),
        pytest.param("%s {0} {value}", id="format-fields"),
        pytest.param("caf\u00e9 \u2603 \U0001f600", id="non-ascii"),
        pytest.param("", id="empty"),
    ],
)
def test_the_replacement_lands_byte_for_byte_with_no_substitution(replacement: str) -> None:
    anchor = "return value"

    mutated = splice_of(SOURCE, anchor, replacement).apply(SOURCE)

    before, after = SOURCE.split(b"return value")
    assert mutated == before + replacement.encode("utf-8") + after


def test_bytes_outside_the_anchor_are_untouched() -> None:
    data = b"\x00\xff\r keep\tthis\x0c\n MIDDLE \r\r\n and\x85this\xfe"

    splice = splice_of(data, " MIDDLE ", "m")
    mutated = splice.apply(data)

    assert mutated[: splice.start] == data[: splice.start]
    assert mutated[splice.start + 1 :] == data[splice.end :]
    assert mutated == data.replace(b" MIDDLE ", b"m")


def test_a_latin_1_file_works_with_an_ascii_anchor() -> None:
    data = "# caf\u00e9 \u00fcber\nlimit = 18\nname = 'Jos\u00e9'\n".encode("latin-1")

    splice = splice_of(data, "limit = 18", "limit = 17")

    assert splice.line == 2
    assert splice.apply(data) == data.replace(b"limit = 18", b"limit = 17")
    assert b"caf\xe9" in splice.apply(data)


def test_a_latin_1_file_still_reports_a_near_miss() -> None:
    data = "# caf\u00e9\nlimit = 18\n".encode("latin-1")

    miss = miss_of(data, "limit = 19")

    assert miss.near_line == 2


# --- not exactly once ------------------------------------------------------------------------


def test_an_absent_anchor_reports_zero_hits_and_the_nearest_line() -> None:
    miss = miss_of(SOURCE, "    if value < lo:\n        return lo\n")

    assert (miss.hits, miss.lines) == (0, ())
    assert miss.near_line == 5
    assert miss.near_text == "    if value < low:"
    assert miss.describe() == (
        "anchor not found (0 hits); nearest line 5: '    if value < low:'"
    )


def test_an_absent_anchor_with_nothing_similar_has_no_near_miss() -> None:
    miss = miss_of(SOURCE, "completely unrelated text that appears nowhere at all")

    assert (miss.hits, miss.near_line, miss.near_text) == (0, None, None)
    assert miss.describe() == "anchor not found (0 hits)"


def test_an_anchor_matching_twice_is_refused_with_both_line_numbers() -> None:
    miss = miss_of(SOURCE, "        return ")

    assert (miss.hits, miss.lines) == (2, (6, 8))
    assert miss.describe() == "anchor matched 2 times (need exactly 1), at lines 6, 8"


def test_two_hits_on_one_line_are_two_hits() -> None:
    miss = miss_of(b"x = a + a\n", "a")

    assert (miss.hits, miss.lines) == (2, (1, 1))


@pytest.mark.parametrize(
    ("data", "anchor", "hits"),
    [
        pytest.param(b"aaa", "aa", 2, id="aa-in-aaa"),
        pytest.param(b"abab-ab", "abab", 1, id="no-overlap-is-one"),
        pytest.param(b"ababab", "abab", 2, id="abab-in-ababab"),
        pytest.param(b"\n\n\n", "\n\n", 2, id="blank-lines"),
        pytest.param(b"x = 1 if y else 1 if z else 1", "1 if ", 2, id="repeated-expression"),
    ],
)
def test_overlapping_self_matches_count_as_multiple_hits(
    data: bytes, anchor: str, hits: int
) -> None:
    found = locate(data, anchor, "Q")

    assert (found.hits if isinstance(found, AnchorMiss) else 1) == hits


def test_many_hits_list_the_first_lines_then_an_ellipsis() -> None:
    data = b"x\n" * (MAX_HIT_LINES + 5)

    miss = miss_of(data, "x")

    assert miss.hits == MAX_HIT_LINES + 5
    assert miss.describe().endswith(
        ", ".join(str(n) for n in range(1, MAX_HIT_LINES + 1)) + "..."
    )


def test_an_anchor_in_a_different_case_is_not_found() -> None:
    assert miss_of(SOURCE, "RETURN VALUE").hits == 0


# --- line endings ----------------------------------------------------------------------------

CRLF_SOURCE = SOURCE.replace(b"\n", b"\r\n")


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(b"", False, id="empty"),
        pytest.param(b"no newline", False, id="no-newline"),
        pytest.param(b"a\nb\n", False, id="lf"),
        pytest.param(b"a\r\nb\r\n", True, id="crlf"),
        pytest.param(b"a\r\nb", True, id="crlf-no-final-newline"),
        pytest.param(b"a\r\nb\n", False, id="mixed"),
        pytest.param(b"a\rb\r", False, id="old-mac-cr"),
    ],
)
def test_uses_crlf_means_every_line_ending_is_crlf(data: bytes, expected: bool) -> None:
    assert uses_crlf(data) is expected


def test_a_multi_line_anchor_matches_a_crlf_file_with_newlines_read_as_crlf() -> None:
    anchor = "    if value < low:\n        return low\n"

    splice = splice_of(CRLF_SOURCE, anchor, "    if value <= low:\n        return low\n")

    assert splice.crlf is True
    assert (splice.line, splice.end_line) == (5, 6)
    assert splice.apply(CRLF_SOURCE) == CRLF_SOURCE.replace(
        b"    if value < low:\r\n", b"    if value <= low:\r\n"
    )


def test_an_anchor_written_with_crlf_matches_exactly_and_is_not_translated() -> None:
    splice = splice_of(CRLF_SOURCE, "return low\r\n", "return high\r\n")

    assert splice.crlf is False
    assert splice.apply(CRLF_SOURCE) == CRLF_SOURCE.replace(b"return low\r\n", b"return high\r\n")


def test_a_newline_free_anchor_in_a_crlf_file_splices_a_newline_replacement_as_crlf() -> None:
    splice = splice_of(CRLF_SOURCE, "return value", "x = value\n    return x")

    assert splice.crlf is True
    assert splice.replacement == b"x = value\r\n    return x"
    assert endings(splice.apply(CRLF_SOURCE)) == {"crlf"}


def test_a_newline_free_replacement_in_a_crlf_file_is_not_marked_translated() -> None:
    splice = splice_of(CRLF_SOURCE, "return value", "return low")

    assert splice.crlf is False


def test_a_file_with_mixed_endings_is_never_translated() -> None:
    mixed = b"a = 1\r\nb = 2\nc = 3\r\n"

    miss = miss_of(mixed, "a = 1\nb = 2\n")

    assert miss.hits == 0


def test_an_anchor_that_matches_twice_after_translation_reports_both_lines() -> None:
    data = b"x = 1\r\ny = 2\r\nx = 1\r\ny = 2\r\n"

    miss = miss_of(data, "x = 1\ny = 2")

    assert (miss.hits, miss.lines) == (2, (1, 3))


def test_an_anchor_starting_with_a_newline_does_not_split_a_crlf_pair() -> None:
    data = b"a = 1\r\nb = 2\r\n"

    splice = splice_of(data, "\nb = 2", "\nb = 3")

    assert splice.apply(data) == b"a = 1\r\nb = 3\r\n"
    assert splice.crlf is True


def test_deleting_an_anchor_that_starts_with_a_newline_leaves_no_lone_cr() -> None:
    data = b"a = 1\r\nb = 2\r\nc = 3\r\n"

    mutated = splice_of(data, "\nb = 2", "").apply(data)

    assert mutated == b"a = 1\r\nc = 3\r\n"


def test_an_anchor_ending_inside_a_crlf_pair_is_not_a_match() -> None:
    data = b"a = 1\r\nb = 2\r\n"

    assert miss_of(data, "a = 1\r", "a = 2\r").hits == 0


def test_a_crlf_replacement_in_an_lf_file_is_spliced_with_lf() -> None:
    splice = splice_of(SOURCE, "return value\n", "x = value\r\n    return x\r\n")

    assert splice.replacement == b"x = value\n    return x\n"
    assert endings(splice.apply(SOURCE)) == {"lf"}


FILES = {"lf": SOURCE, "crlf": CRLF_SOURCE}
ANCHORS = {
    "no-newline": "return high",
    "lf": "        return high\n",
    "crlf": "        return high\r\n",
    "leading-lf": "\n    return value",
    "lf-inside": "if value > high:\n        return high",
}
REPLACEMENTS = {
    "empty": "",
    "no-newline": "return 0",
    "lf": "        return 0\n",
    "crlf": "        return 0\r\n",
    "two-lines-lf": "        print(high)\n        return high\n",
    "two-lines-crlf": "        print(high)\r\n        return high\r\n",
    "leading-lf": "\n    return 0",
}


@pytest.mark.parametrize("file_kind", sorted(FILES))
@pytest.mark.parametrize("anchor_kind", sorted(ANCHORS))
@pytest.mark.parametrize("replacement_kind", sorted(REPLACEMENTS))
def test_a_splice_never_produces_mixed_line_endings(
    file_kind: str, anchor_kind: str, replacement_kind: str
) -> None:
    data = FILES[file_kind]

    found = locate(data, ANCHORS[anchor_kind], REPLACEMENTS[replacement_kind])

    if isinstance(found, Splice):
        mutated = found.apply(data)
        assert endings(mutated) == {file_kind}
        assert b"\r\r" not in mutated
        assert mutated.count(b"\r") == mutated.count(b"\r\n")
    else:  # only a CRLF anchor in an LF file cannot be matched
        assert (file_kind, anchor_kind) == ("lf", "crlf")


# --- the diff --------------------------------------------------------------------------------


def test_the_unified_diff_shows_the_change_with_context() -> None:
    splice = splice_of(SOURCE, "value > high", "value >= high")

    diff = unified_diff(SOURCE, splice, "src/calc.py")

    assert diff.splitlines() == [
        "--- a/src/calc.py",
        "+++ b/src/calc.py",
        "@@ -4,6 +4,6 @@",
        " def clamp(value, low, high):",
        "     if value < low:",
        "         return low",
        "-    if value > high:",
        "+    if value >= high:",
        "         return high",
        "     return value",
    ]


def test_the_diff_of_a_deletion_shows_only_minus_lines() -> None:
    anchor = "    if value < low:\n        return low\n"

    diff = unified_diff(SOURCE, splice_of(SOURCE, anchor, ""), "src/calc.py")

    changed = [line for line in diff.splitlines()[2:] if line[:1] in "+-"]
    assert changed == ["-    if value < low:", "-        return low"]


def test_the_diff_of_a_crlf_file_shows_the_change() -> None:
    splice = splice_of(CRLF_SOURCE, "value > high", "value >= high")

    diff = unified_diff(CRLF_SOURCE, splice, "src/calc.py")

    assert "-    if value > high:\r\n" in diff
    assert "+    if value >= high:\r\n" in diff


def test_the_diff_of_a_latin_1_file_shows_the_change() -> None:
    data = "# caf\u00e9\nlimit = 18\n".encode("latin-1")

    diff = unified_diff(data, splice_of(data, "18", "17"), "legacy.py")

    assert "-limit = 18\n" in diff
    assert "+limit = 17\n" in diff


def test_the_diff_splits_lines_only_at_newlines() -> None:
    data = b"a = 1\n\x0c\nb = '\xe2\x80\xa8'  # a line separator in a string\nc = 3\n"

    diff = unified_diff(data, splice_of(data, "c = 3", "c = 4"), "f.py")

    assert " \x0c\n b = '\u2028'  # a line separator in a string\n" in diff
    assert "-c = 3\n+c = 4\n" in diff


def test_the_diff_marks_a_missing_final_newline() -> None:
    data = b"a = 1\nb = 2"

    diff = unified_diff(data, splice_of(data, "b = 2", "b = 3"), "f.py")

    assert diff.endswith(
        "-b = 2\n\\ No newline at end of file\n+b = 3\n\\ No newline at end of file\n"
    )


def test_the_diff_shows_a_removed_final_newline() -> None:
    data = b"a = 1\nb = 2\n"

    diff = unified_diff(data, splice_of(data, "b = 2\n", "b = 2"), "f.py")

    assert "-b = 2\n+b = 2\n\\ No newline at end of file\n" in diff
