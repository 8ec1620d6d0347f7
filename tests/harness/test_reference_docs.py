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


def _entries() -> dict[str, str]:
    """docs/messages.md's error entries: the class each names (`{#Name}`) -> its text."""
    page = (ROOT / "docs" / "messages.md").read_text(encoding="utf-8")
    parts = re.split(r"^### .*\{#(\w+)\}$", page, flags=re.MULTILINE)
    return {name: text.split("\n## ")[0] for name, text in zip(parts[1::2], parts[2::2],
                                                                  strict=True)}


def test_every_error_has_an_entry_on_the_messages_page_with_its_exit_code() -> None:
    classes = {name: cls for name, cls in inspect.getmembers(errors, inspect.isclass)
               if issubclass(cls, MutharnessError) and cls is not MutharnessError
               and not name.startswith("_")}  # a private base is never raised itself
    entries = _entries()
    assert sorted(set(classes) - set(entries)) == []
    assert sorted(set(entries) - set(classes)) == []
    for name, cls in classes.items():
        said = re.findall(r"Exit (\d+)", entries[name])
        if name == "RecordedError":  # the exit code of the run it replays
            assert said == [], name
        else:
            assert said == [str(int(cls.exit_code))], (name, said)


def test_an_error_names_its_entry_on_the_messages_page(
    make_project: Callable[..., Project], cli: Callable[..., Completed]
) -> None:
    project = make_project()
    project.write("notes.txt", "not committed\n")

    done = cli(project.root, "verify", "specs/calc.json")

    assert done.code == 5, done.out + done.err
    assert done.err.splitlines()[-1] == "  explained: docs/messages.md#DirtyTreeError"
    assert "DirtyTreeError" in _entries()
