"""pytest plugin loaded into each child: drops the options the project config names from the
project's addopts, switches pytest-cov off, records every test's outcome and every
collector's (the report mutharness reads: pytest-json-report's words and shape, from the same
hooks, so the tests' environment needs nothing but pytest), the session's end, its modules,
its config, the tests a failing subtest belongs to (the outcome word of such a test is its
last report's, a passing subtest's), and whether pytest-xdist distributed the tests.

It runs in the tests' interpreter (Python 3.8 syntax, the standard library and pytest).
"""

from __future__ import annotations

import copy
import json
import os
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

DROP_ADDOPTS = "MUTHARNESS_DROP_ADDOPTS"  # a JSON list of option names (pytest-drop-addopts)
REPORT_OUT = "MUTHARNESS_REPORT_OUT"  # where the outcomes are written at the session's end


class _Outcomes:
    """Every test's outcome and stages, every collector's outcome, as pytest-json-report 1.5
    records them from the same hooks: a test's word is the category pytest's own
    `pytest_report_teststatus` gives its last report that was neither passed nor silent
    (else "passed"); a stage keeps its duration, outcome and, when it skipped, its long
    representation (the reason); a collector its outcome and long representation."""

    def __init__(self, config: Any) -> None:
        self.config = config
        self.tests: dict[str, dict[str, Any]] = {}
        self.collectors: list[dict[str, Any]] = []

    def pytest_collectreport(self, report: Any) -> None:
        collector: dict[str, Any] = {"nodeid": report.nodeid, "outcome": report.outcome}
        if report.longrepr:
            collector["longrepr"] = str(report.longrepr)
        self.collectors.append(collector)

    def pytest_runtest_logreport(self, report: Any) -> None:
        test = self.tests.setdefault(report.nodeid, {"nodeid": report.nodeid,
                                                     "outcome": "passed"})
        word = self.config.hook.pytest_report_teststatus(report=report, config=self.config)[0]
        if word not in ("passed", ""):
            test["outcome"] = word
        stage: dict[str, Any] = {"duration": report.duration, "outcome": report.outcome}
        if report.skipped and report.longreprtext:  # a skip's reason; a failure's text is
            stage["longrepr"] = report.longreprtext  # never read, so never formatted here
        test[report.when] = stage

    def document(self, exitstatus: int) -> dict[str, Any]:
        return {"created": time.time(), "exitcode": exitstatus,
                "collectors": self.collectors, "tests": list(self.tests.values())}


class _SubtestFailures:
    """The node ids whose subtests (pytest 9's, unittest's subTest) reported a failure."""

    def __init__(self) -> None:
        self.nodeids: set[str] = set()

    def pytest_runtest_logreport(self, report: Any) -> None:
        if "subtest" in type(report).__name__.lower() and report.failed:
            self.nodeids.add(report.nodeid)


def _takes_value(parser: Any, name: str) -> bool:
    """Whether the option `name` takes a value, as pytest's own parser (with every plugin's
    options registered) says: given alone, it complains of a missing argument."""
    try:
        parser.parse_known_args([name])
    except (pytest.UsageError, SystemExit):
        return True
    return False


def _dropped(addopts: list[str], names: list[str], parser: Any) -> tuple[list[str], list[str]]:
    """`addopts` without the `names` (each with its value, however written), and the names
    none of them carried. The names are options alone, never `-p` (options.resolve checks)."""
    takes = {name: _takes_value(parser, name) for name in names}
    kept: list[str] = []
    found = set()
    index = 0
    while index < len(addopts):
        token = addopts[index]
        hit = next((name for name in names if token == name or (
            token.startswith(name + "=") if name.startswith("--")
            else takes[name] and token.startswith(name)  # `-kexpr`: the value attached
        )), None)
        if hit is None:
            kept.append(token)
            index += 1
            continue
        found.add(hit)
        index += 2 if token == hit and takes[hit] else 1
    return kept, [name for name in names if name not in found]


@pytest.hookimpl(hookwrapper=True)
def pytest_load_initial_conftests(
    early_config: Any, parser: Any, args: list[str]
) -> Iterator[None]:
    """Before any plugin reads the early options (pytest-cov does, here): remove the named
    options from the addopts pytest put at the head of `args`, and parse the early options
    again (a pytest-xdist worker gets its options without the addopts: nothing to remove);
    then switch pytest-cov off, whatever the options ask of it."""
    names = json.loads(os.environ.get(DROP_ADDOPTS) or "[]")
    if names:
        addopts = [str(token) for token in early_config.getini("addopts")]
        if not addopts or args[:len(addopts)] == addopts:
            kept, missing = _dropped(addopts, names, parser)
            if missing:
                raise pytest.UsageError(
                    f"pytest-drop-addopts names {', '.join(missing)}, which the project's "
                    f"addopts ({' '.join(addopts) or 'none'}) do not carry: remove it from "
                    "mutharness.toml"
                )
            args[:len(addopts)] = kept
            early_config.known_args_namespace = parser.parse_known_args(
                args, namespace=copy.copy(early_config.option)
            )
    if hasattr(early_config.known_args_namespace, "no_cov"):
        # pytest-cov: measured coverage serves no verdict; off as `--no-cov` turns it off
        early_config.known_args_namespace.no_cov = True
    yield


def pytest_configure(config: Any) -> None:
    """Register the outcome and subtest recorders (one per session: no state outlives it)."""
    config.pluginmanager.register(_SubtestFailures(), "_mutharness_subtests")
    config.pluginmanager.register(_Outcomes(config), "_mutharness_outcomes")


def _write(path: str, document: Any) -> None:
    with open(path + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(document, handle)
    os.replace(path + ".tmp", path)


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    """Write the outcomes, then the module -> file map, sys.path and the config file where
    the harness asked (each atomically): the second's presence is the proof that the session
    reached its end."""
    if hasattr(session.config, "workerinput"):  # a pytest-xdist worker: not the end
        return
    report = os.environ.get(REPORT_OUT)
    outcomes = session.config.pluginmanager.get_plugin("_mutharness_outcomes")
    if report and outcomes is not None:
        _write(report, outcomes.document(session.exitstatus))
    out = os.environ.get("MUTHARNESS_PROBE_OUT")
    if not out:
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
    _write(out, document)
