"""`mutharness merge`: the shards of one run joined, every record re-derived, as one run."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from mutharness.commands.finish import finish
from mutharness.commands.prepare import open_repository, tree_at
from mutharness.model.merging import merge
from mutharness.model.results import read_results, write_results
from mutharness.reports.console import Console
from mutharness.reports.outputs import Reports


def run(
    console: Console, shards: tuple[Path, ...], *, json_path: Path, evidence_dir: Path | None,
    template_dir: Path | None, commit_rev: str | None, reports: Reports,
) -> int:
    """The command line's merge: the joined results written, then what verify writes after a
    run; its exit code (errors before the results are written raised)."""
    source = open_repository()
    read = [(str(path), read_results(path)) for path in shards]
    dirty = read[0][1].dirty_changes if read else ()
    commit = source.head if commit_rev is None else source.base_commit(commit_rev)
    run = merge(read, tree_at(source, commit, dirty))
    if evidence_dir is not None:  # evidence only of the tree it goes into
        merge(read, tree_at(source, source.head, dirty, working=True))
    json_path.absolute().parent.mkdir(parents=True, exist_ok=True)
    run = replace(run, results_path=str(json_path))
    write_results(run, json_path)
    console.line(f"merged {len(shards)} shard(s): "
                 f"{len(run.mutation_results)} mutation(s) of {len(run.specs)} spec(s)")
    return int(finish(run, console, evidence_dir, template_dir, reports))
