"""Every option of every command declared once: the settings (name, default, one-line doc) and
their effective values, and the command-line flags that are no setting (`FLAGS`).

Values come from, in rising precedence: the defaults here; a project config file (`--config
FILE`, else `mutharness.toml` at the repository root, else `[tool.mutharness]` in
`pyproject.toml`); the command line. The results record the effective values and where each
came from, and the evidence's re-derive command repeats every value that is not the default.
"""

from __future__ import annotations

import math
import re
import stat
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from difflib import get_close_matches
from enum import StrEnum
from pathlib import Path
from typing import Any, Final, Generic, TypeVar, cast

from mutharness.errors import ConfigProblem
from mutharness.paths import repo_path
from mutharness.runners.node.rules import split_conditions

CONFIG_FILE = "mutharness.toml"
PYPROJECT = "pyproject.toml"
MAX_CONFIG_BYTES = 1024 * 1024
# node options a project may add to every run: none of them selects tests, filters them, ends
# a run early or changes how results are reported
NODE_OPTIONS_ALLOWED = frozenset({
    "--experimental-vm-modules", "--experimental-strip-types", "--experimental-test-coverage",
    "--no-warnings", "--enable-source-maps", "--no-deprecation", "--trace-warnings",
    "--trace-uncaught", "--experimental-detect-module", "--experimental-require-module",
    "--expose-gc", "--stack-trace-limit=100",
})


class Kind(StrEnum):
    """The type of an option's value."""

    FLOAT = "float"
    INT = "int"
    TEXT = "text"
    PATH = "path"
    TEXTS = "texts"  # a list of strings
    FLAG = "flag"  # on or off: `--X` turns it on, `--no-X` off (over the project config)


class Heading(StrEnum):
    """Where `--help` lists an option, in this order."""

    SELECTION = "Which specs and mutations"
    RUN = "How it runs"
    OUTPUTS = "What it writes"
    SETTINGS = "Settings (each but --config also a project config key)"
    PYTEST = "pytest specs only (each also a project config key)"
    NODE = "node specs only (each also a key of the project config's [node] table)"


TEST_COMMANDS = frozenset({"verify", "baseline", "redfirst", "suggest"})  # every setting applies


class Source(StrEnum):
    """Where an effective value came from."""

    DEFAULT = "default"
    CONFIG = "config"
    CLI = "command line"
    PACKAGE = "package.json"  # node's preloads, from its `test` script: the tree gives them
    LAYOUT = "layout"  # where the specs are, found in the tree: the tree gives it again
    ACTIVE = "VIRTUAL_ENV"  # the tests' interpreter: the active virtual environment's
    DOTVENV = ".venv"  # the tests' interpreter: the repository's .venv
    POINTED = ".venv file"  # the tests' interpreter: the environment a .venv redirect file names
    EXTENDED = "extended"  # the tests' interpreter: the environment `uv run --with` extends


# values found where the run is, not given: no re-derive flag repeats them (the same commit,
# or the re-deriver's own machine, gives them again)
FOUND: Final = frozenset({Source.PACKAGE, Source.LAYOUT, Source.ACTIVE, Source.DOTVENV,
                          Source.POINTED, Source.EXTENDED})
_FOUND_INTERPRETER: Final = {
    Source.ACTIVE: "the active virtual environment, VIRTUAL_ENV",
    Source.DOTVENV: "the repository's .venv",
    Source.POINTED: "the environment the repository's .venv file names",
    Source.EXTENDED: "the environment `uv run --with` extends",
}

T = TypeVar("T", covariant=True)  # an Option[tuple[str, ...]] is an Option[Sequence[str]]


@dataclass(frozen=True)
class Option(Generic[T]):
    """One setting: its name (the CLI flag and the config key), default and doc; `T` is the
    type of its value, which `Options[option]` gives."""

    name: str  # `timeout-floor`; a dotted name `node.import` is the key `import` of `[node]`
    kind: Kind
    default: T
    doc: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()  # a TEXT option's allowed values (none: any)
    commands: frozenset[str] = TEST_COMMANDS
    heading: Heading = Heading.SETTINGS  # the runner's own heading for a runner's own setting

    @property
    def switches(self) -> tuple[str, ...]:
        """What the command line takes: the flag (and a flag option's `--no-X`)."""
        return (self.flag, self.negation) if self.kind is Kind.FLAG else (self.flag,)

    @property
    def flag(self) -> str:
        """The command-line flag: `--node-import` for `node.import`."""
        return "--" + self.name.replace(".", "-")

    @property
    def negation(self) -> str:
        """A flag option's off switch: `--no-strict-skips`."""
        return "--no-" + self.flag[2:]

    @property
    def parameter(self) -> str:
        """The click parameter name."""
        return self.name.replace(".", "_").replace("-", "_")


PYTHON: Final = Option[str | None](
    "python", Kind.PATH, None,
    "Interpreter that runs pytest (e.g. a project venv's python); it needs pytest 7.4 or "
    "newer, nothing else [default: the active virtual environment's (VIRTUAL_ENV), else "
    "the repository's .venv (a directory, or a file naming one, as tox writes it), else the "
    "interpreter running mutharness].",
    heading=Heading.PYTEST)
NODE: Final = Option[str](
    "node", Kind.PATH, "node",
    "The node executable that runs node specs (20 or newer) [default: node on PATH].",
    heading=Heading.NODE)
LOCK_TIMEOUT: Final = Option[float](
    "lock-timeout", Kind.FLOAT, 60.0,
    "Seconds to wait for another run on this repository.", minimum=0)
TIMEOUT_FLOOR: Final = Option[float](
    "timeout-floor", Kind.FLOAT, 20.0,
    "Minimum per-mutation timeout in seconds.", minimum=1)
TIMEOUT_FACTOR: Final = Option[float](
    "timeout-factor", Kind.FLOAT, 3.0,
    "Per-mutation timeout = max(floor, factor x baseline + constant).", minimum=1)
TIMEOUT_CONSTANT: Final = Option[float](
    "timeout-constant", Kind.FLOAT, 10.0,
    "Seconds added to factor x baseline.", minimum=0)
BASELINE_TIMEOUT: Final = Option[float](
    "baseline-timeout", Kind.FLOAT, 900.0,
    "Timeout of each baseline run in seconds.", minimum=1)
BASELINE_RUNS: Final = Option[int](
    "baseline-runs", Kind.INT, 1,
    "Run the baseline N times; a test that is not stable across them aborts (CI: 3).",
    minimum=1, maximum=20)
FIRST_FAILURE: Final = Option[bool](
    "first-failure", Kind.FLAG, True,
    "Stop each mutant's run at its first failing test, the tests in their own order "
    "(pytest specs without xdist; node specs once the first failing test file has ended, "
    "the files one at a time; a mutation with killedBy keeps full counts); the "
    "evidence then names the killing test without full counts. --no-first-failure: "
    "every mutant runs every test (full counts).")
PYTEST_RUNNER: Final = Option[str](
    "pytest-runner", Kind.TEXT, "forked",
    "How pytest runs each mutant. `forked`, the default (where fork exists): a server that "
    "has imported pytest, nothing of the project, forks a child per run, which imports the "
    "project after the mutant was written and ends as a process ends; a test set's "
    "baselines run in a new interpreter until a first forked run of it gives the same facts "
    "(start-up code the server cannot vouch for, or a difference, makes every run a new "
    "interpreter, with a note). `subprocess`: a new `python -m pytest` per run (elsewhere "
    "the default).",
    choices=("forked", "subprocess"), heading=Heading.PYTEST)
PYTEST_ADDOPTS: Final = Option[str | None](
    "pytest-addopts", Kind.TEXT, None,
    "Replaces the project's pytest `addopts` in every run (for options that fail a subset "
    "of the suite for reasons unrelated to it; pytest-cov needs none: coverage is off in "
    "every run).",
    heading=Heading.PYTEST)
PYTEST_DROP_ADDOPTS: Final = Option[tuple[str, ...]](
    "pytest-drop-addopts", Kind.TEXTS, (),
    "Options removed by name from the project's pytest `addopts` in every run, each "
    "with its value however written (`--min-tests=90`, `--min-tests 90`, "
    "`-kexpr`; pytest's own parser says whether a name takes one); the rest of the "
    "addopts stay. A name the addopts do not carry is refused. `-p` cannot be "
    "dropped (pytest loads those plugins first): use pytest-addopts.",
    heading=Heading.PYTEST)
POLICY_NAME: Final = "platform-skips.json"  # the platform skip policy's file, beside the specs
SPECS_DIR: Final = Option[str](
    "specs-dir", Kind.PATH, "specs",
    "Where a command given no SPEC finds the specs (every *.json there), repo-relative; "
    "without it, specs/, else the original harness's test/mutations/ when that holds specs.")
PLATFORM_SKIPS: Final = Option[str](
    "platform-skips", Kind.PATH, f"specs/{POLICY_NAME}",
    "The reviewed platform skip policy, repo-relative (absent: no skip is approved); "
    "without it, platform-skips.json beside the specs (specs-dir).")
SINCE_RECORDS: Final = Option[str](
    "since-records", Kind.PATH, "evidence",
    "Where --since reads each spec's record of its last run (the evidence facts "
    "<spec-id>.json, as committed at HEAD): a change to a file that run imported selects "
    "the spec; a spec without a record is always selected.")
STRICT_SKIPS: Final = Option[bool](
    "strict-skips", Kind.FLAG, False,
    "Refuse any skipped or todo test the platform skip policy does not list.")
NODE_IMPORT: Final = Option[tuple[str, ...]](
    "node.import", Kind.TEXTS, (),
    "Modules preloaded with `node --import` in every run, baseline and mutants alike "
    "(e.g. ./test/setup-env.mjs).",
    heading=Heading.NODE)
NODE_REQUIRE: Final = Option[tuple[str, ...]](
    "node.require", Kind.TEXTS, (),
    "Modules preloaded with `node --require` in every run.",
    heading=Heading.NODE)
NODE_OPTIONS: Final = Option[tuple[str, ...]](
    "node.options", Kind.TEXTS, (),
    "Extra node options for every run, from a fixed allow-list (docs/node.md), and export "
    "conditions (`--conditions=NAME`, `-C NAME`) [default: the test script's conditions].",
    heading=Heading.NODE)
NODE_CONCURRENCY: Final = Option[int](
    "node.concurrency", Kind.INT, 1,
    "Test files node runs at once (`--test-concurrency`). Above 1, the baseline still runs "
    "one file at a time, then its tests run once at N; the mutants run at N only when every "
    "test's outcome matched (else one at a time, with a note): raise it when the test files "
    "share no port, file or database.",
    minimum=1, maximum=64, heading=Heading.NODE)
OPTIONS: Final[tuple[Option[Any], ...]] = (  # in the order --help lists them
    PYTHON, NODE, LOCK_TIMEOUT, TIMEOUT_FLOOR, TIMEOUT_FACTOR, TIMEOUT_CONSTANT,
    BASELINE_TIMEOUT, BASELINE_RUNS, FIRST_FAILURE, PYTEST_RUNNER, PYTEST_ADDOPTS,
    PYTEST_DROP_ADDOPTS, SPECS_DIR, PLATFORM_SKIPS, SINCE_RECORDS, STRICT_SKIPS, NODE_IMPORT,
    NODE_REQUIRE, NODE_OPTIONS, NODE_CONCURRENCY,
)
BY_NAME: Mapping[str, Option[Any]] = {option.name: option for option in OPTIONS}


class FlagKind(StrEnum):
    """The type of a command-line flag's value."""

    SWITCH = "switch"  # on when given
    TEXT = "text"
    TEXTS = "texts"  # given once per value
    FILE = "file"
    DIRECTORY = "directory"
    TEMPLATES = "templates"  # a directory that exists
    PATH = "path"  # a file or a directory, as the command takes it
    COUNT = "count"  # an integer in [minimum, maximum]


@dataclass(frozen=True)
class Flag:
    """A command-line flag that is no setting (the project config cannot set it), declared
    once: the commands that take it, where `--help` lists it, its help (a command may word
    it its own way) and its default."""

    switches: tuple[str, ...]
    parameter: str  # the click parameter name
    kind: FlagKind
    commands: frozenset[str]
    heading: Heading
    help: str
    metavar: str | None = None
    minimum: int | None = None
    maximum: int | None = None
    default: Any = None
    required: bool = False
    helps: tuple[tuple[str, str], ...] = ()  # (command, its own help)
    defaults: tuple[tuple[str, Any], ...] = ()  # (command, its own default: shown in --help)

    def help_for(self, command: str) -> str:
        """The help `command` shows for this flag."""
        return dict(self.helps).get(command, self.help)

    def default_for(self, command: str) -> Any:
        """The default of this flag in `command`."""
        return dict(self.defaults).get(command, self.default)


_SINCE = ("Only the specs affected by changes since REV (committed, uncommitted and untracked): a "
          "spec whose JSON, tests or targets changed; every spec when shared test infrastructure "
          "changed (conftest.py, a config file, a helper beside the tests, the skip policy, a "
          "node preload).")
_RUN_RESULTS = frozenset({"verify", "render", "merge"})  # what has a run's results to report
FLAGS: Final[tuple[Flag, ...]] = (  # in the order --help lists them under their headings
    Flag(("--since",), "since", FlagKind.TEXT,
         frozenset({"verify", "baseline", "check", "suggest"}),
         Heading.SELECTION, _SINCE + " [default specs: every spec in specs-dir]", metavar="REV",
         helps=(("check", _SINCE),
                ("suggest", "The revision the change starts from: its lines changed since "
                            "(committed, uncommitted, untracked) get the candidates. "
                            "Required, unless --commit names the change."))),
    Flag(("--all",), "all_specs", FlagKind.SWITCH, frozenset({"baseline"}), Heading.SELECTION,
         "Every spec in specs-dir (specs/, else test/mutations/): what naming no SPEC "
         "measures too, as verify and check take them."),
    Flag(("--shard",), "shard_text", FlagKind.TEXT, frozenset({"verify"}), Heading.SELECTION,
         "Run only shard K of N (1-based) of the mutations, for a CI matrix; `mutharness "
         "merge` joins the shards' results files.", metavar="K/N"),
    Flag(("--base",), "rev", FlagKind.TEXT, frozenset({"redfirst"}), Heading.SELECTION,
         "The commit before the fix: every non-test file changed since is reverted.",
         metavar="REV", required=True),
    Flag(("--test",), "tests", FlagKind.TEXTS, frozenset({"redfirst", "suggest"}),
         Heading.SELECTION,
         "A test file or id to run [default: the SPECs' tests, else the test files changed "
         "since REV].", metavar="PATH_OR_ID",
         helps=(("suggest", "A test file or id to run the candidates against (repeatable) "
                            "[default: the tests of the specs whose mutations cover a changed "
                            "file, else of those whose evidence records loading one, else the "
                            "project's tests (tests/, test/); with the test files the change "
                            "touched]."),)),
    Flag(("--expect-red",), "expect_red", FlagKind.TEXTS, frozenset({"redfirst"}),
         Heading.SELECTION, "A test (or file) that must fail with the fix reverted.",
         metavar="ID"),
    Flag(("--keep",), "keep", FlagKind.TEXTS, frozenset({"redfirst"}), Heading.SELECTION,
         "A file or directory on the tests' side: never reverted (a helper outside a tests/ "
         "directory).", metavar="PATH"),
    Flag(("--commit",), "commit_rev", FlagKind.TEXT, frozenset({"merge", "suggest"}),
         Heading.SELECTION,
         "The commit the shards ran at, when it is not HEAD (never with --evidence: evidence "
         "is written only of the tree it goes into).", metavar="REV",
         helps=(("suggest", "That one commit's change alone (its parent to it, not a merge), "
                            "its lines followed to where they are at HEAD, where it runs: "
                            "instead of --since, which takes every later commit too."),)),
    Flag(("--all-lines",), "all_lines", FlagKind.TEXTS, frozenset({"suggest"}),
         Heading.SELECTION, "Count every line of this source file as changed (repeatable).",
         metavar="FILE"),
    Flag(("--max",), "most", FlagKind.COUNT, frozenset({"suggest"}), Heading.SELECTION,
         "Keep at most N candidates: each changed function's most valuable first (a "
         "boundary moved, a comparison inverted, a call bypassed, a character class narrowed "
         "before a guard removed or a return made neutral), one per line, at most two of an "
         "operator.", metavar="N", minimum=1, maximum=200, default=7),
    Flag(("--allow-dirty",), "allow_dirty", FlagKind.SWITCH,
         frozenset({"verify", "baseline", "redfirst"}), Heading.SELECTION,
         "Include uncommitted changes (their bytes) instead of refusing a dirty tree."),
    Flag(("--fail-fast",), "fail_fast", FlagKind.SWITCH, frozenset({"verify"}), Heading.RUN,
         "Stop at the first unexpected result."),
    Flag(("-j", "--jobs"), "jobs", FlagKind.COUNT, frozenset({"verify", "suggest"}), Heading.RUN,
         "Run the mutations in N worker processes, each in its own workspace; the console, "
         "results and evidence are those of -j 1.", metavar="N", minimum=1, maximum=64, default=1),
    Flag(("--repeat",), "repeat", FlagKind.COUNT, frozenset({"baseline"}), Heading.RUN,
         "Run each test set N times; a test whose outcome differs is unstable [default: "
         "baseline-runs].", metavar="N", minimum=1, maximum=20),
    Flag(("--load-error-is-red",), "load_error_is_red", FlagKind.SWITCH,
         frozenset({"redfirst"}), Heading.RUN,
         "Count a test whose file cannot load without the fix as red."),
    Flag(("--suggest",), "suggest", FlagKind.SWITCH, frozenset({"check"}), Heading.RUN,
         "Propose a repaired anchor for a drifted one."),
    Flag(("--diff",), "diff", FlagKind.SWITCH, frozenset({"check"}), Heading.OUTPUTS,
         "Show each mutation as a unified diff of its file (nothing runs)."),
    Flag(("--no-progress",), "no_progress", FlagKind.SWITCH, frozenset({"verify", "suggest"}),
         Heading.RUN,
         "No live status line on a terminal: plain lines only, as in a pipe or CI."),
    Flag(("--color",), "force_color", FlagKind.SWITCH, frozenset({"verify", "suggest"}),
         Heading.RUN,
         "Colour the output even when it is not a terminal or NO_COLOR is set."),
    Flag(("--json",), "json_path", FlagKind.FILE, frozenset({"verify", "redfirst", "merge"}),
         Heading.OUTPUTS, "Results file [default: .mutharness/results.json].",
         helps=(("redfirst", "Results file [default: .mutharness/redfirst.json]."),
                ("merge", "The merged results file.")),
         defaults=(("merge", Path(".mutharness/results.json")),)),
    Flag(("--evidence",), "evidence_dir", FlagKind.DIRECTORY,
         frozenset({"verify", "redfirst", "merge", "evidence-check"}), Heading.OUTPUTS,
         "Also render Markdown evidence into this directory.",
         helps=(("redfirst", "Add a 'Red first' section to each SPEC's evidence document in "
                             "this directory (rendered by verify --evidence before)."),
                ("evidence-check", "Evidence directory [default: evidence/ at the repository "
                                   "root]."))),
    Flag(("--out",), "out", FlagKind.PATH, frozenset({"render", "suggest"}), Heading.OUTPUTS,
         "Directory to write the evidence into [default: evidence, unless only reports "
         "(--junit, --summary, --report-*) are asked for].",
         helps=(("suggest", "The draft spec's file [default: .mutharness/suggest/draft.json]."),)),
    Flag(("--template-dir",), "template_dir", FlagKind.TEMPLATES,
         frozenset({"verify", "redfirst", "render", "merge"}), Heading.OUTPUTS,
         "Templates that override the packaged ones (spec.md.j2, index.md.j2)."),
    Flag(("--junit",), "junit_path", FlagKind.FILE, _RUN_RESULTS, Heading.OUTPUTS,
         "Also write JUnit XML (one test case per mutation) to this file."),
    Flag(("--summary",), "summary_path", FlagKind.FILE, _RUN_RESULTS, Heading.OUTPUTS,
         "Also write a short Markdown summary (a table per spec) to this file."),
    Flag(("--report-stryker",), "stryker_path", FlagKind.FILE, _RUN_RESULTS, Heading.OUTPUTS,
         "Also write the mutation report as JSON (mutation-testing-report-schema, "
         "schemaVersion 2)."),
    Flag(("--report-html",), "html_path", FlagKind.FILE, _RUN_RESULTS, Heading.OUTPUTS,
         "Also write the mutation report as one self-contained HTML page "
         "(mutation-testing-elements, inlined)."),
    Flag(("--config",), "config", FlagKind.FILE, TEST_COMMANDS, Heading.SETTINGS,
         "Project config file (TOML) [default: mutharness.toml at the repository root, else "
         "[tool.mutharness] in pyproject.toml]."),
)
HEADINGS: Final[Mapping[str, Heading]] = {  # click parameter name -> its heading
    **{flag.parameter: flag.heading for flag in FLAGS},
    **{option.parameter: option.heading for option in OPTIONS},
}


@dataclass(frozen=True)
class Options:
    """The effective value of every option, and where it came from."""

    values: Mapping[str, Any]
    sources: Mapping[str, Source]
    config_file: str | None = None  # the project config file read (as named to the user)

    def __getitem__(self, option: Option[T]) -> T:
        """The effective value of `option`, in its type."""
        if not isinstance(option, Option):
            raise TypeError(f"options are read by their declaration (options.{option!r}?)")
        return cast(T, self.values[option.name])

    def mutation_timeout(self, baseline_s: float) -> float:
        """A mutant run's limit: max(floor, factor x baseline + constant), to 0.1 s."""
        scaled = self[TIMEOUT_FACTOR] * baseline_s + self[TIMEOUT_CONSTANT]
        return float(round(max(self[TIMEOUT_FLOOR], scaled), 1))

    def changed(self) -> dict[str, Any]:
        """Every option whose effective value is not its default, in declaration order."""
        return {
            option.name: self.values[option.name] for option in OPTIONS
            if self.values[option.name] != option.default
        }

    def recorded(self) -> dict[str, Any]:
        """The results' record: every value, its source, and the config file."""
        return {
            "values": {name: _jsonable(value) for name, value in self.values.items()},
            "sources": {name: source.value for name, source in self.sources.items()},
            "config_file": self.config_file,
        }

    def taking(self, values: Mapping[str, Any], source: Source) -> Options:
        """These options with `values` (by option name) in force, from `source`."""
        return Options({**self.values, **values},
                       {**self.sources, **{name: source for name in values}}, self.config_file)

    def flags(self) -> list[str]:
        """Command-line words that reproduce every value that is not the default, and every
        value the command line set (the project config may say otherwise): a flag as `--X`
        or `--no-X`."""
        words: list[str] = []
        changed = self.changed()
        for option in OPTIONS:
            value = self.values[option.name]
            source = self.sources.get(option.name)
            if (option.name not in changed and source is not Source.CLI) or (
                    source in FOUND):  # the commit or the machine gives it again
                continue
            if option.kind is Kind.FLAG:
                words.append(option.flag if value else option.negation)
            elif option.kind is Kind.TEXTS:
                for item in value:
                    words += [option.flag, str(item)]
            else:
                words += [option.flag, _word(value)]
        return words


def rederive_flags(settings: Mapping[str, Any]) -> list[str]:
    """The words that reproduce a recorded run's settings (its results' `values` and their
    `sources`) with this mutharness, whatever the defaults were when it ran: an on/off
    option the record lacks was off (each was added off: `first-failure` before it became
    the default); a value missing or not of its option's type counts as this default."""
    values = settings.get("values")
    sources = settings.get("sources")
    recorded = values if isinstance(values, Mapping) else {}
    given = sources if isinstance(sources, Mapping) else {}
    chosen: dict[str, Any] = {}
    where: dict[str, Source] = {}
    for option in OPTIONS:
        value = recorded.get(option.name, False if option.kind is Kind.FLAG else option.default)
        try:
            chosen[option.name] = _checked(option, _jsonable(value), "the results")
        except ConfigProblem:
            chosen[option.name] = option.default
        if given.get(option.name) in {source.value for source in FOUND}:  # found again
            chosen[option.name] = option.default
        where[option.name] = (Source.CLI if given.get(option.name) == Source.CLI.value
                              else Source.DEFAULT)
    return Options(chosen, where).flags()


ORIGINAL_LAYOUT = "test/mutations"  # where the harness this spec format comes from keeps them


def laid_out(options: Options, is_dir: Callable[[str], bool]) -> Options:
    """These options with the specs' directory found in the tree (`is_dir`, repo-relative)
    when no setting names it: `specs/`, else `test/mutations/` where it exists; and the
    platform skip policy beside them when no setting names that."""
    found = options[SPECS_DIR]
    taken: dict[str, Any] = {}
    if options.sources[SPECS_DIR.name] is Source.DEFAULT and not is_dir(found) and (
            is_dir(ORIGINAL_LAYOUT)):
        found = taken[SPECS_DIR.name] = ORIGINAL_LAYOUT
    if options.sources[PLATFORM_SKIPS.name] is Source.DEFAULT and found != SPECS_DIR.default:
        taken[PLATFORM_SKIPS.name] = f"{found}/{POLICY_NAME}"
    return options.taking(taken, Source.LAYOUT) if taken else options


def found_notes(options: Options) -> tuple[str, ...]:
    """What the user is told of settings found rather than given: node's preloads from
    `package.json`, the tests' interpreter from a virtual environment."""
    told = []
    words = [word for option, flag in ((NODE_IMPORT, "--import"), (NODE_REQUIRE, "--require"))
             if options.sources.get(option.name) is Source.PACKAGE
             for module in options[option] for word in (flag, module)]
    if words:
        told.append(f"node preloads from package.json's test script: {' '.join(words)} (a "
                    "[node] import or require setting in the project config replaces them)")
    source = options.sources.get(PYTHON.name)
    if source in _FOUND_INTERPRETER:
        told.append(f"the tests run with {options[PYTHON]} ({_FOUND_INTERPRETER[source]}; "
                    "--python chooses another)")
    return tuple(told)


def config_problem(file: str, key: str, what: str) -> ConfigProblem:
    """A config problem that names the options the file could have named."""
    return ConfigProblem(file, ((key, what),), tuple(BY_NAME))


def did_you_mean(key: str) -> str:
    """` (did you mean NAME?)` for the declared option nearest `key` ("" when none is near)."""
    near = get_close_matches(key, list(BY_NAME), n=1)
    return f" (did you mean {near[0]}?)" if near else ""


def _word(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _jsonable(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _checked(option: Option[Any], value: Any, file: str) -> Any:
    """A config file's value for `option`, in the option's type (or a ConfigProblem)."""
    def bad(what: str) -> ConfigProblem:
        return config_problem(file, option.name, what)

    if option.kind is Kind.TEXTS:
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise bad("must be an array of strings")
        problems = _item_problems(option, tuple(value))
        if problems:
            raise ConfigProblem(file, tuple((option.name, what) for what in problems),
                                tuple(BY_NAME))
        return tuple(value)
    if option.kind is Kind.FLAG:
        if not isinstance(value, bool):
            raise bad("must be true or false")
        return value
    if option.kind in (Kind.TEXT, Kind.PATH):
        if not isinstance(value, str) or not value:
            raise bad("must be a non-empty string")
        if option.choices and value not in option.choices:
            raise bad(f"must be one of {', '.join(option.choices)}, not {value!r}")
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise bad("must be a number")
    if option.kind is Kind.INT and not isinstance(value, int):
        raise bad("must be an integer")
    number = float(value) if option.kind is Kind.FLOAT else value
    return within(option, number, bad)


def within(option: Option[Any], value: Any, bad: Any) -> Any:
    """`value` when it is a finite number inside the option's range, else `bad(reason)`
    raised (a NaN passes every comparison: a timeout of `nan` would be no timeout)."""
    if not math.isfinite(value):
        raise bad(f"must be a finite number, not {value}")
    if option.minimum is not None and value < option.minimum:
        raise bad(f"must be at least {_word(option.minimum)}, not {value}")
    if option.maximum is not None and value > option.maximum:
        raise bad(f"must be at most {_word(option.maximum)}, not {value}")
    return value


def _flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and name in ("node", "pytest"):
            out |= _flatten(value, f"{name}.")
        else:
            out[name] = value
    return out


ConfigReader = Callable[[str], bytes | None]
"""A repo-relative config file's bytes as the run will hold them (None: there is none)."""


def _regular_bytes(path: Path, shown: str, follow: bool) -> bytes | None:
    """A regular file's bytes (None when there is none); a link is followed only when
    `follow` (a file the user named), else refused."""
    try:
        info = path.stat() if follow else path.lstat()
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        raise config_problem(shown, "", "is a symlink: a project config is read from a regular "
                                       "file only (never through a link)")
    if not stat.S_ISREG(info.st_mode):
        raise config_problem(shown, "", "is not a regular file")
    if info.st_size > MAX_CONFIG_BYTES:
        raise config_problem(shown, "", f"is larger than {MAX_CONFIG_BYTES} bytes")
    return path.read_bytes()


def working_tree(root: Path) -> ConfigReader:
    """The config files of the working tree at `root`, never read through a link."""
    return lambda name: _regular_bytes(root / name, name, follow=False)


def _parse_toml(data: bytes | None, shown: str) -> dict[str, Any] | None:
    """A TOML document (None when there is no file)."""
    if data is None:
        return None
    if len(data) > MAX_CONFIG_BYTES:
        raise config_problem(shown, "", f"is larger than {MAX_CONFIG_BYTES} bytes")
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise config_problem(shown, "", f"cannot be read as TOML: {error}") from None


def read_config(
    root: Path, explicit: Path | None, reader: ConfigReader | None = None,
) -> tuple[dict[str, Any], str | None]:
    """The project's option values (checked) and the file they came from.

    `explicit` (`--config`) may be anywhere; else `mutharness.toml`, else the
    `[tool.mutharness]` table of `pyproject.toml`, as `reader` gives them (by default the
    working tree at `root`; a run reads HEAD's bytes, as its workspace holds them).
    """
    if explicit is not None:
        document = _parse_toml(_regular_bytes(explicit.absolute(), str(explicit), follow=True),
                               str(explicit))
        if document is None:
            raise config_problem(str(explicit), "", "does not exist")
        return _values(document, str(explicit)), str(explicit)
    read = reader if reader is not None else working_tree(root)
    document = _parse_toml(read(CONFIG_FILE), CONFIG_FILE)
    if document is not None:
        return _values(document, CONFIG_FILE), CONFIG_FILE
    document = _parse_toml(read(PYPROJECT), PYPROJECT)
    tool = document.get("tool") if document is not None else None
    table = tool.get("mutharness") if isinstance(tool, dict) else None
    if table is None:
        return {}, None
    shown = f"{PYPROJECT} [tool.mutharness]"
    if not isinstance(table, dict):
        raise config_problem(shown, "", "is not a table")
    return _values(table, shown), shown


def _values(table: Mapping[str, Any], file: str) -> dict[str, Any]:
    """A config table's values, checked; every problem of the table at once."""
    values: dict[str, Any] = {}
    problems: list[tuple[str, str]] = []
    for name, value in sorted(_flatten(table).items()):
        if name not in BY_NAME:
            problems.append((name, f"is not a mutharness option{did_you_mean(name)}"))
            continue
        try:
            values[name] = _checked(BY_NAME[name], value, file)
        except ConfigProblem as problem:
            problems.extend(problem.problems)
    if problems:
        raise ConfigProblem(file, tuple(problems), tuple(BY_NAME))
    return values


def project_inputs(options: Options, runner: str) -> tuple[str, ...]:
    """Repo-relative files these options make part of every run of `runner`: the project
    config file, and node's preload modules (a package name is no file)."""
    named = [options.config_file.split(" [", 1)[0]] if options.config_file else []
    if runner == "node":
        named += [module for module in (*options[NODE_IMPORT], *options[NODE_REQUIRE])
                  if module.startswith(("./", "../")) or (
                      "/" in module and not module.startswith("@"))]  # @scope/pkg: a package
    return tuple(found for name in named if (found := repo_path(name)) is not None)


def defaults() -> Options:
    """Every option at its default."""
    return resolve({}, {}, None)


def resolve(cli: Mapping[str, Any], config: Mapping[str, Any], config_file: str | None) -> Options:
    """The effective options: a CLI value (not None, not empty) wins over the config file's,
    which wins over the default."""
    values: dict[str, Any] = {}
    sources: dict[str, Source] = {}
    for option in OPTIONS:
        given = cli.get(option.name)
        if given is not None and given != ():  # a flag's False: --no-X
            values[option.name], sources[option.name] = given, Source.CLI
        elif option.name in config:
            values[option.name], sources[option.name] = config[option.name], Source.CONFIG
        else:
            values[option.name], sources[option.name] = option.default, Source.DEFAULT
    problems: dict[str, list[tuple[str, str]]] = {}  # where -> (key, what): every one at once
    for option in (NODE_OPTIONS, PYTEST_DROP_ADDOPTS):
        where = option.flag if sources[option.name] is Source.CLI else (config_file or "")
        problems.setdefault(where, []).extend(
            (option.name, what) for what in _item_problems(option, values[option.name]))
    for where, found in problems.items():
        if found:
            raise ConfigProblem(where, tuple(found), tuple(BY_NAME))
    return Options(values, sources, config_file)


_OPTION_NAME = re.compile(r"-[A-Za-z]|--[A-Za-z0-9][A-Za-z0-9_-]*")  # pytest's option names


def _item_problems(option: Option[Any], items: tuple[str, ...]) -> list[str]:
    """What is wrong with each item of a list option that takes only some values: node
    options off the allow-list, names pytest-drop-addopts cannot drop."""
    if option is NODE_OPTIONS:  # export conditions take any name (`--conditions=NAME`)
        allowed = ", ".join([*sorted(NODE_OPTIONS_ALLOWED), "--conditions=NAME", "-C NAME"])
        return [f"{item!r} is not allowed (allowed: {allowed})"
                for item in split_conditions(items)[1] if item not in NODE_OPTIONS_ALLOWED]
    if option is PYTEST_DROP_ADDOPTS:
        return [f"{item!r} {problem}" for item in items if (problem := _not_droppable(item))]
    return []


def _not_droppable(name: str) -> str:
    """Why `name` cannot be dropped from pytest's addopts ("" when it can)."""
    if name in ("-p", "--plugin"):
        return ("cannot be dropped: pytest loads `-p` plugins before it reads any other "
                "option; replace the addopts with pytest-addopts instead")
    if not _OPTION_NAME.fullmatch(name):
        return "is not an option name (`--cov-fail-under`, `-x`: the name alone, no value)"
    return ""
