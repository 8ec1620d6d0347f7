"""A `verify -j` worker: the mutations its parent hands it, in its own workspace, under the
parent's lock; `python -m mutharness.commands.worker JOB.json` (its job: `settings_json`)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from mutharness.commands.prepare import settings_from_json
from mutharness.commands.verify import execute
from mutharness.environment import prepare_process
from mutharness.errors import ExitCode, Interrupted, MutharnessError
from mutharness.lab.events import Silent
from mutharness.model.results import RunResult, write_results
from mutharness.process import end_with_parent
from mutharness.signals import exit_status, interrupts


def main(argv: list[str]) -> int:
    """Run the job in `argv[1]`; its results file says what happened, also on an error."""
    document = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    settings = settings_from_json(document)
    assert settings.json_path is not None
    try:
        prepare_process()
        with interrupts():
            if settings.parent is not None:
                end_with_parent(settings.parent)
            run = execute(settings, Silent(), os.environ, lock=False)
    except MutharnessError as error:  # before its session: the parent reads it from here
        write_results(RunResult(tool={}, commit="", dirty=False, dirty_changes=(),
                                command=settings.command, specs=(), complete=False,
                                error=error), settings.json_path)
        return int(error.exit_code)
    except KeyboardInterrupt:
        return int(ExitCode.INTERRUPTED)
    except Interrupted as interrupted:
        return int(exit_status(interrupted.signal_number))
    return int(run.exit_code())


if __name__ == "__main__":
    sys.exit(main(sys.argv))
