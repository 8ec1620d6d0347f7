"""Approved platform skips end to end: `baseline`, `--strict-skips`, `verify`, `check`."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Completed, Project, default_spec
from inproc import in_process

ProjectFactory = Callable[..., Project]
Cli = Callable[..., Completed]
REASON = "needs a real Windows console"


SKIPPING_TESTS = f'''\
import pytest
from calc import clamp


def test_clamp_below():
    assert clamp(-5, 0, 10) == 0


def test_clamp_above():
    assert clamp(50, 0, 10) == 10


@pytest.mark.skip(reason="{REASON}")
def test_console():
    assert False


@pytest.mark.skip(reason="not written yet")
def test_later():
    assert False
'''


def skipping_project(make_project: ProjectFactory, listed: bool = True) -> Project:
    """The calc project whose tests skip twice: once as the policy approves (when `listed`),
    once unlisted; the spec's pin counts the approved skip."""
    project = make_project(spec=default_spec(expectBaselinePass=3 if listed else 2, mutations=[
        default_spec()["mutations"][0]]))
    project.write("tests/test_calc.py", SKIPPING_TESTS)
    tests = [{"file": "tests/test_calc.py", "name": "test_console"}] if listed else []
    project.write("specs/platform-skips.json", json.dumps({
        "version": 1, "note": "reviewed by hand",
        "platforms": {sys.platform: {"reason": REASON, "tests": tests}},
    }, indent=2))
    project.commit("tests that skip")
    return project


def test_baseline_counts_an_approved_skip_and_not_an_unlisted_one(
    make_project: ProjectFactory, cli: Cli
) -> None:
    project = skipping_project(make_project)

    done = cli(project.root, "baseline", "specs/calc.json")

    assert done.code == 0, done.out + done.err
    assert ("ok specs/calc.json: 2 pass + 1 approved skips = 3 "
            "(approved platform skips counted); 1 unlisted skip(s) accepted, not counted"
            ) in done.out.splitlines()
    assert done.out.splitlines()[-1] == "1 spec(s) measured, 0 drift, 0 untrustworthy"


def test_strict_skips_refuses_the_unlisted_skip(make_project: ProjectFactory) -> None:
    project = skipping_project(make_project)

    done = in_process(project.root, "baseline", "specs/calc.json", "--strict-skips")

    assert done.code == 3, done.out + done.err
    line = next(line for line in done.out.splitlines() if line.startswith("UNTRUSTWORTHY"))
    assert "tests/test_calc.py::test_later" in line and "--strict-skips" in line


def test_without_the_policy_entry_the_skip_is_not_counted_and_the_pin_drifts(
    make_project: ProjectFactory
) -> None:
    project = skipping_project(make_project)
    project.write("specs/platform-skips.json", json.dumps(
        {"version": 1, "platforms": {sys.platform: {"reason": REASON, "tests": []}}}))
    project.commit("the approval is withdrawn")

    done = in_process(project.root, "baseline", "specs/calc.json")

    assert done.code == 1, done.out + done.err
    assert ("DRIFT specs/calc.json: expected=3, measured=2 pass + 0 approved skips = 2; "
            "inspect changes before editing the pin") in done.out.splitlines()
    assert json.loads((project.root / "specs/calc.json").read_text())["expectBaselinePass"] == 3


def test_a_listed_test_that_now_passes_is_untrustworthy(
    make_project: ProjectFactory
) -> None:
    project = skipping_project(make_project)
    project.write("tests/test_calc.py", SKIPPING_TESTS.replace(
        f'@pytest.mark.skip(reason="{REASON}")\ndef test_console():\n    assert False',
        "def test_console():\n    assert True"))
    project.commit("the console test runs here now")

    done = in_process(project.root, "baseline", "specs/calc.json")

    assert done.code == 3, done.out + done.err
    assert "test_console is listed for" in done.out and "did not skip (passed)" in done.out


def test_verify_honours_the_policy_and_its_evidence_shows_the_baseline_line(
    make_project: ProjectFactory, tmp_path: Path
) -> None:
    project = skipping_project(make_project)

    done = in_process(project.root, "verify", "specs", "--evidence", str(tmp_path / "evidence"))

    assert done.code == 0, done.out + done.err
    document = (tmp_path / "evidence" / "calc.md").read_text(encoding="utf-8")
    assert ("ok specs/calc.json: 2 pass + 1 approved skips = 3 "
            "(approved platform skips counted)") in document
    facts = json.loads((tmp_path / "evidence" / "calc.json").read_text(encoding="utf-8"))
    assert "specs/platform-skips.json" in facts["specs"][0]["pin"]["depends_on"]


def test_a_directory_of_specs_does_not_read_the_policy_as_a_spec(
    make_project: ProjectFactory
) -> None:
    project = skipping_project(make_project)

    done = in_process(project.root, "check")

    assert done.code == 0, done.out + done.err
    assert done.out.startswith("1 spec(s)")


def test_a_module_skipped_as_a_whole_is_a_skip_not_a_collection_error(
    make_project: ProjectFactory
) -> None:
    project = make_project(spec=default_spec(tests=["tests"]))
    project.write("tests/test_posix_only.py",
                  "import pytest\n\npytest.skip('posix only', allow_module_level=True)\n\n\n"
                  "def test_never():\n    assert False\n")
    project.commit("a module that skips as a whole")

    done = in_process(project.root, "baseline", "specs/calc.json")
    verified = in_process(project.root, "verify", "specs/calc.json")

    assert done.code == 0, done.out + done.err
    assert ("ok specs/calc.json: 4 pass + 0 approved skips = 4 (every counted test passed); "
            "1 unlisted skip(s) accepted, not counted") in done.out.splitlines()
    assert verified.code == 0, verified.out + verified.err


NODE_SKIPPING = f'''\
import {{ test }} from 'node:test';
import assert from 'node:assert/strict';

test('adds', () => {{ assert.equal(1 + 1, 2); }});
test('console', {{ skip: '{REASON}' }}, () => {{ assert.fail('never runs'); }});
test('later', {{ skip: 'not written yet' }}, () => {{ assert.fail('never runs'); }});
'''


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_skips_are_approved_by_file_name_and_reason_too(
    make_project: ProjectFactory
) -> None:
    project = make_project()
    project.write("package.json", '{"type": "module"}\n')
    project.write("test/skips.test.js", NODE_SKIPPING)
    project.spec("node", {"tests": ["test/skips.test.js"], "expectBaselinePass": 2,
                          "mutations": [{"name": "adds subtracts", "file": "test/skips.test.js",
                                         "anchor": "1 + 1", "replacement": "1 - 1"}]})
    project.write("specs/platform-skips.json", json.dumps({
        "version": 1, "platforms": {sys.platform: {"reason": REASON, "tests": [
            {"file": "test/skips.test.js", "name": "console"}]}},
    }))
    project.commit("node tests that skip")

    done = in_process(project.root, "baseline", "specs/node.json")
    strict = in_process(project.root, "baseline", "specs/node.json", "--strict-skips")

    assert done.code == 0, done.out + done.err
    assert ("ok specs/node.json: 1 pass + 1 approved skips = 2 "
            "(approved platform skips counted); 1 unlisted skip(s) accepted, not counted"
            ) in done.out.splitlines()
    assert strict.code == 3 and "test/skips.test.js > later" in strict.out
