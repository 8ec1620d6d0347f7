"""The bytecode cache: pytest's modules compiled once per user, a workspace's never kept."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Completed, Project
from inproc import in_process

from mutharness.runners.bytecode import mirror, prune, shared_pycache, user_cache_root

Cli = Callable[..., Completed]
MakeProject = Callable[..., Project]


@pytest.mark.parametrize(("platform", "environ", "expected"), [
    ("linux", {"HOME": "/home/u"}, "/home/u/.cache/mutharness"),
    ("linux", {"HOME": "/home/u", "XDG_CACHE_HOME": "/c"}, "/c/mutharness"),
    ("linux", {"HOME": "/home/u", "XDG_CACHE_HOME": "rel"}, "/home/u/.cache/mutharness"),
    ("linux", {}, None),
    ("darwin", {"HOME": "/Users/u"}, "/Users/u/Library/Caches/mutharness"),
    ("win32", {"LOCALAPPDATA": "C:/Users/u/AppData/Local"},
     "C:/Users/u/AppData/Local/mutharness/Cache"),
    ("win32", {"HOME": "/home/u"}, None),
], ids=["home", "xdg", "relative-xdg-ignored", "nowhere", "macos", "windows", "windows-no-appdata"])
def test_the_cache_lives_where_the_platform_keeps_a_user_s_caches(
    platform: str, environ: dict[str, str], expected: str | None
) -> None:
    found = user_cache_root(environ, platform)

    assert (None if found is None else found.as_posix()) == expected


def _pycs(directory: Path, part: str) -> list[Path]:
    return [path for path in directory.rglob("*.pyc") if part in path.parts]


def test_a_run_leaves_pytest_compiled_in_the_user_cache_and_nothing_of_its_workspace(
    make_project: MakeProject, cli: Cli, tmp_path: Path
) -> None:
    project = make_project()
    cache = tmp_path / "cache"
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "LOCALAPPDATA": str(cache),
           "TMPDIR": str(temp)}  # where each platform keeps caches; macOS: the test's HOME
    root = user_cache_root(env)
    assert root is not None

    done = cli(project.root, "verify", "specs/calc.json", env=env)

    assert done.code == 0, done.out + done.err
    pycache = root / "pycache"
    assert _pycs(pycache, "_pytest"), "pytest's own modules are kept compiled"
    assert not mirror(pycache, temp.resolve()).exists() or not any(
        mirror(pycache, temp.resolve()).iterdir()), "no workspace module is kept"
    if os.name == "posix":
        assert (pycache.stat().st_mode & 0o077) == 0  # private to the user


def test_the_bytecode_kept_for_a_workspace_that_no_longer_exists_is_pruned(
    tmp_path: Path,
) -> None:
    prefix, temp = tmp_path / "pycache", tmp_path / "tmp"
    (temp / "mh-alive").mkdir(parents=True)
    for name in ("mh-alive", "mh-dead", "other"):
        kept = mirror(prefix, temp / name) / "repo" / "calc.cpython-311.pyc"
        kept.parent.mkdir(parents=True)
        kept.write_bytes(b"")

    prune(prefix, temp)

    assert sorted(p.name for p in mirror(prefix, temp).iterdir()) == ["mh-alive", "other"]


@pytest.mark.skipif(os.name != "posix", reason="POSIX owners and modes")
def test_a_cache_another_user_could_write_into_is_not_used(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    (cache / "mutharness" / "pycache").mkdir(parents=True)
    (cache / "mutharness").chmod(0o777)

    assert shared_pycache({"XDG_CACHE_HOME": str(cache)}) is None
    (cache / "mutharness").chmod(0o700)
    assert shared_pycache({"XDG_CACHE_HOME": str(cache)}) == cache / "mutharness" / "pycache"


@pytest.mark.skipif(sys.platform != "linux", reason="XDG_CACHE_HOME places the cache on Linux")
def test_a_cache_that_cannot_be_made_falls_back_to_the_workspace_s_own(
    make_project: MakeProject, tmp_path: Path
) -> None:
    if os.geteuid() == 0:
        blocked = tmp_path / "file"  # root writes anywhere: a file where a directory must be
        blocked.write_text("")
    else:
        blocked = tmp_path / "locked"
        blocked.mkdir(mode=0o500)
    project = make_project()

    done = in_process(project.root, "verify", "specs/calc.json",
                      env={**os.environ, "XDG_CACHE_HOME": str(blocked)})

    assert done.code == 0, done.out + done.err
    assert shared_pycache({"XDG_CACHE_HOME": str(blocked)}) is None


# every run records the bytecode it imported an unchanged module of the workspace from
STAMP_CONFTEST = '''\
import os
import sys

import helper


def pytest_sessionstart(session):
    cached = sys.modules["helper"].__cached__
    info = os.stat(cached)
    with open(os.environ["STAMPS"], "a", encoding="utf-8") as log:
        log.write(f"{info.st_ino} {info.st_mtime_ns}\\n")
'''


def test_an_unchanged_module_of_the_workspace_is_compiled_once_per_verify(
    make_project: MakeProject, tmp_path: Path
) -> None:
    project = make_project()
    project.write("src/helper.py", "WORD = 'unchanged'\n")
    project.write("tests/conftest.py", STAMP_CONFTEST)
    project.commit("a module no mutant changes, and a log of its bytecode")
    stamps = tmp_path / "stamps"
    env = {key: value for key, value in os.environ.items()
           if key != "PYTHONDONTWRITEBYTECODE"}  # bytecode is written, as on most machines

    done = in_process(project.root, "verify", "specs/calc.json",
                      env={**env, "STAMPS": str(stamps), "XDG_CACHE_HOME": str(tmp_path / "c")})

    assert done.code == 0, done.out + done.err
    runs = stamps.read_text("utf-8").splitlines()
    assert len(runs) >= 3  # the baseline, and each mutant (the fork server's proof besides)
    assert len(set(runs)) == 1, runs  # one compile, read by every later run
