"""Benchmark: harness wall time for a 10-mutation spec against 11 bare pytest runs, side by side.

Run: python benchmarks/bench_verify.py [--rounds N]
Prints medians of N rounds, measured in this one run, and their ratio, plus the harness's fixed
cost (wall time not spent inside the baseline's and the mutants' pytest children: start-up,
workspace, lock, checks, the collect-only probe, settling the workspace after every run, results).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODULE = '''\
"""Fixture module for the benchmark."""


def clamp(value, low, high):
    if value < low:
        return low
    if value > high:
        return high
    return value


def sign(value):
    if value > 0:
        return 1
    if value < 0:
        return -1
    return 0


def grade(score):
    if score >= 90:
        return "A"
    if score >= 75:
        return "B"
    return "C"
'''

TESTS = '''\
import pytest

from bench import clamp, grade, sign


@pytest.mark.parametrize("value, expected", [(-5, 0), (50, 10), (5, 5), (0, 0), (10, 10)])
def test_clamp(value, expected):
    assert clamp(value, 0, 10) == expected


@pytest.mark.parametrize("value, expected", [(3, 1), (-3, -1), (0, 0)])
def test_sign(value, expected):
    assert sign(value) == expected


@pytest.mark.parametrize("score, expected", [(95, "A"), (90, "A"), (80, "B"), (75, "B"), (10, "C")])
def test_grade(score, expected):
    assert grade(score) == expected
'''

MUTATIONS = [
    ("    if value < low:\n", "    if value <= low:\n", False),
    ("        return low\n", "        return high\n", True),
    ("    if value > high:\n", "    if value < high:\n", True),
    ("        return high\n    return value\n", "        return low\n    return value\n", True),
    ("    if value > 0:\n", "    if value > 5:\n", True),
    ("        return -1\n", "        return 1\n", True),
    ("    return 0\n", "    return None\n", True),
    ("score >= 90", "score > 90", True),
    ("score >= 75", "score > 75", True),
    ('    return "C"\n', '    return "B"\n', True),
]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def make_repo(root: Path) -> Path:
    """A committed fixture project with a 10-mutation spec."""
    (root / "src").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "specs").mkdir()
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["src"]\n')
    (root / "src" / "bench.py").write_text(MODULE)
    (root / "tests" / "test_bench.py").write_text(TESTS)
    spec = {
        "tests": ["tests/test_bench.py"],
        "expectBaselinePass": 13,
        "mutations": [
            {"name": f"mutation {index}", "file": "src/bench.py", "anchor": anchor,
             "replacement": replacement, "expectCaught": caught}
            for index, (anchor, replacement, caught) in enumerate(MUTATIONS)
        ],
    }
    (root / "specs" / "bench.json").write_text(json.dumps(spec, indent=2))
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=bench", "-c", "user.email=bench@example.invalid",
         "commit", "-q", "-m", "bench")
    return root


def time_harness(repo: Path, results: Path) -> tuple[float, float]:
    """Wall time of one verify, and the part of it spent inside pytest children."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "mutharness", "verify", "specs/bench.json", "--json", str(results)],
        cwd=repo, capture_output=True, text=True,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"verify failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    document = json.loads(results.read_text())
    spec = document["specs"][0]
    inside = spec["baseline"]["duration_s"] + sum(
        mutation["facts"]["duration_s"] for mutation in spec["mutations"]
    )
    return wall, inside


def time_bare(repo: Path, runs: int) -> float:
    """Wall time of `runs` bare `python -m pytest` runs of the same tests."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    started = time.perf_counter()
    for _ in range(runs):
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_bench.py"],
            cwd=repo, check=True, capture_output=True, env=env,
        )
    return time.perf_counter() - started


def main() -> None:
    """Measure and print the side-by-side table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory(prefix="mh-bench-") as temp:
        repo = make_repo(Path(temp) / "repo")
        harness: list[float] = []
        inside: list[float] = []
        bare: list[float] = []
        for index in range(rounds):  # interleaved, so drift in machine load hits both alike
            wall, child = time_harness(repo, Path(temp) / f"results-{index}.json")
            harness.append(wall)
            inside.append(child)
            bare.append(time_bare(repo, len(MUTATIONS) + 1))
    harness_s = statistics.median(harness)
    bare_s = statistics.median(bare)
    fixed_s = statistics.median(w - c for w, c in zip(harness, inside, strict=True))
    print(f"rounds: {rounds} (medians), {len(MUTATIONS)} mutations, 13 tests")
    print(f"harness verify wall:           {harness_s:7.2f} s")
    print(f"11 bare python -m pytest runs: {bare_s:7.2f} s")
    print(f"ratio harness / bare:          {harness_s / bare_s:7.2f}")
    print(f"fixed cost outside pytest:     {fixed_s:7.2f} s "
          "(start-up, workspace, lock, checks, the collect-only and interpreter probes, "
          "settling after every run, results)")


if __name__ == "__main__":
    main()
