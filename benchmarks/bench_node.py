"""Benchmark: the node runner, one test file at a time against `--node-concurrency`, side by side.

Run: python benchmarks/bench_node.py [--rounds N] [--node PATH] [--files K]
Builds a project of K test files (each a few CPU-bound tests and one that awaits a timer) and a
spec of 6 mutations, then prints medians of N rounds, measured in this one run: 7 plain
`node --test` runs one file at a time (naive: the baseline and the six mutants by hand), the
same at 2 files at once, and `mutharness verify` at -j1 with --node-concurrency 1 and 2 and at
-j2 with 1, each as a ratio to naive; and whether every verdict matched.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LIB = """\
exports.fib = (n) => (n < 2 ? n : exports.fib(n - 1) + exports.fib(n - 2));
exports.clamp = (v, lo, hi) => (v < lo ? lo : v > hi ? hi : v);
exports.sign = (v) => (v > 0 ? 1 : v < 0 ? -1 : 0);
"""
MUTATIONS = [
    ("fib base", "n < 2 ? n", "n < 1 ? n", True),
    ("fib step", "exports.fib(n - 2)", "exports.fib(n - 3)", True),
    ("clamp low", "v < lo ? lo", "v <= lo ? lo", False),
    ("clamp high", "v > hi ? hi", "v > hi ? v", True),
    ("sign zero", ": 0)", ": 1)", True),
    ("sign negative", "v < 0 ? -1", "v < 0 ? 1", True),
]


def test_file(number: int) -> str:
    return (
        "const test = require('node:test');\n"
        "const assert = require('node:assert');\n"
        "const { fib, clamp, sign } = require('../lib/calc.js');\n"
        f"test('fib {number}', () => {{ assert.strictEqual(fib(25), 75025); }});\n"
        f"test('clamp {number}', () => {{ assert.strictEqual(clamp(50, 0, 10), 10); "
        "assert.strictEqual(clamp(5, 0, 10), 5); });\n"
        f"test('sign {number}', () => {{ assert.strictEqual(sign(-{number + 1}), -1); "
        "assert.strictEqual(sign(0), 0); });\n"
        f"test('waits {number}', async () => {{ "
        "await new Promise((r) => setTimeout(r, 100)); });\n"
    )


def build(root: Path, files: int) -> None:
    tests = [f"test/t{number}.test.js" for number in range(files)]
    spec = {"tests": tests, "expectBaselinePass": 4 * files, "mutations": [
        {"name": name, "file": "lib/calc.js", "anchor": anchor, "replacement": replacement,
         "expectCaught": caught} for name, anchor, replacement, caught in MUTATIONS]}
    (root / "lib").mkdir(parents=True)
    (root / "test").mkdir()
    (root / "specs").mkdir()
    (root / "lib/calc.js").write_text(LIB, encoding="utf-8")
    for number in range(files):
        (root / f"test/t{number}.test.js").write_text(test_file(number), encoding="utf-8")
    (root / "specs/calc.json").write_text(json.dumps(spec, indent=1), encoding="utf-8")
    (root / "package.json").write_text('{"name": "calc", "version": "1.0.0"}\n', "utf-8")
    (root / ".gitignore").write_text(".mutharness/\n", encoding="utf-8")
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "bench"]):
        subprocess.run(["git", *argv], cwd=root, check=True, env={
            **os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b",
            "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b"})


def timed(argv: list[str], cwd: Path) -> tuple[float, int]:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True)
    return time.perf_counter() - started, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--node", default=shutil.which("node") or "node")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-node-"))
    root = work / "calc"
    build(root, args.files)
    tests = [f"test/t{number}.test.js" for number in range(args.files)]
    naive = [args.node, "--test", "--test-reporter=dot"]
    verify = [sys.executable, "-m", "mutharness", "verify", "specs/calc.json", "--node", args.node,
              "--no-progress"]
    workloads = {
        "naive: 7 node --test runs, one file at a time": (
            [[*naive, "--test-concurrency=1", *tests]] * 7, None),
        "naive: 7 node --test runs, 2 files at once": (
            [[*naive, "--test-concurrency=2", *tests]] * 7, None),
        "mutharness verify -j1 --node-concurrency 1": ([verify], 0),
        "mutharness verify -j1 --node-concurrency 2": ([[*verify, "--node-concurrency", "2"]], 0),
        "mutharness verify -j2 --node-concurrency 1": ([[*verify, "-j", "2"]], 0),
    }
    times: dict[str, list[float]] = {name: [] for name in workloads}
    right = True
    load_before = os.getloadavg()[0]
    for _round in range(args.rounds):
        for name, (commands, expected) in workloads.items():
            total = 0.0
            for argv in commands:
                seconds, code = timed(argv, root)
                total += seconds
                if expected is not None and code != expected:
                    right = False
            times[name].append(total)
    load_after = os.getloadavg()[0]
    version = subprocess.run([args.node, "--version"], capture_output=True, text=True).stdout
    print(f"{args.files} test files x 4 tests, 6 mutations; node {version.strip()}; "
          f"{os.cpu_count()} core(s); medians of {args.rounds} round(s); load average "
          f"{load_before:.2f} before, {load_after:.2f} after")
    reference = statistics.median(times[next(iter(workloads))])
    print(f"{'':52} {'wall':>7} / naive")
    for name, measured in times.items():
        median = statistics.median(measured)
        print(f"{name:52} {median:6.2f}s  {median / reference:5.2f}")
    print(f"every mutharness run exited 0 (every verdict as the spec expects): "
          f"{'yes' if right else 'NO'}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
