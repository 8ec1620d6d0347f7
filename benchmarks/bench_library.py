"""Benchmark: mutharness on a real PyPI library against the naive harness it replaces.

Run: python benchmarks/bench_library.py [--library NAME] [--rounds N] [--workdir DIR]
                                        [--python PYTHON] [--no-mutmut]

Sets a library up as its developers do (its sdist from PyPI, a git repository of it, a venv
with the library installed editable and its test dependencies, and this checkout of mutharness
installed beside it), with its spec committed in it. `--library` chooses:

- humanize (the default): humanize 4.17.0, `pip install -e ".[tests]"`, and
  `benchmarks/specs/humanize-number.json`: 10 mutations of `src/humanize/number.py` over
  `tests/test_number.py` (241 tests), 4 of them in code that runs at import time (module
  constants and tables), 2 documented survivors;
- more-itertools: more-itertools 11.2.1, `pip install -e . pytest`, and
  `benchmarks/specs/more-itertools-more.json`: 10 mutations of `more_itertools/more.py` over
  `tests/test_more.py` (620 tests, 11,318 subtests), 4 of them in code that runs at import
  time (`__all__`, a default argument's value, a class body, a module constant), 4 documented
  survivors.

Then measures, side by side in each round:

- naive: one fresh `python -m pytest` for the baseline and one per mutation, each mutation
  written into the tree and put back by hand; its verdicts are the ground truth; and the
  same with `pytest -x` (each run stops at its first failure, as mutharness's do by default);
- the in-process bound: pytest's own per-test durations, summed over those runs;
- `mutharness verify`, each mutant stopped at its first failing test (the default):
  `--pytest-runner subprocess` (a new `python -m pytest` per run) `-j1`, and the default
  runner (forked: a fork server that has imported pytest forks a child per run, which imports
  the project afresh) `-j1` and `-j2`, and `-j1` with full counts (`--no-first-failure`);
  and its fixed cost (the subprocess `-j1` verify's wall time outside its runs);
- unless --no-mutmut: mutmut 3.8.1 (installed into the library's venv) on the same module,
  with the spec's tests and one child per core: `mutmut run` from scratch (no `mutants/`) on
  its own mutants, not the spec's (it mutates function bodies only). Its configuration is an
  untracked `setup.cfg` that exists only while mutmut runs. Its killed and survived verdicts
  are checked against fresh runs: each of its mutants applied to the real module (`mutmut
  apply`) and one fresh `python -m pytest` over the spec's tests, killed iff that fails;
  those several hundred runs are made once per workdir and cached in it
  (`mutmut-fresh-verdicts.json`, keyed by mutmut's version and the module's sha256);

and prints medians with their ratios to naive and to the bound, the machine's load average as
it started and ended and how fast it was (a 10-million-step Python loop, timed as it started
and ended), whether every mutharness verdict matched the ground truth, and how
many of mutmut's verdicts a fresh run contradicts, with its time per mutant. One unmeasured
naive run, verify and mutmut run come first, so every row reuses warm bytecode as a
developer's machine does (written beside the run, never into the tree).
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
from dataclasses import dataclass
from pathlib import Path

import bench_mutmut
from bench_speed import _git, bound, inside_children, verify, warm_bytecode

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Library:
    """A library from PyPI with a spec of this checkout's (benchmarks/specs/SPEC)."""

    requirement: str  # pinned: what `pip download` fetches the sdist by
    tree: str  # the sdist's top folder, the library's repository (its archive: TREE.tar.gz)
    install: tuple[str, ...]  # what its venv's `pip install` gets, besides mutharness
    spec: str

    @property
    def spec_path(self) -> str:
        """The spec's path in the library's repository."""
        return f"specs/{self.spec}"


LIBRARIES = {
    "humanize": Library("humanize==4.17.0", "humanize-4.17.0", ("-e", ".[tests]"),
                        "humanize-number.json"),
    "more-itertools": Library("more-itertools==11.2.1", "more_itertools-11.2.1",
                              ("-e", ".", "pytest"), "more-itertools-more.json"),
}
FRESH_VERDICTS = "mutmut-fresh-verdicts.json"
STAMPS = 1_000_000_000  # the modification times the naive harness gives its mutants


def set_up(workdir: Path, library: Library, base: str = sys.executable) -> tuple[Path, str]:
    """The library's repository and its venv's python, a venv of `base` (made once per
    workdir); the repository's committed spec is made this checkout's if it is not."""
    repo = workdir / library.tree
    python = repo / ".venv" / "bin" / "python"
    spec = (HERE / "specs" / library.spec).read_bytes()
    committed = repo / library.spec_path
    if python.exists():
        if committed.read_bytes() != spec:
            committed.write_bytes(spec)
            _git(repo, "add", library.spec_path)
            _git(repo, "commit", "-q", "-m", "the spec of the benchmark's checkout")
        return repo, str(python)
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                    "--no-binary", ":all:", "-d", str(workdir), library.requirement],
                   check=True)
    with tarfile.open(workdir / f"{library.tree}.tar.gz") as archive:
        archive.extractall(workdir, filter="data")
    committed.parent.mkdir(exist_ok=True)
    committed.write_bytes(spec)
    _git(repo, "init", "-q")
    (repo / ".git" / "info" / "exclude").write_text(".venv/\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", f"{library.requirement} with a mutation spec")
    subprocess.run([base, "-m", "venv", str(repo / ".venv")], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", *library.install,
                    "-e", str(HERE.parent)], cwd=repo, check=True)
    return repo, str(python)


def _version(python: str) -> str:
    return subprocess.run([python, "-c", "import platform; print(platform.python_version())"],
                          capture_output=True, text=True, check=True).stdout.strip()


def naive(repo: Path, python: str, spec: dict, *options: str) -> tuple[float, list[bool]]:
    """Wall time of the naive harness (pytest run with `options`), and its verdicts (True:
    caught)."""
    env = warm_bytecode(Path(tempfile.gettempdir()) / "mh-bench-pycache")
    argv = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options, *spec["tests"]]
    started = time.perf_counter()
    if subprocess.run(argv, cwd=repo, capture_output=True, env=env).returncode != 0:
        raise SystemExit("the library's baseline does not pass")
    caught = []
    for index, mutation in enumerate(spec["mutations"]):
        target = repo / mutation["file"]
        original = target.read_bytes()
        text = original.decode()
        assert text.count(mutation["anchor"]) == 1, mutation["name"]
        target.write_bytes(text.replace(mutation["anchor"], mutation["replacement"]).encode())
        # a mutant of the original's size written within the second of the previous run
        # would get its bytecode (keyed by size and whole seconds): each its own past time
        stamp = STAMPS + 10 * index
        os.utime(target, (stamp, stamp))
        try:
            caught.append(subprocess.run(argv, cwd=repo, capture_output=True,
                                         env=env).returncode != 0)
        finally:
            target.write_bytes(original)
    return time.perf_counter() - started, caught


def mutmut_run(repo: Path, python: str, spec: dict,
               workdir: Path) -> tuple[float, dict[str, str], dict[str, bool], float]:
    """One `mutmut run` from scratch with one child per core: its wall time, its status by
    mutant, the fresh runs' verdicts on its mutants (True: killed) and the seconds those took
    (paid once per workdir)."""
    targets = {mutation["file"] for mutation in spec["mutations"]}
    assert len(targets) == 1, targets
    target = targets.pop()
    with bench_mutmut.configured(repo, target, spec["tests"]):
        wall, statuses = bench_mutmut.run(repo, python, os.cpu_count() or 1)
        fresh, seconds = bench_mutmut.fresh_verdicts(repo, python, sorted(statuses), target,
                                                     spec["tests"], workdir / FRESH_VERDICTS)
    return wall, statuses, fresh, seconds


def mutmut_line(walls: list[float], runs: list[tuple[dict[str, str], dict[str, bool]]],
                naive_wall: float, mutations: int) -> str:
    """The line after the table: how many of mutmut's verdicts fresh runs contradict (in the
    last round; every round's counts if they differ), its time per mutant, its other
    statuses."""
    counts = [bench_mutmut.contradictions(statuses, fresh) for statuses, fresh in runs]
    compared, killed_alive, survived_dead = counts[-1]
    statuses = runs[-1][0]
    text = (f"mutmut's verdicts a fresh run contradicts: {killed_alive + survived_dead} of "
            f"{compared} ({killed_alive} killed that survive fresh, {survived_dead} survived "
            "that a fresh run kills)")
    if len(set(counts)) > 1:
        text += f" in the last round; every round's (compared, killed, survived): {counts}"
    return (f"{text}; {statistics.median(walls) / len(statuses):.2f}s per mutant with "
            f"{os.cpu_count() or 1} children (naive: {naive_wall / mutations:.2f}s per "
            f"mutation); its other statuses: {bench_mutmut.others(statuses)}")


RUNS = (  # each mutant stops at its first failing test (the default) unless full counts
    ("mutharness verify --pytest-runner subprocess, -j1", ("--pytest-runner", "subprocess")),
    ("mutharness verify, -j1 (the default)", ()),
    ("mutharness verify, -j2", ("-j", "2")),
    ("mutharness verify, -j1, full counts (--no-first-failure)", ("--no-first-failure",)),
)


LOOP = ("import time\nt = time.perf_counter()\nn = 0\nfor i in range(10_000_000): n += i\n"
        "print(time.perf_counter() - t)")


def loop_seconds() -> float:
    """How fast this machine is at this hour: a 10-million-step Python loop in a fresh
    process (the same virtual machine's hours differ by up to five times)."""
    done = subprocess.run([sys.executable, "-c", LOOP], capture_output=True, text=True,
                          check=True)
    return float(done.stdout)


def main() -> None:
    """Measure and print the side-by-side table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--library", choices=sorted(LIBRARIES), default="humanize",
                        help="the library to set up and measure (default: humanize)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workdir", type=Path, help="where the library is set up (reused)")
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter of the library's venv (default: this one)")
    parser.add_argument("--no-mutmut", action="store_true",
                        help=f"leave out the row of mutmut {bench_mutmut.VERSION}")
    arguments = parser.parse_args()
    library = LIBRARIES[arguments.library]
    with tempfile.TemporaryDirectory(prefix="mh-bench-") as temp:
        workdir = (arguments.workdir or Path(temp)).resolve()
        workdir.mkdir(parents=True, exist_ok=True)
        repo, python = set_up(workdir, library, arguments.python)
        spec = json.loads((repo / library.spec_path).read_text(encoding="utf-8"))
        truth = [mutation.get("expectCaught", True) for mutation in spec["mutations"]]
        runs = 1 + len(truth)  # the baseline and one per mutation
        naive(repo, python, spec)  # warm-up, not measured: every cache written once
        verify(repo, library.spec_path, Path(temp) / "warm-up.json", python=python)
        if not arguments.no_mutmut:
            bench_mutmut.install(python)
            mutmut_run(repo, python, spec, workdir)  # warm-up; makes the fresh runs if due
        mutmut_walls: list[float] = []
        mutmut_runs: list[tuple[dict[str, str], dict[str, bool]]] = []
        fresh_seconds = 0.0
        load_before = os.getloadavg()
        speed_before = loop_seconds()
        rows: dict[str, list[float]] = {}
        bounds: list[float] = []
        fixed: list[float] = []
        agree = True
        naive_row = f"naive: {runs} fresh python -m pytest runs"
        for round_number in range(arguments.rounds):
            wall, caught = naive(repo, python, spec)
            if caught != truth:
                raise SystemExit(f"a fresh run's verdicts {caught} are not the spec's {truth}")
            rows.setdefault(naive_row, []).append(wall)
            wall, caught = naive(repo, python, spec, "-x")
            if caught != truth:
                raise SystemExit(f"a fresh -x run's verdicts {caught} are not the spec's {truth}")
            rows.setdefault(f"naive -x: {runs} fresh python -m pytest -x runs", []).append(wall)
            for name, flags in RUNS:
                out = Path(temp) / f"results-{round_number}.json"
                wall, results = verify(repo, library.spec_path, out, *flags, python=python)
                rows.setdefault(name, []).append(wall)
                mutations = results["specs"][0]["mutations"]
                verdicts = [m["verdict"] == "CAUGHT" for m in mutations]
                agree = agree and verdicts == truth
                if name == RUNS[0][0]:
                    bounds.append(bound(results))
                    fixed.append(wall - inside_children(results))
            if not arguments.no_mutmut:
                wall, statuses, fresh, fresh_seconds = mutmut_run(repo, python, spec, workdir)
                mutmut_walls.append(wall)
                mutmut_runs.append((statuses, fresh))
        load_after = os.getloadavg()
        speed_after = loop_seconds()
        limit = statistics.median(bounds)
        reference = statistics.median(rows[naive_row])
        print(f"{library.requirement} {library.spec_path}: {len(truth)} mutations "
              f"({sum(truth)} caught, {len(truth) - sum(truth)} survivors), "
              f"{spec['expectBaselinePass']} tests; Python {_version(python)}; "
              f"{os.cpu_count()} core(s); medians of {arguments.rounds} round(s); load average "
              f"{load_before[0]:.2f} before, {load_after[0]:.2f} after; a 10-million-step "
              f"Python loop took {speed_before:.2f}s before, {speed_after:.2f}s after")
        print(f"{'':<56}{'wall':>9}  {'/ naive':>7}  {'/ bound':>7}")
        print(f"{f'in-process bound (the tests own time over {runs} runs)':<56}{limit:8.2f}s"
              f"  {limit / reference:7.2f}  {1:7.2f}")
        for name, values in rows.items():
            value = statistics.median(values)
            print(f"{name:<56}{value:8.2f}s  {value / reference:7.2f}  {value / limit:7.2f}")
        if mutmut_runs:
            value = statistics.median(mutmut_walls)
            name = (f"mutmut {bench_mutmut.VERSION} (its own {len(mutmut_runs[-1][0])} mutants, "
                    "not the spec's)")
            print(f"{name:<56}{value:8.2f}s  {value / reference:7.2f}  {value / limit:7.2f}")
        print(f"{'fixed cost (subprocess -j1 outside its runs)':<56}"
              f"{statistics.median(fixed):8.2f}s")
        print("every mutharness verdict matched the fresh runs' ground truth: "
              f"{'yes' if agree else 'NO'}")
        if mutmut_runs:
            print(mutmut_line(mutmut_walls, mutmut_runs, reference, len(truth)))
            print(f"the fresh runs of mutmut's mutants took {fresh_seconds:.0f}s, once for this "
                  f"workdir (cached in {workdir / FRESH_VERDICTS})")


if __name__ == "__main__":
    main()
