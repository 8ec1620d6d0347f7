"""Exit codes: one per kind of outcome, one precedence, one table (test_reference_docs), and what
real runs of each kind exit with."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Completed, Project, default_spec
from madefacts import pytest_facts

from mutharness.errors import (
    BaselineError,
    DirtyTreeError,
    ExitCode,
    MutharnessError,
    RecordedError,
    ResultsError,
    SpecError,
)
from mutharness.model.results import MutationResult, RunResult, SpecResult, from_json, to_json
from mutharness.model.spec import Mutation, Spec
from mutharness.model.verdict import Verdict

Cli = Callable[..., Completed]
MakeProject = Callable[..., Project]

MUTATION = Mutation(0, "m", "src/calc.py", "a", "b", True, ())
SPEC = Spec("calc", "specs/calc.json", "0" * 64, ("tests/test_calc.py",), 4, (MUTATION,),
            "pytest")


def _mutation(verdict: Verdict, as_expected: bool = True) -> MutationResult:
    return MutationResult(MUTATION, 1, 1, False, "", pytest_facts(), verdict, "", as_expected)


def _spec(*mutations: MutationResult, error: str = "", stopped: str = "") -> SpecResult:
    return SpecResult(SPEC, pytest_facts(), 20.0, mutations, error=error, stopped=stopped)


def _run(*specs: SpecResult, **changes: object) -> RunResult:
    fields: dict[str, object] = {"tool": {}, "commit": "c" * 40, "dirty": False,
                                 "dirty_changes": (), "command": ("mutharness",),
                                 "specs": specs, **changes}
    return RunResult(**fields)  # type: ignore[arg-type]


CAUGHT = _mutation(Verdict.CAUGHT)
SURVIVED_UNEXPECTED = _mutation(Verdict.SURVIVED, as_expected=False)
TIMED_OUT = _mutation(Verdict.TIMEOUT, as_expected=False)
REFUSED = _spec(error="baseline refused: not green")
RED = BaselineError("calc", "not green")


@pytest.mark.parametrize(("run", "code"), [
    (_run(_spec(CAUGHT)), ExitCode.OK),
    (_run(_spec(CAUGHT, SURVIVED_UNEXPECTED)), ExitCode.UNEXPECTED),
    (_run(_spec(SURVIVED_UNEXPECTED, TIMED_OUT)), ExitCode.NO_VERDICT),
    (_run(_spec(CAUGHT), complete=False), ExitCode.NO_VERDICT),
    (_run(_spec(CAUGHT, TIMED_OUT), REFUSED), ExitCode.BASELINE),
    (_run(REFUSED, error=DirtyTreeError(("?? x",))), ExitCode.ENVIRONMENT),
    (_run(REFUSED, error=SpecError(())), ExitCode.USAGE),
    (_run(REFUSED, error=DirtyTreeError(("?? x",)), interrupted=15), ExitCode.TERMINATED),
    (_run(_spec(CAUGHT), interrupted=2), ExitCode.INTERRUPTED),
], ids=["all-as-expected", "unexpected", "no-verdict-beats-unexpected",
        "incomplete-is-no-verdict", "refused-baseline-beats-no-verdict",
        "stopping-error-its-own-code", "usage-error", "signal-beats-all", "sigint"])
def test_a_run_exits_with_the_first_code_that_holds_in_one_order(
    run: RunResult, code: ExitCode
) -> None:
    assert run.exit_code() is code


def test_each_error_kind_has_its_own_code() -> None:
    assert RED.exit_code is ExitCode.BASELINE
    assert SpecError(()).exit_code is ExitCode.USAGE
    assert DirtyTreeError(("?? x",)).exit_code is ExitCode.ENVIRONMENT
    assert len(ExitCode.__members__) == len(ExitCode)  # no code is another's alias


@pytest.mark.parametrize("error", [RED, SpecError(()), DirtyTreeError(("?? x",))],
                         ids=["baseline", "usage", "environment"])
def test_a_results_file_keeps_the_code_of_the_error_that_stopped_its_run(
    error: Exception,
) -> None:
    run = _run(REFUSED, error=error, complete=False)

    again = from_json(json.loads(json.dumps(to_json(run))))

    assert again.exit_code() is run.exit_code()


@pytest.mark.parametrize("error", [RED, SpecError(()), DirtyTreeError(("?? x",))],
                         ids=["baseline", "usage", "environment"])
def test_a_results_file_keeps_the_explanation_of_the_error_that_stopped_its_run(
    error: MutharnessError,
) -> None:
    run = _run(REFUSED, error=error, complete=False)

    again = from_json(json.loads(json.dumps(to_json(run))))

    assert again.error is not None and again.error.kind == type(error).__name__


@pytest.mark.parametrize(("recorded", "kind"), [
    ("BaselineError", "BaselineError"), ("", "RecordedError"),
    ("NoSuchError", "RecordedError"),  # a file's word names no explanation: the replay's own
    ("__class__", "RecordedError"), ("RecordedError", "RecordedError"),
])
def test_a_recorded_error_is_explained_as_the_class_it_records_when_that_is_a_known_one(
    recorded: str, kind: str
) -> None:
    assert RecordedError("text", ExitCode.BASELINE, recorded).kind == kind


def test_a_results_file_whose_error_claims_a_passing_code_is_refused() -> None:
    document = to_json(_run(REFUSED, error=RED, complete=False))
    document["exit_code"] = 0

    with pytest.raises(ResultsError, match="exit_code 0 is not the code of a run stopped"):
        from_json(document)


def test_help_ends_with_every_exit_code() -> None:
    shown = subprocess.run([sys.executable, "-m", "mutharness", "--help"],
                           capture_output=True, text=True, check=True).stdout
    for code in ExitCode:
        assert f"{int(code)} {code.summary}" in " ".join(shown.split())


def test_real_runs_exit_with_the_code_of_what_happened(
    make_project: MakeProject, cli: Cli
) -> None:
    """One project, four real runs: a usage error, a dirty tree, a red baseline, a run with
    a mutant that has no verdict."""
    project = make_project()
    project.spec("hangs", default_spec(mutations=[{
        "name": "the low bound loops forever", "file": "src/calc.py",
        "anchor": "    if value < low:\n        return low\n",
        "replacement": "    if value < low:\n        while True:\n            pass\n"}]),
        commit=True)

    assert cli(project.root, "verify", "specs/nosuch.json").code == ExitCode.USAGE
    project.write("NOTES.txt", "not committed\n")
    assert cli(project.root, "verify", "specs/calc.json").code == ExitCode.ENVIRONMENT
    (project.root / "NOTES.txt").unlink()
    timed = cli(project.root, "verify", "specs/hangs.json", "--timeout-floor", "3",
                "--timeout-factor", "1", "--timeout-constant", "0")
    assert timed.code == ExitCode.NO_VERDICT, timed.out + timed.err
    project.spec("calc", default_spec(expectBaselinePass=5), commit=True)
    red = cli(project.root, "verify", "specs/calc.json")
    assert red.code == ExitCode.BASELINE, red.out + red.err


def test_an_exception_nothing_expected_exits_70_naming_it_a_bug(tmp_path: Path) -> None:
    """A real process whose start-up breaks a function every command calls."""
    (tmp_path / "sitecustomize.py").write_text(
        "import mutharness.environment\n"
        "def broken():\n"
        "    raise RuntimeError('a bug planted by the test')\n"
        "mutharness.environment.prepare_process = broken\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])])}

    done = subprocess.run([sys.executable, "-m", "mutharness", "check", "specs"],
                          cwd=tmp_path, env=env, capture_output=True, text=True)

    assert done.returncode == ExitCode.INTERNAL
    assert "RuntimeError: a bug planted by the test" in done.stderr
    assert "this is a bug, please report it" in done.stderr


def test_the_top_level_help_lists_verify_first_and_each_command_s_first_sentence_whole() -> None:
    shown = subprocess.run([sys.executable, "-m", "mutharness", "--help"],
                           capture_output=True, text=True, check=True,
                           env={**os.environ, "COLUMNS": "100"}).stdout
    listed = shown.split("Commands:\n", 1)[1].split("\n\n", 1)[0]
    names = [line.split()[0] for line in listed.splitlines() if line.startswith("  ")
             and not line.startswith("   ")]
    assert names[0] == "verify"
    assert sorted(names) == sorted(["verify", "check", "baseline", "redfirst", "suggest", "merge",
                                    "render", "evidence-check", "explain"])
    assert "..." not in listed  # never cut at click's 45 characters
    assert "Run each SPEC's mutations against its tests and report CAUGHT / SURVIVED." in (
        " ".join(listed.split()))
