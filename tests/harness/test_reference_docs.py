"""The docs' reference pages are generated from the code and cannot drift from it.

docs/options.md: every setting of `options.OPTIONS` (its flag, its project config key, its
default, its doc) and every command's `--help`, as the command line prints it at 100 columns.
docs/exit-codes.md holds `errors.exit_codes_table()`. docs/index.md, the site's
home page, is the README with its links made relative to docs/. Regenerate with
MUTHARNESS_WRITE_DOCS=1 python -m pytest tests/harness/test_reference_docs.py.
"""

from __future__ import annotations

import inspect
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from conftest import Completed, Project

from mutharness import errors
from mutharness.cli import COMMAND_ORDER, main
from mutharness.errors import MutharnessError, exit_codes_table
from mutharness.explanations import EXPLANATIONS, errors_page_section
from mutharness.options import OPTIONS, Option

ROOT = Path(__file__).resolve().parents[2]
OPTIONS_PAGE = ROOT / "docs" / "options.md"
INDEX_PAGE = ROOT / "docs" / "index.md"


def _default(option: Option[Any]) -> str:
    value = option.default
    if value is None:
        return "(see the doc)"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, tuple):
        return "`[" + ", ".join(f'"{item}"' for item in value) + "]`"
    return f"`{value}`"


def _key(option: Option[Any]) -> str:
    table, _, key = option.name.rpartition(".")
    return f"`{key}` under `[{table}]`" if table else f"`{option.name}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _help(*command: str) -> str:
    done = CliRunner().invoke(main, [*command, "--help"], terminal_width=100,
                              prog_name="mutharness")
    assert done.exit_code == 0, done.output
    return done.output.rstrip()


def render_options() -> str:
    """The whole options page."""
    lines = [
        "# Options reference",
        "",
        "Generated from `mutharness.options.OPTIONS` and the command line's own `--help` by",
        "`tests/harness/test_reference_docs.py`; do not edit by hand (the suite fails when this",
        "page differs from the code). How the project config is found and read:",
        "[Options and the project config](configuration.md).",
        "",
        "## Settings",
        "",
        "Each is a command-line flag of `verify`, `baseline` and `redfirst` and a key of the",
        "project config (`mutharness.toml`, or `[tool.mutharness]` in `pyproject.toml`).",
        "",
        "| flag | config key | default | what it sets |",
        "| --- | --- | --- | --- |",
    ]
    lines += [
        f"| `{option.flag}` | {_key(option)} | {_default(option)} | {_cell(option.doc)} |"
        for option in OPTIONS
    ]
    lines += ["", "## Every command's `--help`", "", "```text", _help(), "```"]
    for command in COMMAND_ORDER:
        lines += ["", f"### `mutharness {command}`", "", "```text", _help(command), "```"]
    return "\n".join(lines) + "\n"


def _generated(page: Path, expected: str) -> None:
    """`page` holds `expected` (written first under MUTHARNESS_WRITE_DOCS=1)."""
    if os.environ.get("MUTHARNESS_WRITE_DOCS") == "1":
        page.write_text(expected, encoding="utf-8", newline="\n")
    assert page.read_text(encoding="utf-8") == expected, (
        f"docs/{page.name} is stale; regenerate: "
        "MUTHARNESS_WRITE_DOCS=1 python -m pytest tests/harness/test_reference_docs.py"
    )


def test_the_options_page_is_generated_from_the_options_and_the_help() -> None:
    _generated(OPTIONS_PAGE, render_options())


def test_every_setting_is_on_the_options_page() -> None:
    page = OPTIONS_PAGE.read_text(encoding="utf-8")
    assert [option.name for option in OPTIONS if f"| `{option.flag}` |" not in page] == []


def test_the_exit_codes_page_holds_the_table_of_the_enum() -> None:
    assert exit_codes_table() in (ROOT / "docs" / "exit-codes.md").read_text(encoding="utf-8")


def render_index() -> str:
    """The site's home page: the README, its links into docs/ made relative to it."""
    return (ROOT / "README.md").read_text(encoding="utf-8").replace("](docs/", "](")


def test_the_docs_home_page_is_the_readme() -> None:
    _generated(INDEX_PAGE, render_index())


MESSAGES_PAGE = ROOT / "docs" / "messages.md"


def render_messages() -> str:
    """docs/messages.md with its errors half made from `explanations.EXPLANATIONS` (the notes
    half is written by hand)."""
    page = MESSAGES_PAGE.read_text(encoding="utf-8")
    head, rest = page.split("## Errors\n", 1)
    notes = rest[rest.index("\n## Notes"):]
    return f"{head}## Errors\n\n{errors_page_section()}\n{notes}"


def test_the_errors_half_of_the_messages_page_is_made_from_the_explanations() -> None:
    _generated(MESSAGES_PAGE, render_messages())


def test_every_error_class_has_an_explanation_with_its_exit_code() -> None:
    classes = {name: cls for name, cls in inspect.getmembers(errors, inspect.isclass)
               if issubclass(cls, MutharnessError) and cls is not MutharnessError
               and not name.startswith("_")}  # a private base is never raised itself
    assert sorted(set(classes) - set(EXPLANATIONS)) == []
    assert sorted(set(EXPLANATIONS) - set(classes)) == []
    for name, cls in classes.items():
        said = re.findall(r"Exit (\d+)", EXPLANATIONS[name].text)
        if name == "RecordedError":  # the exit code of the run it replays
            assert said == [], name
        else:
            assert said == [str(int(cls.exit_code))], (name, said)


def test_an_error_ends_with_the_command_that_explains_it_and_that_command_prints_its_entry(
    make_project: Callable[..., Project], cli: Callable[..., Completed]
) -> None:
    project = make_project()
    project.write("notes.txt", "not committed\n")

    done = cli(project.root, "verify", "specs/calc.json")
    explained = cli(project.root, "explain", "DirtyTreeError")

    assert done.code == 5, done.out + done.err
    # a tool install has no docs/ directory: the pointer is a command that works wherever
    # mutharness runs
    assert done.err.splitlines()[-1] == "  explained: mutharness explain DirtyTreeError"
    assert explained.code == 0, explained.out + explained.err
    assert explained.out.startswith("DirtyTreeError: The working tree has changes\n\n")
    assert "`--allow-dirty`" in explained.out
    assert explained.out.rstrip("\n").endswith(
        EXPLANATIONS["DirtyTreeError"].text.rstrip("\n"))


def test_explain_without_a_name_lists_every_entry_and_an_unknown_name_is_refused_with_the_nearest(
    make_project: Callable[..., Project], cli: Callable[..., Completed]
) -> None:
    project = make_project()

    listed = cli(project.root, "explain")
    unknown = cli(project.root, "explain", "DirtyTree")
    case = cli(project.root, "explain", "dirtytreeerror")

    assert listed.code == 0, listed.err
    assert [line.split()[0] for line in listed.out.splitlines()] == list(EXPLANATIONS)
    assert "DirtyTreeError The working tree has changes" in [
        " ".join(line.split()) for line in listed.out.splitlines()]
    assert unknown.code == 2, unknown.out + unknown.err
    assert "no error is named DirtyTree (did you mean DirtyTreeError?)" in unknown.err
    assert case.code == 0 and case.out.startswith("DirtyTreeError: "), case.out + case.err
