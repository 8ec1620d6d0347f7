"""The candidates `suggest` proposes, whatever the language: the operators reviewers find
productive, each candidate's exact bytes, its anchor grown to occur exactly once, and which
candidates are kept (one per line, the most valuable first, spread over the functions)."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum

from mutharness.model.anchors import Splice, locate
from mutharness.paths import visible


class Operator(Enum):
    """A kind of defect a candidate models; its value is the name the draft records."""

    GUARD_REMOVED = "guard-removed"  # a guard's raise/throw or early return taken out
    BOUNDARY = "boundary"  # < and <=, > and >= swapped
    NEGATED_COMPARISON = "negated-comparison"  # == and !=, is and is not, in and not in
    CONSTANT_BOUNDARY = "constant-boundary"  # an integer a comparison tests, moved by one
    NEGATED_CONDITION = "negated-condition"  # an if's or while's condition negated
    BOOLEAN_SWAP = "boolean-swap"  # and and or swapped
    NEUTRAL_RETURN = "neutral-return"  # a returned value replaced by a neutral one
    CALL_REMOVED = "call-removed"  # a call made for its effect taken out
    DEFAULT_CHANGED = "default-changed"  # a parameter's default changed
    SWAPPED_ARGUMENTS = "swapped-arguments"  # two positional arguments of one kind swapped
    AWAIT_DROPPED = "await-dropped"  # an await taken out (JavaScript, TypeScript)

    @property
    def value_rank(self) -> int:
        """How likely reviewers find such a mutant useful (higher first): a guard or a
        boundary a test should pin before a swapped argument."""
        return RANKS[self]

    @property
    def describes(self) -> str:
        """The defect in words, for the draft's mutation name."""
        return DESCRIPTIONS[self]


RANKS = {
    Operator.GUARD_REMOVED: 10, Operator.BOUNDARY: 9, Operator.NEGATED_COMPARISON: 8,
    Operator.CONSTANT_BOUNDARY: 7, Operator.NEGATED_CONDITION: 6, Operator.BOOLEAN_SWAP: 6,
    Operator.AWAIT_DROPPED: 5, Operator.NEUTRAL_RETURN: 5, Operator.CALL_REMOVED: 4,
    Operator.DEFAULT_CHANGED: 3, Operator.SWAPPED_ARGUMENTS: 2,
}
DESCRIPTIONS = {
    Operator.GUARD_REMOVED: "the guard is removed",
    Operator.BOUNDARY: "the boundary moves",
    Operator.NEGATED_COMPARISON: "the comparison is inverted",
    Operator.CONSTANT_BOUNDARY: "the limit is off by one",
    Operator.NEGATED_CONDITION: "the condition is negated",
    Operator.BOOLEAN_SWAP: "and/or are swapped",
    Operator.NEUTRAL_RETURN: "a neutral value is returned",
    Operator.CALL_REMOVED: "the call is skipped",
    Operator.DEFAULT_CHANGED: "the default changes",
    Operator.SWAPPED_ARGUMENTS: "the arguments are swapped",
    Operator.AWAIT_DROPPED: "the await is dropped",
}


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


def _once(data: bytes, anchor: str) -> bool:
    """Whether `anchor` occurs exactly once in `data`, as `check` counts (`anchors.locate`);
    two occurrences, found at once, answer without counting them all."""
    for needle in {anchor.encode("utf-8"), anchor.replace("\n", "\r\n").encode("utf-8")}:
        first = data.find(needle)
        if first >= 0 and data.find(needle, first + 1) >= 0:
            return False
    return isinstance(locate(data, anchor, anchor), Splice)


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


def grow_anchor(text: str, start: int, end: int) -> tuple[int, int] | None:
    """Where the anchor of [start, end) lies in `text`: the fewest whole lines around it that
    occur exactly once (as `check` counts them, in the LF form `anchored` gives), lines below
    preferred to lines above among runs of one length (so the anchor starts on the mutated
    line, the line verify reports, wherever it can); None when the span is empty."""
    if start >= end:
        return None
    data = text.encode("utf-8")
    offsets = _line_starts(text)
    first = bisect.bisect_right(offsets, start) - 1
    last = bisect.bisect_left(offsets, end)  # the run is lines [first, last)
    lines = len(offsets) - 1
    for extra in range(lines + 1):
        for above in range(min(extra, first) + 1):
            below = extra - above
            if last + below > lines:
                continue
            run = offsets[first - above], offsets[last + below]
            if _once(data, text[run[0]:run[1]].replace("\r\n", "\n")):
                return run
    return 0, len(text)


def anchored(text: str, candidate: Candidate) -> Anchored | None:
    """The candidate as a spec mutation, its anchor grown in `text`; anchor and replacement
    in LF form (`check` and `verify` find an LF anchor in a CRLF file, not the other way)."""
    grown = grow_anchor(text, candidate.start, candidate.end)
    if grown is None:
        return None
    first, last = grown
    replacement = (text[first:candidate.start] + candidate.replacement
                   + text[candidate.end:last])
    return Anchored(candidate, text[first:last].replace("\r\n", "\n"),
                    replacement.replace("\r\n", "\n"))


def one_per_line(candidates: Iterable[Candidate]) -> list[Candidate]:
    """The most valuable candidate of each line (the first generated among equals)."""
    best: dict[tuple[str, int], Candidate] = {}
    for candidate in candidates:
        key = (candidate.file, candidate.line)
        kept = best.get(key)
        if kept is None or candidate.operator.value_rank > kept.operator.value_rank:
            best[key] = candidate
    return sorted(best.values(), key=lambda c: (c.file, c.line))


def spread(candidates: Sequence[Candidate], most: int) -> list[Candidate]:
    """At most `most` candidates: each function's most valuable first, round by round over
    the functions (in the order they appear), so a change's every function is tried before
    any has two; within a round, higher value first. Returned in file and line order."""
    by_function: dict[tuple[str, str], list[Candidate]] = {}
    for candidate in candidates:
        by_function.setdefault((candidate.file, candidate.function), []).append(candidate)
    queues = [sorted(group, key=lambda c: (-c.operator.value_rank, c.line))
              for group in by_function.values()]
    kept: list[Candidate] = []
    depth = 0
    while len(kept) < most and any(depth < len(queue) for queue in queues):
        round_ = [queue[depth] for queue in queues if depth < len(queue)]
        round_.sort(key=lambda c: -c.operator.value_rank)
        kept.extend(round_[:most - len(kept)])
        depth += 1
    return sorted(kept, key=lambda c: (c.file, c.line))
