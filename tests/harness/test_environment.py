"""environment.check_floors / version_tuple: the libraries mutharness relies on."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Mapping
from importlib import metadata
from pathlib import Path

import pytest

from mutharness.environment import FLOORS, check_floors, tool_versions, version_tuple
from mutharness.errors import EnvironmentProblem, ExitCode

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"

# Dependencies whose floor is not checked in the harness's own interpreter: none. pytest itself
# is not a dependency at all (the project brings its own; runner.MIN_PYTEST is the floor that
# runner.probe_interpreter checks), and the tests' interpreter needs nothing else.
CHECKED_IN_THE_TEST_INTERPRETER: frozenset[str] = frozenset()


def installed_from(versions: Mapping[str, str]) -> Callable[[str], str]:
    """A fake `importlib.metadata.version` serving `versions`."""

    def version(name: str) -> str:
        try:
            return versions[name]
        except KeyError:
            raise metadata.PackageNotFoundError(name) from None

    return version


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pyproject_floors() -> dict[str, str]:
    dependencies = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["dependencies"]
    floors: dict[str, str] = {}
    for requirement in dependencies:
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*>=\s*([0-9][0-9A-Za-z.]*)",
                             requirement.strip())
        assert match, f"unexpected requirement form in pyproject.toml: {requirement!r}"
        floors[canonical(match.group(1))] = match.group(2)
    return floors


def test_the_floors_table_agrees_with_the_pyproject_dependencies() -> None:
    declared = pyproject_floors()
    ours = {canonical(name): floor for name, floor in FLOORS.items()}

    assert ours == {name: declared[name] for name in ours}
    assert set(declared) - set(ours) == CHECKED_IN_THE_TEST_INTERPRETER


def test_the_installed_environment_meets_the_floors() -> None:
    found = check_floors()

    assert set(found) == set(FLOORS)
    assert all(found[name] == metadata.version(name) for name in FLOORS)


def test_versions_at_or_above_every_floor_are_returned() -> None:
    versions = {"GitPython": "3.2.1", "filelock": "10.0", "Jinja2": "3.1.6.post1",
                "click": "8.10.0", "libcst": "1.8.0", "tree-sitter": "0.26.1",
                "tree-sitter-javascript": "0.23", "tree-sitter-typescript": "0.23.2"}

    assert check_floors(FLOORS, installed_from(versions)) == versions


@pytest.mark.parametrize(
    ("version", "floor"),
    [
        pytest.param("3.1.45", "3.2.1", id="older-minor"),
        pytest.param("3.2.0", "3.2.1", id="older-patch"),
        pytest.param("2.99.99", "3.0", id="older-major"),
        pytest.param("3.2.1rc1", "3.2.1", id="release-candidate-of-the-floor"),
        pytest.param("3.2.1.dev0", "3.2.1", id="dev-release-of-the-floor"),
        pytest.param("3.2.1b2", "3.2.1", id="beta-of-the-floor"),
        pytest.param("3.2.1a1", "3.2.1", id="alpha-of-the-floor"),
        pytest.param("3.2rc1", "3.2.0", id="release-candidate-of-a-padded-floor"),
        pytest.param("", "1.0", id="empty-version"),
        pytest.param("unknown", "1.0", id="no-numbers"),
    ],
)
def test_a_version_below_its_floor_is_an_environment_problem(version: str, floor: str) -> None:
    with pytest.raises(EnvironmentProblem) as raised:
        check_floors({"GitPython": floor}, installed_from({"GitPython": version}))

    problem = raised.value
    assert problem.exit_code is ExitCode.ENVIRONMENT
    assert "GitPython" in problem.what
    assert f"{version} " in problem.what
    assert floor in problem.what
    assert f'pip install --upgrade "GitPython>={floor}"' in problem.remedy


@pytest.mark.parametrize(
    ("version", "floor"),
    [
        pytest.param("3.2.1", "3.2.1", id="equal"),
        pytest.param("3.2", "3.2.0", id="equal-without-trailing-zero"),
        pytest.param("3.2.0", "3.2", id="equal-with-trailing-zero"),
        pytest.param("3.2.1.post1", "3.2.1", id="post-release"),
        pytest.param("3.2.1+local.7", "3.2.1", id="local-version"),
        pytest.param("3.10.0", "3.9.9", id="two-digit-minor"),
        pytest.param("3.2.2rc1", "3.2.1", id="pre-release-above-the-floor"),
        pytest.param("4.0.0.dev1", "3.2.1", id="dev-release-above-the-floor"),
    ],
)
def test_a_version_at_or_above_its_floor_is_accepted(version: str, floor: str) -> None:
    assert check_floors({"GitPython": floor}, installed_from({"GitPython": version})) == {
        "GitPython": version
    }


def test_a_missing_package_is_an_environment_problem_naming_it() -> None:
    with pytest.raises(EnvironmentProblem) as raised:
        check_floors({"filelock": "4.3.1"}, installed_from({}))

    assert raised.value.what == "filelock is not installed"
    assert 'pip install "filelock>=4.3.1"' in raised.value.remedy


def test_every_missing_or_old_package_is_named_in_one_error_with_one_pip_command() -> None:
    floors = {"GitPython": "3.2.1", "filelock": "4.3.1", "click": "8.1.8"}
    with pytest.raises(EnvironmentProblem) as raised:
        check_floors(floors, installed_from({"click": "8.1.7"}))

    assert raised.value.what == (
        "GitPython is not installed; filelock is not installed; "
        "click 8.1.7 is below the required 8.1.8 (security floor)"
    )
    assert raised.value.remedy.endswith(
        'pip install --upgrade "GitPython>=3.2.1" "filelock>=4.3.1" "click>=8.1.8"'
    )


def test_the_problem_message_has_the_remedy_on_its_own_line() -> None:
    with pytest.raises(EnvironmentProblem) as raised:
        check_floors({"click": "8.1.8"}, installed_from({"click": "8.1.7"}))

    what, remedy = str(raised.value).split("\n")
    assert what == "click 8.1.7 is below the required 8.1.8 (security floor)"
    assert remedy.strip().endswith('-m pip install --upgrade "click>=8.1.8"')


def test_the_remedy_quotes_the_requirement_so_that_no_shell_reads_it_as_a_redirection() -> None:
    with pytest.raises(EnvironmentProblem) as raised:
        check_floors({"Jinja2": "3.1.6"}, installed_from({"Jinja2": "3.1.5"}))

    remedy = raised.value.remedy
    assert "'" not in remedy  # cmd.exe does not treat single quotes as quotes: > would redirect
    assert re.search(r'"Jinja2>=3\.1\.6"', remedy)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("3.1.45", (3, 1, 45), id="plain"),
        pytest.param("3.1.45.post1", (3, 1, 45), id="post"),
        pytest.param("8.1.8", (8, 1, 8), id="click"),
        pytest.param("2.0", (2, 0), id="two-parts"),
        pytest.param("10", (10,), id="one-part"),
        pytest.param("3.2.1rc1", (3, 2, 1), id="rc-suffix"),
        pytest.param("3.2.1.dev0", (3, 2, 1), id="dev"),
        pytest.param("1.2.3+local", (1, 2, 3), id="local"),
        pytest.param("2024.10.1", (2024, 10, 1), id="calendar"),
        pytest.param("", (), id="empty"),
        pytest.param("abc", (), id="no-numbers"),
        pytest.param("1.x.3", (1,), id="stops-at-a-non-number"),
    ],
)
def test_version_tuple_keeps_the_leading_numeric_release(
    text: str, expected: tuple[int, ...]
) -> None:
    assert version_tuple(text) == expected


def test_tool_versions_records_the_harness_side() -> None:
    versions = tool_versions()

    assert {"mutharness", "harness_python", "platform", "harness_executable"} <= set(versions)
    assert versions["mutharness"] == metadata.version("mutharness")
    assert {name: versions[name] for name in FLOORS} == {
        name: metadata.version(name) for name in FLOORS
    }
