"""mutmut 3 on a benchmark library: its run's wall time, its verdicts, and fresh runs' verdicts."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from bench_speed import warm_bytecode

VERSION = "3.8.1"
# `mutmut apply` for each name on stdin, in one process: the mutated sources, as JSON
APPLY = """\
import json, sys
from pathlib import Path
from mutmut.__main__ import cli
path = Path(sys.argv[1])
original = path.read_bytes()
sources = {}
for name in json.load(sys.stdin):
    try:
        cli.main(["apply", name], standalone_mode=False)
        sources[name] = path.read_text(encoding="utf-8")
    finally:
        path.write_bytes(original)
json.dump(sources, sys.stdout)
"""
STAMP = 1_000_000_000  # mtimes of the fresh runs' mutants: distinct, so no stale bytecode


def install(python: str) -> None:
    """Install mutmut VERSION into the venv of `python`, unless it is there already."""
    probe = subprocess.run([python, "-c", "import importlib.metadata as m; "
                            "print(m.version('mutmut'))"], capture_output=True, text=True)
    if probe.stdout.strip() == VERSION:
        return
    done = subprocess.run([python, "-m", "pip", "install", "-q", f"mutmut=={VERSION}"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"pip install mutmut=={VERSION} failed:\n{done.stderr}")


@contextlib.contextmanager
def configured(repo: Path, target: str, tests: list[str]) -> Iterator[None]:
    """mutmut's configuration (`[mutmut]` in an untracked setup.cfg: mutate `target` only, run
    `tests`) while the block runs; afterwards no setup.cfg and no `mutants/` are left."""
    config = repo / "setup.cfg"
    if config.exists():
        raise SystemExit(f"{config} exists: mutmut's configuration would replace it")
    lines = ["[mutmut]", f"source_paths = {Path(target).parts[0]}", f"only_mutate = {target}",
             "pytest_add_cli_args_test_selection =", *(f"    {test}" for test in tests)]
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        yield
    finally:
        config.unlink()
        shutil.rmtree(repo / "mutants", ignore_errors=True)


def run(repo: Path, python: str, children: int) -> tuple[float, dict[str, str]]:
    """Wall time of one `mutmut run` from scratch (no `mutants/`), and its status by mutant."""
    mutmut = str(Path(python).parent / "mutmut")
    env = warm_bytecode(Path(tempfile.gettempdir()) / "mh-bench-pycache")
    shutil.rmtree(repo / "mutants", ignore_errors=True)
    started = time.perf_counter()
    done = subprocess.run([mutmut, "run", "--max-children", str(children)], cwd=repo,
                          capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"mutmut run exited {done.returncode}:\n{done.stdout[-3000:]}\n"
                         f"{done.stderr[-3000:]}")
    listed = subprocess.run([mutmut, "results", "--all", "true"], cwd=repo, capture_output=True,
                            text=True, env=env, check=True).stdout
    statuses = dict(line.strip().rsplit(": ", 1) for line in listed.splitlines() if ": " in line)
    return wall, statuses


def fresh_verdicts(repo: Path, python: str, names: list[str], target: str, tests: list[str],
                   cache: Path) -> tuple[dict[str, bool], float]:
    """Whether a fresh `python -m pytest` over `tests` fails (True: killed) with each of
    mutmut's mutants `names` applied to the real `target` (the run's `mutants/` must exist),
    and the seconds that took. Kept in `cache` per mutmut version, target and tests, so a
    workdir pays for it once."""
    path = repo / target
    original = path.read_bytes()
    key = (f"mutmut=={VERSION} {target} sha256={hashlib.sha256(original).hexdigest()} "
           f"tests={' '.join(tests)}")
    stored = json.loads(cache.read_text(encoding="utf-8")) if cache.exists() else {}
    entry = stored.setdefault(key, {"seconds": 0.0, "killed": {}})
    missing = [name for name in names if name not in entry["killed"]]
    if missing:
        started = time.perf_counter()
        sources = json.loads(subprocess.run([python, "-c", APPLY, target], cwd=repo,
                                            input=json.dumps(missing), capture_output=True,
                                            text=True, check=True).stdout)
        env = warm_bytecode(Path(tempfile.gettempdir()) / "mh-bench-mutmut-fresh-pycache")
        argv = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests]
        if subprocess.run(argv, cwd=repo, capture_output=True, env=env).returncode != 0:
            raise SystemExit("the library's baseline does not pass")
        try:
            for number, name in enumerate(missing):
                if sources[name].encode() == original:
                    raise SystemExit(f"mutmut apply {name} left {target} as it was")
                path.write_text(sources[name], encoding="utf-8")
                os.utime(path, (STAMP + number, STAMP + number))
                entry["killed"][name] = subprocess.run(argv, cwd=repo, capture_output=True,
                                                       env=env).returncode != 0
        finally:
            path.write_bytes(original)
        entry["seconds"] += time.perf_counter() - started
        cache.write_text(json.dumps(stored, indent=1, sort_keys=True), encoding="utf-8")
    return {name: entry["killed"][name] for name in names}, entry["seconds"]


def contradictions(statuses: dict[str, str], fresh: dict[str, bool]) -> tuple[int, int, int]:
    """Of mutmut's killed and survived verdicts: how many there are, how many killed ones
    survive a fresh run, and how many survived ones a fresh run kills."""
    compared = {name: status for name, status in statuses.items()
                if status in ("killed", "survived")}
    killed_alive = sum(status == "killed" and not fresh[name] for name, status in compared.items())
    survived_dead = sum(status == "survived" and fresh[name] for name, status in compared.items())
    return len(compared), killed_alive, survived_dead


def others(statuses: dict[str, str]) -> str:
    """mutmut's statuses other than killed and survived, counted ("none" if there are none)."""
    counts = Counter(status for status in statuses.values()
                     if status not in ("killed", "survived"))
    return ", ".join(f"{count} {status}" for status, count in sorted(counts.items())) or "none"
