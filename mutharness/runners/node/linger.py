"""Read the linger watch's JSONL (`_linger.mjs`): which test files kept node running after
their last test, for how long, holding what, and whether the watch let them end."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mutharness.runners.node.events import _relative as relative  # the events rule, once

LINGER_NOTED_S = 1.0  # a file that ends this long after its last test is named to the user
_MAX_HELD = 8  # what a record may name as holding the process open (it is a note only)


@dataclass(frozen=True)
class Lingered:
    """A test file whose process outlived its last test."""

    file: str  # relative to the run's directory, posix, when it lies there
    seconds: float  # from its last test's end to its exit (or to the release)
    released: bool  # the watch unref'd what held it (nothing there could run code by itself)
    holding: tuple[str, ...]  # what node had open: Server, Socket, FSWatcher, Timeout...

    def to_json(self) -> dict[str, Any]:
        """The record as the results keep it."""
        return {"file": self.file, "seconds": round(self.seconds, 3),
                "released": self.released, "holding": list(self.holding)}

    def note(self) -> str:
        """What the user is told, once per file."""
        held = ", ".join(self.holding) or "nothing node names"
        if self.released:
            return (f"{self.file} kept node running after its last test (open: {held}); "
                    f"let end after {self.seconds:.1f} s in which no code ran, every count "
                    "node's own: close what it opens in an after() hook")
        return (f"{self.file} kept node running {self.seconds:.1f} s after its last test "
                f"(open: {held}); every run of it waits so long: close what it opens in an "
                "after() hook")


def _record(line: str) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _seconds(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < 1e9:
        return float(value) / 1000.0
    return None


def _holding(value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(str(item)[:80] for item in value[:_MAX_HELD] if isinstance(item, str))


def read_lingering(path: Path, cwd: Path) -> tuple[Lingered, ...]:
    """The files of one run that outlived their last test by `LINGER_NOTED_S` or were
    released, in the order they ended. Lines that are not the watch's records are skipped:
    what a test can write there changes a note, never a count."""
    try:
        text = path.read_text("utf-8", errors="replace")
    except OSError:
        return ()
    bases = (str(cwd), str(cwd.resolve()))
    ended: dict[str, Lingered] = {}
    released: dict[str, Lingered] = {}
    for line in text.splitlines():
        record = _record(line)
        if record is None or not isinstance(record.get("file"), str):
            continue
        seconds = _seconds(record.get("ms"))
        if seconds is None:
            continue
        file = relative(record["file"], bases)
        if record.get("type") == "released":
            released[file] = Lingered(file, seconds, True, _holding(record.get("open")))
        elif record.get("type") == "exit":
            ended[file] = Lingered(file, seconds, False, _holding(record.get("open")))
    return tuple(
        released[file] if file in released else ended[file]
        for file in dict.fromkeys([*ended, *released])
        if file in released or ended[file].seconds >= LINGER_NOTED_S
    )
