"""What a verify costs outside its test runs, by construction: each fact of HEAD asked of git
once, however many mutations need it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import BOUNDS, Completed, Project, logging_git
from inproc import in_process


@pytest.mark.skipif(os.name == "nt", reason="a POSIX shell script stands in for git")
def test_a_verify_reads_each_committed_file_from_git_once_however_many_mutations_target_it(
    make_project: Callable[..., Project], tmp_path: Path
) -> None:
    project = make_project(spec=BOUNDS)
    log = tmp_path / "git.log"
    env = {**os.environ, "PATH": logging_git(tmp_path / "bin", log)}

    done: Completed = in_process(project.root, "verify", "specs", "--no-progress", env=env)

    assert done.code == 0, done.out + done.err
    reads = [line for line in log.read_text().splitlines()
             if "cat-file" in line and line.endswith(":src/calc.py")]
    assert len(BOUNDS["mutations"]) == 3
    assert sorted(line.split("cat-file ")[1].split()[0] for line in reads) == ["--filters", "-s"]


def test_a_verify_that_asks_for_no_report_imports_no_report_s_module() -> None:
    """What a verify imports before its first run is paid by every run: the JUnit, summary,
    mutation-testing and HTML reports' modules are imported only to make one asked for."""
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, mutharness.cli, mutharness.commands.verify, "
         "mutharness.commands.finish; print(' '.join(sorted(name for name in sys.modules if "
         "name.startswith(('mutharness.reports.junit', 'mutharness.reports.summary', "
         "'mutharness.reports.stryker', 'mutharness.reports.html', "
         "'mutharness.reports.annotations', 'mutharness.reports.evidence', 'jinja2')))))"],
        capture_output=True, text=True, check=True)

    assert loaded.stdout.split() == []
