"""Options declared once: defaults, a project config file, the command line; recorded, repeated."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Completed, Project
from inproc import in_process

from mutharness.errors import ConfigProblem, DirtyTreeError
from mutharness.options import OPTIONS, Source, read_config, resolve

Cli = Callable[..., Completed]


def results_of(project: Project) -> dict[str, object]:
    document: dict[str, object] = json.loads(
        (project.root / ".mutharness/results.json").read_text("utf-8")
    )
    return document


def test_every_option_has_a_flag_a_default_and_a_one_line_doc() -> None:
    names = [option.name for option in OPTIONS]
    assert len(names) == len(set(names))
    for option in OPTIONS:
        assert option.flag.startswith("--") and option.doc and "\n" not in option.doc


def test_mutharness_toml_wins_over_pyproject_and_the_command_line_over_both(
    tmp_path: Path,
) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.mutharness]\ntimeout-floor = 99\nbaseline-runs = 5\n'
    )
    (tmp_path / "mutharness.toml").write_text(
        'timeout-floor = 30\n[node]\nimport = ["./test/setup-env.mjs"]\n'
    )

    values, config_file = read_config(tmp_path, None)
    options = resolve({"timeout-floor": 45.0}, values, config_file)

    assert config_file == "mutharness.toml"
    assert options["timeout-floor"] == 45.0 and options.sources["timeout-floor"] is Source.CLI
    assert options["node.import"] == ("./test/setup-env.mjs",)
    assert options.sources["node.import"] is Source.CONFIG
    assert options["baseline-runs"] == 1  # pyproject's table is not read beside mutharness.toml
    assert options.flags() == ["--timeout-floor", "45", "--node-import", "./test/setup-env.mjs"]


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        pytest.param("timeout-flor = 3\n", "timeout-flor: is not a mutharness option",
                     id="typo"),
        pytest.param('baseline-runs = "3"\n', "baseline-runs: must be a number", id="type"),
        pytest.param("baseline-runs = 50\n", "baseline-runs: must be at most 20", id="range"),
        pytest.param('[node]\noptions = ["--test-force-exit"]\n', "is not allowed",
                     id="node-option-off-the-allow-list"),
        pytest.param("timeout-floor = \n", "cannot be read as TOML", id="not-toml"),
    ],
)
def test_a_config_file_with_a_bad_value_is_refused_naming_file_and_key(
    tmp_path: Path, text: str, phrase: str
) -> None:
    (tmp_path / "mutharness.toml").write_text(text)

    with pytest.raises(ConfigProblem) as raised:
        resolve({}, *read_config(tmp_path, None))

    assert raised.value.message().startswith("mutharness.toml: ")
    assert phrase in raised.value.message()


def test_a_config_file_outside_the_repository_is_used_and_recorded_and_the_evidence_repeats_it(
    make_project: Callable[..., Project], cli: Cli, tmp_path: Path
) -> None:
    project = make_project()
    outside = tmp_path / "elsewhere" / "ci.toml"
    outside.parent.mkdir()
    outside.write_text("timeout-floor = 33\nbaseline-runs = 2\n")

    done = cli(project.root, "verify", "specs/calc.json", "--config", str(outside),
               "--timeout-constant", "4", "--evidence", "evidence-out")

    assert done.code == 0, done.out + done.err
    settings = results_of(project)["settings"]
    assert isinstance(settings, dict)
    assert settings["config_file"] == str(outside)
    assert settings["values"]["timeout-floor"] == 33.0
    assert settings["sources"]["timeout-floor"] == "config"
    assert settings["sources"]["timeout-constant"] == "command line"
    assert settings["rederive_flags"] == [
        "--timeout-floor", "33", "--timeout-constant", "4", "--baseline-runs", "2",
    ]
    document = (project.root / "evidence-out/calc.md").read_text("utf-8")
    assert ("mutharness verify specs/calc.json --timeout-floor 33 --timeout-constant 4 "
            "--baseline-runs 2 --evidence evidence") in document
    assert "config file `.../ci.toml`" in document


def test_the_lock_timeout_and_every_timeout_come_from_the_project_config(
    make_project: Callable[..., Project], cli: Cli
) -> None:
    project = make_project()
    project.write("mutharness.toml",
                  "timeout-floor = 41\nbaseline-timeout = 300\nlock-timeout = 7\n")
    project.commit("reviewed mutharness settings")

    done = cli(project.root, "verify", "specs/calc.json")

    assert done.code == 0, done.out + done.err
    results = results_of(project)
    [spec] = results["specs"]  # type: ignore[misc]
    assert spec["timeout_s"] == 41.0
    assert spec["baseline"]["timeout_s"] == 300.0
    settings = results["settings"]  # type: ignore[index]
    assert settings["values"]["lock-timeout"] == 7.0
    assert settings["sources"]["lock-timeout"] == "config"


def test_an_unknown_key_in_pyproject_s_table_is_refused_before_anything_runs(
    make_project: Callable[..., Project]
) -> None:
    project = make_project()
    pyproject = (project.root / "pyproject.toml").read_text("utf-8")
    project.write("pyproject.toml", pyproject + "\n[tool.mutharness]\ntimeout = 3\n")
    project.commit("a typo")

    done = in_process(project.root, "verify", "specs/calc.json")

    assert done.code == 2
    assert "pyproject.toml [tool.mutharness]: timeout: is not a mutharness option" in done.err
    assert not (project.root / ".mutharness/results.json").exists()


def test_a_git_ignored_project_config_is_refused_before_anything_runs(
    make_project: Callable[..., Project]
) -> None:
    project = make_project()
    project.write(".gitignore", "mutharness.toml\n")
    project.commit("the local config is ignored")
    project.write("mutharness.toml", 'pytest-addopts = "-k not clamp_below"\n')

    done = in_process(project.root, "verify", "specs/calc.json")

    assert done.code == 2, done.out + done.err
    assert "mutharness.toml" in done.err
    assert "baseline" not in done.out


@pytest.mark.skipif(sys.platform == "win32", reason="git for Windows commits no symlinks")
def test_a_committed_project_config_that_is_a_symlink_is_refused_and_never_followed(
    make_project: Callable[..., Project], tmp_path: Path
) -> None:
    project = make_project()
    outside = tmp_path / "elsewhere.toml"
    outside.write_text('pytest-addopts = "-k not clamp_below"\n')
    (project.root / "mutharness.toml").symlink_to(outside)
    project.commit("a config that links outside the repository")

    done = in_process(project.root, "verify", "specs/calc.json")

    assert done.code == 2, done.out + done.err
    assert "mutharness.toml" in done.err
    assert "baseline" not in done.out


def test_a_committed_project_config_is_read_from_head_s_bytes(
    make_project: Callable[..., Project], cli: Callable[..., Completed]
) -> None:
    project = make_project()
    project.write("mutharness.toml", "baseline-runs = 2\n")
    project.commit("a project config")

    done = cli(project.root, "verify", "specs/calc.json")

    assert done.code == 0, done.out + done.err
    results = json.loads((project.root / ".mutharness/results.json").read_text("utf-8"))
    assert results["settings"]["values"]["baseline-runs"] == 2


@pytest.mark.parametrize(("names", "refused"), [
    (("--cov-fail-under", "-x", "--ignore"), None),
    (("-p",), "'-p' cannot be dropped"),
    (("--plugin",), "'--plugin' cannot be dropped"),
    (("cov-fail-under",), "is not an option name"),
    (("--cov-fail-under=90",), "is not an option name"),
    (("--cov-fail-under 90",), "is not an option name"),
    (("--",), "is not an option name"),
    (("--x\x1b[31m",), "is not an option name"),  # never reaches pytest nor a terminal raw
    (("-kexpr",), "is not an option name"),
])
def test_pytest_drop_addopts_takes_option_names_alone_and_never_p(
    names: tuple[str, ...], refused: str | None
) -> None:
    if refused is None:
        assert resolve({}, {"pytest-drop-addopts": names}, "mutharness.toml")[
            "pytest-drop-addopts"] == names
        return
    with pytest.raises(ConfigProblem) as raised:
        resolve({}, {"pytest-drop-addopts": names}, "mutharness.toml")
    assert refused in str(raised.value)
    assert raised.value.key == "pytest-drop-addopts"
    assert raised.value.file == "mutharness.toml"


def test_a_dirty_tree_refusal_with_untracked_files_names_ignoring_them_as_a_way_out() -> None:
    untracked = DirtyTreeError(("?? .venv/bin/python",)).message()
    modified = DirtyTreeError((" M src/calc.py",)).message()

    assert ".git/info/exclude" in untracked
    assert ".git/info/exclude" not in modified
