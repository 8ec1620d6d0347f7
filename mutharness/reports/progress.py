"""A run's progress as a terminal's status line: mutations done of planned, the outcomes so
far, elapsed time, an ETA weighted by the specs' baseline durations, the mutation running (or
the baseline run, and for how long)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from statistics import mean

from mutharness.model.results import MutationResult
from mutharness.model.spec import Mutation, Spec
from mutharness.model.verdict import Verdict
from mutharness.reports.outcome import Outcome


def clock(seconds: float) -> str:
    """`1:05`, `1:02:05`."""
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


@dataclass
class Progress:
    """What the status line says, kept as the run's events arrive (times in seconds)."""

    started: float
    planned: dict[str, int] = field(default_factory=dict)  # spec id -> mutations to make
    baselines: dict[str, float] = field(default_factory=dict)  # spec id -> its baseline's s
    done: dict[str, int] = field(default_factory=dict)  # spec id -> mutations finished
    counts: dict[str, int] = field(default_factory=dict)  # outcome word -> mutations
    running: str = ""  # the mutation now running, as it is named
    measuring: str = ""  # the baseline run now running, as it is named
    measuring_since: float = 0.0  # when it started
    measured_at: float | None = None  # when the first baseline was measured

    def plan(self, planned: Mapping[str, int]) -> None:
        self.planned = dict(planned)

    def baseline_started(self, spec: Spec, now: float) -> None:
        """Spec `spec`'s baseline is being measured (which run, if known, comes next)."""
        self.measuring, self.measuring_since = f"baseline {spec.id}", now

    def baseline_run(self, spec: Spec, number: int, runs: int, now: float) -> None:
        """Run `number` of `runs` of `spec`'s baseline starts."""
        self.measuring, self.measuring_since = f"baseline {spec.id} (run {number} of {runs})", now

    def baseline(self, spec: Spec, seconds: float, now: float) -> None:
        self.measuring = ""
        self.baselines[spec.id] = seconds
        if self.measured_at is None:
            self.measured_at = now

    def start(self, spec: Spec, mutation: Mutation) -> None:
        self.running = f"{spec.id} #{mutation.number} {mutation.name}"

    def finish(self, spec: Spec, result: MutationResult) -> None:
        self.done[spec.id] = self.done.get(spec.id, 0) + 1
        outcome = Outcome.of(result)
        word = ("unexpected" if outcome is Outcome.UNEXPECTED
                else "no verdict" if outcome is Outcome.NO_VERDICT
                else "caught" if result.verdict is Verdict.CAUGHT else "survived")
        self.counts[word] = self.counts.get(word, 0) + 1
        self.running = ""

    def _each(self, spec_id: str) -> float | None:
        """A mutation's estimated time in spec `spec_id`: its baseline's (or the mean)."""
        if spec_id in self.baselines:
            return self.baselines[spec_id]
        return mean(self.baselines.values()) if self.baselines else None

    def eta(self, now: float) -> float | None:
        """Seconds left: the baseline-weighted work left, at the pace of the work done."""
        if self.measured_at is None:
            return None
        done = left = 0.0
        for spec_id, planned in self.planned.items():
            each = self._each(spec_id)
            if each is None:
                return None
            finished = self.done.get(spec_id, 0)
            done += finished * each
            left += max(planned - finished, 0) * each
        if done <= 0:
            return None
        return left * (now - self.measured_at) / done

    def line(self, now: float, width: int) -> str:
        """The status line, cut to `width` characters."""
        total = sum(self.planned.values())
        finished = sum(self.done.values())
        counts = " · ".join(f"{self.counts[word]} {word}" for word in
                            ("caught", "survived", "unexpected", "no verdict")
                            if self.counts.get(word))
        eta = self.eta(now)
        parts = [f"[{finished}/{total}]", *([counts] if counts else []),
                 f"{clock(now - self.started)} elapsed",
                 f"ETA {clock(eta)}" if eta is not None else "ETA --",
                 *([f"running {self.running}"] if self.running else []),
                 *([f"{self.measuring} {clock(now - self.measuring_since)}"]
                   if self.measuring else [])]
        text = " · ".join(parts)
        return text if len(text) <= width else text[:max(width - 1, 0)] + "…"
