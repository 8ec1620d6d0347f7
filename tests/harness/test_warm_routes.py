"""The warm route's pure rule, as a table: which mutations of a collected module may run with
their functions' code swapped (a fresh process would run the same code from the same state),
and which need a fresh process. `called` is what ran while the module was imported, traced
as the server traces its collection."""

from __future__ import annotations

import gc
import os
import types
from pathlib import Path

import pytest

from mutharness.runners.pytest import _warm

BASE = '''\
"""A module under test."""
import functools

LIMIT = 10


def deco(n):
    def wrap(f):
        return f
    return wrap


def clamp(x, low=0):
    if x < low:
        return low
    return min(x, LIMIT)


def setup_table():
    if LIMIT > 100:
        return "big"
    return "small"


TABLE = setup_table()


@deco(1)
def decorated(x):
    return x + 1


def outer(x):
    def inner(y):
        return y * 2
    return inner(x) + 1


def counter():
    total = 0

    def add(n):
        nonlocal total
        total += n
        return total
    return add


class Shape:
    sides = 4

    def area(self, side):
        return side * side


def documented():
    """Says what it does."""
    return 1
'''

CASES = [
    # (what, anchor, replacement, swapped functions or the reason's words)
    ("a function body", "return min(x, LIMIT)", "return max(x, LIMIT)", {"clamp"}),
    ("a comparison in a body", "if x < low:", "if x <= low:", {"clamp"}),
    ("a method body", "return side * side", "return side + side", {"area"}),
    ("a nested function", "return y * 2", "return y * 3", {"inner"}),  # outer: swapped too
    ("a closure's body", "total += n", "total -= n", {"add"}),
    ("a module constant", "LIMIT = 10", "LIMIT = 11", "module level"),
    ("a default argument", "def clamp(x, low=0):", "def clamp(x, low=1):", "module level"),
    ("a decorator's argument", "@deco(1)", "@deco(2)", "module level"),
    ("a class body", "sides = 4", "sides = 5", "Shape"),
    ("a function called at import, in a branch it never took", 'return "big"',
     'return "huge"', "setup_table"),
    ("a lambda added", "return inner(x) + 1", "return (lambda: inner(x))() + 1",
     "adds, removes or renames"),
    ("a renamed function", "def documented():", "def documented_too():", "module level"),
    ("a renamed nested function", "def inner(y):\n        return y * 2\n    return inner(x)",
     "def inner2(y):\n        return y * 2\n    return inner2(x)", "adds, removes or renames"),
    ("a docstring", '"""Says what it does."""', '"""Says what it did."""', "docstring"),
    ("a closure's free variables",
     "        nonlocal total\n        total += n\n        return total", "        return n",
     "closure"),
    ("a syntax error", "return side * side", "return side *", "does not compile"),
    # pytest reads a fixture's or a test's parameters as it collects: they are not the code's
    ("a function's parameters", "def area(self, side):", "def area(self, side, *more):",
     "signature of Shape.area"),
    ("a parameter renamed",
     "def outer(x):\n    def inner(y):\n        return y * 2\n    return inner(x)",
     "def outer(z):\n    def inner(y):\n        return y * 2\n    return inner(z)",
     "signature of outer"),
]


def _called(path: Path, source: str) -> set[types.CodeType]:
    tracer = _warm.Tracer([str(path)])
    assert tracer.start() is None
    try:
        exec(compile(source, str(path), "exec", dont_inherit=True), {"__name__": "subject"})
    finally:
        assert tracer.stop() is None
    return tracer.called


@pytest.mark.parametrize(("what", "anchor", "replacement", "expected"), CASES,
                         ids=[case[0] for case in CASES])
def test_a_mutation_runs_warm_only_when_no_changed_code_ran_while_collecting(
    tmp_path: Path, what: str, anchor: str, replacement: str, expected: set[str] | str
) -> None:
    path = tmp_path / "subject.py"
    assert BASE.count(anchor) == 1, what
    mutated = BASE.replace(anchor, replacement)

    routed = _warm.route(str(path), BASE.encode(), mutated.encode(), _called(path, BASE), set())

    if isinstance(expected, str):
        assert isinstance(routed, str), f"{what}: swapped {routed}"
        assert expected in routed, routed
    else:
        assert not isinstance(routed, str), f"{what}: {routed}"
        changed = {old.co_name for old, new in routed.items()
                   if _warm._own(old) != _warm._own(new)}
        assert changed == expected
        # whatever holds a changed code object gets its new code too (its constants changed)
        assert {"outer" if "inner" in changed else "counter" if "add" in changed else None,
                *changed} - {None} <= {old.co_name for old in routed}


def test_lines_moved_by_a_mutation_give_later_functions_their_new_positions(
    tmp_path: Path,
) -> None:
    path = tmp_path / "subject.py"
    mutated = BASE.replace("return min(x, LIMIT)", "value = min(x, LIMIT)\n    return value")

    routed = _warm.route(str(path), BASE.encode(), mutated.encode(), _called(path, BASE), set())

    assert not isinstance(routed, str), routed
    moved = {old.co_name for old in routed}
    assert {"clamp", "decorated", "area", "documented"} <= moved
    assert all(new.co_firstlineno == old.co_firstlineno + 1
               for old, new in routed.items() if old.co_name != "clamp")


def test_a_swap_makes_every_live_function_of_the_file_run_the_mutated_code(
    tmp_path: Path,
) -> None:
    path = tmp_path / "subject.py"
    namespace: dict[str, object] = {"__name__": "subject"}
    exec(compile(BASE, str(path), "exec", dont_inherit=True), namespace)
    clamp, shape, add = namespace["clamp"], namespace["Shape"](), namespace["counter"]()  # type: ignore[operator]
    assert (clamp(50), shape.area(3), add(2)) == (10, 9, 2)  # type: ignore[operator, attr-defined]
    mutated = (BASE.replace("return min(x, LIMIT)", "return max(x, LIMIT)")
               .replace("return side * side", "return side + side")
               .replace("total += n", "total -= n"))
    routed = _warm.route(str(path), BASE.encode(), mutated.encode(), _called(path, BASE), set())
    assert not isinstance(routed, str), routed

    live = _warm.functions([str(path)])[_warm._key(str(path))]
    swapped = _warm.swap(live, routed)

    assert swapped >= 3
    # a closure made before the swap (as one made at import would be) runs the new code too,
    # as it would have had it been made from the mutated file
    assert (clamp(50), shape.area(3), add(2)) == (50, 6, 0)  # type: ignore[operator, attr-defined]
    assert namespace["counter"]()(2) == -2  # type: ignore[operator]


COVERAGE_PTH = (  # coverage 7.17's a1_coverage.pth, as pip installs it
    "import sys; exec('import os\\n\\nif os.getenv(\"COVERAGE_PROCESS_START\") or "
    "os.getenv(\"COVERAGE_PROCESS_CONFIG\"):\\n try:\\n  import coverage\\n except:\\n  pass\\n"
    " else:\\n  coverage.process_startup(slug=\"pth\")')\n")


@pytest.mark.parametrize(("variables", "known"), [
    ({}, True),  # coverage's own .pth does nothing unless asked to start coverage
    ({"COVERAGE_PROCESS_START": ".coveragerc"}, False),  # it started coverage, once
    ({"COVERAGE_PROCESS_CONFIG": "{}"}, False),
])
def test_coverage_s_start_up_line_is_known_to_do_nothing_only_while_no_variable_asks_it_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variables: dict[str, str], known: bool
) -> None:
    from mutharness.runners.pytest import _forkserver

    (tmp_path / "a1_coverage.pth").write_text(COVERAGE_PTH)
    for name in ("COVERAGE_PROCESS_START", "COVERAGE_PROCESS_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)

    found = _forkserver._executable_pth_line(str(tmp_path))

    assert (found is None) is known, found


@pytest.mark.parametrize(("event", "args", "shown"), [
    ("subprocess.Popen", ("/usr/bin/python3", ["/usr/bin/python3", "-c", "x"], None, None),
     "/usr/bin/python3 -c x"),
    ("subprocess.Popen", (None, ["python", "-V"], None, None), "python -V"),
    ("subprocess.Popen", (b"/v/bin/python3.11", [b"python3.11", "-m", "y"], None, None),
     "python3.11 -m y"),
    ("os.posix_spawn", ("/usr/bin/python3", ["py", "-c", "1"], {}), "py -c 1"),
    ("os.system", ("python -c 1",), "python -c 1"),
    ("subprocess.Popen", ("/usr/bin/uname", ["uname", "-p"], None, None), None),  # metadata
    ("os.system", ("git rev-parse HEAD",), None),
    ("os.exec", ("/bin/sh", ["sh", "-c", "true"], {}), None),
])
def test_a_process_started_while_collecting_refuses_the_route_when_it_is_python(
    event: str, args: tuple[object, ...], shown: str | None
) -> None:
    assert _warm._pythonic(event, args) == shown


HELD = '''\
import types


def ticker():
    yield 1


PENDING = ticker()


def helper():
    return 1


KEPT = {"code": helper.__code__}


def plain():
    return 2


def copied():
    return 5


COPY = types.FunctionType(copied.__code__, globals(), "copy")


def renamed():
    return 7


RENAMED = types.FunctionType(renamed.__code__.replace(co_name="other"), globals())


def moved():
    return 8


MOVED = types.FunctionType(moved.__code__.replace(co_filename="<elsewhere>"), globals())


def rate():
    return 9


RATE = types.FunctionType(rate.__code__.replace(co_name="ran"), globals())()
SQUARES = (n * n for n in range(3))


class Shape:
    def area(self, side):
        return side * side
'''

HELD_CASES = [
    # (what, anchor, replacement, the swapped function or the reason's words)
    ("a generator made while collecting, not yet started", "yield 1", "yield 2", "ticker"),
    ("a function whose code object a value keeps", "return 1", "return 3", "helper"),
    ("a module-level generator expression", "n * n for", "n + n for", "<genexpr>"),
    ("a function nothing else holds", "return 2", "return 4", {"plain"}),
    ("a function copied into another function object", "return 5", "return 6", {"copied"}),
    ("a method, its class body run at import", "side * side", "side + side", {"area"}),
    # a copy of a function's code made with other names is no function of the file: a fresh
    # process would make the copy from the mutated code, a swap cannot reach it
    ("a function whose code was copied under another name", "return 7", "return 70", "renamed"),
    ("a function whose code was copied under another file", "return 8", "return 80", "moved"),
    ("a function whose renamed copy ran at import", "return 9", "return 90", "rate"),
]


@pytest.mark.parametrize(("what", "anchor", "replacement", "expected"), HELD_CASES,
                         ids=[case[0] for case in HELD_CASES])
def test_a_mutation_runs_warm_only_when_every_holder_of_its_changed_code_is_a_swapped_function(
    tmp_path: Path, what: str, anchor: str, replacement: str, expected: set[str] | str
) -> None:
    # a generator made at import keeps the code it was made with: swapping its function's code
    # would leave it running the original, a verdict no fresh process would give
    gc.collect()  # the earlier cases' modules (the same code from other files) are gone
    path = tmp_path / "subject.py"
    tracer = _warm.Tracer([str(path)])
    namespace: dict[str, object] = {"__name__": "subject"}
    assert tracer.start() is None
    try:
        exec(compile(HELD, str(path), "exec", dont_inherit=True), namespace)
    finally:
        assert tracer.stop() is None
    live = _warm.functions([str(path)])
    held = _warm.held(live, tracer.called, {_warm._key(str(path)): (HELD.encode(), str(path))})

    routed = _warm.route(str(path), HELD.encode(), HELD.replace(anchor, replacement).encode(),
                         tracer.called, held)

    if isinstance(expected, str):
        assert isinstance(routed, str), f"{what}: swapped {routed}"
        assert "something other than a function holds" in routed and expected in routed, routed
    else:
        assert not isinstance(routed, str), f"{what}: {routed}"
        assert {old.co_name for old, new in routed.items()
                if _warm._own(old) != _warm._own(new)} == expected
    assert namespace["PENDING"] is not None  # the namespace lived through the check


@pytest.mark.parametrize(("filename", "helper"), [
    (os.path.join(os.path.dirname(os.__file__), "pathlib.py"), True),
    (os.path.join(os.path.dirname(os.__file__), "pathlib", "_local.py"), True),  # 3.13 on
    (os.path.join(os.path.dirname(os.__file__), "pathlib", "_abc.py"), True),
    (os.path.join(os.path.dirname(os.__file__), "io.py"), True),
    (os.path.join(os.sep, "project", "src", "pathlib", "_local.py"), False),
    (os.path.join(os.sep, "project", "src", "reader.py"), False),
])
def test_a_read_through_the_standard_library_s_file_helpers_is_asked_for_by_their_caller(
    filename: str, helper: bool
) -> None:
    assert _warm._helper(filename) is helper
