"""Benchmark: mutharness on a real PyPI library against the naive harness it replaces.

Run: python benchmarks/bench_library.py [--rounds N] [--workdir DIR] [--python PYTHON]

Sets the library up as its developers do (the sdist of humanize 4.17.0 from PyPI, a git
repository of it, a venv with `pip install -e ".[tests]"`, and this checkout of mutharness
installed beside it), with `benchmarks/specs/humanize-number.json`: 10 mutations of
`src/humanize/number.py`, 4 of them in code that runs at import time (module constants and
tables), 2 documented survivors. Then measures, side by side in each round:

- naive: one fresh `python -m pytest` for the baseline and one per mutation, each mutation
  written into the tree and put back by hand; its verdicts are the ground truth;
- the in-process bound: pytest's own per-test durations, summed over those 11 runs;
- `mutharness verify` with each runner (the warm route too), `-j1` and `-j2`, and its fixed
  cost (its wall time outside the runs);

and prints medians with their ratios to naive and to the bound, the machine's load average as
it started and ended, and whether every mutharness verdict matched the ground truth. One
unmeasured naive run and verify come first, so every row reuses warm bytecode as a developer's
machine does (written beside the run, never into the tree).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from bench_speed import _git, bare, bound, inside_children, routes, verify, warm_bytecode

HERE = Path(__file__).resolve().parent
SPEC = HERE / "specs" / "humanize-number.json"
LIBRARY = "humanize==4.17.0"
SPEC_PATH = "specs/humanize-number.json"


def set_up(workdir: Path, base: str = sys.executable) -> tuple[Path, str]:
    """The library's repository and its venv's python, a venv of `base` (made once per
    workdir)."""
    repo = workdir / "humanize-4.17.0"
    python = repo / ".venv" / "bin" / "python"
    if python.exists():
        return repo, str(python)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                    "--no-binary", ":all:", "-d", str(workdir), LIBRARY], check=True)
    with tarfile.open(next(workdir.glob("humanize-*.tar.gz"))) as archive:
        archive.extractall(workdir, filter="data")
    (repo / "specs").mkdir(exist_ok=True)
    (repo / "specs" / SPEC.name).write_bytes(SPEC.read_bytes())
    _git(repo, "init", "-q")
    (repo / ".git" / "info" / "exclude").write_text(".venv/\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "humanize 4.17.0 with a mutation spec")
    subprocess.run([base, "-m", "venv", str(repo / ".venv")], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "-e", ".[tests]",
                    "-e", str(HERE.parent)], cwd=repo, check=True)
    return repo, str(python)


def _version(python: str) -> str:
    return subprocess.run([python, "-c", "import platform; print(platform.python_version())"],
                          capture_output=True, text=True, check=True).stdout.strip()


def naive(repo: Path, python: str, spec: dict) -> tuple[float, list[bool]]:
    """Wall time of the naive harness, and its verdicts (True: caught)."""
    env = warm_bytecode(Path(tempfile.gettempdir()) / "mh-bench-pycache")
    argv = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *spec["tests"]]
    started = time.perf_counter()
    if subprocess.run(argv, cwd=repo, capture_output=True, env=env).returncode != 0:
        raise SystemExit("the library's baseline does not pass")
    caught = []
    for mutation in spec["mutations"]:
        target = repo / mutation["file"]
        original = target.read_bytes()
        text = original.decode()
        assert text.count(mutation["anchor"]) == 1, mutation["name"]
        target.write_bytes(text.replace(mutation["anchor"], mutation["replacement"]).encode())
        try:
            caught.append(subprocess.run(argv, cwd=repo, capture_output=True,
                                         env=env).returncode != 0)
        finally:
            target.write_bytes(original)
    return time.perf_counter() - started, caught


RUNS = (
    ("mutharness verify, subprocess runner, -j1", ("--pytest-runner", "subprocess")),
    ("mutharness verify, subprocess runner, -j2", ("--pytest-runner", "subprocess", "-j", "2")),
    ("mutharness verify, forked runner, -j1", ("--pytest-runner", "forked")),
    ("mutharness verify, forked runner, -j2", ("--pytest-runner", "forked", "-j", "2")),
    ("mutharness verify, warm route, -j1", ("--pytest-runner", "warm")),
    ("mutharness verify, warm route, -j2", ("--pytest-runner", "warm", "-j", "2")),
)


def main() -> None:
    """Measure and print the side-by-side table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workdir", type=Path, help="where the library is set up (reused)")
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter of the library's venv (default: this one)")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mh-bench-") as temp:
        workdir = (arguments.workdir or Path(temp)).resolve()
        workdir.mkdir(parents=True, exist_ok=True)
        repo, python = set_up(workdir, arguments.python)
        spec = json.loads(SPEC.read_text(encoding="utf-8"))
        truth = [mutation.get("expectCaught", True) for mutation in spec["mutations"]]
        naive(repo, python, spec)  # warm-up, not measured: every cache written once
        verify(repo, SPEC_PATH, Path(temp) / "warm-up.json", python=python)
        load_before = os.getloadavg()
        rows: dict[str, list[float]] = {}
        bounds: list[float] = []
        fixed: list[float] = []
        agree = True
        warm = ""
        for round_number in range(arguments.rounds):
            wall, caught = naive(repo, python, spec)
            if caught != truth:
                raise SystemExit(f"a fresh run's verdicts {caught} are not the spec's {truth}")
            rows.setdefault("naive: 11 fresh python -m pytest runs", []).append(wall)
            for name, flags in RUNS:
                out = Path(temp) / f"results-{round_number}.json"
                wall, results = verify(repo, SPEC_PATH, out, *flags, python=python)
                rows.setdefault(name, []).append(wall)
                mutations = results["specs"][0]["mutations"]
                verdicts = [m["verdict"] == "CAUGHT" for m in mutations]
                agree = agree and verdicts == truth
                if "warm" in flags:
                    warm = routes(results)
                if name == RUNS[0][0]:
                    bounds.append(bound(results))
                    fixed.append(wall - inside_children(results))
            rows.setdefault("bare python -m pytest, 11 processes (no mutation)", []).append(
                bare(repo, spec["tests"], 11, python=python))
        load_after = os.getloadavg()
        limit = statistics.median(bounds)
        reference = statistics.median(rows["naive: 11 fresh python -m pytest runs"])
        print(f"{LIBRARY} {SPEC_PATH}: {len(truth)} mutations ({sum(truth)} caught, "
              f"{len(truth) - sum(truth)} survivors), {spec['expectBaselinePass']} tests; "
              f"Python {_version(python)}; {os.cpu_count()} core(s); medians of "
              f"{arguments.rounds} round(s); load average "
              f"{load_before[0]:.2f} before, {load_after[0]:.2f} after")
        print(f"{'':<56}{'wall':>9}  {'/ naive':>7}  {'/ bound':>7}")
        print(f"{'in-process bound (the tests own time over 11 runs)':<56}{limit:8.2f}s"
              f"  {limit / reference:7.2f}  {1:7.2f}")
        for name, values in rows.items():
            value = statistics.median(values)
            print(f"{name:<56}{value:8.2f}s  {value / reference:7.2f}  {value / limit:7.2f}")
        print(f"{'fixed cost (subprocess -j1 outside its runs)':<56}"
              f"{statistics.median(fixed):8.2f}s")
        print(f"the warm route's mutants: {warm}")
        print("every mutharness verdict matched the fresh runs' ground truth: "
              f"{'yes' if agree else 'NO'}")


if __name__ == "__main__":
    main()
