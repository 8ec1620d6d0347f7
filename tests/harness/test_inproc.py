"""The in-process command line (`inproc.in_process`) says and exits as the real child does."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import CALC, Completed, Project, run_cli
from inproc import in_process

from mutharness.errors import ExitCode

MakeProject = Callable[..., Project]


def _drifted(project: Project) -> None:
    project.write("src/calc.py", CALC.replace("if value < low:", "if value <= low:"))
    project.commit("drift")


def _dirty(project: Project) -> None:
    project.write("NOTES.txt", "not committed\n")


def _as_made(project: Project) -> None:
    pass


def _config_refused(project: Project) -> None:
    project.write("mutharness.toml", 'pytest-runner = "spawn"\n')
    project.commit("a runner that does not exist")


def _same(done: Completed) -> Completed:
    """What may differ between two runs of one command: check's own timing."""
    return Completed(done.code, re.sub(r"\(\d+\.\d\d s\)", "(T s)", done.out), done.err)


# each row: what is done to a calc project first, the command, the exit code both give
ROWS = [
    pytest.param(_as_made, ("--version",), ExitCode.OK, id="version"),
    pytest.param(_as_made, ("verify", "--no-such-option"), ExitCode.USAGE, id="usage"),
    pytest.param(_as_made, ("check",), ExitCode.OK, id="check"),
    pytest.param(_drifted, ("check", "--suggest"), ExitCode.USAGE, id="check-drifted"),
    pytest.param(_as_made, ("evidence-check",), ExitCode.USAGE, id="no-evidence"),
    pytest.param(_dirty, ("verify", "specs/calc.json"), ExitCode.ENVIRONMENT, id="dirty-tree"),
    pytest.param(_config_refused, ("verify", "specs/calc.json"), ExitCode.USAGE,
                 id="config-refused"),
    pytest.param(_as_made, ("render", "nosuch.json"), ExitCode.USAGE, id="render-missing"),
    pytest.param(_as_made, ("redfirst", "specs/calc.json"), ExitCode.USAGE,
                 id="redfirst-without-its-required-base"),
    pytest.param(_as_made, ("verify", "--shard", "x"), ExitCode.USAGE,
                 id="verify-with-neither-specs-nor-a-valid-shard"),
]


@pytest.mark.parametrize(("prepare", "args", "code"), ROWS)
def test_a_command_run_in_process_gives_the_code_and_streams_of_the_real_child(
    make_project: MakeProject, prepare: Callable[[Project], None], args: tuple[str, ...],
    code: ExitCode,
) -> None:
    project = make_project()
    prepare(project)

    child = run_cli(project.root, *args)
    here = in_process(project.root, *args)

    assert child.code == code, child.out + child.err
    assert _same(here) == _same(child)


def test_the_environment_and_directory_a_command_changes_are_put_back(
    make_project: MakeProject,
) -> None:
    project = make_project()
    before = dict(os.environ)
    where = Path.cwd()
    env = {**os.environ, "GIT_DIR": str(project.root / "elsewhere"), "NO_COLOR": "1"}

    done = in_process(project.root, "check", env=env)

    assert done.code == 0, done.out + done.err  # prepare_process dropped GIT_DIR, as a child's
    assert dict(os.environ) == before
    assert Path.cwd() == where


def test_an_exception_nothing_expected_exits_70_in_process(
    make_project: MakeProject, monkeypatch: pytest.MonkeyPatch
) -> None:
    """test_exit_codes plants the same bug in a real child (exit 70 as the system sees it)."""
    import mutharness.cli

    def broken() -> None:
        raise RuntimeError("a bug planted by the test")

    project = make_project()
    monkeypatch.setattr(mutharness.cli, "_prepare", broken)

    done = in_process(project.root, "check")

    assert done.code == ExitCode.INTERNAL
    assert "RuntimeError: a bug planted by the test" in done.err
    assert done.err.endswith("this is a bug, please report it with the traceback\n")
    assert done.out == ""



def _subreaper(set_to: int | None = None) -> int:
    """This process's child-subreaper flag (after setting it to `set_to`, if given)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if set_to is not None:
        libc.prctl(36, set_to, 0, 0, 0)
    flag = ctypes.c_int()
    libc.prctl(37, ctypes.byref(flag), 0, 0, 0)
    return flag.value


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux process flag")
def test_an_in_process_run_leaves_the_test_s_process_no_child_subreaper(
    make_project: Callable[..., Project]
) -> None:
    project = make_project()
    assert _subreaper(set_to=0) == 0  # whatever an earlier test of this worker left

    done = in_process(project.root, "verify", "specs/calc.json")

    assert done.code == 0, done.out + done.err
    assert _subreaper() == 0  # orphans of later tests' children are not ours
