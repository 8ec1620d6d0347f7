"""A commit's changed lines followed to where they are now: `suggest --commit` runs at HEAD
(the working tree), so the lines that commit changed are found in today's file through the
diff from the commit to it; a line changed again since is no longer that commit's."""

from __future__ import annotations

import re
from collections.abc import Collection

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.M)


def carried(lines: Collection[int], diff: str) -> tuple[frozenset[int], int]:
    """Where `lines` (1-based, in the commit's version of a file) are in the version a
    zero-context diff (`git diff -U0 COMMIT -- FILE`) leads to, and how many of them that
    diff changes or removes (left out: they are a later change's)."""
    hunks = [(int(old), int(count or "1"), int(new), int(added or "1"))  # no count: one line
             for old, count, new, added in HUNK.findall(diff)]
    now: set[int] = set()
    lost = 0
    for line in lines:
        shift = 0
        for old, count, _, added in hunks:
            if count and old <= line < old + count:
                lost += 1
                break
            # a hunk above the line: its lines removed (old..old+count-1), or added after `old`
            if (count and old + count - 1 < line) or (not count and old < line):
                shift += added - count
        else:
            now.add(line + shift)
    return frozenset(now), lost
