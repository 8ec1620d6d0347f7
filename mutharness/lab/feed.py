"""The mutations a `verify -j` parent hands one worker: one JSON line each, in a file the
parent appends to and the worker follows (the first of a spec another worker holds names that
worker's results file, where its baseline is read); a worker that waits checks its parent is
alive (everywhere: the kernel's SIGTERM on the parent's death is Linux's alone)."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from mutharness.errors import FeedError, Interrupted
from mutharness.lab.schedule import Item
from mutharness.sweep import pid_alive

POLL_S = 0.005  # how often a waiting worker looks for its next mutation
LIVENESS_S = 1.0  # how often a waiting worker looks whether its parent is alive


@dataclass(frozen=True)
class Handed:
    """One mutation handed over; `measured_by`: the results file of a worker that holds its
    spec too (its baseline, once measured, may be this worker's: `lab.handover`)."""

    item: Item
    measured_by: Path | None = None


@dataclass(frozen=True)
class Feed:
    """One worker's feed: `give` and `end` in the parent, `items` in the worker, whose
    `parent` (its pid) is watched while it waits."""

    path: Path
    parent: int | None = None

    def _append(self, line: dict[str, object]) -> None:
        with self.path.open("a", encoding="utf-8", newline="\n") as feed:
            feed.write(json.dumps(line) + "\n")

    def give(self, item: Item, measured_by: Path | None = None) -> None:
        line: dict[str, object] = {"spec": item.spec, "index": item.index}
        if measured_by is not None:
            line["measured_by"] = str(measured_by)
        self._append(line)

    def end(self) -> None:
        """Nothing more will be given: the worker finishes what it has and exits."""
        self._append({"end": True})

    def items(self) -> Iterator[Handed]:
        """Each mutation given, as it is given, until the parent ends the feed; raises
        Interrupted (SIGTERM) when the parent is gone, as Linux's kernel would signal it."""
        offset = 0
        checked = time.monotonic() - LIVENESS_S  # the first wait looks at once
        while True:
            try:
                with self.path.open("rb") as feed:
                    feed.seek(offset)
                    chunk = feed.read()
            except FileNotFoundError:
                chunk = b""
            complete = chunk[:chunk.rfind(b"\n") + 1]  # a line still being written waits
            offset += len(complete)
            for raw in complete.splitlines():
                item = _item(raw)
                if item is None:
                    return
                yield item
            if complete:
                continue
            if self.parent is not None and time.monotonic() - checked >= LIVENESS_S:
                checked = time.monotonic()
                if not pid_alive(self.parent):
                    raise Interrupted(signal.SIGTERM)
            time.sleep(POLL_S)


def _item(raw: bytes) -> Handed | None:
    """The mutation a line gives, or None for the end."""
    text = raw.decode("utf-8", errors="replace")
    try:
        line = json.loads(text)
        if line.get("end") is True:
            return None
        spec, index, measured_by = line["spec"], line["index"], line.get("measured_by")
    except (ValueError, AttributeError, KeyError) as error:
        raise FeedError(text, f"not a mutation ({error})") from None
    if not isinstance(spec, str) or not isinstance(index, int) or isinstance(index, bool):
        raise FeedError(text, "not a mutation (a spec id and an index)")
    if measured_by is not None and not (isinstance(measured_by, str) and measured_by):
        raise FeedError(text, "not a mutation (measured_by is not a file name)")
    return Handed(Item(spec, index), Path(measured_by) if measured_by else None)
