"""Fixtures: real git repositories with a tiny project, and a runner for the real CLI."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from wheelhouse import FLOOR_TOOLS, TOOLS, download, holds_every_set

CALC = '''\
"""A tiny module under test."""


def clamp(value, low, high):
    if value < low:
        return low
    if value > high:
        return high
    return value


def is_adult(age):
    return age >= 18
'''

TEST_CALC = '''\
from calc import clamp, is_adult


def test_clamp_below():
    assert clamp(-5, 0, 10) == 0


def test_clamp_above():
    assert clamp(50, 0, 10) == 10


def test_clamp_inside():
    assert clamp(5, 0, 10) == 5


def test_adult_at_eighteen():
    assert is_adult(18)
'''

PYPROJECT = '''\
[tool.pytest.ini_options]
pythonpath = ["src"]
'''

# a gate meant for a whole suite (as a coverage floor is, which mutharness's runs switch off):
# `--min-tests=N` in the addopts fails a session of fewer tests, every one of them passing
GATE_CONFTEST = '''\
def pytest_addoption(parser):
    parser.addoption("--min-tests", type=int, default=0, help="fail a session of fewer tests")


def pytest_sessionfinish(session, exitstatus):
    wanted = session.config.getoption("min_tests")
    if exitstatus == 0 and session.testscollected < wanted:
        session.config.gate_said = (f"FAIL Required {wanted} tests not reached: "
                                    f"{session.testscollected} ran")
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if getattr(config, "gate_said", None):
        terminalreporter.write_line(config.gate_said)
'''


def gate_project(make_project: Callable[..., Project], addopts: str) -> Project:
    """The calc project with the suite's gate (`GATE_CONFTEST`) and `addopts`."""
    project = make_project()
    project.write("tests/conftest.py", GATE_CONFTEST)
    project.write("pyproject.toml", '[tool.pytest.ini_options]\npythonpath = ["src"]\n'
                  f'addopts = "{addopts}"\n')
    project.commit("a gate meant for the whole suite, not the spec's tests")
    return project


def _under_wine() -> bool:
    """Whether this Windows Python runs under Wine (its ntdll exports wine_get_version)."""
    if sys.platform != "win32":
        return False
    import ctypes

    try:
        return hasattr(ctypes.WinDLL("ntdll"), "wine_get_version")
    except OSError:
        return False


UNDER_WINE = _under_wine()


# A CI step started in the background by a non-interactive shell (`cmd &`, `nohup`) inherits
# SIGINT ignored, and every child would too: mutharness keeps an ignored signal ignored, as
# such a run asked, so the tests that deliver a real Ctrl-C would see nothing. The suite
# delivers them to children started with SIGINT's default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def wine_cannot(what: str) -> pytest.MarkDecorator:
    """Skip under the Wine kit, naming what it does not reproduce faithfully; such a test runs
    on real Windows in the GitHub workflow (docs/RELIABILITY.md lists them)."""
    return pytest.mark.skipif(
        UNDER_WINE, reason=f"not faithful under the Wine kit ({what}): tested on Windows only "
        "in the GitHub workflow",
    )


def git(cwd: Path, *args: str) -> str:
    """Run git for a fixture (never the code under test)."""
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


@dataclass
class Project:
    """A committed fixture repository."""

    root: Path

    def write(self, relative: str, text: str | bytes) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8", newline="\n")
        return path

    def commit(self, message: str = "change") -> None:
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "-m", message)

    def spec(self, name: str, document: Mapping[str, Any], commit: bool = False) -> Path:
        path = self.write(f"specs/{name}.json", json.dumps(document, indent=2))
        if commit:
            self.commit(f"spec {name}")
        return path


def git_on_path(bin_dir: Path, before: str) -> str:
    """A PATH whose first `git` is a shell script in `bin_dir` (made here) that runs the
    shell lines `before` (its command line is "$@"), then the real git."""
    real = shutil.which("git")
    assert real is not None
    bin_dir.mkdir()
    wrapper = bin_dir / "git"
    wrapper.write_text(f'#!/bin/sh\n{before}\nexec "{real}" "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    return os.pathsep.join([str(bin_dir), os.environ["PATH"]])


def logging_git(bin_dir: Path, log: Path) -> str:
    """A PATH whose `git` (in `bin_dir`) logs each command line into `log` first."""
    return git_on_path(bin_dir, f'printf "%s\\n" "$*" >> "{log}"')


def default_spec(**overrides: Any) -> dict[str, Any]:
    """A spec for the calc project: one caught mutation, one documented survivor."""
    spec: dict[str, Any] = {
        "tests": ["tests/test_calc.py"],
        "expectBaselinePass": 4,
        "mutations": [
            {
                "name": "the low bound is ignored",
                "file": "src/calc.py",
                "anchor": "    if value < low:\n        return low\n",
                "replacement": "",
            },
            {
                "name": "SURVIVOR (documented): >= to > at 18 is not pinned",
                "file": "src/calc.py",
                "anchor": "return age >= 18",
                "replacement": "return age >= 17",
                "expectCaught": False,
            },
        ],
    }
    spec.update(overrides)
    return spec


BOUNDS = default_spec(mutations=[  # three more mutations of clamp, each caught by test_calc
    {"name": "the high bound is ignored", "file": "src/calc.py",
     "anchor": "    if value > high:\n        return high\n", "replacement": ""},
    {"name": "the low bound returns the high one", "file": "src/calc.py",
     "anchor": "        return low\n", "replacement": "        return high\n"},
    {"name": "the value is returned unchanged", "file": "src/calc.py",
     "anchor": "    return value\n", "replacement": "    return value + 1\n"},
])


GIT_IDENTITY = ("[user]\n\tname = Fixture\n\temail = fixture@example.invalid\n"
                "[init]\n\tdefaultBranch = main\n")
# a CI's own variables: a test's run must not annotate or summarise the CI's job
CI_VARIABLES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "PYTEST_ADDOPTS",
                "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY")


def _isolate_git(home: Path, patch: pytest.MonkeyPatch,
                 factory: pytest.TempPathFactory) -> Path:
    (home / ".gitconfig").write_text(GIT_IDENTITY)
    patch.setenv("HOME", str(home))
    # one user's cache for the session, as a user's runs share theirs (pytest compiled once)
    patch.setenv("XDG_CACHE_HOME", str(factory.getbasetemp() / "user-cache"))
    patch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for key in CI_VARIABLES:
        patch.delenv(key, raising=False)
    return home


@pytest.fixture
def git_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An isolated HOME with a git identity, so the user's global config never leaks in."""
    return _isolate_git(tmp_path_factory.mktemp("home"), monkeypatch, tmp_path_factory)


def recording(tmp_path_factory: pytest.TempPathFactory, name: str,
              record: Callable[[Path], None]) -> Path:
    """A directory made once a session by `record(directory)` (real runs, with `git_home`'s
    isolation), for tests that only read what it holds: each takes a copy (`copy_recording`)."""
    base = tmp_path_factory.mktemp(name)
    with pytest.MonkeyPatch.context() as patch:
        _isolate_git(tmp_path_factory.mktemp(f"{name}-home"), patch, tmp_path_factory)
        record(base)
    return base


@pytest.fixture(scope="session")
def green_calc(tmp_path_factory: pytest.TempPathFactory, calc_runs: tuple[Path, Any]) -> Path:
    """Made once a session: the calc project (`repo/`) verified green twice (its real runs
    replayed, `calc_runs`), into its default results file and into `named.json` beside it;
    each test takes its own copy."""
    from inproc import in_process
    from replay import replaying

    def record(base: Path) -> None:
        project = project_copy(calc_runs[0], base)
        with replaying(calc_runs[1]):
            for args in ((), ("--json", str(base / "named.json"))):
                green = in_process(project.root, "verify", "specs/calc.json", *args)
                assert green.code == 0, green.out + green.err

    return recording(tmp_path_factory, "green-calc", record)


def _calc_repo(spec: Mapping[str, Any] | None) -> Callable[[Path], Path]:
    return lambda base: calc_project(base / "repo", spec).root


@pytest.fixture(scope="session")
def calc_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """Made once a session: the calc project (`repo/`, as committed) and the real runs of its
    verify with two baseline runs, for `replay.replaying` (each test copies the project)."""
    from replay import recorded_verify  # not at import: the mutharness-* specs' runs load this

    return recorded_verify(tmp_path_factory, "calc-runs", _calc_repo(None),
                           "specs/calc.json", "--baseline-runs", "2")


@pytest.fixture(scope="session")
def bounds_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """Made once a session: the calc project with the BOUNDS spec (three caught mutations)
    and the real runs of its verify, for `replay.replaying`."""
    from replay import recorded_verify

    return recorded_verify(tmp_path_factory, "bounds-runs", _calc_repo(BOUNDS),
                           "specs/calc.json")


def edit_json(path: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    """A test's edit of a JSON file it owns (a copied results file): `change` applied."""
    document = json.loads(path.read_text("utf-8"))
    change(document)
    path.write_text(json.dumps(document), "utf-8")
    return path


def copy_recording(recorded: Path, into: Path) -> None:
    """A test's own copy of a recording: git repositories keep their HEAD and bytes."""
    from mutharness.repo.files import copy_file  # never CopyFile2, which Wine lacks

    for entry in recorded.iterdir():
        if entry.is_dir():
            shutil.copytree(entry, into / entry.name, symlinks=True, copy_function=copy_file)
        else:
            copy_file(entry, into / entry.name)


def project_copy(recorded: Path, into: Path) -> Project:
    """A test's own copy of a recorded project (`calc_runs`, `bounds_runs`)."""
    into.mkdir(parents=True, exist_ok=True)
    copy_recording(recorded, into)
    return Project(into / "repo")


@pytest.fixture
def make_project(tmp_path: Path, git_home: Path) -> Callable[..., Project]:
    """Factory: a committed git repository holding the calc project."""

    def make(name: str = "repo", spec: Mapping[str, Any] | None = None) -> Project:
        return calc_project(tmp_path / name, spec)

    return make


def calc_project(root: Path, spec: Mapping[str, Any] | None = None) -> Project:
    """The calc project committed at `root` (git's identity: the caller's HOME)."""
    root.mkdir()
    git(root, "init", "-q")
    project = Project(root)
    project.write("pyproject.toml", PYPROJECT)
    project.write("src/calc.py", CALC)
    project.write("tests/test_calc.py", TEST_CALC)
    project.spec("calc", spec if spec is not None else default_spec())
    project.commit("initial")
    return project


NODE_FIXTURE = Path(__file__).parent / "fixtures" / "nodeproject"
NODE_CONFIG = '[node]\nimport = ["./test/setup-env.mjs"]\n'


@pytest.fixture
def node_project(tmp_path: Path, git_home: Path) -> Path:
    """The fixture Node project as a committed git repository, with its preload configured."""
    import shutil

    from mutharness.repo.files import copy_file

    root = tmp_path / "nodeproject"
    shutil.copytree(NODE_FIXTURE, root, ignore=shutil.ignore_patterns("TRUTH.json"),
                    copy_function=copy_file)  # never CopyFile2, which Wine lacks
    (root / "mutharness.toml").write_text(NODE_CONFIG, encoding="utf-8")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a node project with mutation specs")
    return root


@dataclass(frozen=True)
class Completed:
    """A finished CLI run."""

    code: int
    out: str
    err: str


def run_cli(cwd: Path, *args: str, env: Mapping[str, str] | None = None,
            timeout: float = 300) -> Completed:
    """Run the real `mutharness` command line in a child process."""
    merged = dict(os.environ if env is None else env)
    done = subprocess.run(
        [sys.executable, "-m", "mutharness", *args], cwd=cwd, env=merged,
        capture_output=True, text=True, timeout=timeout, encoding="utf-8",
    )
    return Completed(done.returncode, done.stdout, done.stderr)


@pytest.fixture
def cli() -> Callable[..., Completed]:
    """The real command line, as a child process."""
    return run_cli


@dataclass(frozen=True)
class Venv:
    """A real virtual environment made for a test."""

    root: Path
    python: Path
    site_packages: Path

    def add_pth(self, name: str, *lines: str) -> Path:
        """Write `<site-packages>/<name>.pth`; each line is a path (or an `import` line)."""
        path = self.site_packages / f"{name}.pth"
        path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
        return path


def harness_site_packages() -> Path:
    """The directory that holds this interpreter's pytest (and pytest-json-report)."""
    return Path(pytest.__file__).resolve().parent.parent


def create_venv(root: Path, system_site: bool = False, base: str = sys.executable) -> Venv:
    """A real venv at `root` (no pip, so it is quick) of the interpreter `base`."""
    flags = ["--system-site-packages"] if system_site else []
    subprocess.run(
        [base, "-m", "venv", "--without-pip", *flags, str(root)],
        check=True, capture_output=True,
    )
    python = root / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()
    return Venv(root, python, Path(site))


@pytest.fixture
def make_venv(tmp_path: Path) -> Callable[..., Venv]:
    """Factory: a real venv (no pip, so it is quick) under tmp_path.

    `with_pytest` links this interpreter's site-packages in through a `.pth` file, so the venv
    has pytest and pytest-json-report without installing anything; `tools` links another
    site-packages instead (see `tool_site`); `system_site` passes `--system-site-packages`.
    """

    def make(name: str = "venv", with_pytest: bool = True, system_site: bool = False,
             tools: Path | None = None) -> Venv:
        venv = create_venv(tmp_path / name, system_site)
        if tools is not None:
            venv.add_pth("zz_tools", str(tools))
        elif with_pytest:
            venv.add_pth("zz_harness_site", str(harness_site_packages()))
        return venv

    return make


class Recorder:
    """A verify listener that keeps every event in order, and the error messages."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.errors: list[str] = []
        self.results: list[Any] = []
        self.phases: list[str] = []  # lab.events.Phase transitions, kept apart from `events`
        self.notes: list[str] = []  # what the runners told the user (a warm runner fall-back)
        self.planned_mutations: dict[str, int] = {}  # what the run said it would make
        self.started: list[str] = []  # each mutation as it started

    def phase(self, phase: Any) -> None:
        self.phases.append(str(phase))

    def head(self, source: Any, changes: Any) -> None:
        self.events.append("head")

    def baseline_started(self, spec: Any) -> None:
        self.events.append(f"baseline {spec.id}")

    def baseline_run(self, spec: Any, number: int, runs: int) -> None:
        pass

    def baseline_finished(self, spec: Any, facts: Any, timeout_s: float) -> None:
        self.events.append(f"baseline ok {spec.id}")

    def planned(self, mutations: Any) -> None:
        self.planned_mutations = dict(mutations)

    def mutation_started(self, spec: Any, mutation: Any) -> None:
        self.started.append(f"{spec.id} {mutation.index}")

    def mutation_finished(self, spec: Any, result: Any) -> None:
        self.events.append(f"mutation {result.mutation.index}")
        self.results.append(result)

    def spec_failed(self, spec: Any, error: Any) -> None:
        self.events.append(f"failed {spec.id}")
        self.errors.append(error.message())

    def selected(self, selection: Any) -> None:
        self.events.append(f"selected {' '.join(spec.id for spec in selection.specs)}")

    def proving(self, proof: Any) -> None:
        self.events.append("proving")

    def sharded(self, plan: Any) -> None:
        self.events.append(f"shard {plan.shard}")

    def note(self, text: str) -> None:
        self.notes.append(text)


@pytest.fixture
def verify_here() -> Callable[..., tuple[Any, Recorder]]:
    """`commands.verify.execute` in this process: (RunResult, Recorder); no CLI child."""
    from mutharness.commands.prepare import Settings
    from mutharness.commands.verify import execute
    from mutharness.options import OPTIONS

    def run(project: Project, *specs: str, environ: Mapping[str, str] | None = None,
            **settings: Any) -> tuple[Any, Recorder]:
        recorder = Recorder()
        settings.setdefault("python", sys.executable)
        cli = {
            option.name: str(value) if option.name == "python" else value
            for option in OPTIONS
            if (value := settings.pop(option.parameter, None)) is not None
        }
        chosen = Settings(
            spec_paths=tuple(
                project.root / "specs" / f"{name}.json" for name in specs or ("calc",)
            ),
            start=project.root,
            cli_options=cli,
            **settings,
        )
        from inproc import kept_subreaper  # a run makes its process a subreaper: not the worker

        with kept_subreaper():
            result = execute(chosen, recorder, dict(os.environ if environ is None else environ))
        return result, recorder

    return run


# -- real installs: wheels from PyPI, venvs with the test tools, `pip install -e .` ----------

WHEELHOUSE = "MUTHARNESS_WHEELHOUSE"


def pip(*args: str | Path) -> str:
    """Run this interpreter's pip (never a project's code); fail the test with pip's words."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *map(str, args)],
        capture_output=True, text=True,
    )
    assert done.returncode == 0, f"pip {' '.join(map(str, args))} failed:\n{done.stdout}\n" \
        f"{done.stderr}"
    return done.stdout


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheels every real install of the suite uses: the directory tox filled before the
    suite ran (MUTHARNESS_WHEELHOUSE, `tests/harness/wheelhouse.py`), else downloaded from
    PyPI once a session (a plain `pytest` run)."""
    given = os.environ.get(WHEELHOUSE)
    if given:
        assert holds_every_set(Path(given)), f"{WHEELHOUSE}={given} lacks a wheel the " \
            "suite installs (this pytest's, a tool's, a dependency of mutharness): run " \
            "python tests/harness/wheelhouse.py DIR again"
        return Path(given)
    return download(tmp_path_factory.mktemp("wheelhouse"))


def install(venv: Venv, wheelhouse: Path, *args: str | Path) -> str:
    """`pip install` into `venv` from the wheelhouse only (no index, no build isolation)."""
    return pip("--python", venv.python, "install", "--quiet", "--no-index", "--find-links",
               wheelhouse, "--no-build-isolation", *args)


def _tool_site(tmp_path_factory: pytest.TempPathFactory, wheelhouse: Path, name: str,
               *packages: str) -> Path:
    venv = create_venv(tmp_path_factory.mktemp(name) / "venv")
    install(venv, wheelhouse, *packages)
    return venv.site_packages


@pytest.fixture(scope="session")
def tool_site(tmp_path_factory: pytest.TempPathFactory, wheelhouse: Path) -> Path:
    """site-packages of a venv holding this pytest, pytest-json-report, xdist, pytest-cov and
    the build backends (setuptools, hatchling), all really installed; venvs link it in."""
    return _tool_site(tmp_path_factory, wheelhouse, "tools", f"pytest=={pytest.__version__}",
                      *TOOLS)


def monitoring_python() -> str | None:
    """An interpreter on this machine that has `sys.monitoring` (CPython 3.12 on): this one,
    one on PATH, or one installed beside this one (pyenv, uv); None when there is none."""
    if sys.version_info >= (3, 12):
        return sys.executable
    found = [shutil.which(f"python3.{minor}") for minor in range(15, 11, -1)]
    # pyenv's versions (or uv's): this interpreter's siblings, and those under PYENV_ROOT
    # (the suite runs with a HOME of its own, so not looked for there)
    roots = {Path(sys.base_prefix).parent}
    if os.environ.get("PYENV_ROOT"):
        roots.add(Path(os.environ["PYENV_ROOT"]) / "versions")
    found += sorted((str(path) for root in roots for path in root.glob("*3.1[2-9]*/bin/python3")),
                    reverse=True)
    for python in filter(None, found):
        done = subprocess.run([python, "-c", "import sys; sys.monitoring"],
                              capture_output=True)
        if done.returncode == 0:  # (a pyenv shim of a version not selected exits 127)
            return python
    return None


@pytest.fixture(scope="session")
def monitoring_venv(tmp_path_factory: pytest.TempPathFactory, wheelhouse: Path) -> Venv:
    """A venv of an interpreter with `sys.monitoring`, holding this pytest and
    pytest-json-report (pure-Python wheels from the wheelhouse)."""
    python = monitoring_python()
    if python is None:
        pytest.skip("no CPython 3.12 or newer on this machine (PATH, pyenv)")
    venv = create_venv(tmp_path_factory.mktemp("monitoring") / "venv", base=python)
    install(venv, wheelhouse, f"pytest=={pytest.__version__}", "pytest-json-report")
    return venv


@pytest.fixture(scope="session")
def floor_site(tmp_path_factory: pytest.TempPathFactory, wheelhouse: Path) -> Path:
    """site-packages of a venv holding the oldest pytest mutharness supports."""
    return _tool_site(tmp_path_factory, wheelhouse, "floor", *FLOOR_TOOLS, "setuptools")
