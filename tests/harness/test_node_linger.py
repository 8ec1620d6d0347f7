"""Node test files that keep the event loop alive after their last test.

The linger watch (`_linger.mjs`, preloaded into each test file's process) lets a file end when
what holds it open can run no code by itself (a server left listening) and nothing has run for
a moment; node then ends the file as it ends any other, so every count is node's own. A timer,
or anything that ran after the last test (it may start a test of its own), keeps the process
running as before. Real node on PATH and on each node MUTHARNESS_NODES names (.ci/run: 22, 24).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import Completed, wine_cannot
from nodes import NODE, NODES, committed, results, spec_text

from mutharness.repo.installed import LINKS_WORK
from mutharness.runners.node.linger import Lingered, read_lingering

Cli = Callable[..., Completed]

CALC = """\
exports.add = (a, b) => a + b;
exports.limit = (n) => (n > 10 ? 10 : n);
exports.half = (n) => n / 2;
"""
# a server started and never closed: without the watch, every run waits for the timeout
LEFT_OPEN = """\
const test = require('node:test');
const assert = require('node:assert');
const net = require('node:net');
const { add } = require('../lib/calc.js');
net.createServer().listen(0, '127.0.0.1');
test('adds', () => { assert.strictEqual(add(2, 3), 5); });
"""
# nested suites, a test that ends after a timer, the server left open
NESTED = """\
const { describe, it } = require('node:test');
const assert = require('node:assert');
const net = require('node:net');
const { half } = require('../lib/calc.js');
describe('halves', () => {
  describe('later', () => {
    it('after a timer', async () => {
      await new Promise((resolve) => setTimeout(resolve, 150));
      assert.strictEqual(half(8), 4);
    });
  });
  it('at once', () => { assert.strictEqual(half(2), 1); });
});
net.createServer().listen(0, '127.0.0.1');
"""
# a test made by a timer after the file's last test (it closes the server): never lost
LATE = """\
const test = require('node:test');
const assert = require('node:assert');
const net = require('node:net');
const { limit } = require('../lib/calc.js');
const server = net.createServer().listen(0, '127.0.0.1');
test('small numbers stay', () => { assert.strictEqual(limit(3), 3); });
setTimeout(() => {
  test('big numbers are capped', async () => {
    await new Promise((resolve) => server.close(resolve));
    assert.strictEqual(limit(50), 10);
  });
}, 300);
"""
# a server that answered a request (fetch, keep-alive) and was never closed: node's own
# housekeeping (http's date cache, the sockets' idle timers) runs after the last test
SERVED = """\
const test = require('node:test');
const assert = require('node:assert');
const http = require('node:http');
const { add } = require('../lib/calc.js');
const server = http.createServer((request, response) => response.end(String(add(2, 3))));
test('answers', async () => {
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const answer = await fetch(`http://127.0.0.1:${server.address().port}/`);
  assert.strictEqual(await answer.text(), '5');
});
"""
# a timer that holds the file 1.2 s past its last test: waited for, and named
TIMER = """\
const test = require('node:test');
const assert = require('node:assert');
const { add } = require('../lib/calc.js');
test('adds zero', () => { assert.strictEqual(add(4, 0), 4); });
setTimeout(() => {}, 1200);
"""

# an unref'd timer checks once the test has ended, then closes the server: under plain node the
# server keeps the process alive until the timer fires, so its check fails the file
CHECKS_LATER = """\
const test = require('node:test');
const assert = require('node:assert');
const net = require('node:net');
const { add } = require('../lib/calc.js');
const server = net.createServer().listen(0, '127.0.0.1');
test('adds now and later', () => {
  assert.strictEqual(add(1, 2), 3);
  setTimeout(() => {
    server.close();
    if (add(2, 2) !== 4) throw new Error('late check failed');
  }, 600).unref();
});
"""
# the same check, the server left open for good: after the timer ran, nothing can run
CHECKS_LATER_LEFT_OPEN = CHECKS_LATER.replace("    server.close();\n", "")


def lingering_project(root: Path) -> Path:
    files = {
        ".gitignore": ".mutharness/\n",
        "package.json": json.dumps({"name": "calc", "version": "1.0.0"}),
        "lib/calc.js": CALC,
        "test/left-open.test.js": LEFT_OPEN,
        "test/nested.test.js": NESTED,
        "test/late.test.js": LATE,
        "test/timer.test.js": TIMER,
        "test/served.test.js": SERVED,
        "test/checks-later.test.js": CHECKS_LATER,
        "test/checks-later-left-open.test.js": CHECKS_LATER_LEFT_OPEN,
        "specs/left-open.json": spec_text(["test/left-open.test.js", "test/nested.test.js"], 3, [
            {"name": "add subtracts", "file": "lib/calc.js", "anchor": "a + b",
             "replacement": "a - b", "expectCaught": True},
            {"name": "half doubles", "file": "lib/calc.js", "anchor": "n / 2",
             "replacement": "n * 2", "expectCaught": True},
        ]),
        "specs/late.json": spec_text(["test/late.test.js"], 2, [
            {"name": "no cap", "file": "lib/calc.js", "anchor": "(n > 10 ? 10 : n)",
             "replacement": "(n)", "expectCaught": True},
        ]),
        "specs/served.json": spec_text(["test/served.test.js"], 1, [
            {"name": "add subtracts", "file": "lib/calc.js", "anchor": "a + b",
             "replacement": "a - b", "expectCaught": True},
        ]),
        "specs/checks-later.json": spec_text(
            ["test/checks-later.test.js", "test/checks-later-left-open.test.js"], 2, [
                {"name": "two twos make five", "file": "lib/calc.js", "anchor": "a + b",
                 "replacement": "(a === 2 && b === 2 ? 5 : a + b)", "expectCaught": True},
            ]),
        "specs/timer.json": spec_text(["test/timer.test.js"], 1, [
            {"name": "add ignores b", "file": "lib/calc.js", "anchor": "a + b",
             "replacement": "a", "expectCaught": False},
        ]),
    }
    return committed(root, files, "tests that leave things open")



@pytest.mark.skipif(NODE is None, reason="node (.ci/run installs it)")
@pytest.mark.parametrize("node", NODES)
def test_files_that_leave_a_server_open_end_with_every_count_and_are_named(
    tmp_path: Path, git_home: Path, cli: Cli, node: str
) -> None:
    project = lingering_project(tmp_path / "calc")

    done = cli(project, "verify", "specs/left-open.json", "specs/late.json", "--node", node,
               "--baseline-timeout", "60", timeout=600)

    found = results(project)
    left_open, late = found["specs"]
    assert (left_open["error"], late["error"]) == ("", ""), done.out + done.err
    # node's own totals, nested suites and the test made after a timer counted
    assert (left_open["baseline"]["passed"], left_open["baseline"]["failed"]) == (3, 0)
    assert (late["baseline"]["passed"], late["baseline"]["failed"]) == (2, 0)
    assert [(m["verdict"], m["facts"]["failing"]) for m in left_open["mutations"]] == [
        ("CAUGHT", ["test/left-open.test.js > adds"]),
        ("CAUGHT", ["test/nested.test.js > halves > later > after a timer",
                    "test/nested.test.js > halves > at once"]),
    ]
    assert [(m["verdict"], m["facts"]["failing"]) for m in late["mutations"]] == [
        ("CAUGHT", ["test/late.test.js > big numbers are capped"])]
    assert done.code == 0, done.out + done.err
    # each released file named once, with what held it; the late file ended by itself
    released = [note for note in found["notes"] if "kept node running after" in note]
    assert sorted(note.split(" ")[0] for note in released) == [
        "test/left-open.test.js", "test/nested.test.js"], found["notes"]
    for note in released:
        assert re.fullmatch(
            r"test/(left-open|nested)\.test\.js kept node running after its last test \(open: "
            r"Server\); let end after \d+\.\d s in which no code ran, every count node's own: "
            r"close what it opens in an after\(\) hook", note), note
    assert "test/late.test.js" not in " ".join(found["notes"])
    assert "test/left-open.test.js kept node running after its last test" in done.err
    facts = left_open["baseline"]["runner_facts"]["lingered"]
    assert [(entry["file"], entry["released"]) for entry in facts] == [
        ("test/left-open.test.js", True), ("test/nested.test.js", True)]


@pytest.mark.skipif(NODE is None, reason="node (.ci/run installs it)")
@wine_cannot("node's TCP connect to a local server fails there: connect UNKNOWN, errno -4094")
@pytest.mark.parametrize("node", NODES)
def test_a_file_whose_open_server_answered_a_request_ends_with_its_counts(
    tmp_path: Path, git_home: Path, cli: Cli, node: str
) -> None:
    project = lingering_project(tmp_path / "calc")

    done = cli(project, "verify", "specs/served.json", "--node", node,
               "--baseline-timeout", "60", timeout=600)

    [spec] = results(project)["specs"]
    assert spec["error"] == "", done.out + done.err
    assert (spec["baseline"]["passed"], spec["baseline"]["failed"]) == (1, 0)
    assert [(m["verdict"], m["facts"]["failing"]) for m in spec["mutations"]] == [
        ("CAUGHT", ["test/served.test.js > answers"])]
    assert done.code == 0, done.out + done.err
    [entry] = spec["baseline"]["runner_facts"]["lingered"]
    assert (entry["file"], entry["released"]) == ("test/served.test.js", True)
    assert "Server" in entry["holding"]


@pytest.mark.skipif(NODE is None, reason="node (.ci/run installs it)")
@pytest.mark.parametrize("node", NODES)
def test_a_file_a_timer_holds_is_waited_for_and_named_with_how_long(
    tmp_path: Path, git_home: Path, cli: Cli, node: str
) -> None:
    project = lingering_project(tmp_path / "calc")

    done = cli(project, "verify", "specs/timer.json", "--node", node, timeout=600)

    [spec] = results(project)["specs"]
    assert spec["error"] == "", done.out + done.err
    assert [m["verdict"] for m in spec["mutations"]] == ["SURVIVED"]
    assert done.code == 0, done.out + done.err
    [note] = [note for note in results(project)["notes"] if "kept node running" in note]
    assert re.fullmatch(
        r"test/timer\.test\.js kept node running \d+\.\d s after its last test \(open: "
        r"Timeout\); every run of it waits so long: close what it opens in an after\(\) hook",
        note), note
    [entry] = spec["baseline"]["runner_facts"]["lingered"]
    assert (entry["file"], entry["released"], entry["holding"]) == (
        "test/timer.test.js", False, ["Timeout"])
    assert entry["seconds"] >= 1.0


@pytest.mark.skipif(NODE is None, reason="node (.ci/run installs it)")
@pytest.mark.parametrize("node", NODES)
def test_an_unref_d_timer_another_handle_keeps_waiting_runs_before_the_file_is_let_end(
    tmp_path: Path, git_home: Path, cli: Cli, node: str
) -> None:
    project = lingering_project(tmp_path / "calc")

    done = cli(project, "verify", "specs/checks-later.json", "--node", node,
               "--baseline-timeout", "60", timeout=600)

    [spec] = results(project)["specs"]
    assert spec["error"] == "", done.out + done.err
    # as under plain node: each file's late check ran, and failed the test that set it
    assert [(m["verdict"], sorted(m["facts"]["failing"])) for m in spec["mutations"]] == [
        ("CAUGHT", ["test/checks-later-left-open.test.js > adds now and later",
                    "test/checks-later.test.js > adds now and later"])]
    assert done.code == 0, done.out + done.err
    lingered = {entry["file"]: entry for entry in spec["baseline"]["runner_facts"]["lingered"]}
    # the file whose timer closed the server ended by itself; the other was let end after it
    assert "test/checks-later.test.js" not in lingered
    entry = lingered["test/checks-later-left-open.test.js"]
    assert (entry["released"], entry["holding"]) == (True, ["Server", "unref'd Timeout"])
    assert entry["seconds"] >= 0.6


# an installed package's own unref'd timer (a pool's idle timeout, a cache's sweep): its
# housekeeping, as node's own is, never waited for
LIBRARY_TIMER = "exports.sweepLater = () => { setTimeout(() => {}, 5000).unref(); };\n"
USES_LIBRARY = """\
const test = require('node:test');
const assert = require('node:assert');
const net = require('node:net');
const { sweepLater } = require('sweeper');
const { add } = require('../lib/calc.js');
net.createServer().listen(0, '127.0.0.1');
test('adds', () => { sweepLater(); assert.strictEqual(add(2, 3), 5); });
"""


@pytest.mark.skipif(NODE is None, reason="node (.ci/run installs it)")
@pytest.mark.skipif(not LINKS_WORK, reason="the user's node_modules is not linked into a "
                    "Windows workspace (repo.installed.LINKS_WORK): no installed package runs")
def test_an_installed_package_s_unref_d_timer_is_not_waited_for(
    tmp_path: Path, git_home: Path, cli: Cli
) -> None:
    project = committed(tmp_path / "calc", {
        ".gitignore": ".mutharness/\nnode_modules/\n",
        "package.json": json.dumps({"name": "calc", "version": "1.0.0"}),
        "lib/calc.js": CALC,
        "test/library.test.js": USES_LIBRARY,
        "specs/library.json": spec_text(["test/library.test.js"], 1, [
            {"name": "add subtracts", "file": "lib/calc.js", "anchor": "a + b",
             "replacement": "a - b", "expectCaught": True}]),
    }, "a test of a package with its own timer")
    (project / "node_modules/sweeper").mkdir(parents=True)  # installed, never committed
    (project / "node_modules/sweeper/index.js").write_text(LIBRARY_TIMER, encoding="utf-8")

    done = cli(project, "verify", "specs/library.json", "--baseline-timeout", "60")

    [spec] = results(project)["specs"]
    assert [m["verdict"] for m in spec["mutations"]] == ["CAUGHT"], done.out + done.err
    [entry] = spec["baseline"]["runner_facts"]["lingered"]
    assert (entry["released"], entry["holding"]) == (True, ["Server"])
    assert entry["seconds"] < 2.0  # not the package's 5 s


def _lines(*records: dict[str, Any]) -> str:
    return "".join(json.dumps(record) + "\n" for record in records)


READ_TABLE = [
    ("nothing lingered", _lines({"type": "settled", "file": "/w/t/a.js"},
                                {"type": "exit", "file": "/w/t/a.js", "ms": 3, "open": []}), ()),
    ("released", _lines({"type": "released", "file": "/w/t/a.js", "ms": 600, "open": ["Server"]},
                        {"type": "exit", "file": "/w/t/a.js", "ms": 612, "open": ["Server"]}),
     (Lingered("t/a.js", 0.6, True, ("Server",)),)),
    ("waited for", _lines({"type": "exit", "file": "/w/t/b.js", "ms": 1500,
                           "open": ["Timeout"]}),
     (Lingered("t/b.js", 1.5, False, ("Timeout",)),)),
    ("just under the threshold", _lines({"type": "exit", "file": "/w/t/b.js", "ms": 999}), ()),
    ("a file outside the run's directory keeps its path",
     _lines({"type": "exit", "file": "/elsewhere/c.js", "ms": 2000}),
     (Lingered("/elsewhere/c.js", 2.0, False, ()),)),
    ("lines a test wrote there are skipped",
     "not json\n[1]\n" + _lines({"type": "exit", "file": 7, "ms": 5000},
                                {"type": "exit", "file": "/w/t/d.js", "ms": -1},
                                {"type": "exit", "file": "/w/t/d.js", "ms": True},
                                {"type": "exit", "file": "/w/t/e.js", "ms": 1000,
                                 "open": ["Socket", 3, "x" * 200]}),
     (Lingered("t/e.js", 1.0, False, ("Socket", "x" * 80)),)),
]


@pytest.mark.parametrize(("case", "text", "expected"), READ_TABLE, ids=[r[0] for r in READ_TABLE])
def test_the_watch_records_are_read_into_the_files_that_lingered(
    tmp_path: Path, case: str, text: str, expected: tuple[Lingered, ...]
) -> None:
    del case
    path = tmp_path / "linger.jsonl"
    path.write_text(text, encoding="utf-8")

    assert read_lingering(path, Path("/w")) == expected


def test_no_watch_file_is_no_lingering(tmp_path: Path) -> None:
    assert read_lingering(tmp_path / "absent.jsonl", tmp_path) == ()
