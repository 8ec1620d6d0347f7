"""Each scenario's output kept, capped, in `.mutharness/runs/<spec>/` of the user's repository.

A run's logs live in its workspace, which is removed with it; what a user needs to diagnose a
red baseline or a doubtful mutant is copied out first, one file per scenario (`baseline-1.log`,
`mutant-3.log`: the mutation's number as the console shows it). A log
longer than `LOG_CAP` keeps its first and last halves with a line that marks the cut. Every
file is written atomically and never through a link; the spec's directory name is
`paths.plain_name` of its id. A run clears its specs' directories once before it starts (a
shard only the files of what it runs); a `-j` worker only adds, and never replaces a file a
sibling worker kept (two workers measuring one spec's baseline keep the first's).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from mutharness.paths import linked_parent, plain_name
from mutharness.repo.files import create_atomic, remove_path, write_atomic

LOG_CAP = 256 * 1024  # bytes kept of one scenario's log: its first and last halves
RUNS = "runs"  # under the run directory (.mutharness)
_FIXED = re.compile(r"baseline-\d+\.log")


def mutant_scenario(number: int) -> str:
    """The name of mutation `number`'s run (1-based, as the console numbers it): its scratch
    directory and its kept log's name."""
    return f"mutant-{number}"


def spec_directory(run_dir: Path, spec_id: str) -> Path:
    """Where spec `spec_id`'s logs are kept: a plain name, whatever the id holds."""
    return run_dir / RUNS / plain_name(spec_id)


def log_file(run_dir: Path, spec_id: str, scenario: str) -> Path:
    """The kept log of scenario `scenario` (`baseline-1`, `mutant-3`) of spec `spec_id`."""
    return spec_directory(run_dir, spec_id) / f"{scenario}.log"


def capped(path: Path, cap: int = LOG_CAP) -> bytes:
    """The log at `path`, whole when it is at most `cap` bytes, else its first and last
    `cap // 2` bytes with a line between them that says how many bytes were cut."""
    with path.open("rb") as log:
        size = os.fstat(log.fileno()).st_size
        if size <= cap:
            return log.read()
        half = cap // 2
        head = log.read(half)
        log.seek(size - half)
        tail = log.read(half)
    cut = size - 2 * half
    return (head + f"\n[mutharness: {cut} bytes cut here; the log was {size} bytes, "
            f"its first and last {half} are kept]\n".encode() + tail)


def shown(path: Path) -> str:
    """`path` as the user can open it from here: relative below the current directory."""
    try:
        return path.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return path.as_posix()


@dataclass(frozen=True)
class RunLogs:
    """The logs one verify keeps under `run_dir` (`.mutharness` of the user's repository)."""

    run_dir: Path
    replace: bool = True  # False: a -j worker's, which never replaces a sibling's file

    def clear(self, spec_id: str, mutations: Iterable[int] | None = None) -> None:
        """Before a run: spec `spec_id`'s logs removed, all of them, or (a shard) only its
        baseline logs and those of mutations numbered `mutations`. A link (or a
        file) where a directory should be is removed itself, never followed."""
        runs = self.run_dir / RUNS
        if runs.is_symlink() or (runs.exists() and not runs.is_dir()):
            remove_path(runs)
        directory = spec_directory(self.run_dir, spec_id)
        if mutations is None or directory.is_symlink() or not directory.is_dir():
            remove_path(directory)
            return
        numbers = {mutant_scenario(number) for number in mutations}
        for path in directory.glob("*") if directory.is_dir() else ():
            if _FIXED.fullmatch(path.name) or path.name.removesuffix(".log").removesuffix(
                    "-again") in numbers:
                remove_path(path)

    def holds(self, path: str) -> bool:
        """Whether `path` (a run's `log_path`) is a log kept here."""
        return Path(path).parent.parent == self.run_dir / RUNS

    def keep(self, spec_id: str, scenario: str, log: Path) -> Path | None:
        """Keep the log at `log` (capped) as scenario `scenario`'s of spec `spec_id`; the kept
        file, or None when there is none to keep or a link on the way would be followed."""
        target = log_file(self.run_dir, spec_id, scenario)
        try:
            data = capped(log)
        except OSError:  # the run wrote no log (it never started)
            return None
        relative = f"{RUNS}/{target.parent.name}/{target.name}"
        if linked_parent(self.run_dir, relative) is not None:
            return None
        target.parent.mkdir(parents=True, exist_ok=True)
        if linked_parent(self.run_dir, relative) is not None:  # never through a link
            return None
        if self.replace:
            write_atomic(target, data)
        else:
            create_atomic(target, data)  # a sibling's file already there is kept
        return target
