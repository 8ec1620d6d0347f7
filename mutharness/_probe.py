"""pytest plugin loaded into each child: records the session's end, its modules, its config,
and the tests a failing subtest belongs to (pytest-json-report words those as passed); puts
the tests --first-failure names before the others.

It runs in the tests' interpreter (Python 3.8 syntax, the standard library and pytest).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import pytest


class _SubtestFailures:
    """The node ids whose subtests (pytest 9's, unittest's subTest) reported a failure."""

    def __init__(self) -> None:
        self.nodeids: set[str] = set()

    def pytest_runtest_logreport(self, report: Any) -> None:
        if "subtest" in type(report).__name__.lower() and report.failed:
            self.nodeids.add(report.nodeid)


class _FirstTests:
    """Puts the tests named in MUTHARNESS_FIRST (a JSON list of ids) before the others, in
    that order, after every other plugin has ordered them (--first-failure)."""

    def __init__(self, first: list[str]) -> None:
        self.rank = {nodeid: place for place, nodeid in enumerate(first)}

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[Any]) -> None:
        last = len(self.rank)
        items[:] = [item for _, _, item in sorted(
            (self.rank.get(item.nodeid, last), place, item) for place, item in enumerate(items)
        )]


def pytest_configure(config: Any) -> None:
    """Register the subtest recorder (one per session: no state outlives it)."""
    config.pluginmanager.register(_SubtestFailures(), "_mutharness_subtests")
    first = os.environ.get("MUTHARNESS_FIRST")
    if first:
        with open(first, encoding="utf-8") as handle:
            config.pluginmanager.register(_FirstTests(json.load(handle)), "_mutharness_first")


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
        "subtest_failures": sorted(
            getattr(config.pluginmanager.get_plugin("_mutharness_subtests"), "nodeids", ())
        ),
    }
    with open(out + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(document, handle)
    os.replace(out + ".tmp", out)
