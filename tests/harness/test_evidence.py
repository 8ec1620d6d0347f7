"""Evidence documents: rendered from the results JSON alone, byte-stable, escaped, atomic."""

from __future__ import annotations

import copy
import json
import os
import re
import signal
import stat
import subprocess
import sys
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from conftest import Completed, Project, default_spec
from inproc import in_process
from liverun import HANG_GUARD, Sandbox, add_probes, alive, spawn, wait_for

from mutharness.errors import EnvironmentProblem
from mutharness.model.results import SCHEMA_VERSION
from mutharness.repo.files import remove_tree
from mutharness.reports.evidence import escape_markdown, fence, render_documents, write_evidence
from mutharness.reports.staleness import parse_facts


def parse_document(document: str) -> tuple[str, dict[str, str]] | str:
    """The commit and digests staleness reads: from the facts rendered beside `document`."""
    return parse_facts(LAST_FACTS[document], "calc.json")


LAST_FACTS: dict[str, str] = {}

ProjectFactory = Callable[..., Project]
Cli = Callable[..., Completed]

COMMIT = "f8d29b7372031522523c2807650907076f409b57"
SOURCE_COMMIT = "0123456789abcdef0123456789abcdef01234567"
DIGESTS = {
    "specs/calc.json": "54eb2ece7e6004eef57832188ce4ae76bbf6afbd292f37d5779745f30f003e96",
    "src/calc.py": "1c5160ebe6af12b83bb135807f42ca60b525ab9da14c2b06d5486c791440a53f",
    "tests/test_calc.py": "2cb73b40a1c4b0dde18117916ba4a7b779a3ca7ccbcf8bdf880e603bd7f92d84",
}
CAUGHT_DIFF = (
    "--- a/src/calc.py\n+++ b/src/calc.py\n@@ -4,4 +4,2 @@\n def clamp(value, low, high):\n"
    "-    if value < low:\n-        return low\n     if value > high:\n"
)
SURVIVED_DIFF = (
    "--- a/src/calc.py\n+++ b/src/calc.py\n@@ -13 +13 @@\n-    return age >= 18\n"
    "+    return age >= 17\n"
)


def facts(passed: int, failed: int, failing: list[str], duration_s: float = 0.25,
          timeout_s: float = 20.0) -> dict[str, Any]:
    return {
        "runner": "pytest", "exit_status": 1 if failed else 0,
        "exit": "tests-failed" if failed else "all-passed", "signal": None, "timed_out": False,
        "timeout_s": timeout_s, "duration_s": duration_s, "report": "ok",
        "runner_facts": {"pytest_exit": 1 if failed else 0, "config_file": "pyproject.toml"},
        "passed": passed, "failed": failed,
        "collected": passed + failed, "failing": failing, "collection_errors": [],
        "not_passed": [{"nodeid": nodeid, "outcome": "failed"} for nodeid in failing],
    }


def mutation(index: int, **overrides: Any) -> dict[str, Any]:
    document: dict[str, Any] = {
        "index": index, "name": "the low bound is ignored", "file": "src/calc.py",
        "line": 5, "end_line": 6, "crlf_translated": False,
        "anchor": "    if value < low:\n        return low\n", "replacement": "",
        "expect_caught": True, "killed_by": [], "diff": CAUGHT_DIFF,
        "facts": facts(3, 1, ["tests/test_calc.py::test_clamp_below"]),
        "verdict": "CAUGHT", "reason": "", "as_expected": True, "loaded": True, "removed": [],
        "removed_count": 0,
    }
    document.update(overrides)
    return document


def results(**spec_overrides: Any) -> dict[str, Any]:
    """A hand-built results document, shaped as `report.to_json` builds it."""
    spec: dict[str, Any] = {
        "id": "calc", "path": "specs/calc.json", "sha256": DIGESTS["specs/calc.json"],
        "tests": ["tests/test_calc.py"], "expect_baseline_pass": 4, "error": "",
        "source_commit": SOURCE_COMMIT, "depends_on": dict(DIGESTS), "timeout_s": 20.0,
        "runner": "pytest", "stopped": "",
        "tools": [{"fact": "Python", "value": "3.11.7 (CPython)"},
                  {"fact": "pytest", "value": "9.2.0"}],
        "declared": [
            {"name": "the low bound is ignored", "file": "src/calc.py",
             "anchor": "    if value < low:\n        return low\n", "replacement": "",
             "expect_caught": True, "killed_by": []},
            {"name": "SURVIVOR (documented): 18 vs 17 is not pinned because no test asks",
             "file": "src/calc.py", "anchor": "return age >= 18",
             "replacement": "return age >= 17", "expect_caught": False, "killed_by": []},
        ],
        "baseline": {
            **facts(4, 0, [], duration_s=0.92, timeout_s=900.0),
            "tests": [{"nodeid": f"tests/test_calc.py::test_{name}", "outcome": "passed",
                       "duration_s": 0.0003}
                      for name in ("clamp_below", "clamp_above", "clamp_inside", "adult")],
        },
        "skipped": [],
        "mutations": [
            mutation(0),
            mutation(
                1, name="SURVIVOR (documented): 18 vs 17 is not pinned because no test asks",
                line=13, end_line=13, anchor="return age >= 18", replacement="return age >= 17",
                expect_caught=False, diff=SURVIVED_DIFF, facts=facts(4, 0, []),
                verdict="SURVIVED",
            ),
        ],
    }
    spec.update(spec_overrides)
    return {
        "schema": SCHEMA_VERSION, "complete": True, "error": "",
        "tool": {
            "GitPython": "3.2.1", "filelock": "4.3.1", "Jinja2": "3.1.6", "click": "8.5.1",
            "mutharness": "0.1.0", "harness_python": "3.11.7", "platform": "Linux x86_64",
            "harness_executable": "/home/someone/venv/bin/python", "python": "3.11.7",
            "implementation": "CPython", "python_executable": "/home/someone/venv/bin/python",
            "pytest": "9.2.0", "git": "2.39.5",
        },
        "commit": COMMIT, "dirty": False, "dirty_changes": [],
        "command": ["mutharness", "verify", "specs/calc.json"],
        "settings": {"values": {"first-failure": True}, "sources": {"first-failure": "default"},
                     "config_file": None, "changed": {}, "rederive_flags": []},
        "interrupted": False, "signal": None, "exit_code": 0, "specs": [spec],
    }


def spec_document(run: dict[str, Any], spec_id: str = "calc") -> str:
    documents = render_documents(run)
    LAST_FACTS[documents[f"{spec_id}.md"]] = documents[f"{spec_id}.json"]
    return documents[f"{spec_id}.md"]


def unescaped_pipes(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line))


def table_rows(document: str, header_start: str) -> list[str]:
    """The body rows of the table whose header line starts with `header_start`."""
    lines = document.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


def fenced_blocks(document: str) -> list[tuple[str, str, str]]:
    """(fence marker, info string, content) of every fenced code block, CommonMark style."""
    blocks = []
    lines = document.splitlines(keepends=True)
    index = 0
    while index < len(lines):
        opener = re.match(r"^(`{3,})([^`\n]*)\n$", lines[index])
        if opener is None:
            index += 1
            continue
        marker = opener.group(1)
        content: list[str] = []
        index += 1
        while index < len(lines) and not re.match(
            rf"^`{{{len(marker)},}}[ \t]*\n?$", lines[index]
        ):
            content.append(lines[index])
            index += 1
        blocks.append((marker, opener.group(2), "".join(content)))
        index += 1
    return blocks


# ---------------------------------------------------------------- contents of a document


def test_a_spec_document_states_spec_commit_environment_command_baseline_and_verdicts() -> None:
    document = spec_document(results())

    assert document.startswith("# Mutation evidence: calc\n")
    assert "`specs/calc.json`" in document
    assert f"| commit measured | `{SOURCE_COMMIT}` (clean) |" in document
    assert "| platform | Linux x86\\_64 |" in document
    assert "| Python | 3.11.7 (CPython) |" in document
    assert "| pytest | 9.2.0 |" in document
    assert "| GitPython | 3.2.1 |" in document
    assert "| git | 2.39.5 |" in document
    assert (
        f"`git checkout {SOURCE_COMMIT} && mutharness verify specs/calc.json "
        "--evidence evidence`" in document
    )
    assert "| baseline | 4 passed of 4 expected |" in document
    rows = table_rows(document, "| # | mutation |")
    assert rows[0] == (
        "| 1 | the low bound is ignored | `src/calc.py:5` | CAUGHT | CAUGHT | 3 / 1 | yes "
        "| `tests/test_calc.py::test_clamp_below` |"
    )
    assert rows[1].startswith("| 2 | SURVIVOR (documented): 18 vs 17 is not pinned")
    assert "| `src/calc.py:13` | SURVIVED | SURVIVED | 4 / 0 | yes |" in rows[1]


def test_a_spec_document_carries_each_mutation_diff_in_a_fence() -> None:
    blocks = fenced_blocks(spec_document(results()))

    assert ("```", "diff", CAUGHT_DIFF) in blocks
    assert ("```", "diff", SURVIVED_DIFF) in blocks


def test_documented_survivors_are_listed_with_the_reason_their_name_gives() -> None:
    document = spec_document(results())

    section = document.split("## Documented survivors", 1)[1].split("\n## ", 1)[0]
    assert "SURVIVOR (documented): 18 vs 17 is not pinned because no test asks" in section
    assert "the low bound is ignored" not in section


def test_a_spec_document_records_the_sha256_of_the_spec_its_targets_and_its_tests() -> None:
    document = spec_document(results())

    parsed = parse_document(document)

    assert parsed == (SOURCE_COMMIT, {"verdicts": DIGESTS}, ())
    for path, digest in DIGESTS.items():
        assert f"{digest}  {path}\n" in document  # sha256sum -c can re-check the list


def test_a_long_survivor_reason_is_kept_whole_though_the_table_cell_is_cut() -> None:
    reason = "SURVIVOR (documented): " + " ".join(f"because{n}" for n in range(100)) + " END"
    survivor = mutation(1, name=reason, expect_caught=False, verdict="SURVIVED",
                        facts=facts(4, 0, []))

    document = spec_document(results(mutations=[survivor]))

    row = table_rows(document, "| # | mutation |")[0]
    assert "END" not in row and "..." in row
    section = document.split("## Documented survivors", 1)[1].split("\n## ", 1)[0]
    assert reason in section


def test_a_spec_error_is_shown_line_by_line_in_a_fence() -> None:
    error = ("spec calc: baseline is not trustworthy: not green.\n"
             "  failing: tests/test_calc.py::test_clamp_below\n"
             "  failing: tests/test_calc.py::test_x[<b>|`]")

    document = spec_document(results(mutations=[], error=error))

    assert ("```", "text", error + "\n") in fenced_blocks(document)


def test_a_dirty_run_is_flagged_in_the_spec_document() -> None:
    run = results()
    run.update(dirty=True, dirty_changes=[" M src/calc.py", "?? notes.txt"])

    document = spec_document(run)

    assert "(dirty: 2 uncommitted change(s) included)" in document
    assert "(clean)" not in document


def test_the_index_links_every_spec_and_holds_no_timings_nor_the_head_commit() -> None:
    run = results()
    second = copy.deepcopy(run["specs"][0])
    second.update(id="gate two", path="specs/gate two.json")
    run["specs"].append(second)
    slower = copy.deepcopy(run)
    slower["commit"] = "9" * 40  # HEAD moved by the commit of the evidence itself
    for spec in slower["specs"]:
        spec["baseline"]["duration_s"] = 7.5
        spec["timeout_s"] = 42.0
        for mutation_document in spec["mutations"]:
            mutation_document["facts"]["duration_s"] = 3.25

    documents = render_documents(run)

    assert sorted(documents) == ["calc.json", "calc.md", "gate two.json", "gate two.md",
                                 "index.md"]
    index = documents["index.md"]
    assert "| [calc](calc.md) | `0123456789ab` | 2 | 1 | 1 | 0 | 2 of 2 | 4 passed |" in index
    assert "[gate two](gate%20two.md)" in index
    assert render_documents(slower) == documents  # the README's command can run twice


# ---------------------------------------------------------------- fences


@pytest.mark.parametrize("run", ["```", "````", "`````````"])
def test_a_diff_containing_a_backtick_run_gets_a_longer_fence_that_it_cannot_close(
    run: str,
) -> None:
    diff = (
        "--- a/src/calc.py\n+++ b/src/calc.py\n@@ -13 +13,3 @@\n-    return age >= 18\n"
        f"+{run}\n+{run}python\n+    return age >= 17  # `x` {run}\n"
    )
    document = spec_document(results(mutations=[mutation(0, diff=diff)]))

    blocks = fenced_blocks(document)

    assert ("`" * (len(run) + 1), "diff", diff) in blocks
    assert blocks[-1][1] == "text"  # the digest list after it is still its own block
    assert parse_document(document) == (SOURCE_COMMIT, {"verdicts": DIGESTS}, ())


def test_a_fence_ends_the_content_with_a_newline_and_is_three_backticks_by_default() -> None:
    assert fence("+x", "diff") == "```diff\n+x\n```"


def test_a_crlf_diff_leaves_no_carriage_return_in_the_document() -> None:
    diff = "--- a/src/calc.py\r\n+++ b/src/calc.py\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n"
    document = spec_document(
        results(mutations=[mutation(0, diff=diff, crlf_translated=True)])
    )

    assert "\r" not in document
    assert "(anchor matched with CRLF line endings)" in document
    assert ("```", "diff", diff.replace("\r\n", "\n")) in fenced_blocks(document)


# ---------------------------------------------------------------- byte stability


def test_rendering_the_same_facts_twice_gives_identical_documents() -> None:
    assert render_documents(results()) == render_documents(results())


def test_spec_documents_do_not_change_when_only_durations_and_timeouts_differ() -> None:
    timeout = mutation(
        0, verdict="TIMEOUT", as_expected=False, reason="exceeded 20.5 s",
        facts={**facts(0, 0, [], duration_s=20.6, timeout_s=20.5), "timed_out": True},
    )
    slow = results(mutations=[timeout, mutation(1)], timeout_s=20.5)
    fast = copy.deepcopy(slow)
    fast["specs"][0]["timeout_s"] = 48.1
    fast["specs"][0]["baseline"]["duration_s"] = 12.7
    fast["specs"][0]["baseline"]["tests"][0]["duration_s"] = 12.6
    fast["specs"][0]["mutations"][0]["facts"].update(duration_s=48.2, timeout_s=48.1)
    fast["specs"][0]["mutations"][0]["reason"] = "exceeded 48.1 s"
    fast["specs"][0]["mutations"][1]["facts"]["duration_s"] = 9.9

    slow_documents, fast_documents = render_documents(slow), render_documents(fast)

    assert slow_documents == fast_documents
    assert "20.5" not in slow_documents["calc.md"]
    assert "0.92" not in slow_documents["calc.md"]
    assert "12.7" not in fast_documents["index.md"]


def test_a_spec_document_holds_no_absolute_path_even_when_the_facts_do() -> None:
    run = results(
        mutations=[], baseline=None, path="/home/someone/elsewhere/specs/calc.json",
        error=(
            "spec calc: baseline is not trustworthy: no trustworthy report (missing, exit "
            "status 4); see /tmp/mutharness-ab12/runs/calc/baseline/pytest.log. Also "
            "C:\\Users\\someone\\AppData\\Local\\Temp\\mh\\pytest.log and "
            "/home/someone/repo/src/calc.py"
        ),
    )

    document = spec_document(run)

    assert "/tmp" not in document
    assert "/home" not in document
    assert "Users" not in document
    assert "pytest.log" in document  # the file name stays: it says which log
    assert "calc.json" in document


# ---------------------------------------------------------------- escaping

HOSTILE = (
    "<script>alert(1)</script> | cell [x](http://evil.example) @mention **bold** "
    "`code` ``` fence\nnew line\r\n# heading www.evil.example &amp; #12"
)
HOSTILE_TEST = "tests/test_calc.py::test_x[<img src=x onerror=alert(1)>|`a`|@you]"
HOSTILE_FILE = "src/we`ird & @odd [x](y) **b**.py"


def hostile_document() -> str:
    run = results(
        tests=[HOSTILE_TEST],
        mutations=[
            mutation(0, name=HOSTILE, file=HOSTILE_FILE,
                     facts=facts(3, 1, [HOSTILE_TEST, "tests/test_calc.py::test_clamp_below"])),
            mutation(1, name=HOSTILE, expect_caught=False, verdict="SURVIVED",
                     facts=facts(4, 0, [])),
        ],
        depends_on={**DIGESTS, HOSTILE_FILE: DIGESTS["src/calc.py"]},
    )
    return spec_document(run)


def outside_code(document: str) -> str:
    """The document without fenced blocks and code spans: the text Markdown parses as markup."""
    for marker, info, content in fenced_blocks(document):
        document = document.replace(f"{marker}{info}\n{content}{marker}", "", 1)
    pieces, index = [], 0
    for run in re.finditer(r"`+", document):
        backslashes = len(document[:run.start()]) - len(document[:run.start()].rstrip("\\"))
        if run.start() < index or backslashes % 2:  # inside a span, or an escaped backtick
            continue
        closer = re.search(rf"(?<!`){run.group()}(?!`)", document[run.end():])
        if closer is None:
            continue
        pieces.append(document[index:run.start()])
        index = run.end() + closer.end()
    return "".join(pieces) + document[index:]


def test_hostile_spec_text_leaves_no_raw_html_in_the_document() -> None:
    document = hostile_document()

    tags = set(re.findall(r"<[^>]*>", outside_code(document)))
    assert tags <= {"<br>", "<code>", "</code>"}
    assert "<script" not in document
    assert "<img" not in document


def test_hostile_spec_text_cannot_add_or_remove_table_cells() -> None:
    document = hostile_document()

    for row in table_rows(document, "| # | mutation |"):
        assert unescaped_pipes(row) == 9, row
    for row in table_rows(document, "| fact | value |"):
        assert unescaped_pipes(row) == 3, row


def test_hostile_spec_text_makes_no_link_mention_emphasis_or_heading() -> None:
    text = outside_code(hostile_document())

    assert re.search(r"(?<!\\)\]\(", text) is None  # no [text](target) link
    assert "http://" not in text and "www.evil" not in text  # no autolink
    assert "@" not in text  # no @mention
    assert "**bold**" not in text and "**b**" not in text
    assert "&amp;amp;" in text  # an entity in the name shows as typed, not as '&'
    assert not any(line.startswith("# heading") for line in text.splitlines())


def test_newlines_in_spec_text_stay_inside_their_table_row() -> None:
    document = hostile_document()

    row = table_rows(document, "| # | mutation |")[0]
    assert "fence new line" in row
    assert "\r" not in document


def test_escaping_keeps_ordinary_text_readable() -> None:
    assert escape_markdown("the low bound is ignored") == "the low bound is ignored"
    assert escape_markdown("a_b*c") == "a\\_b\\*c"


def test_test_ids_with_backticks_render_as_code_that_keeps_every_character() -> None:
    test_id = "tests/test_calc.py::test_x[`a``b`]"
    document = spec_document(results(tests=[test_id]))

    row = next(line for line in document.splitlines() if line.startswith("| tests |"))
    assert "``` tests/test_calc.py::test_x[`a``b`] ```" in row


def test_the_re_derive_command_quotes_a_spec_path_with_a_space() -> None:
    document = spec_document(results(id="my gate", path="specs/my gate.json"), "my gate")

    assert "mutharness verify 'specs/my gate.json' --evidence evidence" in document


@pytest.mark.parametrize(
    ("spec_id", "problem"),
    [
        ("index", "same file as the index"),
        ("Index", "same file as the index"),  # one file on case-insensitive file systems
        ("../escape", "not a plain file name"),
        ("..", "not a plain file name"),
    ],
)
def test_a_spec_id_that_would_overwrite_the_index_or_leave_the_directory_is_refused(
    spec_id: str, problem: str, tmp_path: Path
) -> None:
    with pytest.raises(EnvironmentProblem, match=re.escape(problem)):
        write_evidence(results(id=spec_id), tmp_path / "out" / "evidence")

    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------- writing


def test_documents_are_written_whole_and_no_temporary_file_is_left(tmp_path: Path) -> None:
    out = tmp_path / "evidence"
    out.mkdir()
    (out / "calc.md").write_text("an older, much longer document\n" * 500, encoding="utf-8")

    write_evidence(results(), out)

    assert sorted(path.name for path in out.iterdir()) == ["calc.json", "calc.md", "index.md"]
    assert (out / "calc.md").read_text(encoding="utf-8") == spec_document(results())


def test_the_index_lists_other_evidence_already_in_the_directory(tmp_path: Path) -> None:
    out = tmp_path / "evidence"
    out.mkdir()
    (out / "older-spec.md").write_text("# Mutation evidence: older-spec\n", encoding="utf-8")

    write_evidence(results(), out)

    assert "[older-spec](older-spec.md)" in (out / "index.md").read_text(encoding="utf-8")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")
def test_documents_get_the_permissions_of_any_new_file_under_the_umask(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        write_evidence(results(), tmp_path / "evidence")
    finally:
        os.umask(previous)

    for path in (tmp_path / "evidence").iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path.name


def test_the_templates_and_the_node_reporter_ship_as_package_data() -> None:
    templates = resources.files("mutharness").joinpath("reports", "templates")

    assert resources.files("mutharness").joinpath("runners", "node", "_reporter.mjs").is_file()

    assert templates.joinpath("spec.md.j2").is_file()
    assert templates.joinpath("index.md.j2").is_file()


# ---------------------------------------------------------------- the command line


@pytest.mark.parametrize(("settings", "words"), [
    # written before first-failure was the default: no such key, full counts
    ({"values": {}, "sources": {}, "rederive_flags": []}, " --no-first-failure "),
    ({"values": {"first-failure": False}, "sources": {"first-failure": "default"},
      "rederive_flags": []}, " --no-first-failure "),
    # the recorded values decide, not a recorded command line that contradicts them
    ({"values": {"first-failure": True}, "sources": {"first-failure": "default"},
      "rederive_flags": ["--no-first-failure"]}, " specs/calc.json --evidence "),
    ({"values": {"first-failure": "yes", "timeout-floor": 33.0, "baseline-runs": "3"},
      "sources": {"timeout-floor": "config"}, "rederive_flags": []},
     " --timeout-floor 33 --evidence "),
])
def test_the_re_derive_command_reproduces_the_recorded_values_with_this_version_s_defaults(
    settings: dict[str, Any], words: str
) -> None:
    run = results()
    run["settings"] = {**run["settings"], **settings}

    document = spec_document(run)

    [line] = [line for line in document.splitlines() if line.startswith("| re-derive |")]
    assert words in line, line


def save(run: dict[str, Any], path: Path) -> Path:
    path.write_text(json.dumps(run, indent=2), encoding="utf-8")
    return path


def test_verify_evidence_and_render_write_the_same_documents_and_render_needs_no_repository(
    make_project: ProjectFactory, cli: Cli, tmp_path: Path
) -> None:
    spec = default_spec()
    spec["mutations"].append({
        "name": "SURVIVOR (documented): a comment full of fences changes nothing",
        "file": "src/calc.py", "anchor": "    return value\n",
        "replacement": "    return value  # ``` and ```` and `x`\n", "expectCaught": False,
    })
    project = make_project(spec=spec)
    done = cli(project.root, "verify", "specs/calc.json", "--evidence", "evidence",
               "--json", str(tmp_path / "results.json"))
    assert done.code == 0, done.out + done.err
    from_verify = {p.name: p.read_bytes() for p in (project.root / "evidence").iterdir()}
    remove_tree(project.root)  # the repository, its tests and its git history are gone
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    rendered = in_process(elsewhere, "render", str(tmp_path / "results.json"), "--out", "docs")

    assert rendered.code == 0, rendered.out + rendered.err
    from_render = {p.name: p.read_bytes() for p in (elsewhere / "docs").iterdir()}
    assert from_render == from_verify
    assert sorted(from_render) == ["calc.json", "calc.md", "index.md"]
    body = from_render["calc.md"].decode("utf-8")
    assert str(tmp_path) not in body
    assert "| `src/calc.py:5` | CAUGHT | CAUGHT | first failure |" in body  # the default
    [fenced] = [block for block in fenced_blocks(body) if "and ````" in block[2]]
    assert fenced[:2] == ("`````", "diff")
    assert "+    return value  # ``` and ```` and `x`\n" in fenced[2]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_an_interrupted_verify_writes_no_evidence_from_its_partial_results(
    make_project: ProjectFactory, tmp_path: Path
) -> None:
    project = make_project()
    add_probes(project)
    sandbox = Sandbox.under(tmp_path)

    proc = spawn(project.root, "verify", "specs/gate.json", "--evidence", "evidence",
                 *HANG_GUARD, env=sandbox.env(MH_BLOCK="mutant"))
    try:
        wait_for(lambda: (sandbox.spy / "mutant.pids").exists(), proc, "the mutant to run")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        for pid in sandbox.pids("mutant") if (sandbox.spy / "mutant.pids").exists() else ():
            if alive(pid):
                os.kill(pid, signal.SIGKILL)

    assert proc.returncode == 130, out + err
    assert not (project.root / "evidence").exists()
    assert "evidence: not written" in out


def test_a_template_in_template_dir_overrides_that_file_only(tmp_path: Path) -> None:
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "spec.md.j2").write_text(
        "Custom evidence for {{ spec.id | md }} at {{ run.commit }}\n", encoding="utf-8"
    )
    results_path = save(results(), tmp_path / "results.json")

    done = in_process(tmp_path, "render", str(results_path), "--out", "out",
                      "--template-dir", str(templates))

    assert done.code == 0, done.out + done.err
    custom = (tmp_path / "out/calc.md").read_text("utf-8")
    assert custom == f"Custom evidence for calc at {COMMIT}\n"
    index = (tmp_path / "out/index.md").read_text("utf-8")
    assert index == render_documents(results())["index.md"]


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{% for x in %}\n", "spec.md.j2"),  # syntax error
        ("{{ spec.no_such_field }}\n", "no_such_field"),  # undefined
        ("{{ spec.id | no_such_filter }}\n", "no_such_filter"),  # unknown filter
        (b"\xff\xfe not utf-8 {{ spec.id }}\n", "spec.md.j2"),  # undecodable
    ],
)
def test_a_broken_override_template_fails_render_with_a_clear_error_and_exit_2(
    tmp_path: Path, template: str | bytes, expected: str
) -> None:
    templates = tmp_path / "templates"
    templates.mkdir()
    target = templates / "spec.md.j2"
    if isinstance(template, bytes):
        target.write_bytes(template)
    else:
        target.write_text(template, encoding="utf-8")
    results_path = save(results(), tmp_path / "results.json")

    done = in_process(tmp_path, "render", str(results_path), "--out", "out",
                      "--template-dir", str(templates))

    assert done.code == 2, done.out + done.err
    assert "Traceback" not in done.err
    assert "template" in done.err and expected in done.err
    assert not (tmp_path / "out").exists()


def test_verify_refuses_a_broken_override_template_before_running_any_test(
    make_project: ProjectFactory, tmp_path: Path
) -> None:
    project = make_project()
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "index.md.j2").write_text("{% if %}\n", encoding="utf-8")

    done = in_process(project.root, "verify", "specs/calc.json", "--evidence", "evidence",
                      "--template-dir", str(templates))

    assert done.code == 2, done.out + done.err
    assert "Traceback" not in done.err
    assert "index.md.j2" in done.err
    assert "baseline" not in done.out
    assert not (project.root / "evidence").exists()


@pytest.mark.parametrize(
    "content", ["not json at all", "[1, 2]", '{"schema": 1}', '{"schema": 99, "specs": []}'],
)
def test_render_of_a_file_that_is_not_a_results_file_exits_2_without_a_traceback(
    tmp_path: Path, content: str
) -> None:
    path = tmp_path / "results.json"
    path.write_text(content, encoding="utf-8")

    done = in_process(tmp_path, "render", str(path), "--out", "out")

    assert done.code == 2, done.out + done.err
    assert "Traceback" not in done.err
    assert "results" in done.err


def test_render_refuses_the_results_of_a_run_that_did_not_complete(tmp_path: Path) -> None:
    partial = results()
    partial["complete"] = False  # interrupted, stopped by an error, or still running
    results_path = save(partial, tmp_path / "results.json")

    done = in_process(tmp_path, "render", str(results_path), "--out", "out")

    assert done.code == 2, done.out + done.err
    assert "its run did not complete" in done.err
    assert not (tmp_path / "out").exists()


def test_render_into_a_directory_that_cannot_be_created_exits_5_without_a_traceback(
    tmp_path: Path
) -> None:
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    results_path = save(results(), tmp_path / "results.json")

    done = in_process(tmp_path, "render", str(results_path), "--out", "a-file/evidence")

    assert done.code == 5, done.out + done.err
    assert "Traceback" not in done.err
    assert "a-file" in done.err


def test_evidence_facts_do_not_change_with_the_name_the_same_interpreter_was_invoked_by(
    make_project: Callable[..., Project], tmp_path: Path
) -> None:
    project = make_project()
    other = Path(sys.executable).with_name("python3")
    if not other.exists() or other.resolve() != Path(sys.executable).resolve():
        other = tmp_path / "bin" / "python3"  # a venv's interpreter by another name
        other.parent.mkdir()
        (tmp_path / "pyvenv.cfg").write_bytes(
            (Path(sys.prefix) / "pyvenv.cfg").read_bytes())
        other.symlink_to(Path(sys.executable).resolve())
    facts = []
    for python in (sys.executable, str(other)):
        out = tmp_path / f"evidence-{Path(python).name}"
        done = subprocess.run([python, "-m", "mutharness", "verify", "specs", "--json",
                               str(tmp_path / "run.json"), "--evidence", str(out)],
                              cwd=project.root, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        facts.append((out / "calc.json").read_bytes())

    assert facts[0] == facts[1]


def test_evidence_a_run_wrote_is_said_uncommitted_and_left_out_of_the_next_run_while_as_written(
    make_project: Callable[..., Project], cli: Callable[..., Completed]
) -> None:
    project = make_project()

    first = cli(project.root, "verify", "specs/calc.json", "--evidence", "evidence",
                "--summary", "summary.md")
    again = cli(project.root, "verify", "specs/calc.json")
    (project.root / "evidence" / "calc.md").write_text("# edited by hand\n", encoding="utf-8")
    edited = cli(project.root, "verify", "specs/calc.json")

    assert first.code == 0, first.out + first.err
    assert ("evidence: 3 document(s) in evidence, 3 of them new or changed: commit them with "
            "the change they prove") in first.out, first.out
    # as written, they are the run's own outputs, not changes: the next run is not refused
    assert again.code == 0, again.out + again.err
    assert ("left out (mutharness's own outputs, as it wrote them): evidence/calc.json, "
            "evidence/calc.md, evidence/index.md, summary.md") in again.out, again.out
    # edited, a file is the user's change again
    assert edited.code == 5, edited.out + edited.err
    assert "1 uncommitted change(s)" in edited.err and "evidence/calc.md" in edited.err
    assert "evidence/index.md" not in edited.err


def test_evidence_equal_to_the_committed_documents_is_not_said_to_need_a_commit(
    make_project: Callable[..., Project], cli: Callable[..., Completed]
) -> None:
    project = make_project()
    first = cli(project.root, "verify", "specs/calc.json", "--evidence", "evidence")
    assert first.code == 0, first.out + first.err
    project.commit("the evidence")

    done = cli(project.root, "verify", "specs/calc.json", "--evidence", "evidence")

    assert done.code == 0, done.out + done.err
    assert "evidence: 3 document(s) in evidence, as committed" in done.out, done.out
    assert "left out" not in done.out
