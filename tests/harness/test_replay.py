"""The replay runner hands back a real run's facts, and only over the bytes they came from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import copy_recording, git
from inproc import in_process
from replay import Recording, replaying

from mutharness.model.results import from_json, to_json


def _mutations(root: Path) -> list[Any]:
    """The mutations of the run's results, without what two real runs differ in (durations
    and the timeouts made from them)."""
    document = json.loads((root / ".mutharness" / "results.json").read_text("utf-8"))
    return list(to_json(from_json(document), timings=False)["specs"][0]["mutations"])


def test_a_replayed_verify_prints_and_writes_what_the_real_run_did(
    calc_runs: tuple[Path, Recording], tmp_path: Path, git_home: Path
) -> None:
    recorded, runs = calc_runs
    assert sorted(runs.takes) == [("calc", "baseline-1"), ("calc", "baseline-2"),
                                  ("calc", "mutant-1"), ("calc", "mutant-2")]
    real, again = tmp_path / "real", tmp_path / "again"
    for copy in (real, again):
        copy.mkdir()
        copy_recording(recorded, copy)

    done = in_process(real / "repo", "verify", "specs/calc.json")  # real runs again
    with replaying(runs):
        replayed = in_process(again / "repo", "verify", "specs/calc.json")

    assert replayed.code == done.code == 0, replayed.out + replayed.err
    baseline = [line for line in done.out.splitlines() if line.startswith("baseline ")]
    assert baseline and all(" pass / 0 fail (" in line for line in baseline)
    strip = [line for line in done.out.splitlines() if not line.startswith(("HEAD", "baseline "))]
    assert [line for line in replayed.out.splitlines()
            if not line.startswith(("HEAD", "baseline "))] == strip  # durations differ
    assert _mutations(again / "repo") == _mutations(real / "repo")
    logs = again / "repo" / ".mutharness" / "runs" / "calc"
    assert "1 failed in " in (logs / "mutant-1.log").read_text("utf-8")


def test_a_replay_over_other_bytes_than_the_recorded_runs_fails_the_test(
    calc_runs: tuple[Path, Recording], tmp_path: Path, git_home: Path
) -> None:
    recorded, runs = calc_runs
    copy_recording(recorded, tmp_path)
    test = tmp_path / "repo" / "tests" / "test_calc.py"
    test.write_text(test.read_text("utf-8") + "\n# edited\n", "utf-8")
    git(tmp_path / "repo", "commit", "-qam", "a test edited")

    with replaying(runs):
        done = in_process(tmp_path / "repo", "verify", "specs/calc.json")

    assert done.code == 70, done.out + done.err  # an exception nothing expected: a bug
    assert "the workspace of calc/baseline-1 is not the recorded run's: " \
        "('tests/test_calc.py',)" in done.err


def test_a_replay_of_a_scenario_never_recorded_fails_the_test(
    calc_runs: tuple[Path, Recording], tmp_path: Path, git_home: Path
) -> None:
    recorded, runs = calc_runs
    copy_recording(recorded, tmp_path)

    with replaying(runs):
        done = in_process(tmp_path / "repo", "verify", "specs/calc.json", "--baseline-runs", "3")

    assert done.code == 70, done.out + done.err
    assert "no recorded run of calc/baseline-3" in done.err


def test_a_replay_of_a_run_asked_for_otherwise_fails_the_test(
    calc_runs: tuple[Path, Recording], tmp_path: Path, git_home: Path
) -> None:
    recorded, runs = calc_runs
    copy_recording(recorded, tmp_path)

    with replaying(runs):
        done = in_process(tmp_path / "repo", "verify", "specs/calc.json", "--timeout-floor", "99")

    assert done.code == 70, done.out + done.err
    assert "the run of calc/mutant-1 asks for " in done.err  # its limit is another one
