"""`mutharness baseline` and `--since`: pins measured in a workspace, affected specs selected."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    NODE_FIXTURE,
    Completed,
    Project,
    calc_project,
    copy_recording,
    default_spec,
    git,
    recording,
    run_cli,
)
from inproc import in_process

ProjectFactory = Callable[..., Project]
Cli = Callable[..., Completed]
TRUTH: dict[str, Any] = json.loads((NODE_FIXTURE / "TRUTH.json").read_text("utf-8"))

COUNTING_TEST = '''\
from pathlib import Path

from calc import clamp

RUNS = Path({runs!r})


def test_counts_its_runs():
    with RUNS.open("a") as log:
        log.write("run\\n")
    assert clamp(1, 0, 2) == 1
'''

FLAKY_TEST = '''\
from pathlib import Path

RUNS = Path({runs!r})


def test_fails_every_second_run():
    with RUNS.open("a") as log:
        log.write("run\\n")
    assert len(RUNS.read_text().splitlines()) % 2 == 1
'''

SECOND_TEST = '''\
from calc import clamp


def test_clamp_inside_again():
    assert clamp(5, 0, 10) == 5
'''

LOW = default_spec()["mutations"][0]
HIGH = {"name": "the high bound is ignored", "file": "src/calc.py",
        "anchor": "    if value > high:\n        return high\n", "replacement": ""}


def pin_lines(out: str) -> list[str]:
    return [line for line in out.splitlines()
            if line.startswith(("ok ", "DRIFT ", "UNTRUSTWORTHY "))]


def test_each_pin_is_judged_and_the_exit_code_is_the_worst(
    make_project: ProjectFactory, cli: Cli
) -> None:
    project = make_project()
    project.spec("drifted", default_spec(expectBaselinePass=5))
    project.spec("red", default_spec(tests=["tests/test_red.py"], expectBaselinePass=1))
    project.write("tests/test_red.py", "def test_red():\n    assert False\n")
    project.commit("three pins")
    before = {path.name: path.read_bytes() for path in (project.root / "specs").iterdir()}

    done = cli(project.root, "baseline", "--all")

    assert done.code == 3, done.out + done.err
    assert pin_lines(done.out) == [
        "ok specs/calc.json: 4 pass + 0 approved skips = 4 (every counted test passed)",
        "DRIFT specs/drifted.json: expected=5, measured=4 pass + 0 approved skips = 4; "
        "inspect changes before editing the pin",
        "UNTRUSTWORTHY specs/red.json: not green: 1 test(s) failed (pass=0 fail=1 tests=1)",
    ]
    assert done.out.splitlines()[-1] == "3 spec(s) measured, 1 drift, 1 untrustworthy"
    assert before == {path.name: path.read_bytes() for path in (project.root / "specs").iterdir()}


def test_drift_alone_exits_1(make_project: ProjectFactory) -> None:
    project = make_project(spec=default_spec(expectBaselinePass=3))

    done = in_process(project.root, "baseline", "specs/calc.json")

    assert done.code == 1, done.out + done.err


def test_specs_with_the_same_tests_share_one_measurement(
    make_project: ProjectFactory, tmp_path: Path
) -> None:
    runs = tmp_path / "runs.log"
    project = make_project(spec=default_spec(tests=["tests/test_count.py"], expectBaselinePass=1,
                                             mutations=[LOW]))
    project.write("tests/test_count.py", COUNTING_TEST.format(runs=str(runs)))
    project.spec("same-tests", default_spec(tests=["tests/test_count.py"], expectBaselinePass=1,
                                            mutations=[HIGH]))
    project.commit("two specs, one test set")

    done = in_process(project.root, "baseline", "--all")

    assert done.code == 0, done.out + done.err
    assert len(pin_lines(done.out)) == 2
    assert runs.read_text().splitlines() == ["run"]  # one run of the test set, not two


def test_repeat_reports_a_test_whose_outcome_differs_as_unstable(
    make_project: ProjectFactory, tmp_path: Path
) -> None:
    runs = tmp_path / "runs.log"
    project = make_project(spec=default_spec(tests=["tests/test_flaky.py"], expectBaselinePass=1,
                                             mutations=[LOW]))
    project.write("tests/test_flaky.py", FLAKY_TEST.format(runs=str(runs)))
    project.commit("a flaky test")

    once = in_process(project.root, "baseline", "specs/calc.json")
    repeated = in_process(project.root, "baseline", "specs/calc.json", "--repeat", "2")

    assert once.code == 0, once.out + once.err
    assert repeated.code == 3, repeated.out + repeated.err
    [line] = pin_lines(repeated.out)
    assert line.startswith("UNTRUSTWORTHY specs/calc.json: unstable: 1 test(s)")
    assert "tests/test_flaky.py::test_fails_every_second_run" in repeated.out


def test_baseline_with_no_spec_measures_every_spec_as_verify_and_check_take_them(
    make_project: ProjectFactory
) -> None:
    project = make_project()

    done = in_process(project.root, "baseline")
    both = in_process(project.root, "baseline", "--all", "specs/calc.json")

    assert done.code == 0, done.out + done.err
    assert pin_lines(done.out) == [
        "ok specs/calc.json: 4 pass + 0 approved skips = 4 (every counted test passed)"]
    assert both.code == 2 and "not both" in both.err


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_baseline_measures_node_specs_as_node_counts_them(node_project: Path) -> None:
    done = in_process(node_project, "baseline", "--all")

    assert done.code == 0, done.out + done.err
    expected = sorted(
        f"ok specs/{name}.json: {truth['baseline']['passed']} pass + 0 approved skips = "
        f"{truth['baseline']['passed']} (every counted test passed)" + (
            f"; {truth['baseline']['skipped']} unlisted skip(s) accepted, not counted"
            if truth["baseline"]["skipped"] else "")
        for name, truth in TRUTH.items() if not name.startswith("_")
    )
    assert sorted(pin_lines(done.out)) == expected


# -- --since ---------------------------------------------------------------------------


def _record_since(base: Path) -> None:
    project = calc_project(base / "repo", default_spec(mutations=[LOW]))
    project.write("src/other.py", "def double(x):\n    return 2 * x\n")
    project.write("tests/test_other.py",
                  "from other import double\n\n\ndef test_double():\n    assert double(3) == 6\n")
    project.spec("other", {"tests": ["tests/test_other.py"], "expectBaselinePass": 1,
                           "mutations": [{"name": "double adds", "file": "src/other.py",
                                          "anchor": "2 * x", "replacement": "2 + x"}]})
    project.commit("a second spec")
    recorded(project, run_cli)


@pytest.fixture(scope="session")
def since_recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Made once a session: two specs over different tests and targets, each with a record
    of its last run (its evidence, committed by a real verify)."""
    return recording(tmp_path_factory, "since", _record_since)


@pytest.fixture
def since(since_recording: Path, tmp_path: Path, git_home: Path) -> tuple[Project, str]:
    """This test's copy of the recording, and the commit its records were made at."""
    copy_recording(since_recording, tmp_path)
    project = Project(tmp_path / "repo")
    return project, git(project.root, "rev-parse", "HEAD").strip()


CHANGES = {  # a change to this path -> the specs it affects
    "target": ("src/other.py", ["other"]),
    "test-file": ("tests/test_calc.py", ["calc"]),
    "spec": ("specs/other.json", ["other"]),
    "conftest": ("tests/conftest.py", ["calc", "other"]),
    "config": ("pyproject.toml", ["calc", "other"]),
    "helper": ("tests/helpers.py", ["calc", "other"]),
    "unrelated": ("README.md", []),
}


def _touched(project: Project, change: str) -> None:
    """`change` edited (a JSON spec gets a note) and committed."""
    path = project.root / change
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if change.endswith(".json"):
        document = json.loads(text)
        document["_note"] = "touched"
        project.write(change, json.dumps(document, indent=2))
    else:
        project.write(change, text + "\n# touched\n")
    project.commit(f"touch {change}")


@pytest.mark.parametrize("kind", list(CHANGES))
def test_since_selects_exactly_the_affected_specs(since: tuple[Project, str], kind: str) -> None:
    """What `check --since` selects; `baseline` and `verify` select through the same function
    (`commands.prepare.since_selection`: the test below runs them)."""
    project, base = since
    change, selected = CHANGES[kind]
    _touched(project, change)

    checked = in_process(project.root, "check", "--since", base)

    assert checked.code == 0, checked.out + checked.err
    described = next(line for line in checked.out.splitlines() if line.startswith("--since"))
    shown = (["calc", "other"] if described.endswith(": every spec") else sorted(
        part.split()[0] for part in described.partition(" affected spec(s): ")[2].split("; ")
        if part))
    assert shown == selected, described
    assert checked.out.splitlines()[-1].startswith(
        f"{len(selected)} spec(s)" if selected else "--since"), checked.out


@pytest.mark.parametrize("kind", ["target", "conftest", "unrelated"])  # one spec, both, none
def test_since_runs_exactly_the_affected_specs_in_baseline_and_verify(
    since: tuple[Project, str], kind: str
) -> None:
    project, base = since
    change, selected = CHANGES[kind]
    _touched(project, change)

    measured = in_process(project.root, "baseline", "--since", base)
    verified = in_process(project.root, "verify", "--since", base)

    for done in (measured, verified):
        assert done.code == 0, done.out + done.err
    assert sorted(line.split()[1].removeprefix("specs/").removesuffix(".json:")
                  for line in pin_lines(measured.out)) == selected
    results = json.loads((project.root / ".mutharness/results.json").read_text("utf-8"))
    if selected:
        assert sorted(spec["id"] for spec in results["specs"]) == selected
    else:
        for done in (measured, verified):
            assert "no spec is affected: no measurement is claimed" in done.out
        assert results["specs"] == [] and results["settings"]["since"] == base  # never older


def test_since_counts_uncommitted_and_untracked_changes(
    since: tuple[Project, str]
) -> None:
    project, base = since
    project.write("src/other.py", "def double(x):\n    return 2 * x  # edited\n")

    done = in_process(project.root, "baseline", "--since", base, "--allow-dirty")
    untracked = in_process(project.root, "check", "--since", base)

    assert done.code == 0, done.out + done.err
    assert [line.split()[1] for line in pin_lines(done.out)] == ["specs/other.json:"]
    assert "1 affected spec(s): other (target src/other.py changed)" in untracked.out


def test_since_a_revision_this_clone_lacks_says_what_to_fetch(
    since: tuple[Project, str], tmp_path: Path
) -> None:
    project, base = since
    project.write("src/other.py", "def double(x):\n    return 2 * x  # the head\n")
    project.commit("the head")
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth=1", project.root.as_uri(), str(shallow))

    done = in_process(shallow, "verify", "--since", base)
    git(shallow, "fetch", "-q", "--depth=1", "origin", base)
    fetched = in_process(shallow, "baseline", "--since", base)

    assert done.code == 5
    assert f"{base} is not a commit this clone holds (it is a shallow clone)" in done.err
    assert f"git fetch --depth=1 origin {base}" in done.err
    assert fetched.code == 0, fetched.out + fetched.err
    assert [line.split()[1] for line in pin_lines(fetched.out)] == ["specs/other.json:"]


def recorded(project: Project, cli: Cli) -> str:
    """The project's evidence rendered and committed (each spec's record of its last run)."""
    done = cli(project.root, "verify", "specs", "--evidence", "evidence")
    assert done.code == 0, done.out + done.err
    project.commit("evidence")
    return git(project.root, "rev-parse", "HEAD").strip()


def test_since_selects_a_spec_whose_target_imports_a_helper_that_changed(
    make_project: ProjectFactory, cli: Cli
) -> None:
    project = make_project(spec=default_spec(mutations=[LOW]))
    project.write("src/limits.py", "FLOOR = 0\n")
    project.write("src/calc.py", "import limits\n\n" + (project.root / "src/calc.py").read_text())
    project.commit("calc imports a helper module")
    base = recorded(project, in_process)
    project.write("src/limits.py", "FLOOR = 0  # the helper changed\n")
    project.commit("the helper changed")

    done = cli(project.root, "verify", "--since", base)

    assert "no spec is affected" not in done.out
    assert done.code == 0, done.out + done.err
    results = json.loads((project.root / ".mutharness/results.json").read_text("utf-8"))
    assert [spec["id"] for spec in results["specs"]] == ["calc"]


def test_since_selects_a_spec_whose_code_reads_a_data_file_at_import_that_changed(
    make_project: ProjectFactory, cli: Cli
) -> None:
    """A data file no test imports, read by the target at import: its change turns the suite
    red, which `--since` must measure, never call unaffected."""
    project = make_project(spec=default_spec(mutations=[LOW]))
    project.write("src/rates.json", '{"floor": 0}\n')
    project.write("src/calc.py", "import json\nfrom pathlib import Path\n\nFLOOR = json.loads("
                  "(Path(__file__).parent / 'rates.json').read_text())['floor']\n\n"
                  + (project.root / "src/calc.py").read_text()
                  + "\n\ndef floor():\n    return FLOOR\n")
    project.write("tests/test_floor.py",
                  "from calc import floor\n\n\ndef test_floor():\n    assert floor() == 0\n")
    project.spec("calc", default_spec(mutations=[LOW], expectBaselinePass=5,
                                      tests=["tests/test_calc.py", "tests/test_floor.py"]))
    project.commit("calc reads its rates at import")
    base = recorded(project, in_process)
    project.write("src/rates.json", '{"floor": 1}\n')
    project.commit("only the data file changed")

    since = cli(project.root, "verify", "--since", base)
    everything = cli(project.root, "verify")

    assert "no spec is affected" not in since.out, since.out
    assert "src/rates.json, which its last recorded run depended on, changed" in since.out
    assert (since.code, everything.code) == (3, 3), since.out + since.err


def test_since_selects_a_spec_that_has_no_record_of_its_last_run(
    make_project: ProjectFactory
) -> None:
    project = make_project(spec=default_spec(mutations=[LOW]))
    base = git(project.root, "rev-parse", "HEAD").strip()
    project.write("src/limits.py", "FLOOR = 0\n")
    project.commit("a file no recorded run names")

    done = in_process(project.root, "check", "--since", base)

    assert done.code == 0, done.out + done.err
    assert "calc (no record of its last run" in done.out


def test_a_change_to_a_policy_named_with_dot_slash_in_the_config_selects_every_spec(
    make_project: ProjectFactory, cli: Cli
) -> None:
    project = make_project()
    project.write("mutharness.toml", 'platform-skips = "./policy/skips.json"\n')
    project.write("policy/skips.json", json.dumps({"version": 1, "platforms": {}}))
    project.commit("a skip policy, named with ./")
    base = recorded(project, in_process)
    project.write("policy/skips.json", json.dumps(
        {"version": 1, "note": "changed", "platforms": {}}))
    project.commit("the policy changed")

    done = cli(project.root, "verify", "specs", "--since", base)

    assert "no spec is affected" not in done.out
    assert done.code == 0, done.out + done.err
    results = json.loads((project.root / ".mutharness/results.json").read_text("utf-8"))
    assert [spec["id"] for spec in results["specs"]] == ["calc"]
