"""pytest plugin loaded into each child: records the session's end, its modules, its config,
the tests a failing subtest belongs to (pytest-json-report words those as passed), and
whether pytest-xdist distributed the tests.

It runs in the tests' interpreter (Python 3.8 syntax, standard library only).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


class _SubtestFailures:
    """The node ids whose subtests (pytest 9's, unittest's subTest) reported a failure."""

    def __init__(self) -> None:
        self.nodeids: set[str] = set()

    def pytest_runtest_logreport(self, report: Any) -> None:
        if "subtest" in type(report).__name__.lower() and report.failed:
            self.nodeids.add(report.nodeid)


def pytest_configure(config: Any) -> None:
    """Register the subtest recorder (one per session: no state outlives it)."""
    config.pluginmanager.register(_SubtestFailures(), "_mutharness_subtests")


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    """Write the module -> file map, sys.path and the config file where the harness asked
    (atomically): its presence is the proof that the session reached its end."""
    out = os.environ.get("MUTHARNESS_PROBE_OUT")
    if not out or hasattr(session.config, "workerinput"):  # a pytest-xdist worker: not the end
        return
    modules = {}
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str):
            modules[name] = os.path.abspath(file)
    config = session.config
    inipath = getattr(config, "inipath", None) or getattr(config, "inifile", None)
    document = {
        "pid": os.getpid(),
        "modules": modules,
        "sys_path": [entry for entry in sys.path if isinstance(entry, str)],
        "inipath": str(inipath) if inipath else None,
        "distributed": bool(config.pluginmanager.has_plugin("dsession")),  # xdist's -n
        "subtest_failures": sorted(
            getattr(config.pluginmanager.get_plugin("_mutharness_subtests"), "nodeids", ())
        ),
    }
    with open(out + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(document, handle)
    os.replace(out + ".tmp", out)
