"""`mutharness verify` end to end: real git repositories, real pytest children, the real CLI (a
child where the test names what only a process shows, else in the test's process)."""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import Completed, Project, default_spec, git
from inproc import in_process

from mutharness.errors import ExitCode
from mutharness.options import TIMEOUT_CONSTANT, TIMEOUT_FACTOR, TIMEOUT_FLOOR

ProjectFactory = Callable[..., Project]
Cli = Callable[..., Completed]

LOW_BOUND = {
    "name": "the low bound is ignored",
    "file": "src/calc.py",
    "anchor": "    if value < low:\n        return low\n",
    "replacement": "",
}

TEST_MORE = '''\
from calc import clamp


def test_clamp_keeps_zero():
    assert clamp(0, -1, 1) == 0


def test_clamp_keeps_one():
    assert clamp(1, 0, 2) == 1


def test_clamp_keeps_minus_one():
    assert clamp(-1, -2, 0) == -1
'''


def utf8_env(**extra: str) -> dict[str, str]:
    """This environment, with UTF-8 output forced so the glyphs do not depend on the locale."""
    return {**os.environ, "PYTHONIOENCODING": "utf-8", **extra}


def mutation_lines(out: str) -> list[str]:
    """The verdict lines (not the arrows), in order."""
    return [line for line in out.splitlines() if re.match(r"^[ ✗] [A-Z]", line)]


def test_a_run_where_every_mutation_behaves_prints_each_event_and_exits_0(
    make_project: ProjectFactory, cli: Cli
) -> None:
    project = make_project()
    head = git(project.root, "rev-parse", "HEAD").strip()

    done = cli(project.root, "verify", "specs/calc.json", env=utf8_env())

    assert done.code == 0, done.out + done.err
    lines = done.out.splitlines()
    assert re.fullmatch(r"HEAD ([0-9a-f]{7,40}) +clean", lines[0]), lines[0]
    assert head.startswith(lines[0].split()[1])
    assert "baseline: tests/test_calc.py" in lines
    measured = next((found for line in lines if (found := re.fullmatch(
        r"baseline 4 pass / 0 fail \((\d+\.\d\d) s\); mutation timeout ([\d.]+) s", line))),
        None)
    assert measured is not None, lines
    baseline_s, timeout_s = map(float, measured.groups())  # the floor, or a slow baseline's
    expected = max(TIMEOUT_FLOOR.default,
                   TIMEOUT_FACTOR.default * baseline_s + TIMEOUT_CONSTANT.default)
    assert abs(timeout_s - expected) < 0.1, measured.group(0)
    caught = lines.index(next(line for line in lines if "the low bound is ignored" in line))
    assert lines[caught] == (  # the default: its run stopped at its first failing test
        "  CAUGHT   #1 src/calc.py:5  the low bound is ignored  "
        "(stopped at its first failing test)")
    assert lines[caught + 1].strip() == "↳ tests/test_calc.py::test_clamp_below"
    assert lines[caught + 2] == ("  SURVIVED #2 src/calc.py:13  SURVIVOR (documented): >= to > "
                                 "at 18 is not pinned  (all 4 tests passed)")
    assert lines[-3:] == [
        "results: .mutharness/results.json", "all 2 mutation(s) behaved as expected; tree clean",
        "logs: .mutharness/runs/calc/",
    ]
    assert "✗" not in done.out
    results = json.loads((project.root / ".mutharness/results.json").read_text("utf-8"))
    assert results["exit_code"] == 0
    assert [m["verdict"] for m in results["specs"][0]["mutations"]] == ["CAUGHT", "SURVIVED"]
    assert git(project.root, "status", "--porcelain") == ""


MANY_KILLERS = '''\
import pytest

from calc import clamp


@pytest.mark.parametrize("value", [-1, -2, -3, -4, -5, -6])
def test_below_is_clamped(value):
    assert clamp(value, 0, 10) == 0
'''


def test_a_survivor_s_long_name_is_cut_on_its_line_and_shown_whole_below_it(
    make_project: ProjectFactory
) -> None:
    reason = ("SURVIVOR (documented): >= to > at 18 is not pinned, because no test asks "
              "about a person who is exactly eighteen years old, which the spec records here")
    spec = default_spec()
    spec["mutations"][1]["name"] = reason
    project = make_project(spec=spec)

    done = in_process(project.root, "verify", "specs/calc.json")

    assert done.code == 0, done.out + done.err
    lines = done.out.splitlines()
    survived = lines.index(next(line for line in lines if "SURVIVED #2" in line))
    assert "...  (all 4 tests passed)" in lines[survived]  # cut on the verdict's line
    assert lines[survived + 1].strip() == f"↳ {reason}"  # and whole below it


def test_a_mutant_killed_by_more_tests_than_shown_says_how_many_more(
    make_project: ProjectFactory, cli: Cli
) -> None:
    project = make_project(spec=default_spec(
        tests=["tests/test_many.py"], expectBaselinePass=6,
        mutations=default_spec()["mutations"][:1],
    ))
    project.write("tests/test_many.py", MANY_KILLERS)
    project.commit("six tests that kill one mutant")

    done = cli(project.root, "verify", "specs/calc.json", "--no-first-failure", env=utf8_env())

    assert done.code == 0, done.out + done.err
    lines = done.out.splitlines()
    shown = [line for line in lines if line.strip().startswith("↳")]
    assert len(shown) == 5
    assert shown[-1].strip() == "↳ and 2 more (all in the results file)"


def test_unexpected_results_are_marked_listed_with_a_hint_and_exit_1(
    make_project: ProjectFactory
) -> None:
    spec = default_spec(
        tests=["tests/test_calc.py", "tests/test_more.py"],
        expectBaselinePass=7,
        mutations=[
            {"name": "eighteen is no longer pinned", "file": "src/calc.py",
             "anchor": "return age >= 18", "replacement": "return age >= 17"},
            {**LOW_BOUND, "name": "caught, but not by the test it names",
             "killedBy": ["tests/test_calc.py::test_clamp_above"]},
            {"name": "clamp returns nothing", "file": "src/calc.py",
             "anchor": "def clamp(value, low, high):\n",
             "replacement": "def clamp(value, low, high):\n    return None\n"},
        ],
    )
    project = make_project(spec=spec)
    project.write("tests/test_more.py", TEST_MORE)
    project.commit("more tests")

    # full counts: every killing test is listed
    done = in_process(project.root, "verify", "specs/calc.json", "--no-first-failure",
                      env=utf8_env())

    assert done.code == 1, done.out + done.err
    lines = done.out.splitlines()
    verdicts = mutation_lines(done.out)
    assert verdicts[0] == (
        "✗ SURVIVED #1 src/calc.py:13  eighteen is no longer pinned  (all 7 tests passed)")
    assert verdicts[1] == ("✗ CAUGHT   #2 src/calc.py:5  caught, but not by the test it names  "
                           "(1 of 7 tests failed)")
    assert verdicts[2] == (
        "  CAUGHT   #3 src/calc.py:4  clamp returns nothing  (6 of 7 tests failed)")
    start = lines.index(verdicts[2])
    arrows = [line.strip() for line in lines[start + 1:] if line.strip().startswith("↳")]
    assert arrows == [
        "↳ tests/test_calc.py::test_clamp_below",
        "↳ tests/test_calc.py::test_clamp_above",
        "↳ tests/test_calc.py::test_clamp_inside",
        "↳ tests/test_more.py::test_clamp_keeps_zero",
        "↳ and 2 more (all in the results file)",
    ]
    assert "2 of 3 mutation(s) did NOT behave as expected:" in lines
    assert "  eighteen is no longer pinned: expected CAUGHT, got SURVIVED" in lines
    assert (
        "  caught, but not by the test it names: expected CAUGHT, got CAUGHT "
        "but not by tests/test_calc.py::test_clamp_above"
    ) in lines
    assert any(line.startswith("hint: a survivor means no test failed with the defect in")
               for line in lines)
    assert "behaved as expected; tree clean" not in done.out


def _reader(stream: Any, lines: queue.Queue[str | None]) -> None:
    for line in stream:
        lines.put(line.rstrip("\n"))
    lines.put(None)


def test_each_line_reaches_a_pipe_while_the_run_is_still_going(
    make_project: ProjectFactory, tmp_path: Path
) -> None:
    waiting, release = tmp_path / "waiting", tmp_path / "release"
    blocking = (
        "def is_adult(age):\n"
        "    import os, time\n"
        "    open(os.environ['MH_WAITING'], 'w').close()\n"
        "    deadline = time.monotonic() + 60\n"
        "    while not os.path.exists(os.environ['MH_RELEASE']) and time.monotonic() < deadline:\n"
        "        time.sleep(0.02)\n"
        "    return age >= 18\n"
    )
    spec = default_spec(mutations=[
        LOW_BOUND,
        {"name": "SURVIVOR: is_adult waits for the test to release it", "file": "src/calc.py",
         "anchor": "def is_adult(age):\n    return age >= 18\n", "replacement": blocking,
         "expectCaught": False},
    ])
    project = make_project(spec=spec)
    env = utf8_env(MH_WAITING=str(waiting), MH_RELEASE=str(release))
    env.pop("PYTHONUNBUFFERED", None)  # the flushing must be the tool's own
    proc = subprocess.Popen(
        [sys.executable, "-m", "mutharness", "verify", "specs/calc.json"],
        cwd=project.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        text=True, encoding="utf-8",
    )
    lines: queue.Queue[str | None] = queue.Queue()
    assert proc.stdout is not None
    threading.Thread(target=_reader, args=(proc.stdout, lines), daemon=True).start()
    try:
        deadline = time.monotonic() + 60
        while not waiting.exists():  # the second mutation is running and blocked on us
            assert proc.poll() is None and time.monotonic() < deadline, "never reached mutation 2"
            time.sleep(0.02)
        seen: list[str] = []
        while not any("the low bound is ignored" in line for line in seen):
            try:  # printed before mutation 2 began: must be readable now
                line = lines.get(timeout=5)
            except queue.Empty:
                pytest.fail(f"the first mutation's line was not flushed; read so far: {seen}")
            assert line is not None, seen
            seen.append(line)
        assert proc.poll() is None
        assert not release.exists()
        assert any(line.startswith("baseline 4 pass / 0 fail") for line in seen)
        assert mutation_lines("\n".join(seen))[0].startswith("  CAUGHT   #1 ")
    finally:
        release.touch()
        code = proc.wait(timeout=60)
    rest: list[str] = []
    while (line := lines.get(timeout=10)) is not None:
        rest.append(line)
    assert code == 0, rest
    assert rest[-2:] == ["all 2 mutation(s) behaved as expected; tree clean",
                         "logs: .mutharness/runs/calc/"]


def test_untrustworthy_and_timed_out_runs_are_never_evidence_and_the_run_goes_on(
    make_project: ProjectFactory, tmp_path: Path
) -> None:
    spec = default_spec(mutations=[
        {"name": "is_adult loses its colon (import breaks)", "file": "src/calc.py",
         "anchor": "def is_adult(age):", "replacement": "def is_adult(age)"},
        {"name": "is_adult ends the process with status 0", "file": "src/calc.py",
         "anchor": "    return age >= 18\n", "replacement": "    import os; os._exit(0)\n"},
        {"name": "is_adult ends the process with status 1", "file": "src/calc.py",
         "anchor": "    return age >= 18\n", "replacement": "    import os; os._exit(1)\n"},
        {"name": "clamp loops forever", "file": "src/calc.py",
         "anchor": "    if value > high:\n",
         "replacement": "    while True:\n        pass\n    if value > high:\n"},
        LOW_BOUND,
        {"name": "eighteen is no longer pinned", "file": "src/calc.py",
         "anchor": "return age >= 18", "replacement": "return age >= 17"},
    ])
    project = make_project(spec=spec)
    out = tmp_path / "results.json"

    done = in_process(
        project.root, "verify", "specs/calc.json", "--json", str(out),
        "--timeout-floor", "3", "--timeout-factor", "1", "--timeout-constant", "2",
        env=utf8_env(),
    )

    assert done.code == 4, done.out + done.err
    verdicts = mutation_lines(done.out)
    assert len(verdicts) == 6, done.out
    assert re.match(r"✗ UNTRUSTWORTHY #1 src/calc.py:12  is_adult loses its colon .*collection "
                    r"error", verdicts[0])
    assert re.match(r"✗ UNTRUSTWORTHY #2 src/calc.py:13  is_adult ends the process with status "
                    r"0 .*missing", verdicts[1])
    assert re.match(r"✗ UNTRUSTWORTHY #3 src/calc.py:13  is_adult ends the process with status "
                    r"1 .*missing", verdicts[2])
    assert re.match(r"✗ TIMEOUT  #4 src/calc.py:7  clamp loops forever  \(exceeded \d", verdicts[3])
    assert verdicts[4] == ("  CAUGHT   #5 src/calc.py:5  the low bound is ignored  "
                           "(stopped at its first failing test)")
    assert re.match(r"✗ SURVIVED #6 src/calc.py:13  eighteen is no longer pinned", verdicts[5])
    lines = done.out.splitlines()
    logs = [lines[lines.index(verdict) + 1].strip() for verdict in verdicts[:4]]
    assert logs == [f"↳ log: .mutharness/runs/calc/mutant-{n}.log" for n in (1, 2, 3, 4)]
    summary = done.out.splitlines()[done.out.splitlines().index("no trustworthy verdict:"):]
    assert [line.split(":")[0] for line in summary[1:5]] == [
        "  is_adult loses its colon (import breaks)", "  is_adult ends the process with status 0",
        "  is_adult ends the process with status 1", "  clamp loops forever",
    ]
    assert summary[5:7] == [
        "also, 1 of 6 mutation(s) did NOT behave as expected:",
        "  eighteen is no longer pinned: expected CAUGHT, got SURVIVED",
    ]
    assert summary[7].startswith("hint: a survivor means")
    results = json.loads(out.read_text("utf-8"))
    spec_result = results["specs"][0]
    mutations = spec_result["mutations"]
    assert [m["verdict"] for m in mutations] == [
        "UNTRUSTWORTHY", "UNTRUSTWORTHY", "UNTRUSTWORTHY", "TIMEOUT", "CAUGHT", "SURVIVED"
    ]
    assert mutations[0]["facts"]["collection_errors"] == ["tests/test_calc.py"]
    assert "SyntaxError" in mutations[0]["facts"]["log_tail"]
    assert "log_tail" not in mutations[4]["facts"]
    assert [m["facts"]["report"] for m in mutations[1:3]] == ["missing", "missing"]
    assert [m["facts"]["exit_status"] for m in mutations[1:3]] == [0, 1]
    loop = mutations[3]["facts"]
    assert loop["timed_out"] is True
    assert loop["timeout_s"] == spec_result["timeout_s"]
    expected_limit = max(3.0, 1 * spec_result["baseline"]["duration_s"] + 2)
    assert abs(loop["timeout_s"] - expected_limit) <= 0.06
    assert loop["duration_s"] >= loop["timeout_s"]
    assert results["settings"]["values"]["timeout-floor"] == 3.0


def test_fail_fast_stops_at_the_first_unexpected_result(
    make_project: ProjectFactory
) -> None:
    spec = default_spec(mutations=[
        {"name": "eighteen is no longer pinned", "file": "src/calc.py",
         "anchor": "return age >= 18", "replacement": "return age >= 17"},
        LOW_BOUND,
    ])
    project = make_project(spec=spec)

    done = in_process(project.root, "verify", "specs/calc.json", "--fail-fast", env=utf8_env())

    assert done.code == 1, done.out + done.err
    assert [line.split()[1] for line in mutation_lines(done.out)] == ["SURVIVED"]
    assert "the low bound is ignored" not in done.out
    assert "1 of 1 mutation(s) did NOT behave as expected:" in done.out


def test_anchor_problems_in_two_specs_are_all_refused_before_any_baseline(
    make_project: ProjectFactory
) -> None:
    project = make_project(spec=default_spec(mutations=[
        {"name": "an anchor that drifted", "file": "src/calc.py",
         "anchor": "    if value <= low:\n", "replacement": ""},
        {**LOW_BOUND},
    ]))
    project.spec("other", default_spec(mutations=[
        {"name": "an anchor that is ambiguous", "file": "src/calc.py",
         "anchor": "    if value ", "replacement": "    if not value "},
    ]))
    project.commit("two specs")

    done = in_process(project.root, "verify", "specs/calc.json", "specs/other.json",
                      env=utf8_env())

    assert done.code == 2, done.out + done.err
    assert "baseline" not in done.out
    assert done.out == ""
    err = done.err
    assert "2 problem(s)" in err
    zero = next(line for line in err.splitlines() if "specs/calc.json" in line)
    assert "#/mutations/0/anchor" in zero
    assert "an anchor that drifted" in zero and "src/calc.py" in zero and "0 hits" in zero
    assert "nearest line 5" in zero
    two = next(line for line in err.splitlines() if "specs/other.json" in line)
    assert "#/mutations/0/anchor" in two
    assert "an anchor that is ambiguous" in two and "src/calc.py" in two
    assert "matched 2 times" in two and "at lines 5, 7" in two
    assert not (project.root / ".mutharness").exists()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("args", [("check", "specs"), ("evidence-check",)],
                         ids=["check", "evidence-check"])
def test_a_command_whose_standard_output_is_full_exits_5_and_says_nothing_more(
    make_project: Callable[..., Project], args: tuple[str, ...],
) -> None:
    project = make_project()
    (project.root / "evidence").mkdir()
    with open("/dev/full", "w", encoding="utf-8") as full:
        done = subprocess.run([sys.executable, "-m", "mutharness", *args], cwd=project.root,
                              stdout=full, stderr=subprocess.PIPE, text=True, check=False)

    assert done.returncode == ExitCode.ENVIRONMENT, done.stderr
    assert done.stderr == ""
