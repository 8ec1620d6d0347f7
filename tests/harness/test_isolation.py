"""Nothing of the user's choosing runs: no repository or global hooks, no planted `git`;
and a missing git, a non-repository or an unborn HEAD end in one clear error, not a traceback.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

import pytest
from conftest import Completed, Project, default_spec, git, wine_cannot
from inproc import in_process
from liverun import ONE_MUTATION_SPEC, Sandbox, snapshot

from mutharness.repo.files import copy_file

Cli = Callable[..., Completed]
MakeProject = Callable[..., Project]

HOOKS = (
    "applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
    "prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout",
    "post-merge", "pre-push", "pre-receive", "update", "proc-receive", "post-receive",
    "post-update", "reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite",
    "post-index-change", "fsmonitor-watchman",
)


def _marker_script(path: Path, log: Path) -> Path:
    """An executable that appends its own name to `log` whenever it runs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\necho "$0" >> "{log}"\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def _ran(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


REPO_ROOT = Path(__file__).resolve().parents[2]

def _assert_one_line_error(done: Completed, *words: str) -> None:
    assert done.code == 5, done.out + done.err
    assert "Traceback" not in done.err
    first = done.err.splitlines()[0]
    assert first.startswith("mutharness: error: ")
    for word in words:
        assert word in first


@wine_cannot("the kit's git has no shell to run a hook script")
def test_no_repository_hook_global_hook_or_fsmonitor_runs_during_a_verify(
    make_project: MakeProject, cli: Cli, git_home: Path, tmp_path: Path
) -> None:
    project = make_project(spec=ONE_MUTATION_SPEC)
    log = tmp_path / "hooks-ran.log"
    for hook in HOOKS:
        _marker_script(project.root / ".git/hooks" / hook, log)
        _marker_script(git_home / "global-hooks" / hook, log)
    git(project.root, "config", "--global", "core.hooksPath", str(git_home / "global-hooks"))
    git(project.root, "config", "core.fsmonitor",
        str(_marker_script(tmp_path / "fsmonitor" / "query", log)))
    sandbox = Sandbox.under(tmp_path)
    before = snapshot(project.root)

    done = cli(project.root, "verify", "specs/calc.json", env=sandbox.env())

    assert done.code == 0, done.out + done.err
    assert _ran(log) == []
    assert snapshot(project.root) == before
    git(project.root, "commit", "-q", "--allow-empty", "-m", "control: the hooks are live")
    assert any("global-hooks/pre-commit" in line for line in _ran(log))


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX shell script stands in for git")
def test_a_git_planted_in_the_repository_never_runs_even_with_dot_on_PATH(
    make_project: MakeProject, cli: Cli, tmp_path: Path
) -> None:
    project = make_project(spec=ONE_MUTATION_SPEC)
    log = tmp_path / "planted-ran.log"
    _marker_script(project.root / "git", log)
    project.commit("a planted git")
    sandbox = Sandbox.under(tmp_path)
    path = os.pathsep.join([".", "", str(project.root), os.environ["PATH"]])
    env = sandbox.env(PATH=path)

    done = cli(project.root, "verify", "specs/calc.json", env=env)

    assert done.code == 0, done.out + done.err
    assert _ran(log) == []
    subprocess.run(["git", "version"], cwd=project.root, env=env, check=True)
    assert _ran(log), "control: with this PATH a bare `git` is the planted one"


def test_without_git_on_PATH_verify_exits_5_with_one_clear_line(
    make_project: MakeProject, tmp_path: Path
) -> None:
    project = make_project()
    empty = tmp_path / "no-git-here"
    empty.mkdir()
    env = Sandbox.under(tmp_path).env(PATH=str(empty))

    done = in_process(project.root, "verify", "specs/calc.json", env=env)

    _assert_one_line_error(done, "git", "not found")


def test_outside_a_git_repository_verify_exits_5_with_one_clear_line(
    git_home: Path, tmp_path: Path
) -> None:
    plain = tmp_path / "plain"
    (plain / "specs").mkdir(parents=True)
    (plain / "specs/calc.json").write_text(json.dumps(default_spec()))

    done = in_process(plain, "verify", "specs/calc.json")

    _assert_one_line_error(done, "not inside a git repository")


def test_an_unborn_HEAD_makes_verify_exit_5_with_one_clear_line(
    git_home: Path, tmp_path: Path
) -> None:
    unborn = tmp_path / "unborn"
    (unborn / "specs").mkdir(parents=True)
    git(unborn, "init", "-q")
    (unborn / "specs/calc.json").write_text(json.dumps(default_spec()))

    done = in_process(unborn, "verify", "specs/calc.json")

    _assert_one_line_error(done, "no commits yet")


def test_a_branch_naming_a_missing_commit_is_reported_as_such_not_as_an_unborn_HEAD(
    make_project: MakeProject
) -> None:
    project = make_project()
    branch = git(project.root, "symbolic-ref", "HEAD").strip()
    (project.root / ".git" / branch).write_text("01" * 20 + "\n")

    done = in_process(project.root, "verify", "specs/calc.json")

    assert done.code == 5, done.out + done.err
    assert "no commits yet" not in done.err
    assert "HEAD does not name a commit" in done.err
    assert "bad ref" in done.err  # git's own account


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX shell script stands in for git")
def test_a_git_that_dies_silently_asked_for_HEAD_is_reported_with_its_status_not_as_unborn(
    make_project: MakeProject, cli: Cli, tmp_path: Path
) -> None:
    """A git killed or crashing (exit 3, nothing said) is not a repository without commits."""
    project = make_project()
    shim = tmp_path / "dying-git"
    shim.mkdir()
    real = shutil.which("git")
    (shim / "git").write_text(
        "#!/bin/sh\n"
        'case "$*" in *"rev-parse --verify --quiet HEAD^{commit}"*) exit 3;; esac\n'
        f'exec {real} "$@"\n'
    )
    (shim / "git").chmod(0o755)
    env = Sandbox.under(tmp_path).env(PATH=f"{shim}{os.pathsep}{os.environ['PATH']}")

    done = cli(project.root, "verify", "specs/calc.json", env=env)

    _assert_one_line_error(done, "HEAD does not name a commit", "status 3")
    assert "no commits yet" not in done.err

@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX shell script stands in for git")
def test_a_git_older_than_2_30_makes_verify_exit_5_with_one_clear_line(
    make_project: MakeProject, cli: Cli, tmp_path: Path
) -> None:
    project = make_project()
    old = tmp_path / "old-git"
    old.mkdir()
    fake = old / "git"
    fake.write_text("#!/bin/sh\necho 'git version 2.20.1'\n")
    fake.chmod(0o755)
    env = Sandbox.under(tmp_path).env(PATH=str(old))

    done = cli(project.root, "verify", "specs/calc.json", env=env)

    _assert_one_line_error(done, "git version 2.20.1", "too old")
    assert "2.30" in done.err


@pytest.mark.parametrize("command", ["check", "evidence-check", "verify"])
def test_without_gitpython_and_filelock_each_command_is_one_clear_line(
    make_project: MakeProject, tmp_path: Path, command: str
) -> None:
    """An interpreter that has click and Jinja2 but not GitPython or filelock (the bare system
    Python a pre-commit hook may use) gets the install command, not an import traceback."""
    project = make_project()
    only = tmp_path / "only-click-and-jinja2"
    only.mkdir()
    for name in ("click", "Jinja2", "MarkupSafe"):
        dist = metadata.distribution(name)
        for top in (dist.read_text("top_level.txt") or name.lower()).split():
            shutil.copytree(Path(str(dist.locate_file(top))), only / top,
                            copy_function=copy_file)  # copies: links need a privilege on Windows
        info = next(Path(str(f.locate())) for f in dist.files or () if f.name == "METADATA")
        shutil.copytree(info.parent, only / info.parent.name, copy_function=copy_file)
    boot = (
        "import sys; sys.path[:0] = [sys.argv.pop(1), sys.argv.pop(1)]; "
        "from mutharness.cli import main; main()"
    )
    argv = [sys.executable, "-S", "-c", boot, str(REPO_ROOT), str(only), command]
    if command == "verify":
        argv.append("specs/calc.json")
    done = subprocess.run(argv, cwd=project.root, capture_output=True, text=True, timeout=60)

    _assert_one_line_error(Completed(done.returncode, done.stdout, done.stderr), "not installed")
    assert "pip install" in done.stderr
