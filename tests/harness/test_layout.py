"""The package's layout: a pure model, one module per command, no import circle, a true map."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "mutharness"
ARCHITECTURE = PACKAGE.parent / "ARCHITECTURE.md"

MODEL = ("affected", "anchors", "merging", "pins", "rederive", "redfirst", "results", "shards",
         "skips", "spec", "verdict")
# what starts a process, or carries a library that does (GitPython starts git)
STARTERS = ("subprocess", "multiprocessing", "git", "mutharness.process", "mutharness.winjob",
            "mutharness.runners.pytest.runner", "mutharness.runners.node.runner")
COMMAND_LAYER = ("mutharness.commands", "mutharness.cli")
COMMANDS = {"verify": "verify", "baseline": "baseline", "redfirst": "redfirst",
            "suggest": "suggest", "merge": "merge", "render": "render", "check": "check",
            "evidence-check": "evidence_check", "explain": "explain"}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """Every package module `path` imports, those under `if TYPE_CHECKING:` too (a
    `from package import module` names the module; importing a submodule runs its package)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    expanded = set()
    for module in found:  # a.b.c runs a and a.b first
        pieces = module.split(".")
        expanded.update(".".join(pieces[:end]) for end in range(1, len(pieces) + 1))
    return {module for module in expanded if module in known and module != name}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for target in edges:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        circles.append(sorted(component))
    return circles


def test_the_circle_finder_finds_a_circle_and_no_false_one() -> None:
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def test_the_model_layer_imports_nothing_that_starts_a_process() -> None:
    code = (
        "import json, sys\n"
        + "".join(f"import mutharness.model.{name}\n" for name in MODEL)
        + "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout))
    assert sorted(loaded & set(STARTERS)) == []
    assert not any(module.startswith("mutharness.commands") for module in loaded)


def test_every_command_of_the_command_line_has_its_own_module() -> None:
    from mutharness.cli import main

    assert set(main.commands) == set(COMMANDS)
    for command, module in COMMANDS.items():
        loaded = importlib.import_module(f"mutharness.commands.{module}")
        assert callable(getattr(loaded, "run", None)), command
        callback = main.commands[command].callback
        assert callback is not None
        parsing = inspect.getsource(inspect.unwrap(callback))  # the click function itself
        assert f"from mutharness.commands import {module} as command" in parsing, command
        assert "command.run(" in parsing, command


def test_no_module_of_the_package_is_part_of_an_import_circle() -> None:
    known = _modules()
    graph = {name: _imports(name, path, known) for name, path in known.items()}
    assert _circles(graph) == []


def test_no_module_of_the_lab_imports_the_command_layer_back() -> None:
    known = _modules()
    for name, path in known.items():
        if name.startswith("mutharness.lab"):
            back = {module for module in _imports(name, path, known)
                    if module.startswith(COMMAND_LAYER)}
            assert back == set(), name


@pytest.mark.parametrize("name", ["_startup.py", "_forkserver.py", "_probe.py"])
def test_the_code_that_runs_in_the_tests_interpreter_lives_with_the_pytest_runner(
    name: str,
) -> None:
    assert (PACKAGE / "runners" / "pytest" / name).is_file()
    assert not (PACKAGE / name).exists()


def test_architecture_lists_every_module_of_the_package_and_no_other() -> None:
    listed = set(re.findall(r"^\| `([^`]+\.(?:py|mjs))` \|", ARCHITECTURE.read_text("utf-8"),
                            flags=re.MULTILINE))
    present = {path.relative_to(PACKAGE).as_posix()
               for path in PACKAGE.rglob("*") if path.suffix in (".py", ".mjs")}
    assert sorted(present - listed) == []
    assert sorted(listed - present) == []


def test_a_session_is_told_which_mutations_to_run_by_its_caller_never_by_its_plan() -> None:
    from dataclasses import fields

    from mutharness.lab.session import Plan, Session

    assert {field.name for field in fields(Plan)} & {"shard", "only", "feed"} == set()
    assert "order" in inspect.signature(Session).parameters
