"""Benchmark: mutharness's wall time against the in-process bound, measured side by side.

Run: python benchmarks/bench_speed.py [--rounds N] [--repo DIR --spec specs/x.json]

Without --repo it builds a fixture repository (1,000 files; a 40-mutation spec over 30 tests
that import the standard library as real code does) and measures, in this one run, medians of
N rounds:

- the bound: the test time pytest itself reports (setup + call + teardown of every test),
  summed over the baseline and one full run per mutation, with no process start, plugin
  loading or collection: what a harness could approach at best;
- bare `python -m pytest` processes: one per baseline and mutation;
- `mutharness verify` with the subprocess runner (a new `python -m pytest` per run) and with
  the forked runner (the default: a fork server that has imported pytest forks a child per
  run, which imports the project afresh), stopping each mutant at its first failure (the
  default) and with full counts (`--no-first-failure`), with `-j1` and `-j2`;
- the harness's fixed cost: its wall time outside the runs (start-up, lock, checks,
  workspace, the collect probe, the forked runner's proving run, settling, results) for the
  1,000-file repository.

Each is printed with its ratio to the bound, with the machine's core count.
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

FILLER_FILES = 992  # with the package, tests, config and spec: 1,000 tracked files

MODULES = {
    "money.py": '''\
"""Amounts of money, exact."""

from decimal import ROUND_DOWN, ROUND_HALF_EVEN, Decimal

CENT = Decimal("0.01")


def parse(text):
    value = Decimal(text.strip().replace(",", ""))
    if value < 0:
        raise ValueError("negative amount")
    return value.quantize(CENT, rounding=ROUND_HALF_EVEN)


def add(a, b):
    return (a + b).quantize(CENT)


def split(total, parts):
    if parts <= 0:
        raise ValueError("parts must be positive")
    share = (total / parts).quantize(CENT, rounding=ROUND_DOWN)
    rest = total - share * parts
    return [share + (CENT if n < rest / CENT else 0) for n in range(parts)]
''',
    "cart.py": '''\
"""A shopping cart."""

from dataclasses import dataclass, field

from shop.money import add, parse


@dataclass
class Line:
    sku: str
    quantity: int
    price: object


@dataclass
class Cart:
    lines: list = field(default_factory=list)

    def put(self, sku, quantity, price):
        if quantity < 1:
            raise ValueError("quantity must be at least 1")
        for line in self.lines:
            if line.sku == sku:
                line.quantity += quantity
                return
        self.lines.append(Line(sku, quantity, parse(price)))

    def total(self):
        total = parse("0")
        for line in self.lines:
            total = add(total, line.price * line.quantity)
        return total

    def count(self):
        return sum(line.quantity for line in self.lines)
''',
    "codes.py": '''\
"""Discount codes."""

import re
from datetime import date

PATTERN = re.compile(r"^[A-Z]{4}-\\d{2}$")


def valid(code):
    return bool(PATTERN.match(code))


def percent(code):
    if not valid(code):
        return 0
    return int(code[-2:])


def expired(until, today=None):
    today = today or date(2026, 1, 1)
    return until < today
''',
    "report.py": '''\
"""A cart as JSON."""

import json
from enum import Enum


class Status(Enum):
    OPEN = "open"
    PAID = "paid"


def as_json(cart, status=Status.OPEN):
    return json.dumps({
        "status": status.value,
        "items": cart.count(),
        "total": str(cart.total()),
    }, sort_keys=True)
''',
}

TESTS = '''\
from datetime import date
import json

import pytest

from shop.cart import Cart
from shop.codes import expired, percent, valid
from shop.money import add, parse, split
from shop.report import Status, as_json


@pytest.mark.parametrize("text, expected",
                         [("1.005", "1.00"), ("2.015", "2.02"), ("1,000", "1000.00")])
def test_parse_rounds_half_even(text, expected):
    assert str(parse(text)) == expected


def test_parse_refuses_negative():
    with pytest.raises(ValueError):
        parse("-1")


def test_add_keeps_cents():
    assert str(add(parse("0.10"), parse("0.20"))) == "0.30"


@pytest.mark.parametrize("parts", [1, 3, 4, 7])
def test_split_sums_to_total(parts):
    assert sum(split(parse("10.00"), parts)) == parse("10.00")


def test_split_refuses_zero_parts():
    with pytest.raises(ValueError):
        split(parse("1"), 0)


def test_split_gives_the_cent_to_the_first():
    assert [str(x) for x in split(parse("1.00"), 3)] == ["0.34", "0.33", "0.33"]


def test_cart_total():
    cart = Cart()
    cart.put("a", 2, "1.50")
    cart.put("b", 1, "0.25")
    assert str(cart.total()) == "3.25"


def test_cart_merges_lines():
    cart = Cart()
    cart.put("a", 1, "1")
    cart.put("a", 2, "1")
    assert len(cart.lines) == 1 and cart.count() == 3


def test_cart_refuses_zero_quantity():
    with pytest.raises(ValueError):
        Cart().put("a", 0, "1")


def test_empty_cart_is_zero():
    assert str(Cart().total()) == "0.00"


@pytest.mark.parametrize("code, ok", [("SAVE-10", True), ("save-10", False), ("SAVE-1", False),
                                      ("SAVES-10", False), ("ABCD-99", True), ("AB-10", False),
                                      ("ABCD-1X", False)])
def test_code_shape(code, ok):
    assert valid(code) is ok


@pytest.mark.parametrize("code, expected",
                         [("SAVE-10", 10), ("SAVE-05", 5), ("bad", 0), ("ABCD-99", 99)])
def test_code_percent(code, expected):
    assert percent(code) == expected


def test_expired_before_today():
    assert expired(date(2025, 12, 31))


def test_not_expired_today():
    assert not expired(date(2026, 1, 1))


def test_report_is_json():
    cart = Cart()
    cart.put("a", 2, "1.50")
    assert json.loads(as_json(cart)) == {"items": 2, "status": "open", "total": "3.00"}


def test_report_paid():
    assert json.loads(as_json(Cart(), Status.PAID))["status"] == "paid"
'''

MUTATIONS = [  # (file, anchor, replacement); every one is caught by the tests above
    ("money.py", "ROUND_HALF_EVEN)", "ROUND_HALF_UP)"),
    ("money.py", "    if value < 0:\n", "    if value < -1:\n"),
    ("money.py", '.replace(",", "")', ""),
    ("money.py", "(a + b).quantize(CENT)", "(a - b).quantize(CENT)"),
    ("money.py", "    if parts <= 0:\n", "    if parts < 0:\n"),
    ("money.py", "(CENT if n < rest / CENT else 0)", "(CENT if n <= rest / CENT else 0)"),
    ("money.py", "(CENT if n < rest / CENT else 0)", "0"),
    ("money.py", 'CENT = Decimal("0.01")', 'CENT = Decimal("0.1")'),
    ("money.py", "(total / parts)", "(total // parts)"),
    ("money.py", "    rest = total - share * parts\n", "    rest = total - share\n"),
    ("cart.py", "        if quantity < 1:\n", "        if quantity < 0:\n"),
    ("cart.py", "            if line.sku == sku:\n", "            if line.sku != sku:\n"),
    ("cart.py", "line.quantity += quantity", "line.quantity = quantity"),
    ("cart.py", "                return\n", "                pass\n"),
    ("cart.py", "total = add(total, line.price * line.quantity)",
     "total = add(total, line.price)"),
    ("cart.py", "        total = parse(\"0\")\n", "        total = parse(\"1\")\n"),
    ("cart.py", "sum(line.quantity for line in self.lines)", "len(self.lines)"),
    ("cart.py", "field(default_factory=list)", "field(default_factory=lambda: [None])"),
    ("cart.py", "self.lines.append(Line(sku, quantity, parse(price)))",
     "self.lines.append(Line(sku, 1, parse(price)))"),
    ("cart.py", "        return total\n", "        return parse(\"0\")\n"),
    ("codes.py", '{2}$"', '{1,2}$"'),
    ("codes.py", '"^[A-Z]{4}', '"^[A-Za-z]{4}'),
    ("codes.py", "PATTERN.match(code)", "PATTERN.match(code.lower())"),
    ("codes.py", "    return bool(PATTERN.match(code))\n", "    return True\n"),
    ("codes.py", "    if not valid(code):\n", "    if valid(code):\n"),
    ("codes.py", "        return 0\n", "        return 1\n"),
    ("codes.py", "    return int(code[-2:])\n", "    return int(code[-1:])\n"),
    ("codes.py", "    return until < today\n", "    return until <= today\n"),
    ("codes.py", "date(2026, 1, 1)", "date(2025, 1, 1)"),
    ("codes.py", "code[-2:]", "code[-3:]"),
    ("report.py", '    PAID = "paid"\n', '    PAID = "open"\n'),
    ("report.py", '"status": status.value,', '"status": "open",'),
    ("report.py", '"items": cart.count(),', '"items": len(cart.lines),'),
    ("report.py", '"total": str(cart.total()),', '"total": str(cart.count()),'),
    ("report.py", "sort_keys=True", "sort_keys=False, indent=None"),
    ("report.py", "status=Status.OPEN):", "status=Status.PAID):"),
    ("money.py", "        raise ValueError(\"negative amount\")\n", "        pass\n"),
    ("money.py", "        raise ValueError(\"parts must be positive\")\n", "        return []\n"),
    ("cart.py", '            raise ValueError("quantity must be at least 1")\n',
     "            pass\n"),
    ("money.py", "    value = Decimal(text.strip()", "    value = Decimal(text"),
]
SURVIVORS = {34, 39}  # sort_keys does not change what json.loads reads; no test pads the text


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid",
                    *args], cwd=cwd, check=True, capture_output=True)


def make_repo(root: Path) -> tuple[Path, str]:
    """The committed 1,000-file fixture repository and its spec's path."""
    package = root / "src" / "shop"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""A small shop."""\n')
    for name, text in MODULES.items():
        (package / name).write_text(text)
    filler = root / "docs" / "pages"
    filler.mkdir(parents=True)
    for number in range(FILLER_FILES):
        (filler / f"page-{number:04}.md").write_text(f"# page {number}\n\nfiller text\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_shop.py").write_text(TESTS)
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["src"]\n')
    mutations = [
        {"name": f"mutation {n + 1} in {file}", "file": f"src/shop/{file}", "anchor": anchor,
         "replacement": replacement, **({"expectCaught": False} if n in SURVIVORS else {})}
        for n, (file, anchor, replacement) in enumerate(MUTATIONS)
    ]
    (root / "specs").mkdir()
    spec = {"tests": ["tests/test_shop.py"], "expectBaselinePass": 0, "mutations": mutations}
    (root / "specs" / "shop.json").write_text(json.dumps(spec, indent=2))
    _git(root, "init", "-q")
    count = _collected(root)
    spec["expectBaselinePass"] = count
    (root / "specs" / "shop.json").write_text(json.dumps(spec, indent=2))
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "bench")
    return root, "specs/shop.json"


def _collected(root: Path) -> int:
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "tests"], cwd=root, capture_output=True, text=True)
    last = done.stdout.strip().splitlines()[-1]
    return int(last.split()[0])


def warm_bytecode(cache: Path) -> dict[str, str]:
    """The environment of a developer's machine: bytecode written and reused (in `cache`,
    never in the measured tree), whatever this shell says."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(cache)
    return env


def verify(repo: Path, spec: str, out: Path, *flags: str,
           python: str = sys.executable) -> tuple[float, dict]:
    """Wall time of one `mutharness verify` (run by `python`), and its results."""
    env = warm_bytecode(out.parent / "pycache")
    started = time.perf_counter()
    done = subprocess.run([python, "-m", "mutharness", "verify", spec, "--json",
                           str(out), *flags], cwd=repo, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"verify {' '.join(flags)} exited {done.returncode}:\n"
                         f"{done.stdout}\n{done.stderr}")
    return wall, json.loads(out.read_text(encoding="utf-8"))


def inside_children(results: dict) -> float:
    """Seconds spent inside the runs' pytest children (collect probe not included)."""
    return sum(spec["baseline"]["duration_s"] + sum(m["facts"]["duration_s"]
                                                      for m in spec["mutations"])
               for spec in results["specs"])


def bound(results: dict) -> float:
    """The tests' own time (pytest's per-test durations) over the baseline and one full run
    per mutation."""
    total = 0.0
    for spec in results["specs"]:
        per_run = sum(test["duration_s"] for test in spec["baseline"]["tests"])
        total += per_run * (1 + len(spec["mutations"]))
    return total


def bare(repo: Path, tests: list[str], runs: int, python: str = sys.executable) -> float:
    """Wall time of `runs` bare `python -m pytest` processes over the tests."""
    env = warm_bytecode(Path(tempfile.gettempdir()) / "mh-bench-pycache")
    started = time.perf_counter()
    for _ in range(runs):
        subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
                       cwd=repo, capture_output=True, env=env)
    return time.perf_counter() - started


def main() -> None:
    """Measure and print the side-by-side table."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repo", type=Path, help="a repository to measure (clean tree)")
    parser.add_argument("--spec", help="the spec in --repo to measure, repo-relative")
    arguments = parser.parse_args()
    if (arguments.repo is None) != (arguments.spec is None):
        parser.error("--repo and --spec go together")
    with tempfile.TemporaryDirectory(prefix="mh-bench-") as temp:
        if arguments.repo is None:
            repo, spec = make_repo(Path(temp) / "repo")
        else:
            repo, spec = arguments.repo.resolve(), arguments.spec
        rows: dict[str, list[float]] = {}
        bounds: list[float] = []
        fixed: dict[str, list[float]] = {}
        for round_number in range(arguments.rounds):
            out = Path(temp) / f"results-{round_number}.json"
            for name, flags in (
                ("mutharness verify, subprocess runner, -j1", ("--pytest-runner", "subprocess")),
                ("mutharness verify --no-first-failure, subprocess runner, -j1",
                 ("--pytest-runner", "subprocess", "--no-first-failure")),
                ("mutharness verify, subprocess runner, -j2",
                 ("--pytest-runner", "subprocess", "-j", "2")),
                ("mutharness verify, forked runner, -j1", ("--pytest-runner", "forked")),
                ("mutharness verify --no-first-failure, forked runner, -j1",
                 ("--pytest-runner", "forked", "--no-first-failure")),
                ("mutharness verify, forked runner, -j2", ("--pytest-runner", "forked", "-j", "2")),
            ):
                wall, results = verify(repo, spec, out, *flags)
                rows.setdefault(name, []).append(wall)
                if flags == ("--pytest-runner", "subprocess"):
                    bounds.append(bound(results))
                    fixed.setdefault("subprocess", []).append(wall - inside_children(results))
                elif flags == ("--pytest-runner", "forked"):
                    fixed.setdefault("forked", []).append(wall - inside_children(results))
            tests = results["specs"][0]["tests"]
            runs = sum(1 + len(s["mutations"]) for s in results["specs"])
            rows.setdefault(f"bare python -m pytest, {runs} processes", []).append(
                bare(repo, tests, runs))
        files = subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True,
                               text=True).stdout.count("\n")
        limit = statistics.median(bounds)
        mutations = sum(len(s["mutations"]) for s in results["specs"])
        print(f"{spec}: {mutations} mutation(s), {len(tests)} test path(s), {files} files; "
              f"{os.cpu_count()} core(s); medians of {arguments.rounds} round(s)")
        print(f"{'in-process bound (the tests own time, baseline + each mutant)':<64}"
              f"{limit:8.2f} s   1.00x")
        for name, values in rows.items():
            value = statistics.median(values)
            print(f"{name:<64}{value:8.2f} s {value / limit:6.2f}x")
        for runner, values in fixed.items():
            print(f"{f'fixed cost, {runner} runner (verify outside its runs)':<64}"
                  f"{statistics.median(values):8.2f} s")


if __name__ == "__main__":
    main()
