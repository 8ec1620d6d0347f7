"""`mutharness redfirst`: the tests at HEAD, then with the fix's files put back to the base."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from mutharness.digest import file_digest
from mutharness.errors import WorkspaceError
from mutharness.lab.scenario import Lab, Ran, Scenario, run_scenario
from mutharness.model.redfirst import Proof, RedFirst, pair
from mutharness.model.verdict import run_problem
from mutharness.repo.files import remove_path
from mutharness.repo.source import REGULAR_MODES, SourceRepo
from mutharness.runners.base import RunFacts, SpecFiles
from mutharness.runners.registry import runner_kind


def _side(ran: Ran, side: str, load_errors: bool, reverted: tuple[str, ...] = ()) -> str:
    """Why one side's run cannot be believed ("" when it can); the `reverted` files differ
    from HEAD by design (settling the workspace resets them)."""
    drift = [path for path in ran.drift if path not in reverted
             and not any(fixed.startswith(f"{path}/") for fixed in reverted)]  # a pruned dir
    if drift:
        return f"{side}: the run changed tracked files ({', '.join(drift[:3])})"
    problem = run_problem(ran.facts, load_errors=load_errors)
    return f"{side}: {problem}" if problem is not None else ""


def _revert(proof: Proof, source: SourceRepo, lab: Lab) -> None:
    """Every file of the fix as `base` has it: rewritten, recreated, or deleted."""
    workspace = lab.workspace
    for path in proof.fix:
        mode = source.mode_at(proof.base, path)
        target = workspace.path(path)
        if mode is None:
            if target.exists() or target.is_symlink():
                remove_path(target)
            _prune_empty_parents(target.parent, workspace.root)  # no namespace package left
            continue
        if mode not in REGULAR_MODES:
            raise WorkspaceError(
                f"red-first cannot revert {path}: at {proof.base[:12]} it is not a regular "
                f"file (git mode {mode})"
            )
        data = source.bytes_at(proof.base, path)
        if data is None:
            raise WorkspaceError(f"red-first cannot read {path} at {proof.base[:12]}")
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists() and not target.is_file():
            remove_path(target)
        workspace.write_mutant(path, data)
        executable = target.stat().st_mode | 0o111
        target.chmod(executable if mode == "100755" else executable & ~0o111)


def _prune_empty_parents(directory: Path, root: Path) -> None:
    """Remove the directories a deleted file leaves empty, up to (not including) `root`."""
    while directory != root and root in directory.parents:
        try:
            directory.rmdir()
        except OSError:  # not empty (or already gone): stop here
            return
        directory = directory.parent


def _digests(
    proof: Proof, lab: Lab, facts: RunFacts, tracked: frozenset[str]
) -> dict[str, str]:
    """The HEAD bytes the proof depends on: the tests' files and the fix's files."""
    kind = runner_kind(proof.spec.runner)
    wanted = {kind.entry_path(entry) for entry in proof.spec.tests} | set(proof.fix)
    wanted |= {kind.split_id(outcome.nodeid)[0] for outcome in facts.outcomes}
    wanted |= set(kind.config_inputs(proof.spec.tests, tracked))  # conftest.py stays as at HEAD
    digests: dict[str, str] = {}
    for path in sorted(wanted):
        file = lab.workspace.path(path)
        if file.is_file() and not file.is_symlink():
            digests[path] = file_digest(file.read_bytes())
    return digests


def prove(proof: Proof, source: SourceRepo, lab: Lab, tracked: frozenset[str]) -> RedFirst:
    """Run the tests at HEAD, then with the fix reverted, and pair every test's outcomes.

    The HEAD run must load the fix's modules from the workspace (the runner's isolation
    check: an installed copy would make the revert a no-op). The workspace holds HEAD; the
    reverted run is its last use, so nothing is put back."""
    spec = proof.spec
    record = RedFirst(
        proof.rev, proof.base, source.head, spec.runner, spec.tests, proof.fix,
        load_error_is_red=proof.load_error_is_red, expect_red=proof.expect_red,
    )
    head = run_scenario(Scenario.baseline(spec, 1, proof.timeout_s), lab)
    digests = _digests(proof, lab, head.facts, tracked)
    if (problem := _side(head, "at HEAD", load_errors=False)):
        return replace(record, problem=problem, depends_on=digests)
    files = SpecFiles("red-first", proof.fix, source.root, lab.workspace.root.resolve(), tracked)
    if (error := lab.runner_for(spec).isolation_problem(head.facts, files)) is not None:
        return replace(record, problem=f"at HEAD: {error.message()}", depends_on=digests)
    _revert(proof, source, lab)
    lab.runner_for(spec).forget(tuple(lab.workspace.path(path) for path in proof.fix))
    reverted = run_scenario(Scenario.reverted(spec, proof.timeout_s), lab)
    problem = _side(reverted, "with the fix reverted", load_errors=True, reverted=proof.fix)
    split = runner_kind(spec.runner).split_id
    return replace(
        record, pairs=pair(head.facts, reverted.facts, split), problem=problem,
        load_errors=reverted.facts.collection_errors, depends_on=digests,
    )


