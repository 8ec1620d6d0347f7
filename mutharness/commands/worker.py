"""A `verify -j` worker started as a new process (where its parent cannot fork it: see
`lab.workers`): `python -m mutharness.commands.worker JOB.json` (its job: `settings_json`),
prepared again as its parent was, then fed its mutations under the parent's lock."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from mutharness.commands.prepare import settings_from_json
from mutharness.commands.verify import execute
from mutharness.environment import prepare_process
from mutharness.lab.events import Silent
from mutharness.lab.workers import served
from mutharness.model.results import RunResult


def main(argv: list[str]) -> int:
    """Run the job in `argv[1]`; its results file says what happened, also on an error."""
    document = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    settings = settings_from_json(document)
    assert settings.json_path is not None

    def work() -> RunResult:
        prepare_process()
        return execute(settings, Silent(), os.environ, lock=False)

    return served(settings.json_path, settings.command, settings.parent, work)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
