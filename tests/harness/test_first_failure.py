"""`--first-failure` (the default): each mutant's run stops at its first failing test, in order."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conftest import Completed, Project, default_spec
from inproc import in_process

ProjectFactory = Callable[..., Project]
Cli = Callable[..., Completed]

TEST_ORDER = '''\
from calc import clamp, is_adult


def test_a_inside():
    assert clamp(5, 0, 10) == 5


def test_b_above():
    assert clamp(50, 0, 10) == 10


def test_c_adult():
    assert is_adult(18)


def test_d_below():
    assert clamp(-5, 0, 10) == 0


def test_e_below_again():
    assert clamp(-1, 0, 10) == 0
'''
D = "tests/test_order.py::test_d_below"
E = "tests/test_order.py::test_e_below_again"

SPEC = default_spec(tests=["tests/test_order.py"], expectBaselinePass=5, mutations=[
    {"name": "the low bound is ignored", "file": "src/calc.py",
     "anchor": "    if value < low:\n        return low\n", "replacement": ""},
    {"name": "the low bound returns the high one", "file": "src/calc.py",
     "anchor": "        return low\n", "replacement": "        return high\n"},
    {"name": "SURVIVOR (documented): 17 is adult too", "file": "src/calc.py",
     "anchor": "return age >= 18", "replacement": "return age >= 17", "expectCaught": False},
    {"name": "the low bound returns the value", "file": "src/calc.py",
     "anchor": "        return low\n", "replacement": "        return value\n",
     "killedBy": [D, E]},
])


def mutations(project: Project) -> list[dict[str, Any]]:
    results = json.loads((project.root / ".mutharness/results.json").read_text("utf-8"))
    found: list[dict[str, Any]] = results["specs"][0]["mutations"]
    return found


def test_first_failure_stops_each_mutant_at_its_first_failing_test(
    make_project: ProjectFactory, cli: Cli
) -> None:
    project = make_project(spec=SPEC)
    project.write("tests/test_order.py", TEST_ORDER)
    project.commit("tests in an order")

    done = cli(project.root, "verify", "specs/calc.json", "--first-failure",
               "--evidence", "evidence")

    assert done.code == 0, done.out + done.err
    first, second, survivor, named = mutations(project)
    assert first["facts"]["failing"] == [D] and first["facts"]["passed"] == 3
    assert first["facts"]["collected"] == 4  # test_e never ran: the run stopped at test_d
    assert second["facts"]["failing"] == [D] and second["facts"]["collected"] == 4  # in order
    assert first["first_failure"] and second["first_failure"]
    assert survivor["verdict"] == "SURVIVED" and survivor["facts"]["passed"] == 5
    assert named["first_failure"] is False  # killedBy names two tests: full counts
    assert named["facts"]["failing"] == [D, E]
    line = next(line for line in done.out.splitlines() if "returns the high one" in line)
    assert line.endswith("(stopped at its first failing test)")
    document = (project.root / "evidence" / "calc.md").read_text("utf-8")
    assert "--first-failure" in document
    assert "stopped at its first failing test, the tests in their own order" in \
        document.replace("\n", " ")
    assert "| first failure |" in document


def test_first_failure_gives_the_verdicts_of_a_full_run(
    make_project: ProjectFactory
) -> None:
    project = make_project(spec=SPEC)
    project.write("tests/test_order.py", TEST_ORDER)
    project.commit("tests in an order")

    full = in_process(project.root, "verify", "specs/calc.json", "--no-first-failure")
    assert full.code == 0, full.out + full.err
    everything = mutations(project)
    fast = in_process(project.root, "verify", "specs/calc.json")  # the default
    assert fast.code == 0, fast.out + fast.err
    stopped = mutations(project)

    assert [m["verdict"] for m in stopped] == [m["verdict"] for m in everything]
    for quick, slow in zip(stopped, everything, strict=True):
        assert set(quick["facts"]["failing"]) <= set(slow["facts"]["failing"])
    assert all(not m["first_failure"] for m in everything)


ORDER_DEPENDENT = '''\
from calc import clamp, is_adult

STATE = []


def test_a_sets_the_state():
    STATE.append(clamp(-5, 0, 10))


def test_b_needs_the_state():
    assert STATE == [0]


def test_c_adult():
    assert is_adult(18)
'''
ORDER_SPEC = default_spec(tests=["tests/test_state.py"], expectBaselinePass=3, mutations=[
    {"name": "the low bound is ignored", "file": "src/calc.py",
     "anchor": "    if value < low:\n        return low\n", "replacement": ""},
    {"name": "17 is adult too (no test pins it)", "file": "src/calc.py",
     "anchor": "return age >= 18", "replacement": "return age >= 17"},
])


def test_first_failure_runs_the_tests_in_their_order_so_order_cannot_invent_a_kill(
    make_project: ProjectFactory, cli: Cli
) -> None:
    project = make_project(spec=ORDER_SPEC)
    project.write("tests/test_state.py", ORDER_DEPENDENT)
    project.commit("tests that depend on their order")

    done = cli(project.root, "verify", "specs/calc.json", "--first-failure")

    assert done.code == 1, done.out + done.err  # the survivor is reported, as with full counts
    caught, survivor = mutations(project)
    assert caught["verdict"] == "CAUGHT"
    assert survivor["verdict"] == "SURVIVED" and survivor["facts"]["passed"] == 3


def test_first_failure_under_xdist_keeps_full_counts(
    make_project: ProjectFactory, make_venv: Callable[..., Any], tool_site: Path
) -> None:
    project = make_project(spec=SPEC)
    project.write("tests/test_order.py", TEST_ORDER)
    project.write("pyproject.toml", '[tool.pytest.ini_options]\npythonpath = ["src"]\n'
                                    'addopts = "-n 2"\n')
    project.commit("xdist workers")
    venv = make_venv("xdist", tools=tool_site)

    done = in_process(project.root, "verify", "specs/calc.json", "--first-failure",
                      "--python", str(venv.python))

    assert done.code == 0, done.out + done.err
    found = mutations(project)
    assert [m["verdict"] for m in found] == ["CAUGHT", "CAUGHT", "SURVIVED", "CAUGHT"]
    assert not any(m["first_failure"] for m in found)  # xdist: every test's outcome, as asked
    assert sorted(found[0]["facts"]["failing"]) == [D, E]
