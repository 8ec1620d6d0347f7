"""A run leaves what a user needs to diagnose it: each scenario's log, capped, in
`.mutharness/runs/<spec>/`, and the last complete results beside the new ones."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

from conftest import BOUNDS, Completed, Project, default_spec, project_copy
from inproc import in_process
from replay import Recording, replaying

from mutharness.lab.logs import LOG_CAP, RunLogs, capped, spec_directory

ProjectFactory = Callable[..., Project]
Cli = Callable[..., Completed]
Runs = tuple[Path, Recording]  # a recorded project and its real runs (conftest.calc_runs)

RED = "\n\ndef test_red():\n    assert clamp(1, 0, 10) == 2\n"


def utf8_env() -> dict[str, str]:
    return {**os.environ, "PYTHONIOENCODING": "utf-8"}


def logs_of(project: Project, spec: str = "calc") -> dict[str, str]:
    directory = project.root / ".mutharness" / "runs" / spec
    return {path.name: path.read_text("utf-8", "replace") for path in directory.iterdir()}


def test_each_scenario_of_a_run_leaves_its_log_in_the_run_directory(
    make_project: ProjectFactory, cli: Cli
) -> None:
    project = make_project()

    done = cli(project.root, "verify", "specs/calc.json", "--baseline-runs", "2",
               env=utf8_env())

    assert done.code == 0, done.out + done.err
    logs = logs_of(project)
    assert sorted(logs) == ["baseline-1.log", "baseline-2.log", "mutant-1.log", "mutant-2.log"]
    assert "4 passed" in logs["baseline-1.log"] and "4 passed" in logs["baseline-2.log"]
    assert "1 failed in " in logs["mutant-1.log"]  # the CAUGHT mutant keeps its output
    assert "4 passed" in logs["mutant-2.log"]
    assert done.out.splitlines()[-1] == "logs: .mutharness/runs/calc/"


def test_a_run_replaces_the_logs_its_spec_had_and_keeps_other_specs_logs(
    calc_runs: Runs, tmp_path: Path, git_home: Path
) -> None:
    project = project_copy(calc_runs[0], tmp_path)
    runs = project.root / ".mutharness" / "runs"
    (runs / "calc").mkdir(parents=True)
    (runs / "calc" / "mutant-9.log").write_text("an older run's\n", "utf-8")
    (runs / "other").mkdir()
    (runs / "other" / "baseline-1.log").write_text("another spec's\n", "utf-8")

    with replaying(calc_runs[1]):
        done = in_process(project.root, "verify", "specs/calc.json")

    assert done.code == 0, done.out + done.err
    assert "mutant-9.log" not in logs_of(project)
    assert (runs / "other" / "baseline-1.log").read_text("utf-8") == "another spec's\n"


def test_a_red_baseline_keeps_its_log_and_its_error_names_it(
    make_project: ProjectFactory, cli: Cli
) -> None:
    project = make_project()
    path = project.root / "tests/test_calc.py"
    project.write("tests/test_calc.py", path.read_text("utf-8") + RED)
    project.commit("a red test")

    done = cli(project.root, "verify", "specs/calc.json", env=utf8_env())

    assert done.code == 3, done.out + done.err
    assert "  log: .mutharness/runs/calc/baseline-1.log" in done.err.splitlines()
    assert "test_red" in logs_of(project)["baseline-1.log"]
    assert done.out.splitlines()[-1] == "logs: .mutharness/runs/calc/"


def test_an_untrustworthy_mutant_names_its_log(make_project: ProjectFactory, cli: Cli) -> None:
    project = make_project(spec=default_spec(mutations=[
        {"name": "is_adult loses its colon (import breaks)", "file": "src/calc.py",
         "anchor": "def is_adult(age):", "replacement": "def is_adult(age)"},
    ]))

    done = cli(project.root, "verify", "specs/calc.json", env=utf8_env())

    assert done.code == 4, done.out + done.err
    lines = done.out.splitlines()
    verdict = next(index for index, line in enumerate(lines) if "UNTRUSTWORTHY" in line)
    assert lines[verdict + 1].strip() == "↳ log: .mutharness/runs/calc/mutant-1.log"
    assert "SyntaxError" in logs_of(project)["mutant-1.log"]


def test_j2_workers_add_every_log_of_the_run_and_none_of_the_old_ones(
    make_project: ProjectFactory, cli: Cli
) -> None:
    project = make_project(spec=BOUNDS)
    stale = project.root / ".mutharness" / "runs" / "calc" / "mutant-7.log"
    stale.parent.mkdir(parents=True)
    stale.write_text("an older run's\n", "utf-8")

    done = cli(project.root, "verify", "specs/calc.json", "-j", "2", env=utf8_env())

    assert done.code == 0, done.out + done.err
    logs = logs_of(project)
    assert {"baseline-1.log", "mutant-1.log", "mutant-2.log", "mutant-3.log"} == set(logs)
    assert all("stopping after 1 failures" in logs[f"mutant-{n}.log"] for n in (1, 2, 3))


def test_a_shard_replaces_only_the_logs_of_what_it_runs(
    bounds_runs: Runs, tmp_path: Path, git_home: Path
) -> None:
    project = project_copy(bounds_runs[0], tmp_path)
    with replaying(bounds_runs[1]):
        assert in_process(project.root, "verify", "specs/calc.json").code == 0

        done = in_process(project.root, "verify", "specs/calc.json", "--shard", "2/2",
                          "--json", "../shard-2.json")

    assert done.code == 0, done.out + done.err
    assert set(logs_of(project)) == {"baseline-1.log", "mutant-1.log", "mutant-2.log",
                                     "mutant-3.log"}


def test_a_symlinked_spec_log_directory_is_replaced_never_written_through(
    calc_runs: Runs, tmp_path: Path, git_home: Path
) -> None:
    project = project_copy(calc_runs[0], tmp_path / "copy")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine\n", "utf-8")
    runs = project.root / ".mutharness" / "runs"
    runs.mkdir(parents=True)
    (runs / "calc").symlink_to(outside, target_is_directory=True)

    with replaying(calc_runs[1]):
        done = in_process(project.root, "verify", "specs/calc.json")

    assert done.code == 0, done.out + done.err
    assert sorted(path.name for path in outside.iterdir()) == ["keep.txt"]
    assert not (runs / "calc").is_symlink() and (runs / "calc" / "mutant-1.log").is_file()


def test_a_symlinked_runs_directory_is_refused_before_anything_runs(
    make_project: ProjectFactory, cli: Cli, tmp_path: Path
) -> None:
    project = make_project()
    outside = tmp_path / "outside"
    outside.mkdir()
    (project.root / ".mutharness").mkdir()
    (project.root / ".mutharness" / "runs").symlink_to(outside, target_is_directory=True)

    done = cli(project.root, "verify", "specs/calc.json", env=utf8_env())

    assert done.code == 5, done.out + done.err
    assert "runs is not a directory" in done.err
    assert list(outside.iterdir()) == []


def test_a_spec_id_with_control_characters_gets_a_plain_directory_name(
    tmp_path: Path,
) -> None:
    directory = spec_directory(tmp_path, "calc\x1b[2J\nrm -rf")

    assert directory.parent == tmp_path / "runs"
    assert directory.name.isascii() and directory.name.isprintable()
    assert "\x1b" not in directory.name and "/" not in directory.name


def test_a_log_longer_than_the_cap_keeps_its_head_and_tail_with_a_marked_cut(
    tmp_path: Path,
) -> None:
    log = tmp_path / "pytest.log"
    half = LOG_CAP // 2
    log.write_bytes(b"H" * half + b"M" * 1000 + b"T" * half)

    kept = capped(log)

    head, cut, tail = kept.partition(b"\n[mutharness: 1000 bytes cut here")
    assert head == b"H" * half and tail.endswith(b"T" * half)
    assert b"M" not in kept and cut
    assert len(kept) < LOG_CAP + 200


def test_a_log_within_the_cap_is_kept_whole(tmp_path: Path) -> None:
    log = tmp_path / "pytest.log"
    log.write_bytes(b"\x1b[31mred\x00\r\n" * 10)

    assert capped(log) == b"\x1b[31mred\x00\r\n" * 10


def test_a_worker_never_replaces_a_log_a_sibling_kept(tmp_path: Path) -> None:
    source = tmp_path / "pytest.log"
    source.write_bytes(b"second\n")
    first = RunLogs(tmp_path / ".mutharness", replace=False)
    (tmp_path / ".mutharness" / "runs" / "calc").mkdir(parents=True)
    (tmp_path / ".mutharness" / "runs" / "calc" / "baseline-1.log").write_bytes(b"first\n")

    kept = first.keep("calc", "baseline-1", source)

    assert kept is not None and kept.read_bytes() == b"first\n"


def test_a_second_run_keeps_the_first_complete_results_as_the_previous_ones(
    calc_runs: Runs, tmp_path: Path, git_home: Path
) -> None:
    project = project_copy(calc_runs[0], tmp_path)
    results = project.root / ".mutharness" / "results.json"
    previous = project.root / ".mutharness" / "results.previous.json"
    with replaying(calc_runs[1]):
        assert in_process(project.root, "verify", "specs/calc.json").code == 0
        first = results.read_bytes()
        assert not previous.exists()

        assert in_process(project.root, "verify", "specs/calc.json").code == 0

    assert previous.read_bytes() == first


def test_refused_runs_never_replace_the_last_complete_results(
    calc_runs: Runs, tmp_path: Path, git_home: Path
) -> None:
    project = project_copy(calc_runs[0], tmp_path)
    results = project.root / ".mutharness" / "results.json"
    previous = project.root / ".mutharness" / "results.previous.json"
    with replaying(calc_runs[1]):
        assert in_process(project.root, "verify", "specs/calc.json").code == 0
    complete = results.read_bytes()
    project.write("src/calc.py", "# uncommitted\n")

    for _ in range(2):  # the second refusal must not rotate the first one's record
        done = in_process(project.root, "verify", "specs/calc.json")
        assert done.code == 5, done.out + done.err  # the dirty tree refused

    assert json.loads(results.read_text("utf-8"))["complete"] is False
    assert previous.read_bytes() == complete
