"""A verdict is a fresh `python -m pytest`'s, whichever runner gave it.

What the interpreter's own start-up does in a fresh process (`.pth` lines, a `sitecustomize`
that mutharness's hook chains to) holds in every run, by default (the fork server) and with
the subprocess runner; a script the tests run by path is a run of that file. Real venvs, real git
repositories, real pytest children.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable

import pytest
from conftest import Completed, Project, Venv
from inproc import in_process

ProjectFactory = Callable[..., Project]
VenvFactory = Callable[..., Venv]
Cli = Callable[..., Completed]

pytestmark = pytest.mark.skipif(
    sys.platform == "win32", reason="builds POSIX venv layouts (bin/python)"
)

# -- a .pth line that sets an environment variable the tests depend on -----------------------

MODE = '''\
import os


def accepts(value):
    if os.environ.get("MODE") == "strict":
        return value > 0
    return value >= 0
'''

TEST_MODE = '''\
from mode import accepts


def test_one_is_accepted():
    assert accepts(1)


def test_minus_one_is_refused():
    assert not accepts(-1)
'''

MODE_SPEC = {
    "tests": ["tests/test_mode.py"],
    "expectBaselinePass": 2,
    "mutations": [
        {"name": "SURVIVOR (documented): the lax rule, never used under MODE=strict",
         "file": "src/mode.py", "anchor": "return value >= 0", "replacement": "return value >= 5",
         "expectCaught": False},
        {"name": "the strict rule accepts nothing", "file": "src/mode.py",
         "anchor": "return value > 0", "replacement": "return value > 5"},
    ],
}

# -- start-up code that recorded the working directory the interpreter started in ------------

STARTDIR = "import os\n\nROOT = os.getcwd()  # where the interpreter started\n"

TEST_STARTDIR = '''\
import os

import startdir


def _calc():
    """calc.py's functions, read from the tree the interpreter started in (else the
    developer's checkout)."""
    root = startdir.ROOT
    if not os.path.isfile(os.path.join(root, "src", "calc.py")):
        root = os.environ["PROJECT_HOME"]
    namespace = {}
    with open(os.path.join(root, "src", "calc.py"), encoding="utf-8") as handle:
        exec(handle.read(), namespace)
    return namespace


def test_clamp_below():
    assert _calc()["clamp"](-5, 0, 10) == 0


def test_clamp_inside():
    assert _calc()["clamp"](5, 0, 10) == 5
'''

STARTDIR_SPEC = {
    "tests": ["tests/test_calc.py"],
    "expectBaselinePass": 2,
    "mutations": [
        {"name": "the low bound is ignored", "file": "src/calc.py",
         "anchor": "    if value < low:\n        return low\n", "replacement": ""},
    ],
}


def _pth_project(make_project: ProjectFactory, make_venv: VenvFactory) -> tuple[Project, Venv]:
    """A project whose venv sets MODE=strict in a .pth line at every interpreter's start."""
    project = make_project()
    project.write("src/mode.py", MODE)
    project.write("tests/test_mode.py", TEST_MODE)
    project.spec("calc", MODE_SPEC)
    project.commit("a mode the environment chooses")
    venv = make_venv()
    venv.add_pth("mode", "import os; os.environ['MODE'] = 'strict'")
    return project, venv


def _known_line_project(make_project: ProjectFactory,
                        make_venv: VenvFactory) -> tuple[Project, Venv]:
    """As `_pth_project`, but MODE is set by the module of a `.pth` line of a form known to do
    the same in every process (setuptools' editable finder)."""
    project, venv = _pth_project(make_project, make_venv)
    (venv.site_packages / "mode.pth").unlink()
    (venv.site_packages / "__editable___mode_finder.py").write_text(
        "import os\n\n\ndef install():\n    os.environ['MODE'] = 'strict'\n", encoding="utf-8")
    venv.add_pth("__editable__.mode-1.0",
                 "import __editable___mode_finder; __editable___mode_finder.install()")
    return project, venv


def _startdir_project(make_project: ProjectFactory,
                      make_venv: VenvFactory) -> tuple[Project, Venv]:
    """A project whose venv's sitecustomize records the directory the interpreter started in."""
    project = make_project()
    project.write("tests/test_calc.py", TEST_STARTDIR)
    project.spec("calc", STARTDIR_SPEC)
    project.commit("tests that read the tree they started in")
    venv = make_venv()
    (venv.site_packages / "startdir.py").write_text(STARTDIR, encoding="utf-8")
    (venv.site_packages / "sitecustomize.py").write_text("import startdir\n", encoding="utf-8")
    return project, venv


PROJECTS = {"a .pth sets a variable": _pth_project,
            "a sitecustomize recorded os.getcwd()": _startdir_project,
            "a known .pth line's module sets a variable": _known_line_project}


def _verdicts(cli: Cli, project: Project, venv: Venv, name: str,
              *flags: str) -> tuple[Completed, list[str], dict[str, object]]:
    """`verify` with `flags`: what it printed, each mutation's verdict, the results."""
    out = project.root.parent / f"{name}.json"
    done = cli(project.root, "verify", "specs/calc.json", "--python", str(venv.python),
               "--json", str(out), *flags,
               env={**os.environ, "PYTHONIOENCODING": "utf-8",
                    "PROJECT_HOME": str(project.root)})
    results = json.loads(out.read_text("utf-8"))
    verdicts = [str(m["verdict"]) for spec in results["specs"] for m in spec["mutations"]]
    return done, verdicts, results


@pytest.mark.parametrize("made", PROJECTS)
def test_a_run_with_no_runner_option_gives_a_fresh_processs_verdict_whatever_start_up_did(
    made: str, make_project: ProjectFactory, make_venv: VenvFactory
) -> None:
    project, venv = PROJECTS[made](make_project, make_venv)
    evidence = project.root.parent / "evidence"

    fresh, fresh_verdicts, _ = _verdicts(in_process, project, venv, "fresh",
                                         "--pytest-runner", "subprocess")
    default, default_verdicts, results = _verdicts(in_process, project, venv, "default",
                                                   "--evidence", str(evidence))

    assert fresh.code == 0, fresh.out + fresh.err
    assert fresh_verdicts == (["CAUGHT"] if "getcwd" in made else ["SURVIVED", "CAUGHT"])
    assert default_verdicts == fresh_verdicts, default.out + default.err
    assert default.code == fresh.code
    assert results["settings"]["values"]["pytest-runner"] == "forked"  # type: ignore[index]
    # the fork server refused (start-up made state a forked child would not make again) and
    # every run was a new interpreter, saying so once
    [note] = results["notes"]  # type: ignore[misc]
    assert "start-up" in note and default.err.count("note:") == 1, default.err
    assert f"mutharness: note: {note}" in default.err
    # the cause named in words with its remedy, never as the code it ran
    assert "--pytest-runner subprocess" in note
    if made == "a .pth sets a variable":
        assert "mode.pth runs code" in note and "os.environ" not in note, note
    assert "--pytest-runner" not in (evidence / "calc.md").read_text("utf-8")


# -- a script the tests run by path ------------------------------------------------------------

SCRIPT = '''\
import sys


def clamp(value, low, high):
    if value < low:
        return low
    if value > high:
        return high
    return value


if __name__ == "__main__":
    print(clamp(int(sys.argv[1]), 0, 10))
'''

TEST_SCRIPT = '''\
import subprocess
import sys


def _run(*args):
    return subprocess.run([sys.executable, "src/pkg/cli.py", *args], capture_output=True,
                          text=True, check=True).stdout.strip()


def test_the_cli_clamps_below():
    assert _run("-5") == "0"


def test_the_cli_clamps_above():
    assert _run("50") == "10"
'''

SCRIPT_SPEC = {
    "tests": ["tests/test_cli.py"],
    "expectBaselinePass": 2,
    "mutations": [
        {"name": "the low bound is ignored", "file": "src/pkg/cli.py",
         "anchor": "    if value < low:\n        return low\n", "replacement": ""},
    ],
}


def test_a_script_the_tests_run_by_path_is_a_run_of_that_file(
    make_project: ProjectFactory, cli: Cli
) -> None:
    project = make_project()
    project.write("src/pkg/__init__.py", "")
    project.write("src/pkg/cli.py", SCRIPT)
    project.write("tests/test_cli.py", TEST_SCRIPT)
    project.spec("calc", SCRIPT_SPEC)
    project.commit("a command line the tests run by path")
    out, evidence = project.root.parent / "results.json", project.root.parent / "evidence"

    done = cli(project.root, "verify", "specs/calc.json", "--json", str(out),
               "--evidence", str(evidence), env={**os.environ, "PYTHONIOENCODING": "utf-8"})

    assert done.code == 0, done.out + done.err
    [mutation] = json.loads(out.read_text("utf-8"))["specs"][0]["mutations"]
    assert (mutation["verdict"], mutation["loaded"]) == ("CAUGHT", True)
    assert "never imported" not in done.out
    assert "never imported" not in (evidence / "calc.md").read_text("utf-8")
