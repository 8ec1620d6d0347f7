"""node_events.read_events on the records of the real reporter under real `node --test` runs."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from mutharness.repo.files import copy_file
from mutharness.runners.node import events as node_events
from mutharness.runners.node.events import NodeEvents, read_events

NODE = shutil.which("node")  # from PATH: PATH=<node 24 bin>:$PATH switches the version
REPORTER = Path(node_events.__file__).with_name("_reporter.mjs")
# approved for win32 in specs/platform-skips.json, with exactly this reason
NULL_DEVICE_REASON = (
    "POSIX only: node 22's fsync of /dev/null fails there; Windows' nul device is another case"
)
FIXTURE = Path(__file__).parent / "fixtures" / "nodeproject"
DROPPED = ("NODE_OPTIONS", "NODE_TEST_CONTEXT", "FORCE_COLOR")
TIMEOUT_S = 120

pytestmark = pytest.mark.skipif(
    NODE is None, reason="no `node` on PATH: the node reporter needs a real node to run"
)


def node_env(events: Path | None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in DROPPED}
    env["NO_COLOR"] = "1"
    if events is not None:
        env["MUTHARNESS_NODE_EVENTS"] = str(events)
    return env


def node_args(*tests: str, preload: str | None = None, destination: str = "stdout") -> list[str]:
    assert NODE is not None
    return [
        NODE,
        "--test",
        "--test-concurrency=1",
        *(["--import", preload] if preload else []),
        f"--test-reporter={REPORTER.as_uri()}",  # a file URL: node reads C: as a URL scheme
        f"--test-reporter-destination={destination}",
        *tests,
    ]


@pytest.fixture(scope="module")
def node_major() -> int:
    assert NODE is not None
    version = subprocess.run([NODE, "--version"], capture_output=True, text=True, check=True)
    return int(version.stdout.strip().lstrip("v").split(".")[0])


class Project:
    """A directory of node:test files, run with the reporter; the events file lies outside it."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "project"
        self.root.mkdir()
        self.events = tmp_path / "events.jsonl"
        (self.root / "package.json").write_text('{"type": "module"}\n')

    def write(self, relative: str, text: str) -> str:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return relative

    def run(self, *tests: str, preload: str | None = None) -> subprocess.CompletedProcess[str]:
        self.events.unlink(missing_ok=True)
        return subprocess.run(
            node_args(*tests, preload=preload),
            cwd=self.root,
            env=node_env(self.events),
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )

    def read(self) -> NodeEvents:
        return read_events(self.events, self.root)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def outcomes(events: NodeEvents) -> dict[str, str]:
    return {test.id: test.outcome for test in events.tests}


def test_counts_come_from_per_test_records_whether_or_not_node_sends_a_summary(
    project: Project, node_major: int
) -> None:
    project.write(
        "test/math.test.js",
        "import { test } from 'node:test';\n"
        "import assert from 'node:assert/strict';\n"
        "test('adds', () => { assert.equal(1 + 1, 2); });\n"
        "test('subtracts', () => { assert.equal(3 - 1, 2); });\n"
        "test('is wrong', () => { assert.equal(1 + 1, 3); });\n",
    )
    result = project.run("test/math.test.js")
    events = project.read()
    assert result.returncode == 1
    assert events.state == "ok"
    assert events.node_version.startswith(f"v{node_major}.")
    assert outcomes(events) == {
        "test/math.test.js > adds": "passed",
        "test/math.test.js > subtracts": "passed",
        "test/math.test.js > is wrong": "failed",
    }
    assert events.tests[2].reason.startswith("Expected values to be strictly equal")
    assert events.files == ("test/math.test.js",)
    assert events.file_failures == ()
    assert events.diagnostics["tests"] == 3
    assert events.diagnostics["pass"] == 2
    assert events.diagnostics["fail"] == 1
    if node_major < 22:
        assert events.summary is None  # node 20 sends no test:summary at all
    else:
        assert events.summary is not None
        assert (events.summary["passed"], events.summary["failed"]) == (2, 1)


def test_a_suite_is_not_counted_as_a_test(project: Project) -> None:
    project.write(
        "test/nested.test.js",
        "import { describe, it } from 'node:test';\n"
        "describe('outer', () => {\n"
        "  it('a', () => {});\n"
        "  describe('inner', () => {\n"
        "    it('b', () => {});\n"
        "    it('c', () => {});\n"
        "  });\n"
        "  it('d', () => {});\n"
        "});\n"
        "it('top', () => {});\n",
    )
    project.run("test/nested.test.js")
    events = project.read()
    assert [test.id for test in events.tests] == [
        "test/nested.test.js > outer > a",
        "test/nested.test.js > outer > inner > b",
        "test/nested.test.js > outer > inner > c",
        "test/nested.test.js > outer > d",
        "test/nested.test.js > top",
    ]
    assert {test.outcome for test in events.tests} == {"passed"}
    assert events.suite_failures == ()
    assert events.diagnostics["tests"] == 5
    assert events.diagnostics["suites"] == 2


def test_skipped_and_todo_tests_keep_their_reasons(project: Project) -> None:
    project.write(
        "test/skip.test.js",
        "import { test, describe, it } from 'node:test';\n"
        "test('skip option', { skip: 'not on this os' }, () => {});\n"
        "test('skip true', { skip: true }, () => {});\n"
        "test('skip at run time', (t) => { t.skip('decided at run time'); });\n"
        "describe('s', () => { it.skip('it.skip', () => {}); it.todo('it.todo'); });\n"
        "test('todo option', { todo: 'later' }, () => {});\n"
        "test('failing todo', { todo: true }, () => { throw new Error('x'); });\n",
    )
    result = project.run("test/skip.test.js")
    events = project.read()
    assert result.returncode == 0  # a failing todo does not fail the run
    assert [(t.id, t.outcome, t.reason) for t in events.tests] == [
        ("test/skip.test.js > skip option", "skipped", "not on this os"),
        ("test/skip.test.js > skip true", "skipped", ""),
        ("test/skip.test.js > skip at run time", "skipped", "decided at run time"),
        ("test/skip.test.js > s > it.skip", "skipped", ""),
        ("test/skip.test.js > s > it.todo", "todo", ""),
        ("test/skip.test.js > todo option", "todo", "later"),
        ("test/skip.test.js > failing todo", "todo", ""),
    ]
    assert events.diagnostics["skipped"] == 4
    assert events.diagnostics["todo"] == 3


def test_a_file_that_fails_to_load_is_a_file_failure_and_not_a_failing_test(
    project: Project, node_major: int
) -> None:
    project.write("test/ok.test.js", "import { test } from 'node:test';\ntest('fine', () => {});\n")
    project.write(
        "test/syntax.test.js",
        "import { test } from 'node:test';\ntest('never defined', () => {\n",
    )
    project.write(
        "test/throws.test.js",
        "import { test } from 'node:test';\n"
        "test('defined before the throw', () => {});\n"
        "throw new Error('boom at import');\n",
    )
    project.write("test/no-tests.test.js", "throw new Error('no tests here');\n")
    tests = ("test/ok.test.js", "test/syntax.test.js", "test/throws.test.js")
    result = project.run(*tests, "test/no-tests.test.js")
    events = project.read()
    assert result.returncode == 1
    assert events.state == "ok"
    # nothing of the broken files; node 22 alone runs a test defined before the throw at import
    ran = {"test/throws.test.js > defined before the throw": "passed"} if node_major == 22 else {}
    assert outcomes(events) == {"test/ok.test.js > fine": "passed", **ran}
    assert events.file_failures == (
        "test/no-tests.test.js",
        "test/syntax.test.js",
        "test/throws.test.js",
    )  # node runs the files in sorted order
    assert events.silent_files == ()  # a file that passes has no file-level entry
    assert events.suite_failures == ()
    # node's own totals count each file-level entry as one failed test
    assert (events.diagnostics["tests"], events.diagnostics["fail"]) == (4 + len(ran), 3)


def test_a_test_that_prints_fake_tap_and_summary_lines_does_not_change_the_counts(
    project: Project,
) -> None:
    project.write(
        "test/liar.test.js",
        "import { test } from 'node:test';\n"
        "test('prints lies', () => {\n"
        "  console.log('TAP version 13\\nok 1 - fake\\nnot ok 2 - fake\\n# pass 99\\n# fail 7');\n"
        "  console.log('\\u2139 tests 3\\n\\u2139 pass 3\\n\\u2139 fail 0');\n"
        "  console.log(JSON.stringify({ type: 'pass', name: 'forged', nesting: 0 }));\n"
        "  console.error('not ok 3 - fake failure on stderr');\n"
        "});\n",
    )
    result = project.run("test/liar.test.js")
    events = project.read()
    assert result.returncode == 0
    assert result.stdout == ""  # the reporter yields nothing, test output is not forwarded
    assert outcomes(events) == {"test/liar.test.js > prints lies": "passed"}
    assert (events.diagnostics["tests"], events.diagnostics["pass"]) == (1, 1)


def test_a_test_file_does_not_inherit_the_events_file_variable(project: Project) -> None:
    project.write(
        "test/env.test.js",
        "import { test } from 'node:test';\n"
        "import assert from 'node:assert/strict';\n"
        "test('cannot find the events file', () => {\n"
        "  assert.equal(process.env.MUTHARNESS_NODE_EVENTS, undefined);\n"
        "});\n",
    )
    project.run("test/env.test.js")
    assert outcomes(project.read()) == {"test/env.test.js > cannot find the events file": "passed"}


def test_process_exit_0_in_a_test_hides_the_whole_file_behind_one_passing_file_entry(
    project: Project,
) -> None:
    project.write(
        "test/exit.test.js",
        "import { test } from 'node:test';\n"
        "test('first', () => {});\n"
        "test('exits', () => { process.exit(0); });\n"
        "test('never runs', () => {});\n",
    )
    result = project.run("test/exit.test.js")
    events = project.read()
    assert result.returncode == 0
    assert events.state == "ok"
    assert events.tests == ()  # not even 'first', which ran before the exit
    assert events.silent_files == ("test/exit.test.js",)
    assert events.file_failures == ()
    # node counts the file itself as the one passing test
    assert (events.diagnostics["tests"], events.diagnostics["pass"]) == (1, 1)


def test_process_exit_0_while_tests_are_pending_drops_them_but_they_stay_enqueued(
    project: Project,
) -> None:
    project.write(
        "test/late-exit.test.js",
        "import { test } from 'node:test';\n"
        "test('first', () => {});\n"
        "test('second', async () => { await new Promise((r) => setTimeout(r, 5000)); });\n"
        "test('third', () => {});\n"
        "setTimeout(() => process.exit(0), 300);\n",
    )
    result = project.run("test/late-exit.test.js")
    events = project.read()
    assert result.returncode == 0
    assert events.state == "ok"
    assert outcomes(events) == {"test/late-exit.test.js > first": "passed"}
    assert events.silent_files == ()  # no file-level entry this time: only enqueued tests tell
    assert events.file_failures == ()
    assert events.unreported == (
        "test/late-exit.test.js:3:1 second",
        "test/late-exit.test.js:4:1 third",
    )
    assert (events.diagnostics["tests"], events.diagnostics["pass"]) == (1, 1)


def test_process_exit_1_in_a_test_is_a_file_failure(project: Project) -> None:
    project.write(
        "test/exit1.test.js",
        "import { test } from 'node:test';\n"
        "test('first', () => {});\n"
        "test('exits', () => { process.exit(1); });\n",
    )
    result = project.run("test/exit1.test.js")
    events = project.read()
    assert result.returncode == 1
    assert events.tests == ()
    assert events.file_failures == ("test/exit1.test.js",)


def test_an_error_after_a_test_ended_fails_the_test_node_names_not_the_file_s_loading(
    project: Project,
) -> None:
    project.write(
        "test/late-throw.test.js",
        "import { test } from 'node:test';\n"
        "test('ends before its timer', () => {\n"
        "  setTimeout(() => { throw new Error('late'); }, 10);\n"
        "});\n"
        "test('waits', async () => { await new Promise((r) => setTimeout(r, 100)); });\n",
    )
    result = project.run("test/late-throw.test.js")
    events = project.read()
    assert result.returncode == 1
    # node: pass 2, fail 1 (the file), its diagnostic naming the test whose timer threw
    assert (events.diagnostics["pass"], events.diagnostics["fail"]) == (2, 1)
    assert outcomes(events) == {"test/late-throw.test.js > ends before its timer": "failed",
                                "test/late-throw.test.js > waits": "passed"}
    assert events.tests[0].reason.startswith(
        'Error: Test "ends before its timer" at test/late-throw.test.js:2:1 generated '
        "asynchronous activity after the test ended")
    assert (events.file_failures, events.late) == ((), ("test/late-throw.test.js",))


def test_an_error_of_no_test_after_the_last_one_fails_the_file_s_last_test(
    project: Project,
) -> None:
    project.write(
        "test/late-top.test.js",
        "import { test } from 'node:test';\n"
        "test('first', () => {});\n"
        "test('last', () => {});\n"
        "test.skip('skipped', () => {});\n"
        "setTimeout(() => { throw new Error('late'); }, 50);\n",
    )
    result = project.run("test/late-top.test.js")
    events = project.read()
    assert result.returncode == 1
    assert outcomes(events) == {"test/late-top.test.js > first": "passed",
                                "test/late-top.test.js > last": "failed",
                                "test/late-top.test.js > skipped": "skipped"}
    assert "A resource generated asynchronous activity after the test ended" in (
        events.tests[1].reason)
    assert (events.file_failures, events.late) == ((), ("test/late-top.test.js",))


def test_a_file_that_sets_its_own_exit_code_after_its_tests_stays_a_file_failure(
    project: Project,
) -> None:
    project.write(
        "test/exit-code.test.js",
        "import { test } from 'node:test';\n"
        "test('passes', () => {});\n"
        "process.exitCode = 1;\n",
    )
    result = project.run("test/exit-code.test.js")
    events = project.read()
    assert result.returncode == 1
    # node: pass 1, fail 1 (the file), and no word of an error after a test: no test is blamed
    assert outcomes(events) == {"test/exit-code.test.js > passes": "passed"}
    assert (events.file_failures, events.late) == (("test/exit-code.test.js",), ())


def test_a_failing_hook_cancels_or_fails_the_tests_and_is_a_suite_failure(
    project: Project,
) -> None:
    project.write(
        "test/hooks.test.js",
        "import { describe, it, before, beforeEach, after } from 'node:test';\n"
        "describe('before fails', () => {\n"
        "  before(() => { throw new Error('before boom'); });\n"
        "  it('x1', () => {});\n"
        "  it('x2', () => {});\n"
        "});\n"
        "describe('beforeEach fails', () => {\n"
        "  beforeEach(() => { throw new Error('beforeEach boom'); });\n"
        "  it('y1', () => {});\n"
        "});\n"
        "describe('after fails', () => {\n"
        "  after(() => { throw new Error('after boom'); });\n"
        "  it('z1', () => {});\n"
        "});\n"
        "describe('body throws', () => {\n"
        "  it('w1', () => {});\n"
        "  throw new Error('body boom');\n"
        "});\n",
    )
    result = project.run("test/hooks.test.js")
    events = project.read()
    assert result.returncode == 1
    assert [(t.id, t.outcome) for t in events.tests] == [
        ("test/hooks.test.js > before fails > x1", "cancelled"),
        ("test/hooks.test.js > before fails > x2", "cancelled"),
        ("test/hooks.test.js > beforeEach fails > y1", "failed"),
        ("test/hooks.test.js > after fails > z1", "passed"),
        ("test/hooks.test.js > body throws > w1", "cancelled"),
    ]
    assert events.tests[0].reason == "test did not finish before its parent and was cancelled"
    assert events.tests[2].reason == "failed running beforeEach hook: beforeEach boom"
    # 'beforeEach fails' failed only through its test: not a failure of its own
    assert events.suite_failures == (
        "test/hooks.test.js > before fails",
        "test/hooks.test.js > after fails",
        "test/hooks.test.js > body throws",
    )
    assert events.diagnostics["cancelled"] == 3
    assert events.diagnostics["fail"] == 1


def test_a_timed_out_test_and_a_parent_that_did_not_wait_are_cancelled(project: Project) -> None:
    project.write(
        "test/cancel.test.js",
        "import { test } from 'node:test';\n"
        "test('too slow', { timeout: 50 }, async () => {\n"
        "  await new Promise((r) => setTimeout(r, 500));\n"
        "});\n"
        "test('parent', (t) => {\n"
        "  t.test('not awaited', async () => { await new Promise((r) => setTimeout(r, 50)); });\n"
        "  throw new Error('parent boom');\n"
        "});\n",
    )
    project.run("test/cancel.test.js")
    events = project.read()
    assert [(t.id, t.outcome) for t in events.tests] == [
        ("test/cancel.test.js > too slow", "cancelled"),
        ("test/cancel.test.js > parent > not awaited", "cancelled"),
        ("test/cancel.test.js > parent", "failed"),  # a t.test parent is a test, as node counts
    ]
    assert events.tests[0].reason == "test timed out after 50ms"
    assert (events.diagnostics["cancelled"], events.diagnostics["fail"]) == (2, 1)


def test_duplicate_names_get_unique_ids_that_are_stable_across_runs(project: Project) -> None:
    project.write(
        "test/dup.test.js",
        "import { describe, it, test } from 'node:test';\n"
        "test('same', () => {});\n"
        "test('same', () => {});\n"
        "describe('group', () => { it('x', () => {}); it('x', () => {}); });\n"
        "describe('group', () => { it('x', () => {}); });\n"
        "test('same', () => {});\n",
    )
    project.run("test/dup.test.js")
    first = [test.id for test in project.read().tests]
    project.run("test/dup.test.js")
    second = [test.id for test in project.read().tests]
    assert first == [
        "test/dup.test.js > same",
        "test/dup.test.js > same #2",
        "test/dup.test.js > group > x",
        "test/dup.test.js > group > x #2",
        "test/dup.test.js > group #2 > x",
        "test/dup.test.js > same #3",
    ]
    assert second == first


def test_a_preload_given_with_import_reaches_every_test_file(project: Project) -> None:
    project.write("test/setup-env.mjs", "process.env.APP_MODE = 'test';\n")
    body = (
        "import { test } from 'node:test';\n"
        "import assert from 'node:assert/strict';\n"
        "test('sees the preload', () => { assert.equal(process.env.APP_MODE, 'test'); });\n"
    )
    project.write("test/a.test.js", body)
    project.write("test/b.test.js", body)
    project.run("test/a.test.js", "test/b.test.js", preload="./test/setup-env.mjs")
    assert set(outcomes(project.read()).values()) == {"passed"}
    assert len(project.read().tests) == 2
    project.run("test/a.test.js", "test/b.test.js")
    assert set(outcomes(project.read()).values()) == {"failed"}


def test_what_a_spawned_child_process_prints_is_not_counted(project: Project) -> None:
    project.write(
        "test/spawn.test.js",
        "import { test } from 'node:test';\n"
        "import { spawnSync } from 'node:child_process';\n"
        "test('spawns', () => {\n"
        "  const script = 'console.log(\"ok 1 - from child\\\\n# pass 50\")';\n"
        "  const child = spawnSync(process.execPath, ['-e', script], { stdio: 'inherit' });\n"
        "  if (child.status !== 0) throw new Error('child failed');\n"
        "});\n",
    )
    project.run("test/spawn.test.js")
    events = project.read()
    assert outcomes(events) == {"test/spawn.test.js > spawns": "passed"}
    assert events.diagnostics["pass"] == 1


def test_node_test_context_in_the_environment_makes_node_run_nothing_and_write_no_events(
    project: Project,
) -> None:
    project.write("test/a.test.js", "import { test } from 'node:test';\ntest('a', () => {});\n")
    env = node_env(project.events)
    env["NODE_TEST_CONTEXT"] = "child-v8"
    result = subprocess.run(
        node_args("test/a.test.js"),
        cwd=project.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert result.returncode == 0  # node says nothing went wrong...
    assert project.read().state == "missing"  # ...but it ran no test at all


def test_a_cut_or_damaged_events_file_is_unfinished_or_unreadable(project: Project) -> None:
    project.write("test/a.test.js", "import { test } from 'node:test';\ntest('a', () => {});\n")
    project.run("test/a.test.js")
    lines = project.events.read_text().splitlines(keepends=True)
    assert json.loads(lines[-1]) == {"type": "end"}
    assert project.read().state == "ok"

    def state_of(text: str) -> str:
        project.events.write_text(text)
        return project.read().state

    assert state_of("".join(lines[:-1])) == "unfinished"  # no end record
    assert state_of("".join(lines[:-1]) + lines[-1][:5]) == "unfinished"  # cut mid-write
    assert state_of(lines[0] + "{not json\n" + "".join(lines[1:])) == "unreadable"
    assert state_of("".join(lines[1:])) == "unreadable"  # no start record
    assert state_of("") == "unreadable"
    assert state_of("".join(lines) + lines[0]) == "unreadable"  # a record after the end
    project.events.write_bytes(b"\xff\xfe")
    assert project.read().state == "unreadable"


def test_a_test_that_never_settles_is_cancelled_before_node_24_and_hangs_node_24(
    project: Project, node_major: int
) -> None:
    project.write(
        "test/pending.test.js",
        "import { test } from 'node:test';\n"
        "test('pending forever', async () => { await new Promise(() => {}); });\n"
        "test('after it', () => {});\n",
    )
    project.events.unlink(missing_ok=True)
    process = subprocess.Popen(
        node_args("test/pending.test.js"),
        cwd=project.root,
        env=node_env(project.events),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        process.wait(timeout=10)
        hung = False
    except subprocess.TimeoutExpired:
        hung = True
        os.killpg(process.pid, signal.SIGTERM)  # the whole group: the per-file child too
        process.wait(timeout=TIMEOUT_S)
    events = project.read()
    if not hung:
        assert events.state == "ok"
        assert outcomes(events) == {
            "test/pending.test.js > pending forever": "cancelled",
            "test/pending.test.js > after it": "cancelled",
        }
        assert events.tests[0].reason == (
            "Promise resolution is still pending but the event loop has already resolved"
        )
    else:
        assert node_major >= 24, "only node 24 was seen to hang here"
        assert events.state == "unfinished"  # node reported the interruption, not an end
        assert events.tests == ()
        assert events.unreported == (
            "test/pending.test.js:2:1 pending forever",
            "test/pending.test.js:3:1 after it",
        )


@pytest.mark.skipif(sys.platform == "win32", reason=NULL_DEVICE_REASON)
def test_the_null_device_is_a_reporter_destination_only_before_node_22(
    project: Project, node_major: int
) -> None:
    project.write("test/a.test.js", "import { test } from 'node:test';\ntest('a', () => {});\n")
    result = subprocess.run(
        node_args("test/a.test.js", destination=os.devnull),
        cwd=project.root,
        env=node_env(project.events),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert project.read().state == "ok"  # the events file is complete either way
    if node_major < 22:
        assert result.returncode == 0
    else:
        assert result.returncode == 1  # closing the destination fsyncs it: EINVAL
        assert "EINVAL" in result.stderr


def fixture_copy(tmp_path: Path, name: str) -> Path:
    work = tmp_path / name
    shutil.copytree(FIXTURE, work, ignore=shutil.ignore_patterns("specs", "TRUTH.json"),
                    copy_function=copy_file)
    return work


def run_fixture(work: Path, tests: list[str], events: Path) -> NodeEvents:
    events.unlink(missing_ok=True)
    subprocess.run(
        node_args(*tests, preload="./test/setup-env.mjs"),
        cwd=work,
        env=node_env(events),
        capture_output=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    return read_events(events, work)


def totals(events: NodeEvents) -> tuple[int, int, list[str], list[str]]:
    """Passed and failed as node counts them (file-level entries included), failing ids, files."""

    def count(outcome: str) -> int:
        return sum(test.outcome == outcome for test in events.tests)

    failing: list[str] = [
        test.id for test in events.tests if test.outcome in ("failed", "cancelled")
    ]
    return (
        count("passed") + len(events.silent_files),
        count("failed") + len(events.file_failures),
        failing,
        list(events.file_failures),
    )


def test_the_fixture_project_reports_what_its_hand_measured_truth_says(tmp_path: Path) -> None:
    truth = json.loads((FIXTURE / "TRUTH.json").read_text(encoding="utf-8"))
    events = tmp_path / "events.jsonl"
    for spec_id in sorted(key for key in truth if not key.startswith("_")):
        spec = json.loads((FIXTURE / "specs" / f"{spec_id}.json").read_text(encoding="utf-8"))
        baseline = run_fixture(fixture_copy(tmp_path, f"{spec_id}-base"), spec["tests"], events)
        assert baseline.state == "ok"
        expected = truth[spec_id]["baseline"]
        assert totals(baseline)[:2] == (expected["passed"], expected["failed"]), spec_id
        assert totals(baseline)[0] == spec["expectBaselinePass"]
        assert sum(t.outcome == "skipped" for t in baseline.tests) == expected["skipped"]
        for index, (mutation, measured) in enumerate(
            zip(spec["mutations"], truth[spec_id]["mutations"], strict=True)
        ):
            work = fixture_copy(tmp_path, f"{spec_id}-m{index}")
            target = work / mutation["file"]
            text = target.read_text(encoding="utf-8")
            assert text.count(mutation["anchor"]) == 1
            target.write_text(text.replace(mutation["anchor"], mutation["replacement"], 1))
            mutated = run_fixture(work, spec["tests"], events)
            assert mutated.state == "ok"
            assert totals(mutated) == (
                measured["passed"],
                measured["failed"],
                measured["failing"],
                measured["file_failures"],
            ), (spec_id, mutation["name"])
            assert bool(mutated.file_failures) == measured["file_failure"]
            caught = mutation.get("expectCaught") is not False
            assert caught == bool(measured["failing"] or measured["file_failure"])


def test_asked_to_stop_the_reporter_ends_the_run_once_the_first_failing_file_ended(
    project: Project
) -> None:
    project.write("test/a.test.js", "import { test } from 'node:test';\ntest('a', () => {});\n")
    project.write("test/b.test.js", "import { test } from 'node:test';\n"
                  "test('b fails', () => { throw new Error('no'); });\n"
                  "test('b passes', () => {});\n")
    project.write("test/c.test.js", "import { test } from 'node:test';\ntest('c', () => {});\n")
    tests = ("test/a.test.js", "test/b.test.js", "test/c.test.js")
    stopping = {**node_env(project.events), "MUTHARNESS_NODE_FIRST_FAILURE": "1"}

    done = subprocess.run(node_args(*tests), cwd=project.root, env=stopping, text=True,
                          capture_output=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)

    assert done.returncode == 1, done.stdout + done.stderr
    events = project.read()
    assert (events.state, events.stopped) == ("ok", "test/b.test.js")
    # every test of the failing file ran; the file after it never started
    assert outcomes(events) == {"test/a.test.js > a": "passed",
                                "test/b.test.js > b fails": "failed",
                                "test/b.test.js > b passes": "passed"}
    lines = project.events.read_text().splitlines(keepends=True)
    assert json.loads(lines[-2])["type"] == "stopped"
    project.events.write_text("".join(lines[:-1]) + lines[1] + lines[-1])
    assert project.read().state == "unreadable"  # a record after the stop
    # not asked: every file runs
    project.run(*tests)
    assert (project.read().stopped, len(project.read().tests)) == ("", 4)
