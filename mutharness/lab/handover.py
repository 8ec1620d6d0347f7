"""A `-j` worker joining a spec another worker holds: that worker's baseline, waited for in its
results file (each rewrite a whole new file), taken on no trust: the runner proves it in this
workspace (`Runner.adopt`) or this workspace measures its own."""

from __future__ import annotations

import signal
import time
from dataclasses import dataclass
from pathlib import Path

from mutharness.errors import Interrupted, ResultsError
from mutharness.model.results import SpecResult, read_results
from mutharness.model.spec import Spec
from mutharness.sweep import pid_alive

POLL_S = 0.01  # how often the sibling's results file is looked at while its baseline runs
LIVENESS_S = 1.0  # how often a waiting worker looks whether its parent is alive


@dataclass(frozen=True)
class Sibling:
    """The worker that holds a spec too: its results file, and the parent both belong to."""

    results: Path
    parent: int | None = None

    def baseline(self, spec: Spec, commit: str, patience_s: float) -> SpecResult | None:
        """Its part of `spec` once that holds a measured baseline of the same spec bytes at
        `commit`; None when it will not (its baseline refused, its run ended or stopped
        without one, another commit or spec) or has not within `patience_s` (a file that
        never becomes a results file). Raises Interrupted (SIGTERM) when the parent is gone,
        as a waiting feed does."""
        checked = time.monotonic() - LIVENESS_S
        deadline = time.monotonic() + patience_s
        stamp: tuple[int, int, int] | None = None
        while time.monotonic() < deadline:
            try:
                stat = self.results.stat()
                now = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
                if now != stamp:
                    stamp = now
                    run = read_results(self.results)
                    if run.commit != commit:
                        return None
                    part = next((p for p in run.specs if p.spec.id == spec.id), None)
                    if part is not None:
                        usable = (part.baseline is not None and not part.refused
                                  and part.pin is not None and part.spec.digest == spec.digest)
                        return part if usable else None
                    if run.complete or run.error is not None or run.interrupted is not None:
                        return None
            except (OSError, ResultsError):
                pass  # not written yet, or being replaced: look again
            if self.parent is not None and time.monotonic() - checked >= LIVENESS_S:
                checked = time.monotonic()
                if not pid_alive(self.parent):
                    raise Interrupted(signal.SIGTERM)
            time.sleep(POLL_S)
        return None
