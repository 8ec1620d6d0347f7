"""The baseline must be green, complete and at the spec's count before any mutation runs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import Completed, Project, Recorder, default_spec

from mutharness.errors import ExitCode

ProjectFactory = Callable[..., Project]
Verify = Callable[..., tuple[Any, Recorder]]


def add_test(project: Project, text: str) -> None:
    """Append `text` to the calc tests and commit."""
    path = project.root / "tests/test_calc.py"
    project.write("tests/test_calc.py", path.read_text("utf-8") + text)
    project.commit("a new test")


def test_a_failing_test_makes_the_baseline_refused_with_counts_and_ids_on_the_command_line(
    make_project: ProjectFactory, cli: Callable[..., Completed]
) -> None:
    project = make_project()
    add_test(project, "\n\ndef test_broken():\n    assert clamp(1, 0, 10) == 2\n")

    done = cli(project.root, "verify", "specs/calc.json")

    assert done.code == 3, done.out + done.err
    assert "baseline: tests/test_calc.py" in done.out
    assert "CAUGHT" not in done.out and "SURVIVED" not in done.out
    assert "spec calc: baseline is not trustworthy: not green" in done.err
    assert "pass=4 fail=1 tests=5" in done.err
    assert "failing: tests/test_calc.py::test_broken" in done.err
    summary = done.out.splitlines()[done.out.splitlines().index("no trustworthy verdict:") + 1]
    assert summary == "  spec calc: no verdict, for the reason printed on stderr"
    assert done.out.count("not green") + done.err.count("not green") == 1  # said once


def test_a_refused_baseline_names_the_same_explanation_under_every_j(
    make_project: ProjectFactory, cli: Callable[..., Completed]
) -> None:
    project = make_project()
    add_test(project, "\n\ndef test_broken():\n    assert clamp(1, 0, 10) == 2\n")

    alone = cli(project.root, "verify", "specs/calc.json")
    workers = cli(project.root, "verify", "specs/calc.json", "-j", "2")

    pointer = "  explained: mutharness explain BaselineError"
    assert (alone.code, workers.code) == (3, 3), alone.err + workers.err
    assert [line for line in alone.err.splitlines() if "explained:" in line] == [pointer]
    assert [line for line in workers.err.splitlines() if "explained:" in line] == [pointer]


STRICT_XFAIL = (
    "\n\nimport pytest\n\n\n@pytest.mark.xfail(strict=True, reason='17 is a minor')\n"
    "def test_seventeen_is_adult():\n    assert is_adult(17)\n\n\n"
    "def test_a_child_is_no_adult():\n    assert not is_adult(5)\n"
)


@pytest.mark.parametrize("counts", [(), ("--no-first-failure",)], ids=["first-failure", "full"])
def test_a_strict_xfail_that_a_mutant_makes_pass_is_a_failure_alone_or_beside_another(
    make_project: ProjectFactory, cli: Callable[..., Completed], counts: tuple[str, ...]
) -> None:
    """pytest fails a run whose strict xfail passes (XPASS(strict)): CAUGHT, as a fresh
    `python -m pytest` of the mutated tree says, never UNTRUSTWORTHY."""
    project = make_project(spec=default_spec(expectBaselinePass=5, mutations=[
        {"name": "17 is adult: only the strict xfail passes", "file": "src/calc.py",
         "anchor": "return age >= 18", "replacement": "return age >= 17"},
        {"name": "everyone is adult: the strict xfail passes, a plain test fails",
         "file": "src/calc.py", "anchor": "return age >= 18", "replacement": "return True"},
    ]))
    add_test(project, STRICT_XFAIL)

    done = cli(project.root, "verify", "specs/calc.json", *counts)

    assert done.code == 0, done.out + done.err
    assert done.out.count("CAUGHT") == 2 and "UNTRUSTWORTHY" not in done.out, done.out


def test_a_stably_skipped_test_is_accepted_listed_and_not_counted_as_a_pass(
    make_project: ProjectFactory, verify_here: Verify, cli: Callable[..., Completed]
) -> None:
    project = make_project()
    add_test(project, "\n\nimport pytest\n\n\n@pytest.mark.skip(reason='needs numpy')\n"
                      "def test_later():\n    pass\n\n\n@pytest.mark.xfail(reason='known')\n"
                      "def test_known_bug():\n    assert False\n")

    run, recorder = verify_here(project)

    assert recorder.errors == []
    assert [r.verdict.value for r in recorder.results] == ["CAUGHT", "SURVIVED"]
    assert run.exit_code() is ExitCode.OK
    done = cli(project.root, "verify", "specs/calc.json", "--evidence", "../evidence")
    assert done.code == 0, done.out + done.err
    results = json.loads((project.root / ".mutharness/results.json").read_text("utf-8"))
    assert results["specs"][0]["skipped"] == [
        {"nodeid": "tests/test_calc.py::test_later", "outcome": "skipped",
         "reason": "needs numpy"},
        {"nodeid": "tests/test_calc.py::test_known_bug", "outcome": "xfailed", "reason": ""},
    ]
    evidence = (project.root.parent / "evidence/calc.md").read_text("utf-8")
    assert "## Skipped in the baseline" in evidence
    assert "`tests/test_calc.py::test_later`: skipped (needs numpy)" in evidence
    # a list item a line each, and a blank line before the next heading
    skipped = evidence.split("## Skipped in the baseline\n", 1)[1].split("\n## ", 1)[0]
    assert [line for line in skipped.splitlines() if line.startswith("- ")] == [
        "- `tests/test_calc.py::test_later`: skipped (needs numpy)",
        "- `tests/test_calc.py::test_known_bug`: xfailed"], skipped
    assert "xfailed\n\n## Verdicts" in evidence, skipped


def test_a_mutant_that_fails_a_test_and_makes_another_skip_is_caught_by_the_failure(
    make_project: ProjectFactory, verify_here: Verify
) -> None:
    project = make_project(spec=default_spec(expectBaselinePass=5, mutations=[{
        "name": "the clamp no longer clamps above: the guarded test skips itself",
        "file": "src/calc.py", "anchor": "    if value > high:\n        return high\n",
        "replacement": "",
    }]))
    add_test(project, "\n\nimport pytest\n\n\ndef test_skips_when_unclamped():\n"
                      "    if clamp(50, 0, 10) != 10:\n        pytest.skip('unclamped')\n")

    run, recorder = verify_here(project, first_failure=False)  # the skipping test runs too

    [result] = recorder.results
    assert result.verdict.value == "CAUGHT"
    assert result.facts.failing_ids == ("tests/test_calc.py::test_clamp_above",)
    assert "tests/test_calc.py::test_skips_when_unclamped" in result.facts.inert
    assert run.exit_code() is ExitCode.OK


def test_a_pass_count_other_than_the_pin_is_refused_naming_both_numbers(
    make_project: ProjectFactory, verify_here: Verify
) -> None:
    project = make_project(spec=default_spec(expectBaselinePass=5))

    run, recorder = verify_here(project)

    assert run.exit_code() is ExitCode.BASELINE
    assert "mutation 0" not in recorder.events
    assert "baseline pass=4 but the spec expects 5" in recorder.errors[0]
    assert run.specs[0].error == recorder.errors[0]


def test_a_collection_error_makes_the_baseline_refused(
    make_project: ProjectFactory, verify_here: Verify
) -> None:
    project = make_project()
    project.write("tests/test_calc.py", "from calc import no_such_name\n")
    project.commit("broken import")

    run, recorder = verify_here(project)

    assert run.exit_code() is ExitCode.BASELINE
    assert recorder.events == ["head", "baseline calc", "failed calc"]
    assert "collection failed: collection error in tests/test_calc.py" in recorder.errors[0]


def test_a_green_baseline_lets_the_mutations_run(
    make_project: ProjectFactory, verify_here: Verify
) -> None:
    project = make_project()

    run, recorder = verify_here(project)

    assert recorder.events == ["head", "baseline calc", "baseline ok calc", "mutation 0",
                               "mutation 1"]
    baseline = run.specs[0].baseline
    assert baseline is not None
    assert baseline.nodeids == (
        "tests/test_calc.py::test_clamp_below",
        "tests/test_calc.py::test_clamp_above",
        "tests/test_calc.py::test_clamp_inside",
        "tests/test_calc.py::test_adult_at_eighteen",
    )
    assert run.exit_code() is ExitCode.OK
    kept = project.root.resolve() / ".mutharness" / "runs" / "calc" / "baseline-1.log"
    assert Path(baseline.log_path).resolve() == kept and kept.is_file()  # the log outlives the run


LITTERING_CONFTEST = '''\
from pathlib import Path

_ROOT = Path(__file__).parent


def pytest_sessionstart(session):
    (_ROOT / ".benchmarks").mkdir(exist_ok=True)  # as pytest-benchmark does in every session
    (_ROOT / "session.log").write_text("a session ran\\n", encoding="utf-8")
'''


def test_a_baseline_that_only_adds_untracked_files_is_accepted_as_the_reference_state(
    make_project: ProjectFactory, verify_here: Verify
) -> None:
    project = make_project()
    project.write("conftest.py", LITTERING_CONFTEST)
    project.commit("a plugin-like conftest that leaves files behind")

    run, recorder = verify_here(project)

    assert recorder.errors == []
    assert [r.verdict.value for r in recorder.results] == ["CAUGHT", "SURVIVED"]
    assert run.exit_code() is ExitCode.OK


def test_a_baseline_that_edits_a_tracked_file_is_refused(
    make_project: ProjectFactory, verify_here: Verify
) -> None:
    project = make_project()
    project.write("conftest.py", (
        "from pathlib import Path\n\n"
        "_CALC = Path(__file__).parent / 'src' / 'calc.py'\n"
        "_CALC.write_text(_CALC.read_text() + '# touched\\n')\n"
    ))
    project.commit("a conftest that edits the code under test")

    run, recorder = verify_here(project)

    assert run.exit_code() is ExitCode.BASELINE
    assert recorder.events == ["head", "baseline calc", "failed calc"]
    assert "without any mutant changed tracked files" in recorder.errors[0]
    assert "src/calc.py" in recorder.errors[0]


def test_a_baseline_pytest_cannot_start_is_refused_with_pytests_own_words(
    make_project: ProjectFactory, verify_here: Verify
) -> None:
    # a missing test *file* is a spec problem found before anything runs; a missing test
    # *function* in a tracked file is for pytest to find, and it exits 4 (usage error)
    project = make_project(spec=default_spec(tests=["tests/test_calc.py::test_missing"]))

    run, recorder = verify_here(project)

    assert run.exit_code() is ExitCode.BASELINE
    assert "exit status 4" in recorder.errors[0]
    assert "not found:" in recorder.errors[0]
    assert "test_calc.py::test_missing" in recorder.errors[0]  # pytest names it its own way
