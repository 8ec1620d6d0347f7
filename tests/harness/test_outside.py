"""Nothing from outside the workspace gets in: no pytest config or conftest.py from above it, no
program the repository's git config names, no write through `.mutharness` or a planted link."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import CALC, TEST_CALC, Completed, Project, default_spec, git
from inproc import in_process
from liverun import Sandbox, snapshot

ProjectFactory = Callable[..., Project]
Cli = Callable[..., Completed]

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="plants /bin/sh scripts")

PLANTED_CONFTEST = '''\
import pathlib
pathlib.Path(__file__).with_name("PLANTED_CONFTEST_RAN").write_text("code ran as you")
'''


def flat_project_without_pytest_config(make_project: ProjectFactory) -> Project:
    """The calc project with calc.py at the root and no pytest configuration of its own."""
    project = make_project()
    (project.root / "pyproject.toml").unlink()
    (project.root / "src/calc.py").unlink()
    project.write("calc.py", CALC)
    project.write("tests/test_calc.py", TEST_CALC)
    spec = default_spec()
    for mutation in spec["mutations"]:
        mutation["file"] = "calc.py"
    project.spec("calc", spec)
    project.commit("flat, no pytest config: pytest would search above the checkout")
    return project


def test_a_pytest_ini_and_conftest_planted_above_the_workspace_are_never_loaded(
    make_project: ProjectFactory, cli: Cli, tmp_path: Path
) -> None:
    project = flat_project_without_pytest_config(make_project)
    sandbox = Sandbox.under(tmp_path)  # the workspaces are made in sandbox.tmpdir
    (sandbox.tmpdir / "pytest.ini").write_text("[pytest]\naddopts = -p no:python\n")
    (sandbox.tmpdir / "conftest.py").write_text(PLANTED_CONFTEST)

    done = cli(project.root, "verify", "specs/calc.json", env=sandbox.env())

    assert done.code == 0, done.out + done.err
    assert not (sandbox.tmpdir / "PLANTED_CONFTEST_RAN").exists()
    results = json.loads((project.root / ".mutharness/results.json").read_text("utf-8"))
    assert results["specs"][0]["baseline"]["runner_facts"]["config_file"] == (
        "none in the repository (pytest stopped at mutharness's empty pytest.ini above the "
        "checkout)"
    )


def options_in(project: Project, where: str, options: str) -> None:
    """Write pytest `options` where the project's own addopts live, or mutharness's."""
    if where == "addopts":
        project.write("pyproject.toml", '[tool.pytest.ini_options]\npythonpath = ["src"]\n'
                      f'addopts = "{options}"\n')
    else:
        project.write("mutharness.toml", f'pytest-addopts = "{options}"\n')


@pytest.mark.parametrize("where", ["addopts", "pytest-addopts"])
def test_a_conftest_planted_above_the_workspace_never_loads_though_the_options_say_confcutdir_root(
    make_project: ProjectFactory, tmp_path: Path, where: str
) -> None:
    project = make_project()
    options = f"--confcutdir={Path(tmp_path.anchor)}"
    options_in(project, where, options)
    project.commit(f"{where} with --confcutdir at the file system's root")
    sandbox = Sandbox.under(tmp_path)
    (sandbox.tmpdir / "conftest.py").write_text(PLANTED_CONFTEST)

    done = in_process(project.root, "verify", "specs/calc.json", env=sandbox.env())

    assert not (sandbox.tmpdir / "PLANTED_CONFTEST_RAN").exists()
    assert done.code == 0, done.out + done.err


EVIL = "#!/bin/sh\necho ran >> {marker}\ncat\n"


def planted_program(tmp_path: Path) -> tuple[Path, Path]:
    marker = tmp_path / "PROGRAM_RAN"
    program = tmp_path / "evil-program"
    program.write_text(EVIL.format(marker=marker))
    program.chmod(0o755)
    return program, marker


@posix_only
def test_a_filter_driver_in_the_repositorys_config_never_runs_in_check_or_verify(
    make_project: ProjectFactory, tmp_path: Path
) -> None:
    project = make_project()
    program, marker = planted_program(tmp_path)
    git(project.root, "config", "filter.evil.clean", str(program))
    git(project.root, "config", "filter.evil.smudge", str(program))
    project.write(".gitattributes", "*.py filter=evil\n")
    project.commit("every .py file goes through the repository's own filter")
    marker.unlink(missing_ok=True)
    os.utime(project.root / "src/calc.py", (1, 1))  # stat data stale: git status re-reads it

    checked = in_process(project.root, "check")
    verified = in_process(project.root, "verify", "specs/calc.json")

    assert checked.code == 0, checked.out + checked.err
    assert verified.code == 0, verified.out + verified.err
    assert not marker.exists()
    git(project.root, "status", "--porcelain")  # the control: git itself runs the driver
    assert marker.exists()


@posix_only
def test_log_show_signature_never_runs_the_configured_gpg_program(
    make_project: ProjectFactory, tmp_path: Path
) -> None:
    project = make_project()
    program, marker = planted_program(tmp_path)
    commit = git(project.root, "cat-file", "commit", "HEAD")
    head, body = commit.split("\n\n", 1)
    signed = f"{head}\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEz\n " \
             f"-----END PGP SIGNATURE-----\n\n{body}"
    path = tmp_path / "signed-commit"
    path.write_text(signed)
    new = git(project.root, "hash-object", "-t", "commit", "-w", str(path)).strip()
    git(project.root, "update-ref", "HEAD", new)
    git(project.root, "config", "log.showSignature", "true")
    git(project.root, "config", "gpg.program", str(program))

    done = in_process(project.root, "verify", "specs/calc.json")

    assert done.code == 0, done.out + done.err
    assert not marker.exists()
    git(project.root, "log", "-1", "--format=%H", "--", "src/calc.py")  # the control
    assert marker.exists()


NEEDS_SYMLINKS = pytest.mark.skipif(sys.platform == "win32",
                                    reason="creating a symlink needs a privilege on Windows")


@pytest.mark.parametrize("kind", [
    pytest.param("committed link", marks=NEEDS_SYMLINKS),
    pytest.param("link", marks=NEEDS_SYMLINKS),
    "file",
])
def test_a_run_directory_that_is_a_link_or_a_file_is_refused_and_never_written_through(
    make_project: ProjectFactory, tmp_path: Path, kind: str
) -> None:
    project = make_project()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run_dir = project.root / ".mutharness"
    if kind == "file":
        run_dir.write_text("not a directory\n")
    else:
        run_dir.symlink_to(elsewhere, target_is_directory=True)
    if kind == "committed link":
        project.commit("a .mutharness link in the repository")
    before = snapshot(project.root)

    done = in_process(project.root, "verify", "specs/calc.json")

    assert done.code == 5, done.out + done.err
    assert "Traceback" not in done.err
    reason = {"committed link": ".mutharness is committed to the repository",
              "link": "is a symlink (mutharness never writes through one)",
              "file": "is not a directory"}[kind]
    assert reason in done.err
    assert list(elsewhere.iterdir()) == []
    assert snapshot(project.root) == before


HARD_LINKER = (
    "import os as _os\n"
    "_os.unlink(__file__)\n"
    "_os.link(_os.environ['MH_VICTIM'], __file__)\n"
    "def is_adult(age):\n"
)


@pytest.mark.skipif(not hasattr(os, "link"), reason="no hard links")
def test_restore_never_writes_through_a_hard_link_a_mutant_planted(
    make_project: ProjectFactory, tmp_path: Path
) -> None:
    project = make_project(spec=default_spec(mutations=[
        {"name": "the module replaces itself with a hard link to a file outside",
         "file": "src/calc.py", "anchor": "def is_adult(age):\n", "replacement": HARD_LINKER},
        default_spec()["mutations"][0],
    ]))
    sandbox = Sandbox.under(tmp_path)
    victim = tmp_path / "victim.txt"  # on the workspace's file system, so a link can reach it
    victim.write_text("precious\n")

    done = in_process(project.root, "verify", "specs/calc.json",
                      env=sandbox.env(MH_VICTIM=str(victim)))

    assert victim.read_text() == "precious\n"
    results = json.loads((project.root / ".mutharness/results.json").read_text("utf-8"))
    linker, caught = results["specs"][0]["mutations"]
    assert linker["verdict"] == "UNTRUSTWORTHY"
    assert "replaced or rewritten during the run" in linker["reason"]
    assert caught["verdict"] == "CAUGHT"
    assert done.code == 4


PLANTED_PLUGIN = '''\
import pathlib
pathlib.Path(__file__).with_name("PLANTED_PLUGIN_RAN").write_text("code ran as you")
'''


@pytest.mark.parametrize(("options", "code", "said"), [
    ("-c {outside}/planted.ini", 0, None),  # addopts come from the ini: too late to choose it
    ("--config-file={outside}/planted.ini", 0, None),
    ("--rootdir={outside} -p planted_plugin", 3, "planted_plugin"),  # the pinned one wins
    ("-o pythonpath={outside} -p planted_plugin", 3, "refuses to import planted_plugin"),
])
@pytest.mark.parametrize("where", ["addopts", "pytest-addopts"])
def test_options_naming_a_config_a_rootdir_or_a_plugin_outside_the_workspace_load_nothing_from_it(
    make_project: ProjectFactory, tmp_path: Path, where: str, options: str, code: int,
    said: str | None,
) -> None:
    sandbox = Sandbox.under(tmp_path)
    outside = sandbox.tmpdir
    (outside / "conftest.py").write_text(PLANTED_CONFTEST)
    (outside / "planted_plugin.py").write_text(PLANTED_PLUGIN)
    (outside / "planted.ini").write_text(
        f"[pytest]\npythonpath = {outside}\naddopts = -p planted_plugin --confcutdir={outside}\n"
    )
    project = make_project()
    written = options.format(outside=outside.as_posix())
    options_in(project, where, written)
    project.commit(f"{where}: {options}")

    done = in_process(project.root, "verify", "specs/calc.json", env=sandbox.env())

    assert not (outside / "PLANTED_PLUGIN_RAN").exists(), done.out + done.err
    assert not (outside / "PLANTED_CONFTEST_RAN").exists(), done.out + done.err
    assert done.code == code, done.out + done.err
    if said:  # a refusal names what it refused
        assert said in done.err
