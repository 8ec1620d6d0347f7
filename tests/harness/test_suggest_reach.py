"""`suggest` puts candidates only where the chosen tests reach: its baseline records the lines
each run executes in the changed files (pytest: a tracer in the test process; node: V8's block
coverage), a changed line no test executes gets no candidate and is listed as a coverage gap,
and where the record cannot speak the candidates stay, said so."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import CALC, Completed, Project, Venv, default_spec, git
from nodes import NODE, committed, write_files

from mutharness.imports import ImportRecord, Loaded
from mutharness.runners.node.coverage import Block, coverage_record, ranges_to_lines, utf16_length
from mutharness.runners.node.loads import read_loads
from mutharness.runners.pytest.runner import line_record
from mutharness.suggest.candidates import Candidate, Operator
from mutharness.suggest.reach import Function, executed, python_lines, read_reach, split

Cli = Callable[..., Completed]
GAP = "not executed by any test (a coverage gap)"

# the fix: clamp's cap changed (the tests call clamp), and a new function no test calls
DISCOUNT = '''

def discount(price, rate):
    if rate > 0.5:
        return price
    return price * (1 - rate)
'''
FIXED = CALC.replace("    if value > high:\n", "    if value >= high:\n") + DISCOUNT
DISCOUNT_LINES = (len(CALC.splitlines()) + 4, len(CALC.splitlines()) + 6)  # `if`, last return


def _draft(root: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(
        (root / ".mutharness/suggest/draft.json").read_text("utf-8"))
    return found


def _fixed(make_project: Callable[..., Project], tests: str | None = None) -> Project:
    """The calc project, then a fix: clamp's cap made `>=` and a new `discount` (which no
    test calls, unless `tests` adds a test module that does)."""
    project = make_project(spec=default_spec(mutations=[]))
    project.write("src/calc.py", FIXED)
    if tests is not None:
        project.write("tests/test_discount.py", tests)
    project.commit("fix: the cap; a discount")
    return project


def test_a_changed_python_function_no_test_calls_is_a_coverage_gap_and_gets_no_candidate(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    project = _fixed(make_project)

    done = cli(project.root, "suggest", "--since", "HEAD~1", "--no-progress")

    assert done.code == 0, done.out + done.err
    draft = _draft(project.root)
    assert {m["file"] for m in draft["mutations"]} == {"src/calc.py"}
    assert [m["name"] for m in draft["mutations"] if "discount" in m["name"]] == []
    assert all("discount" not in left["name"] for left in draft.get("_left_out", ()))
    gaps = draft["_not_executed"]
    assert {(gap["file"], gap["function"]) for gap in gaps} == {("src/calc.py", "discount")}
    assert {gap["line"] for gap in gaps} <= set(range(DISCOUNT_LINES[0], DISCOUNT_LINES[1] + 1))
    assert all(gap["why"] == GAP for gap in gaps)
    assert f"SURVIVED src/calc.py:{DISCOUNT_LINES[0]}" not in done.out
    # said on the console before any verdict: where, and in which function
    said = done.out.index(GAP)
    assert said < done.out.index("baseline ")
    assert f"src/calc.py:{DISCOUNT_LINES[0]}" in done.out[said:].splitlines()[1]
    assert "discount" in done.out[said:].splitlines()[1]
    # the line the tests run kept its candidate, and the run gave it a verdict
    [clamp] = [m for m in draft["mutations"] if "clamp" in m["name"]]
    assert clamp["_line"] == 7


def test_a_changed_python_function_a_test_calls_keeps_its_candidates(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    project = _fixed(make_project, "from calc import discount\n\n\ndef test_discounts():\n"
                                   "    assert discount(10, 0.5) == 5\n"
                                   "    assert discount(10, 0.6) == 10\n")

    done = cli(project.root, "suggest", "--since", "HEAD~1", "--no-progress")

    assert done.code == 0, done.out + done.err
    draft = _draft(project.root)
    assert any("discount" in m["name"] for m in draft["mutations"])
    assert "_not_executed" not in draft and GAP not in done.out


ADULT_BUGGY = """\
exports.isAdult = (age) => age > 18;
"""
ADULT_FIXED = """\
exports.isAdult = (age) => age >= 18;

function discount(price, rate) {
  if (rate > 0.5) {
    return price;
  }
  return price * (1 - rate);
}
exports.discount = discount;
exports.positive = (n) => n > 0;
"""
ADULT_TEST = """\
const test = require('node:test');
const assert = require('node:assert');
const { isAdult } = require('../lib/calc.js');
test('eighteen is an adult', () => { assert.strictEqual(isAdult(18), true); });
test('seventeen is not', () => { assert.strictEqual(isAdult(17), false); });
"""


def _node_fix(tmp_path: Path) -> Path:
    root = committed(tmp_path / "adults", {
        ".gitignore": ".mutharness/\n",
        "package.json": json.dumps({"name": "adults", "version": "1.0.0"}),
        "lib/calc.js": ADULT_BUGGY,
    }, "isAdult, as first written")
    write_files(root, {"lib/calc.js": ADULT_FIXED, "test/calc.test.js": ADULT_TEST})
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "fix: eighteen is an adult; a discount")
    return root


@pytest.mark.skipif(NODE is None, reason="node (.ci/run installs it)")
def test_a_changed_node_function_no_test_calls_is_a_coverage_gap_and_gets_no_candidate(
    tmp_path: Path, git_home: Path, cli: Cli
) -> None:
    root = _node_fix(tmp_path)

    done = cli(root, "suggest", "--since", "HEAD~1", "--no-progress")

    assert done.code == 0, done.out + done.err
    draft = _draft(root)
    [caught] = draft["mutations"]  # isAdult's, which the tests call
    assert (caught["anchor"], caught["replacement"]) == (
        "exports.isAdult = (age) => age >= 18;\n", "exports.isAdult = (age) => age > 18;\n")
    gaps = draft["_not_executed"]
    # discount's lines, and the one-line `positive` on a line whose other code ran
    assert {(gap["line"], gap["function"]) for gap in gaps} >= {(4, "discount"),
                                                                 (10, "positive")}
    assert all(gap["why"] == GAP and gap["file"] == "lib/calc.js" for gap in gaps)
    assert "SURVIVED lib/calc.js" not in done.out
    said = done.out.index(GAP)
    assert said < done.out.index("baseline ")
    assert "lib/calc.js:4" in done.out[said:]


# a test that runs discount in a Python program of its own: no line record follows it
IN_A_SUBPROCESS = '''\
import os
import subprocess
import sys


def test_discount_in_a_program_of_its_own():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.environ["PYTHONPATH"], "src"]))
    code = "from calc import discount; assert discount(10, 0.6) == 10"
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
'''


def test_a_function_a_python_subprocess_runs_keeps_its_candidates_and_the_record_says_why(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    project = _fixed(make_project, IN_A_SUBPROCESS)

    done = cli(project.root, "suggest", "--since", "HEAD~1", "--no-progress")

    assert done.code == 0, done.out + done.err
    draft = _draft(project.root)
    assert "_not_executed" not in draft and GAP not in done.out
    [silent] = draft["_not_recorded"]
    assert silent["file"] == "src/calc.py"
    assert silent["why"].startswith("a Python process the line record does not follow "
                                    "loaded it (pid ")
    assert "the line record cannot speak for src/calc.py (a Python process" in done.out
    assert any("discount" in m["name"] for m in draft["mutations"])  # kept, and run


# a test that runs discount in a forked child, which leaves by os._exit
IN_A_FORK = '''\
import os

from calc import discount


def test_discount_in_a_forked_child():
    pid = os.fork()
    if pid == 0:
        os._exit(0 if discount(10, 0.6) == 10 and discount(10, 0.5) == 5 else 1)
    assert os.waitpid(pid, 0)[1] == 0
'''


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no fork on this platform")
def test_the_lines_a_forked_child_runs_count_as_executed(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    project = _fixed(make_project, IN_A_FORK)

    done = cli(project.root, "suggest", "--since", "HEAD~1", "--no-progress")

    assert done.code == 0, done.out + done.err
    draft = _draft(project.root)
    assert "_not_executed" not in draft and "_not_recorded" not in draft, done.out
    assert any("discount" in m["name"] for m in draft["mutations"])


# a test that fails while anything traces the process: with the line record, or a tool id of
# sys.monitoring taken
MINDS_A_TRACER = '''\
import sys

from calc import clamp


def test_nothing_traces_this_process():
    assert sys.gettrace() is None
    assert not hasattr(sys, "monitoring") or sys.monitoring.get_tool(3) is None
    assert clamp(5, 0, 10) == 5
'''


def test_tests_a_tracer_fails_are_measured_again_without_the_record_keeping_each_candidate(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    project = _fixed(make_project, MINDS_A_TRACER)

    done = cli(project.root, "suggest", "--since", "HEAD~1", "--no-progress")

    assert done.code == 0, done.out + done.err
    draft = _draft(project.root)
    assert "_not_executed" not in draft and GAP not in done.out
    [silent] = draft["_not_recorded"]
    assert silent["why"].startswith("the tests' baseline could not be trusted with the line "
                                    "record, and could without it")
    assert any("discount" in m["name"] for m in draft["mutations"])  # kept, and run


def test_under_pytest_xdist_each_worker_records_the_lines_it_runs(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    project = make_project(spec=default_spec(mutations=[]))
    project.write("pyproject.toml", '[tool.pytest.ini_options]\npythonpath = ["src"]\n'
                  'addopts = "-n 2"\n')
    project.commit("the tests run in two workers")
    project.write("src/calc.py", FIXED)
    project.commit("fix: the cap; a discount")

    done = cli(project.root, "suggest", "--since", "HEAD~1", "--no-progress")

    assert done.code == 0, done.out + done.err
    draft = _draft(project.root)
    assert "_not_recorded" not in draft, done.out
    assert {gap["function"] for gap in draft["_not_executed"]} == {"discount"}
    assert [m["_line"] for m in draft["mutations"]] == [7]
    assert "the choice made again from the lines the tests run: 1 kept" in done.out


def test_under_sys_monitoring_a_function_no_test_calls_is_a_coverage_gap(
    make_project: Callable[..., Project], cli: Cli, monitoring_venv: Venv
) -> None:
    project = _fixed(make_project)

    done = cli(project.root, "suggest", "--since", "HEAD~1", "--no-progress", "--python",
               str(monitoring_venv.python))

    assert done.code == 0, done.out + done.err
    draft = _draft(project.root)
    assert {gap["function"] for gap in draft["_not_executed"]} == {"discount"}
    assert [m["_line"] for m in draft["mutations"]] == [7]
    record = json.loads((project.root / ".mutharness/suggest/lines.json").read_text("utf-8"))
    assert record["how"][0].startswith("sys.monitoring ")


# V8's ranges as lines: (text, blocks, the lines where code ran, each function's lines)
ONE_LINER = "exports.p = (n) => n > 0;\n"
UNCALLED = "function f(a) {\n  return a;\n}\nmodule.exports = f;\n"
BRANCH = "function f(a) {\n  if (a) {\n    return 1;\n  }\n  return 0;\n}\nf(0);\n"
WIDE = "'\U0001F600'\nf()\n"  # the emoji is two UTF-16 units: `f()` starts at unit 5
RANGES = [
    (UNCALLED, [Block(0, 50, 1, True), Block(0, 29, 0, True)],
     {4}, {(1, 4, True), (1, 3, False)}),
    (UNCALLED, [Block(0, 50, 1, True), Block(0, 29, 2, True)],
     {1, 2, 3, 4}, {(1, 4, True), (1, 3, True)}),
    # a function on a line whose other code ran: its line ran (the rule then leaves it out)
    (ONE_LINER, [Block(0, 26, 1, True), Block(12, 24, 0, True)],
     {1}, {(1, 1, True), (1, 1, False)}),
    # a block inside a called function that never ran: its lines did not
    (BRANCH, [Block(0, 65, 1, True), Block(0, 58, 1, True), Block(25, 44, 0)],
     {1, 2, 5, 6, 7}, {(1, 7, True), (1, 6, True)}),
    # offsets count UTF-16 code units, not characters or bytes
    (WIDE, [Block(0, 9, 1, True), Block(5, 8, 0)], {1}, {(1, 2, True)}),
]


@pytest.mark.parametrize(("text", "blocks", "ran", "functions"), RANGES)
def test_v8_ranges_become_the_lines_where_code_ran_and_each_function_s_lines(
    text: str, blocks: list[Block], ran: set[int], functions: set[tuple[int, int, bool]]
) -> None:
    found_ran, found_functions = ranges_to_lines(text, blocks)
    assert found_ran == ran
    assert set(found_functions) == functions


def test_a_file_s_length_is_counted_in_utf_16_units_as_v8_counts_its_offsets() -> None:
    assert utf16_length("a\u00e9\U0001F600\n") == 5


EXECUTED = [  # (lines where code ran, functions (first, last, called), lines that count)
    ({1, 2, 3}, [], {1, 2, 3}),
    # an uncalled function's header ran as it was defined: none of its lines counts
    ({1, 4, 5}, [Function(1, 3, False), Function(4, 5, True)], {4, 5}),
    # a one-line function no test calls, on a line whose other code ran
    ({1, 2}, [Function(2, 2, False)], {1}),
    # an uncalled function inside a called one: only the inner one's lines are left out
    ({1, 2, 3, 5}, [Function(1, 5, True), Function(3, 4, False)], {1, 2, 5}),
]


@pytest.mark.parametrize(("ran", "functions", "lines"), EXECUTED)
def test_a_line_counts_as_executed_when_code_on_it_ran_and_no_function_on_it_went_uncalled(
    ran: set[int], functions: list[Function], lines: set[int]
) -> None:
    assert executed(ran, functions) == lines


PYTHON = '''\
def used(a,
         b=2):
    if (a >
            b):
        return 1
    return 0


@staticmethod
def unused(n):
    return n > 0


def guessed(n):
    return n


SQUARE = lambda n: n * n
'''
PYTHON_LINES = [  # (line events, call records, the lines that count as executed)
    # module code ran every `def`; used began (its first line, its name) and ran its `if`
    ({1, 9, 10, 14, 18, 3, 6}, [(1, "used")], {1, 2, 3, 4, 6}),
    # no call record, but a line of its body ran: guessed was called all the same
    ({1, 9, 10, 14, 18, 15}, [], {14, 15}),
    # a decorated function begins at its decorator's line
    ({1, 9, 10, 14, 18, 11}, [(9, "unused")], {9, 10, 11}),
    # a lambda called on its line
    ({1, 9, 10, 14, 18}, [(18, "<lambda>")], {18}),
]


@pytest.mark.parametrize(("ran", "called", "lines"), PYTHON_LINES)
def test_python_s_line_events_count_by_statement_and_by_the_functions_that_began(
    ran: set[int], called: list[tuple[int, str]], lines: set[int]
) -> None:
    found = python_lines(PYTHON, ran, called)
    assert not isinstance(found, str)
    assert executed(*found) == lines


def test_python_that_does_not_parse_is_a_file_the_record_cannot_speak_for() -> None:
    found = python_lines("def f(:\n", {1}, [])
    assert isinstance(found, str) and found.startswith("its syntax tree does not read")


def _candidate(line: int, file: str = "src/a.py") -> Candidate:
    return Candidate(file, line, 0, 1, "x", Operator.BOUNDARY, "f", "<")


def test_a_run_that_kept_no_line_record_leaves_every_candidate_and_says_so(
    tmp_path: Path
) -> None:
    reach = read_reach(tmp_path / "lines.json", {"src/a.py": "x = 1\n"})
    assert reach.silent == {"src/a.py": "the run kept no line record"}
    assert split([_candidate(1), _candidate(2)], reach) == ([_candidate(1), _candidate(2)], [])


def test_a_record_sets_apart_the_candidates_on_lines_no_test_executes(tmp_path: Path) -> None:
    record = tmp_path / "lines.json"
    record.write_text(json.dumps({
        "files": {"src/a.py": {"ran": [1], "called": []},
                  "lib/b.js": {"ran": [1, 2], "functions": [[2, 2, False]]}},
        "silent": {"src/c.py": "a test started git"}}), "utf-8")
    texts = {"src/a.py": "x = 1\ny = 2\n", "lib/b.js": "a();\nb(() => 1);\n",
             "src/c.py": "z = 3\n"}

    reach = read_reach(record, texts)

    assert reach.executed == {"src/a.py": {1}, "lib/b.js": {1}}
    assert reach.silent == {"src/c.py": "a test started git"}
    kept, unrun = split([_candidate(1), _candidate(2), _candidate(2, "lib/b.js"),
                         _candidate(9, "src/c.py")], reach)
    assert kept == [_candidate(1), _candidate(9, "src/c.py")]
    assert unrun == [_candidate(2), _candidate(2, "lib/b.js")]


def _lines(directory: Path, name: str, *lines: str) -> None:
    directory.mkdir(exist_ok=True)
    (directory / name).write_text("".join(f"{line}\n" for line in lines), "utf-8")


def _imports(root: Path, *loaded: tuple[int, str], spawned: tuple[str, ...] = ()
             ) -> ImportRecord:
    return ImportRecord(tuple(Loaded(pid, "calc", str(root / file)) for pid, file in loaded),
                        main_pid=10, spawned=spawned)


def test_pytest_s_record_gathers_every_process_s_lines_and_the_functions_that_began(
    tmp_path: Path
) -> None:
    lines = tmp_path / "lines"
    _lines(lines, "10-aa.lines", "start\tsys.settrace", "line\t0\t1", "call\t0\t4\tused",
           "line\t0\t5", "end")
    _lines(lines, "11-bb.lines", "start\tsys.settrace", "line\t0\t6")  # a fork, os._exit

    record = line_record(lines, _imports(tmp_path, (10, "src/calc.py"), (11, "src/calc.py")),
                         tmp_path, ["src/calc.py"])

    assert record["files"] == {"src/calc.py": {"ran": [1, 5, 6], "called": [[4, "used"]]}}
    assert record["silent"] == {} and record["how"] == ["sys.settrace"]


SILENT = [  # (the processes' files, the import record's loads, spawned, why the file is silent)
    ({"10-a.lines": ["start\tx", "line\t0\t1", "end"]}, [(10, "src/calc.py"),
                                                         (12, "src/calc.py")], (),
     "a Python process the line record does not follow loaded it (pid 12: a program the "
     "tests started)"),
    ({"10-a.lines": ["start\tx", "early\t0", "end"]}, [], (),
     "imported before the line record began"),
    ({"10-a.lines": ["start\tx", "line\t0\t1", "end"]}, [], ("git",),
     "a test started git, a program that is not Python"),
    ({"10-a.lines": ["start\tx", "line\t0\t1"]}, [], (),
     "the pytest process's line record did not reach the session's end"),
    ({"10-a.lines": ["start\tx", "lost\ta test replaced its tracer (sys.settrace)", "end"]},
     [], (), "lines may have gone unrecorded (pid 10: a test replaced its tracer"),
    ({}, [], (), "the pytest process kept no line record"),
]


@pytest.mark.parametrize(("files", "loaded", "spawned", "why"), SILENT)
def test_pytest_s_record_cannot_speak_for_what_it_did_not_follow(
    tmp_path: Path, files: dict[str, list[str]], loaded: list[tuple[int, str]],
    spawned: tuple[str, ...], why: str
) -> None:
    lines = tmp_path / "lines"
    lines.mkdir()
    for name, written in files.items():
        _lines(lines, name, *written)

    record = line_record(lines, _imports(tmp_path, *loaded, spawned=spawned), tmp_path,
                         ["src/calc.py"])

    assert record["files"] == {}
    assert record["silent"]["src/calc.py"].startswith(why)


def _coverage(directory: Path, pid: int, url: str, functions: list[Any]) -> None:
    directory.mkdir(exist_ok=True)
    document = {"result": [{"scriptId": "1", "url": url, "functions": functions}]}
    (directory / f"coverage-{pid}-1-0.json").write_text(json.dumps(document), "utf-8")


def _function(*ranges: tuple[int, int, int]) -> dict[str, Any]:
    return {"functionName": "", "isBlockCoverage": True, "ranges": [
        {"startOffset": start, "endOffset": end, "count": count} for start, end, count in ranges]}


def _node_workspace(tmp_path: Path, loaded_by: int = 7) -> Path:
    write_files(tmp_path, {"lib/calc.js": UNCALLED,
                           "loads/7-x.log": f"file\t{tmp_path / 'test/a.test.js'}\n"
                                            f"load\t{tmp_path / 'lib/calc.js'}\n"})
    if loaded_by != 7:
        (tmp_path / "loads/7-x.log").rename(tmp_path / f"loads/{loaded_by}-x.log")
    return tmp_path


def test_node_s_record_places_v8_coverage_on_the_file_s_lines(tmp_path: Path) -> None:
    root = _node_workspace(tmp_path)
    _coverage(root / "coverage", 7, (root / "lib/calc.js").as_uri(),
              [_function((0, 50, 1)), _function((0, 29, 0))])

    record = coverage_record(root / "coverage", root / "loads", read_loads(root / "loads", root),
                             root, ["lib/calc.js"])

    assert record == {"files": {"lib/calc.js": {"ran": [4], "functions": [
        [1, 3, False], [1, 4, True]]}}, "silent": {}}


NODE_SILENT = [  # (coverage's pid, its top-level range's end, why the file is silent)
    (7, 40, "node ran another text than the file's (its coverage spans 40 UTF-16 units, the "
            "file 50)"),
    (8, 50, "a node process that loaded or read it (pid 7) wrote no coverage of it"),
]


@pytest.mark.parametrize(("pid", "end", "why"), NODE_SILENT)
def test_node_s_record_cannot_speak_for_a_file_its_coverage_does_not_fit(
    tmp_path: Path, pid: int, end: int, why: str
) -> None:
    root = _node_workspace(tmp_path)
    _coverage(root / "coverage", pid, (root / "lib/calc.js").as_uri(),
              [_function((0, end, 1))])

    record = coverage_record(root / "coverage", root / "loads", read_loads(root / "loads", root),
                             root, ["lib/calc.js"])

    assert record["files"] == {}
    assert record["silent"]["lib/calc.js"].startswith(why)
