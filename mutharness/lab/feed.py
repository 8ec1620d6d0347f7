"""The mutations a `verify -j` parent hands one worker: one JSON line each, in a file the
parent appends to and the worker follows (a file, so a signal or the parent's death can
end a worker that waits, on Windows as on POSIX)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

from mutharness.lab.schedule import Item

POLL_S = 0.01  # how often a waiting worker looks for its next mutation


class Feed:
    """One worker's feed: `give` and `end` in the parent, `items` in the worker."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _append(self, line: dict[str, object]) -> None:
        with self.path.open("a", encoding="utf-8", newline="\n") as feed:
            feed.write(json.dumps(line) + "\n")

    def give(self, item: Item) -> None:
        self._append({"spec": item.spec, "index": item.index})

    def end(self) -> None:
        """Nothing more will be given: the worker finishes what it has and exits."""
        self._append({"end": True})

    def items(self) -> Iterator[Item]:
        """Each mutation given, as it is given, until the parent ends the feed."""
        offset = 0
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
                line = json.loads(raw)
                if line.get("end"):
                    return
                yield Item(line["spec"], line["index"])
            if not complete:
                time.sleep(POLL_S)
