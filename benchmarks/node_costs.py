"""Where a node verify's time goes, part by part, on a real npm project.

Run: python benchmarks/node_costs.py [--project NAME] [--workdir DIR] [--rounds N]

The project is set up as `bench_node_projects.py` sets it up (the same `--workdir` reuses it;
find-my-way, the default, is a borp suite of 79 test files). Then, each part the median of
`--rounds` runs, measured in one go:

- mutharness's own start: `python -m mutharness --version` (the interpreter, the CLI's imports);
- one `mutharness verify` of the project's spec at -j1 under cProfile, split into its parts:
  the workspace (the checkout copied, `node_modules` linked), node's probe, the baseline (its
  load record included), the mutants' runs, and the rest (specs, git, results, evidence);
- the spec's test files under node itself: a plain `node --test` of them; the same with
  mutharness's reporter; with its reporter and its linger watch (a mutant's command line); and
  the tests' own time (the sum of each file's top-level tests' durations, as node reports
  them), so that what is neither the tests' work nor mutharness's is each file's process:
  `(plain - tests' own) / files`.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_node_projects import PROJECTS, set_up

from mutharness.runners.node.runner import EVENTS, LINGER, REPORTER, WATCH


def _wall(run: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _node(argv: list[str], cwd: Path, env: dict[str, str]) -> None:
    subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)


def _profiled_verify(repo: Path, spec_path: str, node: str) -> dict[str, float]:
    """One verify at -j1 in this process under cProfile: its parts' cumulative seconds."""
    from mutharness.cli import main as cli_main

    profile = cProfile.Profile()
    before = Path.cwd()
    os.chdir(repo)
    started = time.perf_counter()
    try:
        profile.runcall(_quiet, cli_main, ["verify", spec_path, "--node", node, "--no-progress"])
    finally:
        os.chdir(before)
    total = time.perf_counter() - started
    stats = pstats.Stats(profile)
    parts = {"workspace (checkout, node_modules linked)": ("repo/workspace.py", "fill"),
             "node's probe": ("runners/node/runner.py", "start"),
             "the baseline (its load record included)": ("lab/baseline.py", "measure"),
             "the mutants' runs": ("lab/session.py", "_mutate")}
    found = dict.fromkeys(parts, 0.0)
    for (filename, _line, function), row in stats.stats.items():  # type: ignore[attr-defined]
        for part, (where, name) in parts.items():
            if Path(filename).as_posix().endswith(where) and function == name:
                found[part] += row[3]  # cumulative seconds
    found["the rest (specs, git, results)"] = total - sum(found.values())
    found["total"] = total
    return found


def _quiet(main: Callable[..., object], args: list[str]) -> None:
    with contextlib.suppress(SystemExit):
        main(args, standalone_mode=False)


def _tests_own(events: Path) -> float:
    """The sum of the top-level tests' durations node reported (suites included)."""
    total = 0.0
    for line in events.read_text("utf-8").splitlines():
        record = json.loads(line)
        if record.get("type") in ("pass", "fail") and record.get("nesting") == 0 \
                and record.get("duration_ms") is not None and record.get("line") is not None:
            total += record["duration_ms"] / 1000
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", choices=sorted(PROJECTS), default="find-my-way")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "bench-node")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    project = PROJECTS[args.project]
    args.workdir.mkdir(parents=True, exist_ok=True)
    repo, node = set_up(args.workdir, args.project, project)
    spec_path = project.spec_path(args.project)
    spec = json.loads((repo / spec_path).read_text("utf-8"))
    files = list(spec["tests"])
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")

    start = _wall(lambda: subprocess.run([sys.executable, "-m", "mutharness", "--version"],
                                         stdout=subprocess.DEVNULL, check=True), args.rounds)
    verify = _profiled_verify(repo, spec_path, node)

    shipped = resources.files("mutharness.runners.node")
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        for name in (REPORTER, WATCH):
            (scratch / name).write_bytes(shipped.joinpath(name).read_bytes())
        events = scratch / "events.jsonl"
        env = {**os.environ, "NO_COLOR": "1", LINGER: str(scratch / "linger.jsonl")}
        env.pop("NODE_OPTIONS", None)
        reporter = [f"--test-reporter={(scratch / REPORTER).as_uri()}",
                    f"--test-reporter-destination={scratch / 'reporter.out'}",
                    "--test-reporter=spec", "--test-reporter-destination=stdout"]

        def ours(*before: str) -> None:
            events.unlink(missing_ok=True)
            _node([node, *before, "--test", "--test-concurrency=1", *reporter, *files], repo,
                  {**env, EVENTS: str(events)})

        plain = _wall(lambda: _node([node, "--test", "--test-concurrency=1", *files], repo, env),
                      args.rounds)
        with_reporter = _wall(ours, args.rounds)
        with_watch = _wall(lambda: ours("--import", (scratch / WATCH).as_uri()), args.rounds)
        ours()
        own = _tests_own(events)

    print(f"{args.project}: {len(files)} test files; node {node}; medians of {args.rounds}; "
          f"load average {load:.2f}")
    print(f"{'mutharness --version (interpreter, CLI imports)':<58}{start:8.2f}s")
    for part, seconds in verify.items():
        print(f"{'verify -j1: ' + part:<58}{seconds:8.2f}s")
    print(f"{'node --test, the spec files one at a time (plain)':<58}{plain:8.2f}s")
    print(f"{'  + mutharness reporter':<58}{with_reporter:8.2f}s  "
          f"{with_reporter - plain:+.2f}s")
    print(f"{'  + linger watch (a mutant run command line)':<58}{with_watch:8.2f}s  "
          f"{with_watch - with_reporter:+.2f}s")
    print(f"{'  the tests own time (node durations)':<58}{own:8.2f}s")
    per_file = (plain - own) / len(files)
    print(f"{'  each file process (plain - tests own) / files':<58}{per_file:8.3f}s")


if __name__ == "__main__":
    main()
