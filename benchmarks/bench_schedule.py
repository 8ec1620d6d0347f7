"""Benchmark: `verify -j 2` without and with the previous run's timings, and `-j 1`, side by side.

Run: python benchmarks/bench_schedule.py [SPEC...] [--other CLONE]
Verifies SPEC (default: every bundled spec) in this checkout, which must be clean: `-j 2` with
no previous results file, `-j 2` again at the same results path (ordered by the first run's
timings), then `-j 1`; with `--other CLONE` first `-j 2` in another clone (a checkout of an
older commit with its own install, to compare schedulers). Prints each wall time and its ratio
to `-j 1`. Every run is real; nothing here is timed against a margin.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIP = {"platform-skips.json"}  # the platform skip policy, not a spec


def _timed(cwd: Path, python: str, specs: list[str], *args: str) -> float:
    started = time.monotonic()
    done = subprocess.run([python, "-m", "mutharness", "verify", *specs, *args], cwd=cwd,
                          capture_output=True, text=True)
    elapsed = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"verify {' '.join(args)} in {cwd} exited {done.returncode}:\n"
                 f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="*")
    parser.add_argument("--other", type=Path, help="another clone to run -j 2 in first")
    options = parser.parse_args()
    specs = options.specs or sorted(
        f"specs/{path.name}" for path in (ROOT / "specs").glob("*.json") if path.name not in SKIP)
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        if options.other is not None:
            other = options.other.resolve()
            rows.append((f"-j 2 in {other.name}", _timed(
                other, str(other / ".venv/bin/python"), specs, "-j", "2", "--json",
                f"{scratch}/other.json")))
        results = f"{scratch}/scheduled.json"
        rows.append(("-j 2, no previous timings", _timed(
            ROOT, sys.executable, specs, "-j", "2", "--json", results)))
        rows.append(("-j 2, the previous run's timings", _timed(
            ROOT, sys.executable, specs, "-j", "2", "--json", results)))
        one = _timed(ROOT, sys.executable, specs, "--json", f"{scratch}/one.json")
        rows.append(("-j 1", one))
    print(f"{len(specs)} spec(s); ratio = -j 1's time / the row's")
    for label, seconds in rows:
        print(f"{label:<40} {seconds:8.2f} s  {one / seconds:5.2f}x")


if __name__ == "__main__":
    main()
