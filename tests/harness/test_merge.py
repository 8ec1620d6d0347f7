"""`verify --shard k/n` and `mutharness merge`: shards of a real run (its runs replayed), merged."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import (
    BOUNDS,
    Completed,
    Project,
    calc_project,
    copy_recording,
    edit_json,
    git,
    recording,
)
from inproc import in_process
from replay import Recording, record, replaying

from mutharness.lab.joining import completed
from mutharness.model.merging import joined
from mutharness.model.results import from_json

ProjectFactory = Callable[..., Project]
Cli = Callable[..., Completed]


RECORDED_SHARDS = ((1, 2), (2, 2))


@pytest.fixture(scope="session")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Recording]:
    """Made once a session: the calc project with two specs (bounds, 3 mutations; calc, 2),
    one real unsharded run with its evidence (`one/`) and its runs, and its shards 1/2 and
    2/2 beside it (replaying those runs)."""
    runs = Recording()

    def record_runs(base: Path) -> None:
        made = calc_project(base / "repo")
        made.spec("bounds", BOUNDS, commit=True)
        with pytest.MonkeyPatch.context() as patch:
            record(patch, into=runs)
            whole = in_process(made.root, "verify", "specs", "--evidence", str(base / "one"))
            assert whole.code == 0, whole.out + whole.err
        with replaying(runs):
            for k, n in RECORDED_SHARDS:
                _run_shard(made, k, n)

    return recording(tmp_path_factory, "merge", record_runs), runs


@pytest.fixture
def project(recorded: tuple[Path, Recording], tmp_path: Path,
            git_home: Path) -> Iterator[Project]:
    """A copy of the recorded project and its shards and evidence: a test edits its own; a
    verify in the test's process replays the recorded runs."""
    copy_recording(recorded[0], tmp_path)
    with replaying(recorded[1]):
        yield Project(tmp_path / "repo")


def out_of(project: Project) -> tuple[str, str]:
    """Where the merged results go: beside the repository, never into it."""
    return "--json", str(project.root.parent / "out.json")


def _run_shard(project: Project, k: int, n: int) -> Path:
    out = project.root.parent / f"shard-{k}-of-{n}.json"
    done = in_process(project.root, "verify", "specs", "--shard", f"{k}/{n}", "--json",
                      str(out))
    assert done.code == 0, done.out + done.err
    return out


def shard(project: Project, k: int, n: int) -> Path:
    """Shard k/n's results: the recorded copy beside `project`, else a run now (replayed)."""
    out = project.root.parent / f"shard-{k}-of-{n}.json"
    return out if (k, n) in RECORDED_SHARDS else _run_shard(project, k, n)


def names(path: Path) -> dict[str, list[int]]:
    document = json.loads(path.read_text("utf-8"))
    return {spec["id"]: [m["index"] for m in spec["mutations"]] for spec in document["specs"]}


def test_each_shard_runs_only_its_mutations_and_says_which(project: Project) -> None:
    first = shard(project, 1, 2)
    second = shard(project, 2, 2)

    assert names(first) == {"bounds": [0, 1]}
    assert names(second) == {"bounds": [2], "calc": [0, 1]}
    record = json.loads(first.read_text("utf-8"))["shard"]
    assert record["index"] == 1 and record["count"] == 2
    assert [p["id"] for p in record["plan"]] == ["bounds", "calc"]


def test_two_merged_shards_give_the_results_and_evidence_of_one_unsharded_run(
    project: Project, cli: Cli
) -> None:
    shards = [shard(project, 2, 2), shard(project, 1, 2)]  # any order

    merged_json = project.root.parent / "merged.json"
    done = cli(project.root, "merge", *map(str, shards), "--json", str(merged_json),
               "--evidence", str(project.root.parent / "merged"))

    assert done.code == 0, done.out + done.err
    assert "merged 2 shard(s): 5 mutation(s) of 2 spec(s)" in done.out
    one = sorted((project.root.parent / "one").iterdir())
    merged = sorted((project.root.parent / "merged").iterdir())
    assert [p.name for p in merged] == [p.name for p in one]
    for expected, got in zip(one, merged, strict=True):
        assert got.read_bytes() == expected.read_bytes(), got.name
    merged_doc = json.loads(merged_json.read_text("utf-8"))
    assert "shard" not in merged_doc and merged_doc["complete"] is True
    assert names(merged_json) == {"bounds": [0, 1, 2], "calc": [0, 1]}


def test_a_missing_shard_is_refused_naming_its_mutations(project: Project) -> None:
    first = shard(project, 1, 2)

    done = in_process(project.root, "merge", str(first), *out_of(project))

    assert done.code == 2
    assert "shard 2/2 is missing" in done.err
    assert "missing: bounds #3 'the value is returned unchanged'" in done.err
    assert "missing: calc #1 'the low bound is ignored'" in done.err
    assert not (project.root.parent / "out.json").exists()


def test_a_shard_given_twice_is_refused_naming_both_files(project: Project) -> None:
    first = shard(project, 1, 2)
    second = shard(project, 2, 2)
    again = project.root.parent / "again.json"
    again.write_bytes(first.read_bytes())

    done = in_process(project.root, "merge", str(first), str(second), str(again),
                      *out_of(project))

    assert done.code == 2
    assert f"shard 1/2 is given twice: {first} and {again}" in done.err
    assert f"doubled: bounds #1 'the high bound is ignored' in {first} and {again}" in done.err


def test_shards_of_different_commits_or_spec_bytes_are_refused(
    project: Project
) -> None:
    first = shard(project, 1, 2)
    second = shard(project, 2, 2)
    head = git(project.root, "rev-parse", "HEAD").strip()
    edit_json(second, lambda d: d.update(commit="0" * 40))

    done = in_process(project.root, "merge", str(first), str(second), *out_of(project))

    assert done.code == 2
    assert f"{second} is at commit {'0' * 40}, {first} at {head}" in done.err

    edit_json(second, lambda d: d.update(commit=head))
    edit_json(second, lambda d: d["shard"]["plan"][0].update(sha256="f" * 64))
    done = in_process(project.root, "merge", str(first), str(second), *out_of(project))
    assert done.code == 2
    assert f"{second} plans another run than {first}" in done.err


def test_shards_whose_baselines_ran_other_tests_are_refused(project: Project) -> None:
    first = shard(project, 1, 2)
    second = shard(project, 2, 2)

    def drop_a_test(document: dict[str, Any]) -> None:
        bounds = next(s for s in document["specs"] if s["id"] == "bounds")
        bounds["baseline"]["tests"].pop()

    edit_json(second, drop_a_test)
    done = in_process(project.root, "merge", str(first), str(second), *out_of(project))

    assert done.code == 2
    assert f"bounds: the baseline in {second} ran other tests than in {first}" in done.err


def test_a_results_file_that_is_not_a_shard_is_refused(project: Project) -> None:
    results = project.root / ".mutharness" / "results.json"  # the recorded unsharded run's

    done = in_process(project.root, "merge", str(results), *out_of(project))

    assert done.code == 2
    assert f"{results} is not a shard's results (verify --shard k/n writes those)" in done.err


def test_a_shard_renders_no_evidence_of_its_own(project: Project) -> None:
    done = in_process(project.root, "verify", "specs", "--shard", "1/2", "--evidence", "ev")
    assert done.code == 2
    assert "--shard with --evidence: a shard holds part of a run" in done.err

    first = shard(project, 1, 2)
    done = in_process(project.root, "render", str(first), "--out", "ev")
    assert done.code == 2
    assert "shard 1/2's results, part of a run: merge the shards first" in done.err
    assert not (project.root / "ev").exists()


def test_a_shard_with_nothing_assigned_still_writes_its_results(
    make_project: ProjectFactory
) -> None:
    project = make_project()  # calc: 2 mutations
    out = project.root.parent / "third.json"

    done = in_process(project.root, "verify", "specs", "--shard", "1/3", "--json", str(out))

    assert done.code == 0, done.out + done.err
    assert "shard 1/3: 0 of 2 mutation(s), of 0 of 1 spec(s)" in done.out
    assert names(out) == {}


def test_a_shard_that_would_stop_at_the_first_unexpected_result_is_refused(
    project: Project
) -> None:
    done = in_process(project.root, "verify", "specs", "--shard", "1/2", "--fail-fast")
    assert done.code == 2
    assert "--shard with --fail-fast: a shard that stops early leaves mutations" in done.err


def test_shards_run_by_other_tools_are_refused_naming_them_but_not_where_python_lives(
    project: Project
) -> None:
    first = shard(project, 1, 2)
    second = shard(project, 2, 2)
    edit_json(second, lambda d: d["tool"].update(python_executable="/elsewhere/bin/python"))
    assert in_process(project.root, "merge", str(first), str(second),
                      *out_of(project)).code == 0

    edit_json(second, lambda d: d["tool"].update(pytest="7.4.4"))
    done = in_process(project.root, "merge", str(first), str(second), *out_of(project))
    assert done.code == 2
    pytest_version = json.loads(first.read_text("utf-8"))["tool"]["pytest"]
    assert f"{second} was run with other tools than {first}: pytest 7.4.4 vs " \
        f"{pytest_version}" in done.err


def test_shards_run_with_other_settings_are_refused(project: Project) -> None:
    first = shard(project, 1, 2)
    second = shard(project, 2, 2)
    edit_json(second, lambda d: d["settings"].update(changed={"timeout-floor": 99}))

    done = in_process(project.root, "merge", str(first), str(second), *out_of(project))

    assert done.code == 2
    assert f"{second} was run with other settings than {first}" in done.err


def test_shards_whose_specs_were_named_in_another_order_still_merge(
    project: Project
) -> None:
    first = shard(project, 1, 2)
    second = shard(project, 2, 2)
    edit_json(second, lambda d: d["shard"]["plan"].reverse())  # the specs named the other way

    done = in_process(project.root, "merge", str(first), str(second), *out_of(project))

    assert done.code == 0, done.out + done.err
    assert list(names(project.root.parent / "out.json")) == ["bounds", "calc"]  # the first's order


def test_what_stopped_workers_finished_is_kept_with_a_part_stopped_after_its_last_mutation(
    project: Project
) -> None:
    run = from_json(json.loads(shard(project, 2, 2).read_text("utf-8")))
    assert run.shard is not None
    specs, wanted = tuple(s.spec for s in run.specs), run.shard.assigned()
    given = {"w": {spec: set(indices) for spec, indices in wanted.items()}}
    every = {spec.id: tuple(range(len(spec.mutations))) for spec in specs}
    bounds, calc = run.specs
    # stopped (--fail-fast, a signal) after saving calc's last mutation, before saving calc
    said = "interrupted after 2 of 2 mutation(s)"
    late = replace(run, specs=(bounds, replace(calc, error=said, stopped=said)),
                   complete=False, interrupted=15)
    early = replace(late, specs=(bounds, replace(late.specs[1],
                                                 mutations=calc.mutations[:1])))

    assert completed([("w", late)], specs, wanted, given) == (run.specs, ())
    assert completed([("w", early)], specs, wanted, given) == ((bounds,), ())
    assert completed([("w", run)], specs, every, given) == ((), ())  # bounds #1, #2: no one's


def test_a_baseline_refused_in_one_part_and_measured_in_another_leaves_no_verdict(
    project: Project
) -> None:
    run = from_json(json.loads(shard(project, 2, 2).read_text("utf-8")))
    calc = run.specs[1]
    said = "baseline: 3 passed, expected 4"
    refused = replace(calc, mutations=(), error=said, baseline=None)
    problems: list[str] = []

    spec = joined("calc", [("worker 1 of 2", calc), ("worker 2 of 2", refused)], problems)

    assert problems == [] and spec.mutations == ()
    assert spec.error == ("its baseline was refused in worker 2 of 2 but measured in worker 1 "
                          f"of 2: the same tests disagreed, so no verdict holds; in worker 2 "
                          f"of 2: {said}")
    assert spec.refused and not spec.in_progress
