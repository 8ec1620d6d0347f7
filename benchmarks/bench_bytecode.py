"""Benchmark: a verify with the user's shared bytecode cache against one without, side by side.

Run: python benchmarks/bench_bytecode.py [--rounds N]

Builds bench_speed's fixture repository with a 2-mutation spec (so the fixed cost is most of
a run), warms the shared cache once, then alternates `mutharness verify` with the shared cache
(`XDG_CACHE_HOME` a private directory) and without it (`XDG_CACHE_HOME` where no directory can
be made: each workspace compiles pytest and the standard library it imports for itself), N
rounds each, and prints the medians and their ratio. Alternating keeps a changing machine load
fair to both.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_speed import _git, make_repo  # the fixture is bench_speed's

UNUSABLE = "/proc/mutharness-no-cache" if sys.platform == "linux" else os.devnull


def timed_verify(repo: Path, spec: str, cache: str) -> float:
    env = {**os.environ, "XDG_CACHE_HOME": cache, "LOCALAPPDATA": cache}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "mutharness", "verify", spec],
                          cwd=repo, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"verify exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    with tempfile.TemporaryDirectory(prefix="bench-bytecode-") as temp:
        repo, spec_path = make_repo(Path(temp) / "repo")
        spec = json.loads((repo / spec_path).read_text(encoding="utf-8"))
        spec["mutations"] = spec["mutations"][:2]
        (repo / "specs" / "small.json").write_text(json.dumps(spec, indent=2))
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "a 2-mutation spec")
        shared = str(Path(temp) / "cache")
        timed_verify(repo, "specs/small.json", shared)  # the cache a user's first run leaves
        times: dict[str, list[float]] = {"shared": [], "none": []}
        for _ in range(rounds):
            times["shared"].append(timed_verify(repo, "specs/small.json", shared))
            times["none"].append(timed_verify(repo, "specs/small.json", UNUSABLE))
    with_cache = statistics.median(times["shared"])
    without = statistics.median(times["none"])
    print(f"specs/small.json: 2 mutation(s), 1000 files; {os.cpu_count()} core(s); "
          f"medians of {rounds} alternating round(s)")
    print(f"verify, the shared bytecode cache          {with_cache:7.2f} s  "
          f"{with_cache / without:5.2f}x")
    print(f"verify, each workspace compiles its own    {without:7.2f} s  1.00x")
    print(f"saved per verify                           {without - with_cache:7.2f} s")


if __name__ == "__main__":
    main()
