"""The candidates `suggest` proposes, whatever the language: the operators reviewers find
productive, ranked decisions first and blunt changes last, each candidate's exact text, its
anchor grown until `verify` finds it exactly once in the file's bytes, and which candidates
are kept (one a line, at most two of an operator, spread over the functions)."""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from mutharness.model.anchors import Splice, locate, uses_crlf
from mutharness.paths import visible
from mutharness.suggest.sources import Source


class Operator(Enum):
    """A kind of defect a candidate models; its value is the name the draft records."""

    BOUNDARY = "boundary"  # < and <=, > and >= swapped
    NEGATED_COMPARISON = "negated-comparison"  # == and !=, is and is not, in and not in
    CONSTANT_BOUNDARY = "constant-boundary"  # an integer a comparison tests, moved by one
    BOOLEAN_SWAP = "boolean-swap"  # and and or swapped
    CALL_BYPASSED = "call-bypassed"  # a call whose result is used: its input used instead
    CLASS_NARROWED = "class-narrowed"  # a regular expression's [...] class loses a member
    DEFAULT_CHANGED = "default-changed"  # a parameter's default changed
    BRANCH_FIXED = "branch-fixed"  # a conditional expression always takes one branch
    ELSE_REMOVED = "else-removed"  # an if's else body never runs
    GUARD_REMOVED = "guard-removed"  # a guard's raise/throw or early return taken out
    AWAIT_DROPPED = "await-dropped"  # an await taken out (JavaScript, TypeScript)
    CALL_REMOVED = "call-removed"  # a call made for its effect taken out
    NEGATED_CONDITION = "negated-condition"  # an if's or while's condition negated
    SWAPPED_ARGUMENTS = "swapped-arguments"  # two positional arguments of one kind swapped
    NEUTRAL_RETURN = "neutral-return"  # a returned value replaced by a neutral one

    @property
    def value_rank(self) -> int:
        """What a reviewer learns from such a mutant (higher first): a decision a test should
        pin (a boundary, a comparison, a boolean operator, a call or a character class the
        fix added, a default, a branch) before a blunt change (a guard or a call taken out, a
        condition negated, a whole return made neutral)."""
        return RANKS[self]

    @property
    def describes(self) -> str:
        """The defect in words, for the draft's mutation name."""
        return DESCRIPTIONS[self]


RANKS = {operator: rank for rank, operator in enumerate(reversed(Operator), 1)}  # in order
DESCRIPTIONS = {
    Operator.BOUNDARY: "the boundary moves",
    Operator.NEGATED_COMPARISON: "the comparison is inverted",
    Operator.CONSTANT_BOUNDARY: "the limit is off by one",
    Operator.BOOLEAN_SWAP: "and/or are swapped",
    Operator.CALL_BYPASSED: "the call is bypassed",
    Operator.CLASS_NARROWED: "the character class narrows",
    Operator.DEFAULT_CHANGED: "the default changes",
    Operator.BRANCH_FIXED: "one branch is always taken",
    Operator.ELSE_REMOVED: "the else is removed",
    Operator.GUARD_REMOVED: "the guard is removed",
    Operator.AWAIT_DROPPED: "the await is dropped",
    Operator.CALL_REMOVED: "the call is skipped",
    Operator.NEGATED_CONDITION: "the condition is negated",
    Operator.SWAPPED_ARGUMENTS: "the arguments are swapped",
    Operator.NEUTRAL_RETURN: "a neutral value is returned",
}
PER_OPERATOR = 2  # candidates of one operator a draft keeps at most
WHEN_ALONE = frozenset({Operator.NEUTRAL_RETURN})  # kept only on a line with nothing else


@dataclass(frozen=True)
class Candidate:
    """One mutation on a changed line: the text at [start, end) of the file becomes
    `replacement` (offsets in characters of the file's text, exact)."""

    file: str  # relative, posix
    line: int  # 1-based, where the mutated code starts
    start: int
    end: int
    replacement: str
    operator: Operator
    function: str  # the enclosing function's qualified name ("" at module level)
    shown: str  # what is replaced, as it reads: `<` -> `<=`

    @property
    def name(self) -> str:
        """The draft's name for it: the defect, where, and the change (source text shown with
        its control characters escaped, and cut: a spec's name is one short line)."""
        where = f" in {_inert(self.function)}" if self.function else ""
        return f"{self.operator.describes}{where}: {_inert(self.shown)} ({self.operator.value})"


def _inert(text: str) -> str:
    shown = visible(text)
    return shown if len(shown) <= SHOWN_MOST else shown[:SHOWN_MOST - 3] + "..."


@dataclass(frozen=True)
class Anchored:
    """A candidate as a spec mutation: an anchor that occurs exactly once in the file's text
    and its replacement."""

    candidate: Candidate
    anchor: str
    replacement: str


SHOWN_MOST = 60  # characters of source text a draft's name repeats


def _line_starts(text: str) -> list[int]:
    """Where each line of `text` starts, and its end: lines end at "\n" only, as anchors'."""
    starts = [0]
    index = text.find("\n")
    while index >= 0:
        starts.append(index + 1)
        index = text.find("\n", index + 1)
    if starts[-1] != len(text):
        starts.append(len(text))
    return starts


def _twice(data: bytes, needle: bytes) -> bool:
    """Whether `needle` occurs twice: said at once, without counting them all."""
    first = data.find(needle)
    return first >= 0 and data.find(needle, first + 1) >= 0


def anchored(source: Source | str, candidate: Candidate) -> Anchored | None:
    """The candidate as a spec mutation whose anchor `verify` finds exactly once in the file's
    bytes, at the candidate, and whose splice there gives the candidate's text (in the file's
    encoding): the fewest whole lines around it that do, lines below preferred to lines above
    among runs of one length (so the anchor starts on the mutated line, the line verify
    reports, wherever it can). Each run in LF form first (`check` and `verify` find an LF
    anchor in a CRLF file, not the other way), else as the file has it (CRLF lines pasted
    into an LF file). None when no run does: a line of a file in another encoding than UTF-8
    whose text no UTF-8 anchor matches, or an empty span."""
    if isinstance(source, str):
        source = Source.of_text(source)
    text, data, encoding = source.text, source.data, source.encoding
    start, end = candidate.start, candidate.end
    if start >= end:
        return None
    try:
        wanted = (text[:start] + candidate.replacement + text[end:]).encode(encoding)
    except UnicodeEncodeError:
        return None
    offsets = _line_starts(text)
    at = [0]  # each line start's byte offset
    for first_char, next_char in itertools.pairwise(offsets):
        at.append(at[-1] + len(text[first_char:next_char].encode(encoding)))
    first = bisect.bisect_right(offsets, start) - 1
    last = bisect.bisect_left(offsets, end)  # the run is lines [first, last)
    lines = len(offsets) - 1
    crlf = uses_crlf(data)
    for extra in range(lines + 1):
        for above in range(min(extra, first) + 1):
            below = extra - above
            if last + below > lines:
                continue
            top, bottom = first - above, last + below
            run = text[offsets[top]:offsets[bottom]]
            replaced = (text[offsets[top]:start] + candidate.replacement
                        + text[end:offsets[bottom]])
            forms = [(run.replace("\r\n", "\n"), replaced.replace("\r\n", "\n"))]
            if "\r\n" in run:
                forms.append((run, replaced))
            present = False
            for anchor, replacement in forms:
                needle = anchor.encode("utf-8")
                crlf_needle = anchor.replace("\n", "\r\n").encode("utf-8")
                if not (needle in data or (crlf and crlf_needle in data)):
                    continue  # never `locate` then: its near-miss search reads the whole file
                present = True
                if _twice(data, needle) or (crlf and _twice(data, crlf_needle)):
                    continue
                splice = locate(data, anchor, replacement)
                if isinstance(splice, Splice) and (splice.start, splice.end) == (
                        at[top], at[bottom]) and splice.apply(data) == wanted:
                    return Anchored(candidate, anchor, replacement)
            if extra == 0 and not present:  # the candidate's own lines are in no UTF-8 form:
                return None  # no run of lines around them is either
    return None


def eligible(candidates: Sequence[Candidate]) -> list[Candidate]:
    """The candidates a draft may keep, in their order: a neutral return only on a line with
    no other candidate."""
    lines: dict[tuple[str, int], set[Operator]] = {}
    for candidate in candidates:
        lines.setdefault((candidate.file, candidate.line), set()).add(candidate.operator)
    return [candidate for candidate in candidates
            if candidate.operator not in WHEN_ALONE
            or not lines[(candidate.file, candidate.line)] - {candidate.operator}]


def chosen(candidates: Sequence[Candidate], most: int) -> list[Candidate]:
    """At most `most` candidates, round by round over the changed functions (in the order
    they appear), so every function has one before any has two (`_round`). A function's pick
    is its most valuable candidate (the first generated among equals) on a line none was kept
    on, of an operator kept fewer than `PER_OPERATOR` times; a neutral return only on a line
    with no other candidate. Returned in file and line order."""
    by_function: dict[tuple[str, str], list[tuple[int, Candidate]]] = {}
    for index, candidate in enumerate(eligible(candidates)):
        by_function.setdefault((candidate.file, candidate.function), []).append(
            (index, candidate))
    queues = [[candidate for _, candidate in sorted(
        group, key=lambda each: (-each[1].operator.value_rank, each[0]))]
        for group in by_function.values()]
    kept: list[Candidate] = []
    used: set[tuple[str, int]] = set()
    counts: dict[Operator, int] = {}
    while len(kept) < most:
        picks = _round(queues, used, counts, most - len(kept))
        if not picks:
            break
        for found in picks:
            kept.append(found)
            used.add((found.file, found.line))
            counts[found.operator] = counts.get(found.operator, 0) + 1
    return sorted(kept, key=lambda c: (c.file, c.line))


def _round(queues: Sequence[Sequence[Candidate]], used: set[tuple[str, int]],
           counts: Mapping[Operator, int], room: int) -> list[Candidate]:
    """One candidate each for as many functions as the operators' limits allow, at most
    `room`: the function whose best candidate is worth most picks first, its best open one;
    a function with none open takes one from a function that holds its operator and has
    another choice, which moves to that (an augmenting path), so a function with one kind of
    candidate is not left out for a function that had two."""
    options = {place: [c for c in queue if (c.file, c.line) not in used]
               for place, queue in enumerate(queues)}
    held: dict[int, Candidate] = {}

    def load(operator: Operator) -> int:
        return counts.get(operator, 0) + sum(c.operator is operator for c in held.values())

    def free(candidate: Candidate, place: int) -> bool:
        return all((c.file, c.line) != (candidate.file, candidate.line)
                   for other, c in held.items() if other != place)

    def take(place: int, tried: set[Operator]) -> bool:
        for candidate in options[place]:  # an open one first, the most valuable
            if (candidate.operator not in tried and free(candidate, place)
                    and load(candidate.operator) < PER_OPERATOR):
                held[place] = candidate
                return True
        for candidate in options[place]:  # else one taken from a function with another
            operator = candidate.operator
            if operator in tried or not free(candidate, place):
                continue
            tried.add(operator)
            for other in [o for o, c in held.items() if c.operator is operator and o != place]:
                holding = held.pop(other)
                held[place] = candidate
                if take(other, tried):
                    return True
                del held[place]
                held[other] = holding
        return False

    order = sorted((place for place, found in options.items() if found),
                   key=lambda place: (-options[place][0].operator.value_rank, place))
    for place in order:
        if len(held) >= room:
            break
        take(place, set())
    return list(held.values())


def narrowed_classes(pattern: str) -> list[tuple[int, int, str]]:
    """Each `[...]` character class of the regular expression source `pattern` with two
    members or more, narrowed: (start, end, the class without its last member); a member is
    a character, an escape (`\\d`, `\\x41`, `\\u00e9`) or a range (`a-z`). A class that
    starts with `]` is passed over (read differently by different engines)."""
    found: list[tuple[int, int, str]] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if char != "[":
            index += 1
            continue
        start = index
        index += 1
        if pattern.startswith("^", index):
            index += 1
        members: list[tuple[int, int]] = []  # each member's [start, end)
        closed = pattern.startswith("]", index)
        while not closed and index < len(pattern):
            if pattern[index] == "]":
                closed = True
                break
            atom = _atom(pattern, index)
            if (pattern.startswith("-", atom) and atom + 1 < len(pattern)
                    and pattern[atom + 1] != "]"):
                atom = _atom(pattern, atom + 1)  # a range: a-z
            members.append((index, atom))
            index = atom
        if closed and index < len(pattern) and pattern[index] == "]" and len(members) >= 2:
            first, last = members[-1]
            found.append((start, index + 1, pattern[start:first] + pattern[last:index + 1]))
        index += 1
    return found


def _atom(pattern: str, index: int) -> int:
    """Where the class member starting at `index` ends."""
    if pattern[index] != "\\":
        return index + 1
    letter = pattern[index + 1:index + 2]
    width = {"x": 4, "u": 6}.get(letter, 2)
    return min(index + width, len(pattern))
