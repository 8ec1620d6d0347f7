"""Options declared once: defaults, a project config file, the command line; recorded, repeated."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

import click
import pytest
from conftest import Completed, Project
from inproc import in_process

from mutharness.errors import ConfigProblem, DirtyTreeError
from mutharness.options import (
    BASELINE_RUNS,
    FLAGS,
    NODE_IMPORT,
    OPTIONS,
    PYTEST_DROP_ADDOPTS,
    PYTHON,
    STRICT_SKIPS,
    TEST_COMMANDS,
    TIMEOUT_FLOOR,
    Heading,
    Kind,
    Source,
    did_you_mean,
    read_config,
    resolve,
)

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
    assert options[TIMEOUT_FLOOR] == 45.0 and options.sources["timeout-floor"] is Source.CLI
    assert options[NODE_IMPORT] == ("./test/setup-env.mjs",)
    assert options.sources["node.import"] is Source.CONFIG
    assert options[BASELINE_RUNS] == 1  # pyproject's table is not read beside mutharness.toml
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
        pytest.param("timeout-floor = nan\n", "timeout-floor: must be a finite number",
                     id="not-a-number"),
        pytest.param("timeout-constant = inf\n", "timeout-constant: must be a finite number",
                     id="infinite"),
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


@pytest.mark.parametrize(("command_line", "config", "words"), [
    ({}, {}, []),  # the default: stop at the first failure
    ({"first-failure": False}, {}, ["--no-first-failure"]),
    ({}, {"first-failure": False}, ["--no-first-failure"]),
    ({"first-failure": True}, {"first-failure": False}, ["--first-failure"]),
    ({}, {"strict-skips": True}, ["--strict-skips"]),
    ({"strict-skips": False}, {"strict-skips": True}, ["--no-strict-skips"]),
])
def test_the_re_derive_flags_name_each_flag_that_is_not_its_default_or_the_command_line_set(
    command_line: dict[str, bool], config: dict[str, bool], words: list[str]
) -> None:
    options = resolve(command_line, config, "mutharness.toml" if config else None)

    assert options.flags() == words


@pytest.mark.parametrize("value", ["nan", "inf"])  # -inf: below the range already
def test_a_timeout_on_the_command_line_that_is_not_a_finite_number_is_a_usage_error(
    tmp_path: Path, value: str
) -> None:
    done = in_process(tmp_path, "verify", "specs/x.json", "--timeout-floor", value)

    assert done.code == 2, done.out + done.err
    assert "must be a finite number" in done.err


def test_a_value_the_command_line_set_is_repeated_even_when_it_is_the_default() -> None:
    options = resolve({"timeout-floor": TIMEOUT_FLOOR.default}, {"timeout-floor": 30.0},
                      "mutharness.toml")

    assert options.flags() == ["--timeout-floor", f"{TIMEOUT_FLOOR.default:g}"]


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
    make_project: Callable[..., Project]
) -> None:
    project = make_project()
    project.write("mutharness.toml",
                  "timeout-floor = 41\nbaseline-timeout = 300\nlock-timeout = 7\n")
    project.commit("reviewed mutharness settings")

    done = in_process(project.root, "verify", "specs/calc.json")

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
    assert "known options: python, node, lock-timeout," in done.err  # a wrong key: the list
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
    assert "mutharness.toml: is in the working tree but not committed" in done.err
    assert "commit it, or name it with --config" in done.err
    assert "known options" not in done.err  # no key is wrong: the list would not help
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
            PYTEST_DROP_ADDOPTS] == names
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


def test_every_problem_of_a_config_file_is_reported_at_once_with_a_did_you_mean(
    tmp_path: Path,
) -> None:
    (tmp_path / "mutharness.toml").write_text(
        "timeout-flor = 5\nbaseline-runs = 50\nstrict-skip = true\n"
        'pytest-drop-addopts = ["-p", "--cov"]\n'
        '[node]\noptions = ["--test-force-exit", "--no-warnings", "--inspect"]\n',
        encoding="utf-8")

    with pytest.raises(ConfigProblem) as raised:
        read_config(tmp_path, None)

    message = raised.value.message()
    assert "timeout-flor: is not a mutharness option (did you mean timeout-floor?)" in message
    assert "strict-skip: is not a mutharness option (did you mean strict-skips?)" in message
    assert "baseline-runs: must be at most 20, not 50" in message
    assert "'--test-force-exit' is not allowed" in message
    assert "'--inspect' is not allowed" in message
    assert "'-p' cannot be dropped" in message
    assert raised.value.file == "mutharness.toml"
    assert [key for key, _ in raised.value.problems] == [
        "baseline-runs", "node.options", "node.options", "pytest-drop-addopts", "strict-skip",
        "timeout-flor"]


def test_a_key_like_no_option_gets_no_suggestion() -> None:
    assert did_you_mean("zzzz") == ""
    assert did_you_mean("pytest-runer") == " (did you mean pytest-runner?)"


def test_each_option_is_read_through_a_typed_accessor() -> None:
    options = resolve({"timeout-floor": 7.0}, {"node.import": ("./setup.mjs",)}, "mutharness.toml")

    assert options[TIMEOUT_FLOOR] == 7.0
    assert options[NODE_IMPORT] == ("./setup.mjs",)
    assert options[PYTHON] is None
    with pytest.raises(TypeError):
        options["timeout-floor"]  # type: ignore[index]


def test_a_flag_the_config_turns_on_is_turned_off_by_its_no_flag_and_the_rederive_flags_say_so(
) -> None:
    options = resolve({"strict-skips": False}, {"strict-skips": True}, "mutharness.toml")

    assert options[STRICT_SKIPS] is False
    assert options.sources["strict-skips"] is Source.CLI
    assert "--no-strict-skips" in options.flags()
    assert resolve({}, {"strict-skips": True}, "mutharness.toml")[STRICT_SKIPS] is True


@pytest.mark.parametrize("command", sorted(TEST_COMMANDS))
def test_every_flag_setting_has_its_no_flag_in_the_help_of_each_command_that_runs_tests(
    command: str, tmp_path: Path,
) -> None:
    done = in_process(tmp_path, command, "--help")  # click's help: no child process needed

    for option in OPTIONS:
        if option.kind is Kind.FLAG:
            assert f"{option.flag} / {option.negation}" in " ".join(done.out.split()), option


def test_every_option_of_every_command_is_declared_once_with_the_commands_that_take_it() -> None:
    from mutharness.cli import main

    declared = [*OPTIONS, *FLAGS]
    names = [word for option in declared for word in option.switches]
    assert len(names) == len(set(names))
    for name, command in main.commands.items():
        taken = {word for parameter in command.params if isinstance(parameter, click.Option)
                 for word in parameter.opts + parameter.secondary_opts} - {"--help"}
        wanted = {word for option in declared if name in option.commands
                  for word in option.switches}
        assert taken == wanted, name


@pytest.mark.parametrize("command", ["baseline", "check", "evidence-check", "merge", "redfirst",
                                     "render", "verify"])
def test_help_lists_each_command_s_options_under_their_headings_in_order(
    command: str, tmp_path: Path,
) -> None:
    done = in_process(tmp_path, command, "--help")

    sections = re.split(r"^(\S[^\n]*):$", done.out, flags=re.MULTILINE)
    titles = sections[1::2]
    known = [heading.value for heading in Heading] + ["Other options"]
    assert titles == [title for title in known if title in titles], done.out
    assert titles[-1] == "Other options"
    found = {}  # each declared option's row, by its first switch: under which heading
    for title, body in zip(titles, sections[2::2], strict=True):
        for option in [*OPTIONS, *FLAGS]:
            if command in option.commands and re.search(  # the row of the option itself
                    rf"^  {re.escape(option.switches[0])}(?=[ ,/]|$)", body, re.MULTILINE):
                found[option.switches[0]] = (title, option.heading.value)
    declared = {option.switches[0] for option in [*OPTIONS, *FLAGS] if command in option.commands}
    assert set(found) == declared, done.out  # every option of the command has its row
    assert all(title == heading for title, heading in found.values()), found


def test_a_config_key_holding_a_line_break_or_escape_cannot_forge_a_line_of_the_refusal(
    tmp_path: Path,
) -> None:
    (tmp_path / "mutharness.toml").write_text(
        '"timeout-flor\\u001b[2J\\nfake: line" = 5\n"baseline-runs" = 50\n', encoding="utf-8")

    with pytest.raises(ConfigProblem) as raised:
        read_config(tmp_path, None)

    lines = raised.value.message().splitlines()
    assert [line.split(":")[0].strip() for line in lines[1:3]] == [
        "baseline-runs", "timeout-flor\\x1b[2J\\nfake"]
    assert "\x1b" not in raised.value.message()
    assert not any(line.startswith("fake") for line in lines)


@pytest.mark.parametrize("command", sorted(TEST_COMMANDS))
def test_the_help_lists_each_runner_s_own_settings_under_that_runner_s_heading(
    command: str, tmp_path: Path,
) -> None:
    done = in_process(tmp_path, command, "--help")

    sections: dict[str, list[str]] = {}
    heading = ""
    for line in done.out.splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):
            heading = line[:-1]
        elif line.strip().startswith("--"):
            sections.setdefault(heading, []).append(line.split()[0])
    pytest_only = next(flags for title, flags in sections.items() if title.startswith("pytest"))
    node_only = next(flags for title, flags in sections.items() if title.startswith("node"))
    assert set(pytest_only) == {"--python", "--pytest-runner", "--pytest-addopts",
                                "--pytest-drop-addopts"}
    assert set(node_only) == {"--node", "--node-import", "--node-require", "--node-options",
                              "--node-concurrency"}
    general = next(flags for title, flags in sections.items() if title.startswith("Settings"))
    assert not {*pytest_only, *node_only} & set(general)
