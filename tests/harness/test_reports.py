"""JUnit XML, the Markdown summary and GitHub's annotations: from one run's results, the same
from verify, render and merge."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
from conftest import (
    BOUNDS,
    Completed,
    Project,
    calc_project,
    copy_recording,
    default_spec,
    project_copy,
    recording,
)
from inproc import in_process
from markdown_it import MarkdownIt
from replay import Recording, recorded_verify, replaying

from mutharness.errors import ExitCode
from mutharness.model.results import read_results
from mutharness.reports.html import viewer_misleads
from mutharness.reports.junit import junit_xml
from mutharness.reports.stryker import viewer_score
from mutharness.reports.summary import MAX_LISTED, summary_markdown

ProjectFactory = Callable[..., Project]
Cli = Callable[..., Completed]

ODD = 'a <b> & "quoted" \'name\' ]]> | pipe `tick` *star* \u00e9\u4e2d\U0001f600'
MIXED = default_spec(mutations=[
    *default_spec()["mutations"],  # caught as expected; a documented survivor
    {"name": "wrongly documented survivor: " + ODD, "file": "src/calc.py",
     "anchor": "    if value > high:\n        return high\n", "replacement": "",
     "expectCaught": False},
    {"name": "the value is returned unchanged", "file": "src/calc.py",
     "anchor": "    return value\n", "replacement": "    return value + 1\n"},
    {"name": "the module exits as it is imported", "file": "src/calc.py",
     "anchor": "def is_adult(age):\n",
     "replacement": "import os\nos._exit(3)\n\n\ndef is_adult(age):\n"},
])


def verify(project: Project, cli: Cli, *args: str, env: dict[str, str] | None = None
           ) -> Completed:
    here = project.root.parent
    done = cli(project.root, "verify", "specs", "--json", str(here / "run.json"),
               "--junit", str(here / "run.xml"), "--summary", str(here / "run.md"), *args,
               env=env)
    assert done.code == 4, done.out + done.err  # the module that exits gives no verdict
    assert (here / "run.json").exists(), done.out + done.err
    return done


def _project(base: Path) -> Project:
    made = calc_project(base / "repo", MIXED)
    made.spec("bounds", BOUNDS)
    made.commit("every kind of result")
    return made


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Recording]:
    """Made once a session: `project` as committed, and the real runs of its verify."""
    return recorded_verify(tmp_path_factory, "reports-runs", lambda base: _project(base).root,
                           "specs", exit_code=4)  # the module that exits gives no verdict


@pytest.fixture
def project(runs: tuple[Path, Recording], tmp_path: Path, git_home: Path) -> Iterator[Project]:
    """This test's own copy of the committed project, whose verify replays the real runs."""
    with replaying(runs[1]):
        yield project_copy(runs[0], tmp_path)


@pytest.fixture(scope="session")
def recorded(tmp_path_factory: pytest.TempPathFactory, runs: tuple[Path, Recording]) -> Path:
    """Made once a session: `project` verified with every report but the HTML page beside
    it (run.json, run.xml, run.md, run.stryker.json) and what it printed (verify.out), for the
    tests that only read them."""

    def record(base: Path) -> None:
        made = project_copy(runs[0], base)
        with replaying(runs[1]):
            done = verify(made, in_process, "--report-stryker", str(base / "run.stryker.json"))
        (base / "verify.out").write_text(done.out, "utf-8")  # a run outside GitHub Actions

    return recording(tmp_path_factory, "reports", record)


@pytest.fixture
def verified(recorded: Path, runs: tuple[Path, Recording], tmp_path: Path,
             git_home: Path) -> Iterator[Project]:
    """This test's own copy of the recorded project, its results and reports (a verify
    replays the real runs)."""
    copy_recording(recorded, tmp_path)
    with replaying(runs[1]):
        yield Project(tmp_path / "repo")


def test_junit_has_a_case_per_mutation_with_the_names_files_and_lines_ci_views_read(
    verified: Project
) -> None:
    root = ET.parse(verified.root.parent / "run.xml").getroot()

    assert root.tag == "testsuites"
    assert [(s.get("name"), s.get("tests"), s.get("failures"), s.get("errors"))
            for s in root.findall("testsuite")] == [
        ("bounds", "3", "0", "0"), ("calc", "5", "1", "1")]
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("8", "1", "1")
    cases = root.findall("testsuite/testcase")
    assert [c.get("classname") for c in cases] == ["bounds"] * 3 + ["calc"] * 5
    assert [c.get("name") for c in cases[3:]] == [
        "#1 the low bound is ignored", "#2 SURVIVOR (documented): >= to > at 18 is not pinned",
        "#3 wrongly documented survivor: " + ODD, "#4 the value is returned unchanged",
        "#5 the module exits as it is imported"]
    source = (verified.root / "src/calc.py").read_text("utf-8").splitlines()
    for case in cases:
        assert case.get("file") == "src/calc.py"
        assert float(case.get("time", "")) > 0
    low, survivor, wrong, unchanged, exits = cases[3:]
    assert source[int(low.get("line", "0")) - 1] == "    if value < low:"
    assert source[int(survivor.get("line", "0")) - 1] == "    return age >= 18"
    assert [e.tag for e in low] == [e.tag for e in survivor] == ["system-out"]
    assert "tests/test_calc.py::test_clamp_below" in (low.findtext("system-out") or "")
    failure = wrong.find("failure")
    assert failure is not None and failure.get("message") == "expected SURVIVED, got CAUGHT"
    assert unchanged.find("failure") is None and unchanged.find("error") is None
    error = exits.find("error")
    assert error is not None and (error.get("message") or "").startswith("UNTRUSTWORTHY")


def test_the_summary_is_a_table_per_spec_that_renders_and_names_what_went_wrong(
    verified: Project
) -> None:
    text = (verified.root.parent / "run.md").read_text("utf-8")

    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    cells = [t.children[0].content if t.children else "" for t in tokens if t.type == "inline"]
    start = cells.index("spec")
    header, rows = cells[start:start + 7], cells[start + 7:start + 21]
    assert header == ["spec", "run", "caught", "documented survivors", "unexpected",
                      "no verdict", "note"]
    assert rows == ["bounds", "3 of 3", "3", "0", "0", "0", "",
                    "calc", "5 of 5", "2", "1", "1", "1", ""]
    assert text.startswith("## ⚠️ mutharness: no trustworthy verdict\n")
    assert "### Not as expected" in text and "### No verdict" in text
    wrong = next(t for t in tokens if t.type == "inline" and "wrongly" in t.content)
    assert [c.type for c in wrong.children or []] == ["text"]  # no markup, no HTML, no code
    shown = (wrong.children or [])[0].content
    assert shown.startswith("calc #3 wrongly documented survivor: " + ODD + ": expected "
                            "SURVIVED, got CAUGHT (src/calc.py:")


def test_render_writes_the_reports_verify_wrote_and_no_evidence_unless_asked(
    verified: Project, cli: Cli
) -> None:
    here = verified.root.parent

    done = cli(here, "render", str(here / "run.json"), "--junit", "again.xml", "--summary",
               "again.md")

    assert done.code == 0, done.out + done.err
    assert (here / "again.xml").read_bytes() == (here / "run.xml").read_bytes()
    assert (here / "again.md").read_bytes() == (here / "run.md").read_bytes()
    assert not (here / "evidence").exists()  # only the reports were asked for


def test_under_github_actions_a_run_annotates_and_appends_its_summary_to_the_step_s(
    project: Project, recorded: Path
) -> None:
    step = project.root.parent / "step.md"
    step.write_text("an earlier step's summary\n", "utf-8")
    env = {**os.environ, "GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(step)}
    env.pop("NO_COLOR", None)

    done = verify(project, in_process, env=env)
    quiet = (recorded / "verify.out").read_text("utf-8")  # the same run, no GITHUB_ACTIONS

    commands = [line for line in done.out.splitlines() if line.startswith("::")]
    assert len(commands) == 2
    error, warning = commands
    assert re.fullmatch(r"::error file=src/calc.py,line=\d+,title=mutharness%3A calc #3 "
                        r"unexpected::wrongly documented survivor: " + re.escape(ODD)
                        + r": expected SURVIVED, got CAUGHT", error), error
    assert warning.startswith("::warning file=src/calc.py,line=")
    assert "UNTRUSTWORTHY" in warning
    assert "UNTRUSTWORTHY" in quiet  # the same results, printed ...
    assert not any(line.startswith("::") for line in quiet.splitlines())  # ... unannotated
    summary = (project.root.parent / "run.md").read_text("utf-8")
    assert step.read_text("utf-8") == "an earlier step's summary\n" + summary


def test_merge_writes_the_reports_of_the_whole_run(verified: Project) -> None:
    here = verified.root.parent
    for k in (1, 2):
        done = in_process(verified.root, "verify", "specs", "--shard", f"{k}/2", "--json",
                   str(here / f"shard-{k}.json"))
        assert done.code in (0, 1, 4), done.out + done.err

    merged = in_process(verified.root, "merge", *(str(here / name) for name in (
                        "shard-1.json", "shard-2.json")), "--json", str(here / "merged.json"),
                        "--junit", str(here / "merged.xml"), "--summary", str(here / "merged.md"),
                        "--report-stryker", str(here / "merged.stryker.json"))
    whole = in_process(here, "render", "run.json", "--report-stryker", "run.stryker.json")

    assert merged.code == 4, merged.out + merged.err
    assert whole.code == 0, whole.out + whole.err
    timeless = re.compile(r' time="[0-9.]+"')
    assert timeless.sub("", (here / "merged.xml").read_text("utf-8")) == \
        timeless.sub("", (here / "run.xml").read_text("utf-8"))
    assert (here / "merged.md").read_text("utf-8") == (here / "run.md").read_text("utf-8")
    reports = [json.loads((here / name).read_text("utf-8"))
               for name in ("merged.stryker.json", "run.stryker.json")]
    for report in reports:
        for entry in report["files"].values():
            for mutant in entry["mutants"]:
                del mutant["duration"]
    assert reports[0] == reports[1]


def test_a_big_run_s_summary_stays_far_under_github_s_limit_and_its_junit_parses(
    verified: Project
) -> None:
    run = read_results(verified.root.parent / "run.json")
    calc = run.specs[1]
    many = tuple(replace(calc, spec=replace(calc.spec, id=f"spec-{n}" + "x" * 300))
                 for n in range(2000))  # 10,000 mutations, 2,000 unexpected

    text = summary_markdown(replace(run, specs=many))
    assert len(text.encode("utf-8")) < 200_000  # GitHub's limit: 1 MiB
    assert "and 1800 more spec(s)" in text
    assert f"- and {2000 - MAX_LISTED} more (all in the results file)" in text
    assert len(ET.fromstring(junit_xml(replace(run, specs=many))).findall(".//testcase")) \
        == 10_000


def test_text_xml_cannot_hold_at_all_is_written_as_an_escape(verified: Project) -> None:
    run = read_results(verified.root.parent / "run.json")
    # a spec's names cannot hold control characters; a reason might
    calc = run.specs[1]
    wrong = replace(calc.mutations[4], reason="died \x00\x1b[0m \ud800 there")
    run = replace(run, specs=(replace(calc, mutations=(wrong,)),))

    error = ET.fromstring(junit_xml(run)).find(".//error")

    assert error is not None
    assert error.get("message") == "UNTRUSTWORTHY, no verdict: died \\x00\\x1b[0m \\ud800 there"


def test_a_results_file_names_the_reports_nowhere(verified: Project) -> None:
    # reports are outputs of the results, never inputs to them
    text = json.dumps(json.loads((verified.root.parent / "run.json").read_text("utf-8")))
    assert "run.xml" not in text and "run.md" not in text and "run.stryker.json" not in text


SCHEMA = Path(__file__).parent.parent / "data" / "mutation-testing-report-schema-3.8.4.json"


def test_the_stryker_report_is_valid_against_the_pinned_schema_and_locates_each_mutant(
    verified: Project
) -> None:
    report = json.loads((verified.root.parent / "run.stryker.json").read_text("utf-8"))

    jsonschema.Draft7Validator(json.loads(SCHEMA.read_text("utf-8"))).validate(report)
    assert report["schemaVersion"] == "2"
    source = (verified.root / "src/calc.py").read_text("utf-8")
    assert list(report["files"]) == ["src/calc.py"]
    entry = report["files"]["src/calc.py"]
    assert (entry["language"], entry["source"]) == ("python", source)
    mutants = {m["id"]: m for m in entry["mutants"]}
    assert sorted(mutants) == sorted([*(f"bounds#{n}" for n in (1, 2, 3)),
                                      *(f"calc#{n}" for n in range(1, 6))])
    lines = source.splitlines(keepends=True)
    for spec in json.loads((verified.root.parent / "run.json").read_text("utf-8"))["specs"]:
        for declared, result in zip(spec["declared"], spec["mutations"], strict=True):
            mutant = mutants[f"{spec['id']}#{result['number']}"]
            start, end = mutant["location"]["start"], mutant["location"]["end"]
            offset = sum(map(len, lines[:start["line"] - 1])) + start["column"] - 1
            stop = sum(map(len, lines[:end["line"] - 1])) + end["column"] - 1
            assert source[offset:stop] == declared["anchor"]  # end exclusive, to the column
            assert (mutant["mutatorName"], mutant["description"], mutant["replacement"]) == (
                spec["id"], declared["name"], declared["replacement"])
    statuses = {key: m["status"] for key, m in mutants.items() if key.startswith("calc")}
    # a documented survivor is what its spec expects: the viewer's score leaves it out
    assert statuses == {"calc#1": "Killed", "calc#2": "Ignored", "calc#3": "Killed",
                        "calc#4": "Killed", "calc#5": "RuntimeError"}
    assert mutants["calc#2"]["statusReason"].startswith("a documented survivor")
    assert report["thresholds"] == {"high": 100, "low": 100}  # green only when all are caught
    tests = {t["id"] for f in report["testFiles"].values() for t in f["tests"]}
    assert report["testFiles"].keys() == {"tests/test_calc.py"} and len(tests) == 4
    for mutant in mutants.values():
        assert set(mutant["killedBy"]) <= tests and set(mutant["coveredBy"]) <= tests
    assert mutants["calc#1"]["killedBy"] == ["tests/test_calc.py::test_clamp_below"]
    assert mutants["calc#2"]["killedBy"] == [] and len(mutants["calc#2"]["coveredBy"]) == 4
    assert report["framework"]["name"] == "mutharness"
    assert report["system"]["os"]["platform"] == {"linux": "linux", "win32": "win32",
                                                  "darwin": "darwin"}.get(sys.platform)


def test_a_column_counts_characters_and_a_crlf_file_s_anchor_ends_where_it_ends(
    make_project: ProjectFactory, cli: Cli
) -> None:
    project = make_project(spec=default_spec(mutations=[
        {"name": "é counts one column", "file": "src/calc.py", "anchor": "return age >= 18",
         "replacement": "return age >= 17", "expectCaught": False},
        {"name": "a CRLF anchor", "file": "src/calc.py",
         "anchor": "    if value < low:\n        return low\n", "replacement": ""},
    ]))
    calc = (project.root / "src/calc.py").read_text("utf-8")
    calc = calc.replace("def is_adult(age):\n", "def is_adult(age):  # âge é\n")
    (project.root / "src/calc.py").write_bytes(calc.replace("\n", "\r\n").encode("utf-8"))
    project.commit("CRLF and accents")
    done = cli(project.root, "verify", "specs", "--report-stryker", "s.json")
    assert done.code == 0, done.out + done.err

    report = json.loads((project.root / "s.json").read_text("utf-8"))
    mutants = report["files"]["src/calc.py"]["mutants"]
    source = report["files"]["src/calc.py"]["source"]
    lines = source.split("\n")
    first, second = (m["location"] for m in mutants)
    assert lines[first["start"]["line"] - 1][first["start"]["column"] - 1:][:16] == \
        "return age >= 18"
    assert first["end"] == {"line": first["start"]["line"],
                            "column": first["start"]["column"] + 16}
    assert second["start"]["column"] == 1
    assert second["end"] == {"line": second["start"]["line"] + 2, "column": 1}


def test_results_older_than_the_columns_give_no_mutation_report_and_say_so(
    verified: Project
) -> None:
    here = verified.root.parent
    document = json.loads((here / "run.json").read_text("utf-8"))
    for spec in document["specs"]:
        del spec["sources"]
        for mutation in spec["mutations"]:
            del mutation["location"]
    (here / "old.json").write_text(json.dumps(document), "utf-8")

    done = in_process(here, "render", "old.json", "--report-stryker", "old.stryker.json", "--junit",
                      "old.xml")

    assert done.code == 2, done.out + done.err
    assert "the results hold no column or file text for it" in done.err
    assert not (here / "old.stryker.json").exists() and not (here / "old.xml").exists()


def test_render_makes_the_reports_of_a_shard_and_refuses_only_its_evidence(
    project: Project
) -> None:
    here = project.root.parent
    done = in_process(project.root, "verify", "specs", "--shard", "2/2", "--json",
                      str(here / "s.json"))
    assert done.code in (0, 1, 4), done.out + done.err

    reports = in_process(here, "render", "s.json", "--junit", "s.xml", "--summary", "s.md")
    evidence = in_process(here, "render", "s.json", "--out", "evidence", "--junit", "e.xml")

    assert reports.code == 0, reports.out + reports.err
    planned = {spec["id"]: len(spec["mutations"]) for spec in
               json.loads((here / "s.json").read_text("utf-8"))["specs"]}
    suites = ET.parse(here / "s.xml").getroot().findall("testsuite")
    assert {s.get("name"): int(s.get("tests", "0")) for s in suites} == planned
    assert "shard 2/2" in (here / "s.md").read_text("utf-8")
    assert evidence.code == 2 and "merge the shards first" in evidence.err
    assert not (here / "evidence").exists() and not (here / "e.xml").exists()


def test_github_is_shown_ten_annotations_of_a_kind_and_a_count_of_the_rest(
    verified: Project
) -> None:
    from mutharness.reports.annotations import workflow_commands

    run = read_results(verified.root.parent / "run.json")
    calc = run.specs[1]
    wrong = calc.mutations[2]  # caught, documented as a survivor
    many = replace(run, specs=(replace(calc, mutations=(wrong,) * 15),))

    commands = workflow_commands(many)

    assert [c.split(" ", 1)[0] for c in commands] == ["::error"] * 10 + ["::notice"]
    assert commands[-1] == ("::notice title=mutharness::5 more result(s) without annotations: "
                            "see the summary and the results file")


PROBE_HEAD = """<script>window.__errors = [];
window.addEventListener("error", (e) => __errors.push("error: " + e.message));
const __error = console.error;
console.error = (...a) => { __errors.push(a.map(String).join(" ")); __error(...a); };
</script>"""
PROBE_TAIL = """<script>
function __all(root, selector) {  // through every shadow root
  const found = [...root.querySelectorAll(selector)];
  for (const el of root.querySelectorAll("*")) {
    if (el.shadowRoot) found.push(...__all(el.shadowRoot, selector));
  }
  return found;
}
setTimeout(() => {
  const link = __all(document, "a").find((a) => a.href.includes("#mutant/") &&
                                               a.textContent.includes("calc.py"));
  if (link) link.click();
  setTimeout(() => {
    const mutants = {};
    for (const span of __all(document, "span.mutant[data-mutant-id]")) {
      mutants[span.dataset.mutantId] = [...span.classList].filter((c) => /^[A-Z]/.test(c));
    }
    const pre = document.createElement("pre");
    pre.id = "probe";
    pre.textContent = JSON.stringify({errors: __errors, link: !!link, mutants});
    document.body.appendChild(pre);
  }, 3000);
}, 3000);
</script>"""


def _browser() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        if found := shutil.which(name):
            return found
    return None


def test_the_html_report_shows_every_mutant_with_its_status_in_a_real_browser(
    project: Project
) -> None:
    browser = _browser()
    if browser is None:
        if os.environ.get("MUTHARNESS_BROWSER_TESTS") == "required":
            pytest.fail("no Chromium on PATH, and this run requires the browser tests")
        pytest.skip("no Chromium on PATH (Debian: apt-get install chromium)")
    here = project.root.parent
    verify(project, in_process, "--report-html", str(here / "run.html"))
    page = (here / "run.html").read_text("utf-8")
    assert "<script src" not in page  # one file: nothing is fetched
    probed = page.replace("<head>\n", "<head>\n" + PROBE_HEAD, 1).replace(
        "</body>", PROBE_TAIL + "</body>")
    (here / "probe.html").write_text(probed, "utf-8")
    command = [browser, "--headless", "--no-sandbox", "--disable-gpu",
               "--virtual-time-budget=30000", f"--user-data-dir={here / 'profile'}"]

    dumped = subprocess.run([*command, "--dump-dom", (here / "probe.html").as_uri()],
                            capture_output=True, text=True, timeout=300)
    shot = subprocess.run([*command, "--window-size=1400,1000",
                           f"--screenshot={here / 'report.png'}", (here / "run.html").as_uri()],
                          capture_output=True, text=True, timeout=300)

    found = re.search(r'<pre id="probe">(.*?)</pre>', dumped.stdout, re.S)
    assert found is not None, dumped.stdout[-2000:] + dumped.stderr[-2000:]
    probe = json.loads(html.unescape(found[1]))
    assert probe["errors"] == [] and probe["link"]
    assert probe["mutants"] == {
        "bounds#1": ["Killed"], "bounds#2": ["Killed"], "bounds#3": ["Killed"],
        "calc#1": ["Killed"], "calc#2": ["Ignored"], "calc#3": ["Killed"],
        "calc#4": ["Killed"], "calc#5": ["RuntimeError"]}
    assert shot.returncode == 0, shot.stderr[-2000:]
    assert (here / "report.png").read_bytes().startswith(b"\x89PNG")


def test_the_html_page_opens_with_the_gate_and_what_did_not_behave_before_documented_survivors(
    project: Project
) -> None:
    here = project.root.parent
    verify(project, in_process, "--report-html", str(here / "run.html"))
    page = (here / "run.html").read_text("utf-8")

    gate = page.split('<section id="mutharness-gate"', 1)[1].split("</section>", 1)[0]
    assert 'class="gate-red"' in gate  # a run with no trustworthy verdict never looks green
    assert "exit 4: a mutation has no trustworthy verdict" in gate
    listed = [gate.index(mutant) for mutant in ("calc#5", "calc#3", "calc#2")]
    assert listed == sorted(listed)  # no verdict, then unexpected, then documented survivors
    assert "expected SURVIVED, got CAUGHT" in gate
    assert "documented survivor" in gate.split("calc#2", 1)[1]
    assert "calc#1" not in gate and "calc#4" not in gate  # caught as expected: not the gate's
    assert html.escape(ODD) in gate and "<b>" not in gate  # a spec's text is text
    assert page.index('<section id="mutharness-gate"') < page.index("<mutation-test-report-app")
    # every mutant the viewer scores was caught (100 %, its green), but the gate is red: the
    # viewer is shown without its colours, and the gate says why
    assert '<mutation-test-report-app class="uncoloured"' in page
    assert "The viewer below is shown without its colours" in gate


VIEWER_TABLE = [  # (statuses, exit code) -> (the viewer's score, shown without its colours)
    (["Killed", "Killed"], ExitCode.OK, 100.0, False),
    (["Killed", "Ignored"], ExitCode.OK, 100.0, False),
    (["Killed", "Survived"], ExitCode.UNEXPECTED, 50.0, False),  # red by itself
    (["Killed", "RuntimeError"], ExitCode.NO_VERDICT, 100.0, True),
    (["Killed", "Timeout"], ExitCode.NO_VERDICT, 100.0, True),
    (["RuntimeError"], ExitCode.NO_VERDICT, None, True),
    (["Ignored"], ExitCode.OK, None, False),
    (["Killed"], ExitCode.UNEXPECTED, 100.0, True),  # a documented survivor that was caught
]


@pytest.mark.parametrize(("statuses", "code", "score", "uncoloured"), VIEWER_TABLE)
def test_the_viewer_s_colours_are_off_when_its_score_would_be_green_under_a_red_gate(
    statuses: list[str], code: ExitCode, score: float | None, uncoloured: bool
) -> None:
    report = {"files": {"a.py": {"mutants": [{"status": status} for status in statuses]}}}
    assert viewer_score(report) == score
    assert viewer_misleads(code, viewer_score(report)) is uncoloured

