"""workspace.find_git / parse_git_version: git is found safely, never planted by a checkout."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from mutharness.repo.git import command_name, find_git, parse_git_version

GIT = "git.exe" if sys.platform == "win32" else "git"
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")


def plant(directory: Path, name: str = GIT, executable: bool = True) -> Path:
    """An executable file called git in `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text("#!/bin/sh\necho planted\n")
    path.chmod(0o755 if executable else 0o644)
    return path


def path_env(*entries: str | Path) -> str:
    return os.pathsep.join(str(entry) for entry in entries)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A checkout with a planted git at its root, and the current directory inside it."""
    root = tmp_path / "repo"
    plant(root)
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def system(tmp_path: Path) -> Path:
    """A trusted absolute directory holding the real git."""
    return plant(tmp_path / "usr" / "bin").parent


def test_the_first_absolute_directory_with_an_executable_git_wins(tmp_path: Path) -> None:
    first = plant(tmp_path / "first")
    plant(tmp_path / "second")

    assert find_git(path_env(tmp_path / "empty", first.parent, tmp_path / "second")) == first


def test_no_git_on_path_is_none(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()

    assert find_git(path_env(tmp_path / "empty", tmp_path / "does-not-exist")) is None


def test_an_empty_path_is_none() -> None:
    assert find_git("") is None


@pytest.mark.parametrize("relative", ["", ".", "./", "bin", "../repo"])
def test_a_git_reached_through_a_relative_path_entry_is_never_chosen(
    repo: Path, system: Path, relative: str
) -> None:
    plant(repo / "bin")

    assert find_git(path_env(relative, system)) == system / GIT


def test_only_relative_entries_find_nothing(repo: Path) -> None:
    assert find_git(path_env("", ".", os.curdir)) is None


def test_a_git_planted_in_the_repository_root_is_never_chosen(repo: Path, system: Path) -> None:
    assert find_git(path_env(repo, system), refuse=[repo]) == system / GIT


def test_a_git_planted_below_the_repository_root_is_never_chosen(
    repo: Path, system: Path
) -> None:
    venv_bin = plant(repo / ".venv" / "bin").parent

    assert find_git(path_env(venv_bin, system), refuse=[repo]) == system / GIT


@posix_only
def test_the_repository_reached_through_a_symlink_is_still_refused(
    tmp_path: Path, repo: Path, system: Path
) -> None:
    link = tmp_path / "link"
    link.symlink_to(repo, target_is_directory=True)

    assert find_git(path_env(link, system), refuse=[repo]) == system / GIT


def test_the_repository_written_with_dot_dot_is_still_refused(
    tmp_path: Path, repo: Path, system: Path
) -> None:
    roundabout = tmp_path / "usr" / ".." / "repo"

    assert find_git(path_env(roundabout, system), refuse=[repo]) == system / GIT


@posix_only
def test_a_git_without_execute_permission_is_skipped(tmp_path: Path, system: Path) -> None:
    plant(tmp_path / "noexec", executable=False)

    assert find_git(path_env(tmp_path / "noexec", system)) == system / GIT


def test_a_directory_called_git_is_skipped(tmp_path: Path, system: Path) -> None:
    (tmp_path / "odd" / GIT).mkdir(parents=True)

    assert find_git(path_env(tmp_path / "odd", system)) == system / GIT


def test_the_found_git_is_an_absolute_path(system: Path) -> None:
    found = find_git(path_env(system))

    assert found is not None
    assert found.is_absolute()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("git version 2.30.0", (2, 30, 0), id="linux"),
        pytest.param("git version 2.30.0\n", (2, 30, 0), id="trailing-newline"),
        pytest.param("git version 2.39.5.windows.1", (2, 39, 5), id="git-for-windows"),
        pytest.param("git version 2.39.3 (Apple Git-146)", (2, 39, 3), id="apple"),
        pytest.param("git version 2.45.GIT", (2, 45), id="built-from-source"),
        pytest.param("git version 2.43.0.vfs.0.0", (2, 43, 0), id="vfs-for-git"),
        pytest.param("git version 1.8.3.1", (1, 8, 3, 1), id="old-four-part"),
        pytest.param("", (), id="empty"),
        pytest.param("not git at all", (), id="garbage"),
    ],
)
def test_parse_git_version_reads_the_numeric_release(
    text: str, expected: tuple[int, ...]
) -> None:
    assert parse_git_version(text) == expected


def test_an_apple_git_is_not_mistaken_for_a_too_old_one() -> None:
    assert parse_git_version("git version 2.39.3 (Apple Git-146)") >= (2, 30)


def test_a_git_that_can_no_longer_be_started_is_a_git_error_not_a_traceback(
    tmp_path: Path
) -> None:
    from mutharness.errors import GitError
    from mutharness.repo.git import GitInfo, configure_git, run_git

    real = configure_git(os.environ.get("PATH", os.defpath))
    gone = GitInfo(str(tmp_path / "no-such-git"), real.version)

    with pytest.raises(GitError) as raised:
        run_git(gone, tmp_path, ["status"])

    assert raised.value.message().startswith(f"git status could not be started in {tmp_path}")


def test_gitpython_runs_the_git_found_last_in_a_process_that_imported_it_before(
    tmp_path: Path
) -> None:
    """GitPython is pointed at the git `configure_git` finds as it is first imported, and
    again by a later call that finds another: the git it runs is always the one found."""
    import shutil
    import subprocess
    import sys

    real = shutil.which("git")
    assert real is not None
    for name in ("first", "second"):
        wrapper = tmp_path / name / "git"
        wrapper.parent.mkdir()
        wrapper.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path / name}.log\nexec {real} "$@"\n')
        wrapper.chmod(0o755)
    script = (
        "import sys\nfrom mutharness.repo.git import configure_git\nimport git\n\n"
        "for directory in sys.argv[1:]:\n    configure_git(directory)\n"
        "    git.Git().version('--build-options')\n")

    subprocess.run([sys.executable, "-c", script, str(tmp_path / "first"),
                    str(tmp_path / "second")], cwd=tmp_path, check=True,
                   capture_output=True)

    assert "version --build-options" in (tmp_path / "first.log").read_text()
    assert "version --build-options" in (tmp_path / "second.log").read_text()


@pytest.mark.parametrize(("args", "named"), [
    (["-c", "advice.detachedHead=false", "checkout", "-q", "--detach", "abc"], "checkout -q"),
    (["fetch", "-q", "file:///repo", "abc"], "fetch -q"),
    (["--git-dir=/w/.git", "--work-tree=/w", "ls-files", "--stage"], "ls-files --stage"),
    (["-C", "/w", "-c", "core.eol=lf", "status"], "status"),
    (["-c"], ""),
])
def test_a_failed_git_command_is_named_by_its_subcommand(args: list[str], named: str) -> None:
    assert command_name(args) == named
