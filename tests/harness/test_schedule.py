"""`verify -j`: which mutation an idle worker runs next (longest first, by baseline timings)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from mutharness.lab.schedule import Item, Schedule, Timings, previous_timings
from mutharness.model.results import read_results


def test_the_spec_with_the_most_estimated_work_is_started_first() -> None:
    # b's one mutation is timed at 10 s; a's two and c's three are estimated at that too
    schedule = Schedule({"a": (0, 1), "b": (0,), "c": (0, 1, 2)}, {"b": Timings(10.0)}, 2)

    assert schedule.next_for(0) == Item("c", 0)  # 30 s left
    assert schedule.next_for(1) == Item("a", 0)  # 20 s left, b only 10 s


def test_a_long_spec_with_few_mutations_goes_before_a_short_one_with_many() -> None:
    schedule = Schedule({"many": tuple(range(6)), "slow": (0, 1)},
                        {"many": Timings(0.5), "slow": Timings(12.0, {0: 12.5})}, 2)

    assert schedule.next_for(0) == Item("slow", 0)
    assert schedule.next_for(1) == Item("many", 0)


def test_without_timings_the_spec_with_the_most_mutations_goes_first_then_the_plan_order() -> None:
    schedule = Schedule({"a": (0,), "b": (0, 1), "c": (0, 1)}, {}, 3)

    assert [schedule.next_for(w) for w in range(3)] == [Item("b", 0), Item("c", 0), Item("a", 0)]


def test_a_worker_stays_with_its_spec_while_the_spec_has_mutations_left() -> None:
    schedule = Schedule({"a": (0, 1, 2), "b": tuple(range(5))}, {}, 2)
    first = schedule.next_for(0)
    assert first == Item("b", 0)
    schedule.done(0, first)

    assert schedule.next_for(0) == Item("b", 1)


def test_an_idle_worker_joins_a_spec_when_it_would_finish_a_mutation_sooner() -> None:
    schedule = Schedule({"only": (0, 1)}, {}, 2)

    assert schedule.next_for(0) == Item("only", 0)
    # worker 0 measures the baseline, then runs #1: worker 1 has #2 done a run sooner
    assert schedule.next_for(1) == Item("only", 1)


@pytest.mark.parametrize(("baseline", "joins"), [(18.0, False), (5.0, True)])
def test_an_idle_worker_joins_only_when_its_own_baseline_does_not_cost_more_than_waiting(
    baseline: float, joins: bool
) -> None:
    schedule = Schedule({"node": (0, 1, 2)}, {"node": Timings(baseline, {0: 12, 1: 12, 2: 12})},
                        2)
    first = schedule.next_for(0)
    assert first is not None
    schedule.done(0, first)
    assert schedule.next_for(0) == Item("node", 1)

    # #3 waits 12 s behind #2 in worker 0, then takes 12 s: 24 s, against baseline + 12 s
    assert schedule.next_for(1) == (Item("node", 2) if joins else None)


def test_a_spec_a_worker_found_without_verdicts_is_handed_out_no_more() -> None:
    schedule = Schedule({"a": (0, 1, 2), "b": (0,)}, {}, 2)
    assert schedule.next_for(0) == Item("a", 0)
    schedule.fail("a", 0)

    assert schedule.outstanding[0] == []
    assert schedule.next_for(0) == Item("b", 0)
    assert schedule.next_for(1) is None


def test_timings_measured_in_the_run_replace_the_estimates() -> None:
    schedule = Schedule({"a": (0, 1, 2, 3), "b": (0, 1), "c": (0, 1, 2)}, {}, 3)
    assert schedule.next_for(0) == Item("a", 0)
    schedule.learn("a", Timings(0.1, {0: 0.1}))
    schedule.learn("b", Timings(9.0))

    # b: 18 s left; c (not timed yet) is estimated at the mean baseline: 3 x 4.55 s
    assert schedule.next_for(1) == Item("b", 0)


def test_the_previous_results_give_timings_only_for_specs_with_the_same_bytes(
    tmp_path: Path
) -> None:
    # two real runs' results, as this repository's evidence records them, timed by hand
    document = {**_recorded("wire-encoding"), "specs": [
        *_recorded("wire-encoding")["specs"], *_recorded("tool-availability")["specs"]]}
    for number, part in enumerate(document["specs"], 1):
        part["baseline"]["duration_s"] = 10.0 * number
        for mutation in part["mutations"]:
            mutation["facts"]["duration_s"] = number + mutation["index"] / 10
    results = tmp_path / "results.json"
    results.write_text(json.dumps(document), "utf-8")
    wire, tools = (part.spec for part in read_results(results).specs)

    timings = previous_timings(results, [wire, replace(tools, digest="0" * 64)])

    assert list(timings) == ["wire-encoding"]
    assert timings["wire-encoding"].baseline_s == 10.0
    assert timings["wire-encoding"].mutations_s == {
        index: 1 + index / 10 for index in range(len(document["specs"][0]["mutations"]))}
    assert list(previous_timings(results, [wire, tools])) == ["wire-encoding", "tool-availability"]
    assert previous_timings(tmp_path / "absent.json", [wire]) == {}
    (tmp_path / "torn.json").write_text(json.dumps({"schema": 1})[:5], "utf-8")
    assert previous_timings(tmp_path / "torn.json", [wire]) == {}


def _recorded(spec_id: str) -> dict[str, Any]:
    """The results of a real run of the bundled spec `spec_id`: its committed evidence facts."""
    path = Path(__file__).resolve().parents[2] / "evidence" / f"{spec_id}.json"
    document: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return document


def test_a_feed_hands_over_whole_lines_only_and_ends(tmp_path: Path) -> None:
    from mutharness.lab.feed import Feed

    feed = Feed(tmp_path / "feed.jsonl")
    feed.give(Item("a", 2))
    with (tmp_path / "feed.jsonl").open("a", encoding="utf-8") as half:
        half.write('{"spec": "b", "ind')  # the parent's next line, half written
    items = feed.items()
    assert next(items).item == Item("a", 2)
    with (tmp_path / "feed.jsonl").open("a", encoding="utf-8") as rest:
        rest.write('ex": 0}\n')
    feed.end()

    assert [handed.item for handed in items] == [Item("b", 0)]


def test_a_feed_line_that_is_not_a_mutation_is_an_error_naming_it(tmp_path: Path) -> None:
    from mutharness.errors import FeedError
    from mutharness.lab.feed import Feed

    (tmp_path / "feed.jsonl").write_text('{"spec": "a", "index": "2"}\n', "utf-8")

    with pytest.raises(FeedError, match="the parent handed this worker"):
        next(Feed(tmp_path / "feed.jsonl").items())


def test_a_worker_waiting_on_its_feed_stops_as_if_terminated_when_its_parent_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mutharness.errors import Interrupted
    from mutharness.lab import feed

    def slept(seconds: float) -> None:
        raise AssertionError("the worker waited before it looked at its parent")

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # exited and reaped
    waiting = feed.Feed(tmp_path / "feed.jsonl", parent=int(gone.stdout))
    # the feed's own clock: it looks first, then every LIVENESS_S (the process's time is kept)
    monkeypatch.setattr(feed, "time", SimpleNamespace(monotonic=time.monotonic, sleep=slept))

    with pytest.raises(Interrupted) as stopped:
        next(waiting.items())

    assert stopped.value.signal_number == signal.SIGTERM
