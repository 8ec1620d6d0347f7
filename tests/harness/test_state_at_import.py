"""The default pytest route judges a mutant as a fresh `python -m pytest` of the mutated tree.

What unchanged code records about its process at import (its pid, a file's modification time,
a temp directory, the clock, its code kept as bytes) meets the mutant in the run that judges it
only if that run imported the project after the mutant was written; and a run ends as a
process ends (`pytest_unconfigure`, atexit handlers, non-daemon threads joined). Each class
is a fixture here, verified by default and by `--pytest-runner subprocess`: the same verdicts,
failing tests and exit codes. Real git repositories, real pytest children.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

import pytest
from conftest import Completed, Project
from inproc import in_process

ProjectFactory = Callable[..., Project]

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the fork server is POSIX's")

# -- a pid recorded at import, beside a reset after fork (connection pools, GUID iterators) --

COUNTER = '''\
import itertools
import os


class Counter:
    """Numbers in sequence; a forked process starts a sequence of its own."""

    def __init__(self):
        self.pid = os.getpid()
        self.numbers = itertools.count()

    def next(self):
        if os.getpid() != self.pid:
            self.pid = os.getpid()
            self.numbers = itertools.count()
        return next(self.numbers)


COUNTER = Counter()
'''

TEST_COUNTER = '''\
from counter import COUNTER


def test_numbers_follow_each_other():
    first = COUNTER.next()
    assert COUNTER.next() == first + 1
'''

# -- a file's modification time recorded at import (a reloader) -------------------------------

RELOADER = '''\
import os

STAMP = os.stat(__file__).st_mtime_ns


def steady():
    """Whether this module's file is as it was imported."""
    return os.stat(__file__).st_mtime_ns == STAMP


def label():
    return "reloader"
'''

TEST_RELOADER = '''\
from reloader import steady


def test_the_module_is_steady():
    assert steady()
'''

# -- a directory made with mkdtemp at import ------------------------------------------------

SCRATCH = '''\
import os
import tempfile

WORKDIR = tempfile.mkdtemp(prefix="scratch-")


def save(name, text):
    path = os.path.join(WORKDIR, name)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


def kind():
    return "scratch"
'''

TEST_SCRATCH = '''\
from scratch import save


def test_a_saved_file_holds_its_text():
    with open(save("a.txt", "hello"), encoding="utf-8") as handle:
        assert handle.read() == "hello"
'''

# -- code kept as marshal bytes at registration (task queues, plugin caches) -----------------

TASKS = '''\
import marshal
import types

REGISTRY = {}


def task(function):
    REGISTRY[function.__name__] = marshal.dumps(function.__code__)
    return function


def call(name, *args):
    return types.FunctionType(marshal.loads(REGISTRY[name]), globals())(*args)


@task
def add(a, b):
    return a + b
'''

TEST_TASKS = '''\
from tasks import call


def test_a_task_adds():
    assert call("add", 2, 3) == 5
'''

# -- the clock recorded at import (a token, a TTL cache, a rate-limit window) ----------------

TOKEN = '''\
import os
import time

MADE = time.time()


def current():
    """Whether the token was made after this module's file was last written."""
    return MADE >= os.stat(__file__).st_mtime


def scope():
    return "read"
'''

TEST_TOKEN = '''\
from token_made import current


def test_the_token_is_current():
    assert current()
'''

# -- a pytest_unconfigure check of what the tests left open ----------------------------------

HANDLES = '''\
OPEN = set()


def opened(name):
    OPEN.add(name)
    return name


def closed(name):
    OPEN.discard(name)
'''

TEST_HANDLES = '''\
from handles import closed, opened


def test_a_handle_opens_and_closes():
    name = opened("db")
    assert name == "db"
    closed(name)
'''

CONFTEST = '''\
def pytest_unconfigure(config):
    import handles

    if handles.OPEN:
        raise RuntimeError(f"handles left open: {sorted(handles.OPEN)}")
'''

# -- a non-daemon thread a mutant leaves waiting -------------------------------------------

THREADS = '''\
import threading


def run(results):
    stop = threading.Event()
    threading.Thread(target=stop.wait).start()
    results.append("ran")
    stop.set()
'''

TEST_THREADS = '''\
from threads import run


def test_a_job_runs():
    results = []
    run(results)
    assert results == ["ran"]
'''

# -- an atexit handler a mutant leaves blocking --------------------------------------------

DRAIN = '''\
import atexit
import threading

DONE = threading.Event()


def _drain():
    DONE.wait()


atexit.register(_drain)


def finish():
    DONE.set()
'''

TEST_DRAIN = '''\
from drain import finish


def test_the_jobs_finish():
    assert finish() is None
'''

FILES = {
    "src/counter.py": COUNTER, "tests/test_counter.py": TEST_COUNTER,
    "src/reloader.py": RELOADER, "tests/test_reloader.py": TEST_RELOADER,
    "src/scratch.py": SCRATCH, "tests/test_scratch.py": TEST_SCRATCH,
    "src/tasks.py": TASKS, "tests/test_tasks.py": TEST_TASKS,
    "src/token_made.py": TOKEN, "tests/test_token.py": TEST_TOKEN,
    "src/handles.py": HANDLES, "tests/handles/test_handles.py": TEST_HANDLES,
    "tests/handles/conftest.py": CONFTEST,
    "src/threads.py": THREADS, "tests/test_threads.py": TEST_THREADS,
    "src/drain.py": DRAIN, "tests/test_drain.py": TEST_DRAIN,
}


def _spec(tests: str, name: str, file: str, anchor: str, replacement: str,
          expect_caught: bool = True) -> dict[str, Any]:
    return {"tests": [tests], "expectBaselinePass": 1, "mutations": [
        {"name": name, "file": file, "anchor": anchor, "replacement": replacement,
         "expectCaught": expect_caught}]}


# each class a spec of its own: a route proven or refused for one test set is for that set
SPECS = {
    "counter": _spec("tests/test_counter.py", "the sequence starts again at every call",
                     "src/counter.py", "if os.getpid() != self.pid:",
                     "if os.getpid() == self.pid:"),
    "reloader": _spec("tests/test_reloader.py", "SURVIVOR (documented): a label no test reads",
                      "src/reloader.py", 'return "reloader"', 'return "loader"', False),
    "scratch": _spec("tests/test_scratch.py", "SURVIVOR (documented): a kind no test reads",
                     "src/scratch.py", 'return "scratch"', 'return "scrap"', False),
    "tasks": _spec("tests/test_tasks.py", "a task subtracts", "src/tasks.py", "return a + b",
                   "return a - b"),
    "token": _spec("tests/test_token.py", "SURVIVOR (documented): a scope no test reads",
                   "src/token_made.py", 'return "read"', 'return "write"', False),
    "handles": _spec("tests/handles", "the handle is never closed", "src/handles.py",
                     "    OPEN.discard(name)\n", "    pass\n"),
    "threads": _spec("tests/test_threads.py", "the job's thread is never stopped",
                     "src/threads.py", "    stop.set()\n", "    pass\n"),
    "drain": _spec("tests/test_drain.py", "the jobs never finish", "src/drain.py",
                   "    DONE.set()\n", "    pass\n"),
}
# what a fresh `python -m pytest` of each mutant says (the fixtures do what they claim)
FRESH = {"counter": "CAUGHT", "reloader": "SURVIVED", "scratch": "SURVIVED", "tasks": "CAUGHT",
         "token": "SURVIVED", "handles": "UNTRUSTWORTHY", "threads": "TIMEOUT", "drain": "TIMEOUT"}

# a mutant that hangs at the process's end is a TIMEOUT: a short limit keeps the test short
# (it scales with the measured baseline, so a loaded machine moves it too)
LIMITS = ("--timeout-floor", "1", "--timeout-factor", "3", "--timeout-constant", "8")


def _project(make_project: ProjectFactory) -> Project:
    project = make_project()
    (project.root / "tests" / "test_calc.py").unlink()
    (project.root / "specs" / "calc.json").unlink()
    for relative, text in FILES.items():
        project.write(relative, text)
    for name, document in SPECS.items():
        project.spec(name, document)
    project.commit("code that records its process at import, and a run's end")
    return project


def _run(project: Project, name: str, *flags: str) -> tuple[Completed, Any]:
    out = project.root.parent / f"{name}.json"
    done = in_process(project.root, "verify", "--json", str(out), *LIMITS, *flags,
                      env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    return done, json.loads(out.read_text("utf-8"))


def _judged(results: Any) -> dict[str, list[tuple[object, ...]]]:
    """Each spec's mutations: the verdict, whether it met its expectation, the failing tests
    and the counts."""
    return {spec["id"]: [(m["verdict"], m["as_expected"], m["facts"].get("failing"),
                          m["facts"].get("passed"), m["facts"].get("failed"))
                         for m in spec["mutations"]] for spec in results["specs"]}


def test_the_default_gives_a_fresh_processs_verdicts_where_code_recorded_its_process_at_import(
    make_project: ProjectFactory
) -> None:
    project = _project(make_project)

    fresh, fresh_results = _run(project, "fresh", "--pytest-runner", "subprocess")
    default, default_results = _run(project, "default")

    assert {spec["id"]: [m["verdict"] for m in spec["mutations"]]
            for spec in fresh_results["specs"]} == {
        name: [verdict] for name, verdict in FRESH.items()}, fresh.out + fresh.err
    assert _judged(default_results) == _judged(fresh_results), default.out + default.err
    assert default.code == fresh.code
