"""The probe plugin's report gives every test the outcome pytest-json-report 1.5 gives it: one
pytest session writes both, and mutharness reads the same outcomes, skip reasons, collection
errors and exit code from each, for every bundled spec's tests and for a suite of every kind
of outcome (under pytest-xdist too). pytest-json-report is not needed in the tests'
environment any more; it stays in the harness's own only for this comparison."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from mutharness.runners.pytest.runner import (
    PROBE_MODULE,
    REPORT_OUT,
    _collection_errors,
    _outcomes,
)

ROOT = Path(__file__).resolve().parents[2]
SPECS = sorted(path for path in (ROOT / "specs").glob("*.json")
               if "tests" in json.loads(path.read_text(encoding="utf-8")))

EVERY_OUTCOME = '''\
import unittest

import pytest

pytestmark = pytest.mark.filterwarnings("ignore")


@pytest.fixture
def broken_setup():
    raise RuntimeError("setup breaks")


@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("teardown breaks")


def test_passes():
    assert True


def test_fails():
    assert 1 == 2


def test_errors_in_setup(broken_setup):
    pass


def test_passes_then_errors_in_teardown(broken_teardown):
    pass


def test_fails_then_errors_in_teardown(broken_teardown):
    assert False


def test_skips_in_its_body():
    pytest.skip("a reason with 'quotes', a \\\\ backslash and ünïcode")


@pytest.mark.skip(reason="marked")
def test_marked_skip():
    pass


@pytest.mark.skipif(True, reason="a condition")
def test_skipif():
    pass


@pytest.mark.xfail(reason="known")
def test_xfails():
    assert False


@pytest.mark.xfail(reason="unexpectedly fine")
def test_xpasses():
    pass


@pytest.mark.xfail(strict=True, reason="strict")
def test_xpasses_strictly():
    pass


@pytest.mark.parametrize("value", [1, 2, "a b", "[x]"])
def test_parametrized(value):
    assert value != 2


class TestSubTests(unittest.TestCase):
    def test_a_subtest_fails_then_one_passes(self):
        for value in (1, 2):
            with self.subTest(value=value):
                self.assertEqual(value, 2)

    def test_every_subtest_passes(self):
        for value in (1, 2):
            with self.subTest(value=value):
                self.assertTrue(value)
'''
MODULE_SKIP = 'import pytest\n\npytest.skip("the whole module", allow_module_level=True)\n'
BROKEN_MODULE = "import no_such_module_anywhere\n\n\ndef test_never_collected():\n    pass\n"


def _both_reports(cwd: Path, tests: list[str], scratch: Path, *extra: str) -> tuple[
        dict[str, Any], dict[str, Any], int]:
    """One pytest session over `tests` writing pytest-json-report's report and the probe's."""
    boot = scratch / "boot"
    boot.mkdir(parents=True)
    probe = resources.files("mutharness.runners.pytest").joinpath("_probe.py").read_bytes()
    (boot / f"{PROBE_MODULE}.py").write_bytes(probe)
    theirs, ours = scratch / "json-report.json", scratch / "probe-report.json"
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("PYTEST_", "MUTHARNESS_"))}
    env |= {"PYTHONPATH": os.pathsep.join([str(boot), str(ROOT / "src")]),
            "PYTHONDONTWRITEBYTECODE": "1", REPORT_OUT: str(ours)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", PROBE_MODULE, "-p", "no:cacheprovider",
         "-p", "no:randomly", "--json-report", f"--json-report-file={theirs}",
         "--json-report-omit", "log", "traceback", "streams", "warnings", "keywords",
         "-q", "--maxfail=0", *extra, *tests],  # -q ends the omit list
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )
    assert theirs.is_file() and ours.is_file(), done.stdout[-3000:] + done.stderr[-3000:]
    return (json.loads(theirs.read_text(encoding="utf-8")),
            json.loads(ours.read_text(encoding="utf-8")), done.returncode)


def _read_alike(theirs: dict[str, Any], ours: dict[str, Any], status: int) -> None:
    assert _outcomes(ours) == _outcomes(theirs)
    assert _collection_errors(ours) == _collection_errors(theirs)
    assert ours["exitcode"] == theirs["exitcode"] == status


@pytest.mark.parametrize("spec", SPECS, ids=[path.stem for path in SPECS])
def test_the_probe_reports_every_outcome_of_a_bundled_spec_s_tests_as_pytest_json_report_does(
    spec: Path, tmp_path: Path
) -> None:
    tests = json.loads(spec.read_text(encoding="utf-8"))["tests"]

    theirs, ours, status = _both_reports(ROOT, tests, tmp_path)

    _read_alike(theirs, ours, status)
    assert len(_outcomes(ours)) == json.loads(spec.read_text(encoding="utf-8"))[
        "expectBaselinePass"]


@pytest.mark.parametrize("extra", [(), ("-n", "2")], ids=["one process", "xdist"])
def test_the_probe_reports_every_kind_of_outcome_as_pytest_json_report_does(
    tmp_path: Path, extra: tuple[str, ...]
) -> None:
    if tuple(int(part) for part in pytest.__version__.split(".")[:2]) < (9, 0):
        pytest.skip("unittest subtests are reported apart from pytest 9.0")
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_every_outcome.py").write_text(EVERY_OUTCOME, encoding="utf-8")
    (suite / "test_module_skip.py").write_text(MODULE_SKIP, encoding="utf-8")
    (suite / "test_broken_module.py").write_text(BROKEN_MODULE, encoding="utf-8")

    theirs, ours, status = _both_reports(
        suite, ["."], tmp_path / "scratch", "--continue-on-collection-errors", *extra)

    _read_alike(theirs, ours, status)
    words = {outcome.nodeid.rsplit("::", 1)[-1]: outcome.outcome.value
             for outcome in _outcomes(ours)}
    assert words["test_passes"] == "passed" and words["test_fails"] == "failed"
    assert words["test_errors_in_setup"] == "error"
    assert words["test_passes_then_errors_in_teardown"] == "error"
    assert words["test_xfails"] == "xfailed" and words["test_xpasses"] == "xpassed"
    assert words["test_module_skip.py"] == "skipped"
    assert _collection_errors(ours) == ("test_broken_module.py",)
    assert status == 1
