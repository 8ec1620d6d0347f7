"""The import record (imports) and the start-up hook's remap (_startup), as pure functions.

The end-to-end tests (test_editable_installs, test_shadowing) run them in real processes;
these pin each rule on its own, fast enough for the guards spec.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest
from conftest import wine_cannot

from mutharness.imports import (
    ImportRecord,
    Loaded,
    copies,
    loaded_file,
    module_tail,
    read_record,
    shadowed,
)
from mutharness.runners.pytest._startup import WorkspaceFirst


def tree(root: Path, *files: str) -> Path:
    for relative in files:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {relative}\n")
    return root


def test_the_hook_logs_are_read_with_start_up_imports_marked_early(tmp_path: Path) -> None:
    logs = tmp_path / "imports"
    logs.mkdir()
    (logs / "100-aa.log").write_bytes(
        b"100\tsite\t/usr/lib/python3/site.py\n"
        b"100\tcalc\t/home/u/repo/src/calc.py\n"
        b"100\t!hooked\t\n"
        b"100\tjson\t/usr/lib/python3/json/__init__.py\n"
        b"101\tchild_only\t/tmp/a\\tb\\\\c.py\n"  # a fork of 100 shares the file
        b"100\t!error\tremapping x: boom\n"
        b"a broken line\n"
    )
    (logs / "102-bb.log").write_bytes(b"102\t!hooked\t\n102\tcalc\t/ws/src/calc.py\n")
    probe = {"pid": 100, "modules": {"calc": "/home/u/repo/src/calc.py", "late": "/x/late.py"},
             "sys_path": ["/ws", "/ws/src"]}

    record = read_record(logs, probe)

    assert record.loaded == (
        Loaded(100, "site", "/usr/lib/python3/site.py", early=True),
        Loaded(100, "calc", "/home/u/repo/src/calc.py", early=True),
        Loaded(100, "json", "/usr/lib/python3/json/__init__.py"),
        Loaded(101, "child_only", "/tmp/a\tb\\c.py"),
        Loaded(102, "calc", "/ws/src/calc.py"),
        Loaded(100, "late", "/x/late.py"),
    )
    assert record.errors == ("pid 100: remapping x: boom",)
    assert (record.main_pid, record.sys_path, record.processes) == (100, ("/ws", "/ws/src"), 2)
    assert record.where(record.loaded[0]) == "the pytest process"
    assert record.where(record.loaded[3]) == "a child process (pid 101)"


def test_a_tracked_file_loaded_from_the_users_tree_is_shadowing_an_untracked_one_is_not(
    tmp_path: Path,
) -> None:
    user = tree(tmp_path / "user", "src/calc.py", "src/_version.py")
    workspace = tree(tmp_path / "ws", "src/calc.py")
    record = ImportRecord(loaded=(
        Loaded(7, "_version", str(user / "src/_version.py")),  # generated, untracked: fine
        Loaded(7, "calc", str(workspace / "src/calc.py")),
        Loaded(9, "calc", str(user / "src/calc.py")),
    ), main_pid=7)

    found = shadowed(record, user, workspace, {"src/calc.py"})

    assert found is not None
    assert (found.relative, found.loaded.pid, found.where) == (
        "src/calc.py", 9, "a child process (pid 9)"
    )
    assert shadowed(ImportRecord(loaded=record.loaded[:2]), user, workspace,
                    {"src/calc.py"}) is None


@pytest.mark.parametrize(
    ("module", "file", "tail"),
    [
        ("pkg.mod", "/site/pkg/mod.py", "pkg/mod.py"),
        ("pkg", "/site/pkg/__init__.py", "pkg/__init__.py"),
        ("pkg.sub", "/site/pkg/sub/__init__.py", "pkg/sub/__init__.py"),
        ("mod", "/site/mod.py", "mod.py"),
        ("pkg._ext", "/site/pkg/_ext.cpython-311-x86_64-linux-gnu.so",
         "pkg/_ext.cpython-311-x86_64-linux-gnu.so"),
        ("renamed", "/anywhere/other.py", None),  # loaded by path under another name
        ("__main__", "/anywhere/script.py", None),
    ],
)
def test_a_module_name_implies_the_tail_of_its_file(
    module: str, file: str, tail: str | None
) -> None:
    assert module_tail(module, file) == tail


def test_an_installed_copy_of_a_target_is_found_by_its_module_name_and_nothing_else(
    tmp_path: Path,
) -> None:
    site = tree(tmp_path / "site", "pkg/__init__.py", "pkg/core.py", "utils.py", "gate.py")
    workspace = tree(tmp_path / "ws", "src/pkg/__init__.py", "src/pkg/core.py",
                     "src/pkg/utils.py", "src/gate.py")
    tracked = {"src/pkg/__init__.py", "src/pkg/core.py", "src/pkg/utils.py", "src/gate.py"}
    record = ImportRecord(loaded=(
        Loaded(1, "pkg.core", str(site / "pkg/core.py")),  # the installed copy: a copy
        Loaded(1, "pkg", str(workspace / "src/pkg/__init__.py")),  # the workspace's: fine
        Loaded(1, "utils", str(site / "utils.py")),  # another top-level `utils`: not pkg.utils
        Loaded(1, "gate", str(site / "gate.py")),  # a top-level `gate`, as src/gate.py is
    ), main_pid=1)
    targets = ["src/pkg/core.py", "src/pkg/__init__.py", "src/pkg/utils.py", "src/gate.py",
               "data/table.json"]

    found = copies(record, workspace, targets, tracked)

    assert [(copy.target, copy.loaded.module) for copy in found] == [
        ("src/pkg/core.py", "pkg.core"), ("src/gate.py", "gate"),
    ]


@wine_cannot("symlinks: realpath does not resolve them under Wine")
def test_whether_a_run_loaded_a_file_is_judged_on_real_paths(tmp_path: Path) -> None:
    workspace = tree(tmp_path / "ws", "src/calc.py")
    (tmp_path / "link").symlink_to(workspace)
    record = ImportRecord(loaded=(Loaded(1, "calc", str(tmp_path / "link/src/calc.py")),))

    assert loaded_file(record, workspace / "src/calc.py")
    assert not loaded_file(record, workspace / "src/other.py")


class _Fixed:
    """A finder that finds one module where it is told (as an editable finder does)."""

    def __init__(self, name: str, origin: str, locations: list[str] | None = None) -> None:
        self.spec = importlib.util.spec_from_file_location(
            name, origin, submodule_search_locations=locations
        )

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> object:
        return self.spec if self.spec is not None and fullname == self.spec.name else None


def _hook(user: Path, workspace: Path) -> WorkspaceFirst:
    return WorkspaceFirst(str(user), str(workspace), None)


def test_a_module_found_in_the_users_tree_is_rewritten_to_the_workspaces_copy(
    tmp_path: Path,
) -> None:
    user = tree(tmp_path / "user", "src/pkg/__init__.py", "src/pkg/core.py",
                "src/pkg/_version.py")
    workspace = tree(tmp_path / "ws", "src/pkg/__init__.py", "src/pkg/core.py")
    hook = _hook(user, workspace)

    module = hook.rewritten(_Fixed("pkg.core", str(user / "src/pkg/core.py")).spec)
    package = hook.rewritten(_Fixed("pkg", str(user / "src/pkg/__init__.py"),
                                    [str(user / "src/pkg")]).spec)
    generated = hook.rewritten(_Fixed("pkg._version", str(user / "src/pkg/_version.py")).spec)

    assert module.origin == str(workspace / "src/pkg/core.py")
    assert package.origin == str(workspace / "src/pkg/__init__.py")
    # the workspace first; the user's directory after it, for files only it has
    assert list(package.submodule_search_locations) == [
        str(workspace / "src/pkg"), str(user / "src/pkg")
    ]
    assert generated.origin == str(user / "src/pkg/_version.py")  # untracked: kept


@wine_cannot("symlinks: realpath does not resolve them under Wine")
def test_a_file_linked_into_a_build_tree_counts_where_the_link_leads(tmp_path: Path) -> None:
    user = tree(tmp_path / "user", "src/pkg/core.py")
    workspace = tree(tmp_path / "ws", "src/pkg/core.py")
    links = user / "build/__editable__.pkg-1.0/pkg"
    links.mkdir(parents=True)
    (links / "core.py").symlink_to(user / "src/pkg/core.py")  # setuptools' strict mode

    spec = _hook(user, workspace).rewritten(_Fixed("pkg.core", str(links / "core.py")).spec)

    assert spec.origin == str(workspace / "src/pkg/core.py")


def test_a_namespace_package_in_the_users_tree_searches_the_workspace_first(
    tmp_path: Path,
) -> None:
    user = tree(tmp_path / "user", "src/ns/mod.py")
    workspace = tree(tmp_path / "ws", "src/ns/mod.py")
    namespace = importlib.machinery.ModuleSpec("ns", None, is_package=True)
    namespace.submodule_search_locations = [str(user / "src/ns")]

    spec = _hook(user, workspace).rewritten(namespace)

    assert spec.origin is None
    assert list(spec.submodule_search_locations) == [str(workspace / "src/ns"),
                                                      str(user / "src/ns")]


def test_code_outside_the_users_tree_is_left_alone(tmp_path: Path) -> None:
    user = tree(tmp_path / "user", "src/calc.py")
    workspace = tree(tmp_path / "ws", "src/calc.py")
    site = tree(tmp_path / "site", "six.py")
    original = _Fixed("six", str(site / "six.py")).spec

    assert _hook(user, workspace).rewritten(original) is original


def test_sys_path_entries_into_the_users_tree_are_moved_with_the_user_entry_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tree(tmp_path / "user", "src/calc.py")
    workspace = tree(tmp_path / "ws", "src/calc.py")
    other = str(tmp_path / "elsewhere")
    monkeypatch.setattr("sys.path", [other, str(user / "src"), str(user / "no-such-dir")])
    hook = _hook(user, workspace)

    hook.rewrite_sys_path()

    assert sys.path == [other, str(workspace / "src"), str(user / "src"),
                        str(user / "no-such-dir")]
    assert hook.remapped_roots == [os.path.realpath(workspace / "src")]


def test_a_run_whose_hook_and_probe_never_wrote_gives_an_empty_record(tmp_path: Path) -> None:
    assert read_record(tmp_path / "none", {}) == ImportRecord()
    assert read_record(tmp_path, json.loads('{"pid": "x", "modules": []}')).loaded == ()
