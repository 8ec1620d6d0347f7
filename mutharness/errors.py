"""Typed errors that carry their facts, and the exit codes they map to."""

from __future__ import annotations

import errno
from dataclasses import dataclass
from enum import IntEnum
from types import MappingProxyType
from typing import Final

from mutharness.explanations import EXPLANATIONS
from mutharness.paths import shown, visible


class ExitCode(IntEnum):
    """Process exit statuses of `mutharness`: what a script can tell from the number alone.

    When several hold, the first in this order wins: a signal, an error that stopped the run
    (its own code), a refused baseline, a mutation without a trustworthy verdict, a mutation
    that did not behave as expected."""

    OK = 0  # every mutation behaved as its spec expects
    UNEXPECTED = 1  # the harness worked and at least one mutation did not behave as expected
    USAGE = 2  # the command line, a spec or the project config is wrong: nothing was measured
    BASELINE = 3  # a spec's baseline could not be trusted
    NO_VERDICT = 4  # the run ended, but some mutation has no trustworthy verdict
    ENVIRONMENT = 5  # the run could not be made or finished here
    INTERNAL = 70  # a mutharness bug: an exception nothing expected (EX_SOFTWARE)
    INTERRUPTED = 130  # SIGINT (also SIGHUP, Ctrl-Break)
    TERMINATED = 143  # SIGTERM

    @property
    def summary(self) -> str:
        """What the code says, in a few words (the command line's help)."""
        return _MEANINGS[self][0]

    @property
    def meaning(self) -> str:
        """What the code says, with its cases (the exit-code table of the docs)."""
        return _MEANINGS[self][1]


_MEANINGS: Final = MappingProxyType({
    ExitCode.OK: ("all as expected", "every mutation behaved as its spec expects"),
    ExitCode.UNEXPECTED: (
        "a mutation did not behave as expected",
        "the harness worked and at least one mutation did not behave as its spec expects (a "
        "`baseline` pin drifted; a red-first test not red)"),
    ExitCode.USAGE: (
        "usage or config error",
        "the command line, a spec (schema, anchor miss, `tests` entry), the project config or "
        "a `redfirst` base is wrong, or the files given to `merge`/`render` are not "
        "trustworthy results of one run: nothing was measured"),
    ExitCode.BASELINE: (
        "a baseline could not be trusted",
        "a spec's baseline is red, drifted from its pin, unstable between runs, changed "
        "tracked files, or imported the code under test from outside the workspace (a "
        "shadowing or an installed copy): its mutations were not run"),
    ExitCode.NO_VERDICT: (
        "a mutation has no trustworthy verdict",
        "the run ended, but some mutation has no trustworthy verdict (UNTRUSTWORTHY, "
        "TIMEOUT), the run is incomplete, or a red-first test has no answer"),
    ExitCode.ENVIRONMENT: (
        "the run could not be made here",
        "a dirty tree, git missing or too old, a library below its security floor, the lock "
        "busy, an unusable TMPDIR, a full disk or another OS error, a closed standard output, "
        "a `-j` worker that died"),
    ExitCode.INTERNAL: (
        "a mutharness bug",
        "an exception nothing expected: its traceback is printed; please report it"),
    ExitCode.INTERRUPTED: (
        "interrupted",
        "SIGINT (or SIGHUP, Ctrl-Break): the tests are killed, the workspace removed, the lock "
        "released, the partial results marked interrupted; a second signal exits at once and "
        "the next run sweeps the workspace"),
    ExitCode.TERMINATED: ("terminated", "SIGTERM, handled as SIGINT is"),
})


def exit_codes_table() -> str:
    """The exit-code table of docs/exit-codes.md, made from `ExitCode` (a test keeps the page
    equal to it)."""
    rows = [f"| {int(code)} | `{code.name}` | {code.meaning} |" for code in ExitCode]
    return "\n".join(["| code | name | meaning |", "| --- | --- | --- |", *rows])


class MutharnessError(Exception):
    """Root of every error mutharness reports to its user; its class says its exit code (a
    problem of this machine or checkout unless it says otherwise)."""

    exit_code: ExitCode = ExitCode.ENVIRONMENT

    def __str__(self) -> str:
        return self.message()

    @property
    def kind(self) -> str:
        """The name of the explanation of this error (`mutharness explain NAME`): its class."""
        return type(self).__name__

    def message(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class SpecProblem:
    """One problem in one spec file, located by a JSON pointer."""

    path: str
    pointer: str
    text: str

    def __str__(self) -> str:
        where = f"{self.path}#{self.pointer}" if self.pointer else self.path
        return f"{where}: {self.text}"


class SpecError(MutharnessError):
    """Every problem found in every spec, reported together before anything runs."""

    exit_code = ExitCode.USAGE

    def __init__(self, problems: tuple[SpecProblem, ...], notes: tuple[str, ...] = ()) -> None:
        super().__init__(problems, notes)
        self.problems = problems
        self.notes = notes  # e.g. repaired anchors suggested by `check --suggest`

    def message(self) -> str:
        count = len(self.problems)
        lines = [f"{count} problem(s) in the spec(s); nothing was run:"]
        lines += [f"  {problem}" for problem in self.problems]
        lines += [f"  {note}" for note in self.notes]
        return "\n".join(lines)


class GitError(MutharnessError):
    """git is missing, too old, refused the repository, or a git command failed."""

    def __init__(self, what: str, detail: str = "", remedy: str = "",
                 status: int | None = None) -> None:
        super().__init__(what, detail, remedy)
        self.what = what
        self.detail = detail
        self.remedy = remedy
        self.status = status  # git's exit status, when git ran

    def silent_no(self) -> bool:
        """git ran and answered no the way `--quiet` queries do: exit 1, nothing on stderr."""
        return self.status == 1 and not self.detail.strip()

    def message(self) -> str:
        text = self.what
        if self.detail:
            text += f": {self.detail.strip()}"
        if self.remedy:
            text += f"\n  {self.remedy}"
        return text


class DirtyTreeError(MutharnessError):
    """The working tree has uncommitted changes and --allow-dirty was not given."""

    def __init__(self, changes: tuple[str, ...], filters: tuple[str, ...] = ()) -> None:
        super().__init__(changes, filters)
        self.changes = changes
        self.filters = filters  # the repository's own filter drivers, not run by mutharness

    def message(self) -> str:
        lines = [
            f"the working tree has {len(self.changes)} uncommitted change(s); "
            "mutharness measures the committed tree.",
            "  commit or stash them, or pass --allow-dirty to include the uncommitted bytes:",
        ]
        lines += [f"    {shown(change)}" for change in self.changes[:20]]
        if len(self.changes) > 20:
            lines.append(f"    ... and {len(self.changes) - 20} more")
        if any(change.startswith("??") for change in self.changes):
            lines.append(
                "  untracked files that belong to this machine alone (build output, a local "
                "cache) can be ignored instead: .gitignore, or .git/info/exclude for you alone"
            )
        if self.filters:
            lines.append(
                f"  note: mutharness never runs the filter driver(s) {', '.join(self.filters)} "
                "that this repository's own config defines; if those files are unchanged, "
                "`git status` (which runs them) refreshes git's index and they disappear here"
            )
        return "\n".join(lines)


class LockBusyError(MutharnessError):
    """Another verify holds the repository's lock."""

    def __init__(self, lock_path: str, waited_s: float, holder: str) -> None:
        super().__init__(lock_path, waited_s, holder)
        self.lock_path = lock_path
        self.waited_s = waited_s
        self.holder = holder

    def message(self) -> str:
        return (
            f"another mutharness run holds {self.lock_path} (waited {self.waited_s:g} s); "
            f"holder: {self.holder}"
        )


class EnvironmentProblem(MutharnessError):
    """The machine cannot run a trustworthy verify (missing tool, too-old library...)."""

    def __init__(self, what: str, remedy: str = "") -> None:
        super().__init__(what, remedy)
        self.what = what
        self.remedy = remedy

    def message(self) -> str:
        return f"{self.what}\n  {self.remedy}" if self.remedy else self.what


class InputProblem(EnvironmentProblem):
    """A file or directory the user named that is not what the command needs (a template
    override, a results file, an evidence directory): what is wrong, and what to do."""

    exit_code = ExitCode.USAGE


class BaselineError(MutharnessError):
    """The baseline run is not green and complete, or its count differs from the spec."""

    exit_code = ExitCode.BASELINE

    def __init__(
        self, spec_id: str, reason: str, tests: tuple[str, ...] = (), label: str = "failing",
        log: str = "",
    ) -> None:
        super().__init__(spec_id, reason, tests, label, log)
        self.spec_id = spec_id
        self.reason = reason
        self.tests = tests  # the tests the reason is about (failing, unstable...)
        self.label = label
        self.log = log  # the kept log of the run the reason is about (lab.logs), if any

    def message(self) -> str:
        lines = [
            f"spec {self.spec_id}: baseline is not trustworthy: {self.reason}. "
            "Every verdict would be meaningless; fix the suite, the spec or the project config "
            "first."
        ]
        lines += [f"  {self.label}: {test_id}" for test_id in self.tests[:20]]
        if len(self.tests) > 20:
            lines.append(f"  and {len(self.tests) - 20} more")
        if self.log:
            lines.append(f"  log: {self.log}")
        return "\n".join(lines)


class WorkspaceError(MutharnessError):
    """The disposable workspace could not be built, restored or verified."""

    def __init__(self, what: str, paths: tuple[str, ...] = ()) -> None:
        super().__init__(what, paths)
        self.what = what
        self.paths = paths

    def message(self) -> str:
        lines = [self.what]
        lines += [f"  {shown(path)}" for path in self.paths[:20]]
        return "\n".join(lines)


class OSProblem(MutharnessError):
    """The machine failed an operation mutharness needs (disk full, no permission...)."""

    def __init__(self, doing: str, code: int | None, strerror: str, filename: str = "",
                 winerror: int | None = None) -> None:
        super().__init__(doing, code, strerror, filename, winerror)
        self.doing = doing
        self.code = code
        self.strerror = strerror
        self.filename = filename
        self.winerror = winerror  # Windows' own code: its errno is a guess (EINVAL when unknown)

    @classmethod
    def from_error(cls, error: OSError, doing: str) -> OSProblem:
        """The facts of an OSError raised while `doing` something."""
        filename = error.filename if isinstance(error.filename, str) else ""
        winerror = getattr(error, "winerror", None)  # set on Windows only
        return cls(doing, error.errno, error.strerror or str(error), filename,
                   winerror if isinstance(winerror, int) else None)

    def message(self) -> str:
        name = errno.errorcode.get(self.code, "") if self.code is not None else ""
        if self.winerror is not None:
            name = f"WinError {self.winerror}"
        where = f" ({shown(self.filename)})" if self.filename else ""
        if self.code == errno.ENOSPC:
            return f"no space left on the device while {self.doing}{where}"
        return f"{self.strerror}{f' [{name}]' if name else ''} while {self.doing}{where}"


class OutputClosed(MutharnessError):
    """Standard output cannot be written (closed by `| head`, full like /dev/full)."""

    def __init__(self, code: int | None, strerror: str) -> None:
        super().__init__(code, strerror)
        self.code = code
        self.strerror = strerror

    def message(self) -> str:
        return (
            f"standard output cannot be written ({self.strerror}); the run stopped there, "
            "its workspace removed"
        )


class ShadowedImportError(MutharnessError):
    """The tests imported a tracked file from the user's tree instead of the workspace."""

    exit_code = ExitCode.BASELINE

    def __init__(
        self, spec_id: str, module: str, module_file: str, via: str, where: str = ""
    ) -> None:
        super().__init__(spec_id, module, module_file, via, where)
        self.spec_id = spec_id
        self.module = module
        self.module_file = module_file
        self.via = via
        self.where = where  # which process: the pytest process, a child...

    def message(self) -> str:
        who = f" (in {self.where})" if self.where else ""
        return (
            f"spec {self.spec_id}: the tests imported {self.module} from "
            f"{shown(self.module_file)}{who}, the user's tree, not the workspace (it is reached "
            f"through {self.via}); every mutation would SURVIVE.\n"
            "  mutharness moves import roots in your repository to the workspace at start-up, "
            "but this import escaped that (a .pth file that imports the package at start-up, "
            "or a child started with -I, -E or without the inherited environment)."
        )


class InstalledCopyError(MutharnessError):
    """A mutation target's module was imported from a copy outside the workspace."""

    exit_code = ExitCode.BASELINE

    def __init__(
        self, spec_id: str, target: str, module: str, module_file: str, where: str
    ) -> None:
        super().__init__(spec_id, target, module, module_file, where)
        self.spec_id = spec_id
        self.target = target
        self.module = module
        self.module_file = module_file
        self.where = where

    def message(self) -> str:
        return (
            f"spec {self.spec_id}: the tests imported {self.module} from "
            f"{shown(self.module_file)} (in {self.where}), a copy outside this repository, not "
            f"the workspace's {self.target}: a mutant of that file would never run, so no "
            "verdict on it is evidence.\n"
            "  use an editable install of this checkout (pip install -e .; in tox: package = "
            "editable; an editable install of another checkout is such a copy too), a pytest "
            "`pythonpath` setting that reaches the file, or --python naming an environment "
            "without that copy."
        )


class _AroundAChange(MutharnessError):
    """A command about a change that cannot be set up: its revision, what is wrong, and what
    to do (`words`: the command and its revision's flag, as the message starts)."""

    exit_code = ExitCode.USAGE
    words = ""

    def __init__(self, rev: str, problem: str, remedy: str = "") -> None:
        super().__init__(rev, problem, remedy)
        self.rev = rev
        self.problem = problem
        self.remedy = remedy

    def message(self) -> str:
        text = f"{self.words} {self.rev}: {self.problem}"
        return f"{text}\n  {self.remedy}" if self.remedy else text


class RedFirstError(_AroundAChange):
    """A red-first proof that cannot be set up: its base, what is wrong, and what to do."""

    words = "redfirst --base"


class SuggestError(_AroundAChange):
    """`suggest` cannot be set up: its revision, what is wrong, and what to do."""

    words = "suggest --since"


class NothingSelected(MutharnessError):
    """`--since` found no spec its changes affect: nothing is measured, nothing is claimed."""

    exit_code = ExitCode.OK

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why

    def message(self) -> str:
        return self.why


class ShardError(MutharnessError):
    """A `--shard` value that is not 1-based `k/n` with 1 <= k <= n: the text and the rule."""

    exit_code = ExitCode.USAGE

    def __init__(self, text: str, problem: str) -> None:
        super().__init__(text, problem)
        self.text = text
        self.problem = problem

    def message(self) -> str:
        return f"--shard {self.text!r}: {self.problem}"


class OptionConflict(MutharnessError):
    """Options given together that do not go together: which, and why."""

    exit_code = ExitCode.USAGE

    def __init__(self, options: tuple[str, ...], why: str) -> None:
        super().__init__(options, why)
        self.options = options
        self.why = why

    def message(self) -> str:
        return f"{' with '.join(self.options)}: {self.why}"


class MergeError(MutharnessError):
    """Shards' results that do not make one run: every problem found, each naming its files."""

    exit_code = ExitCode.USAGE

    def __init__(self, problems: tuple[str, ...]) -> None:
        super().__init__(problems)
        self.problems = problems

    def message(self) -> str:
        lines = [f"the shards do not make one run ({len(self.problems)} problem(s)); "
                 "nothing was written:"]
        return "\n".join([*lines, *(f"  {problem}" for problem in self.problems)])


class FeedError(MutharnessError):
    """A line of a worker's feed that is not a mutation of its run."""

    def __init__(self, line: str, problem: str) -> None:
        super().__init__(line, problem)
        self.line = line
        self.problem = problem

    def message(self) -> str:
        return f"the parent handed this worker {self.line!r}: {self.problem}"


class WorkerFailed(MutharnessError):
    """A `-j` worker ended without the results asked of it, and how it ended."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem

    def message(self) -> str:
        return self.problem


class RecordedError(MutharnessError):
    """An error as a results file recorded it: its message, its exit code and the class it
    was (its explanation's name; none where the record does not name a known one)."""

    def __init__(self, text: str, exit_code: ExitCode = ExitCode.ENVIRONMENT,
                 recorded: str = "") -> None:
        super().__init__(text, exit_code, recorded)
        self.text = text
        self.exit_code = exit_code
        self.recorded = recorded if recorded in EXPLANATIONS else ""  # a file's word, checked

    @property
    def kind(self) -> str:
        return self.recorded or type(self).__name__

    def message(self) -> str:
        return self.text


class ResultsError(MutharnessError):
    """A document that is not a results file of this schema, and the first thing wrong."""

    exit_code = ExitCode.USAGE

    def __init__(self, source: str, problem: str) -> None:
        super().__init__(source, problem)
        self.source = source
        self.problem = problem

    def message(self) -> str:
        return f"{self.source} is not a mutharness results file: {self.problem}"


class OlderResults(MutharnessError):
    """A results file written before mutations were located to the column."""

    exit_code = ExitCode.USAGE

    def __init__(self, spec: str, mutation: int) -> None:
        super().__init__(spec, mutation)
        self.spec = spec
        self.mutation = mutation

    def message(self) -> str:
        return (f"spec {self.spec}, mutation {self.mutation}: the results hold no column or "
                "file text for it (they are older than the mutation report); run verify again")


class ElementsDamaged(MutharnessError):
    """The shipped copy of the web component is not the pinned one."""

    def __init__(self, file: str, digest: str, pinned: str) -> None:
        super().__init__(file, digest, pinned)
        self.file = file
        self.digest = digest
        self.pinned = pinned

    def message(self) -> str:
        return (f"the shipped {self.file} has sha256 {self.digest}, not the pinned "
                f"{self.pinned}: reinstall mutharness")


class ConfigProblem(EnvironmentProblem):
    """A project config file that cannot be used: every problem found in it (the key and
    what is wrong with it), naming the options it could have named when a key is none."""

    exit_code = ExitCode.USAGE

    def __init__(self, file: str, problems: tuple[tuple[str, str], ...],
                 known: tuple[str, ...]) -> None:
        self.file = file
        self.problems = problems
        self.key = problems[0][0] if problems else ""  # the first problem's key
        # a key is the file's text: its line breaks and escapes shown, never acted on
        lines = [f"{visible(key)}: {what}" if key else what for key, what in problems]
        file = visible(file)
        text = (f"{file}: {lines[0]}" if len(lines) == 1
                else f"{file}: {len(lines)} problems:\n  " + "\n  ".join(lines))
        unknown = any(key and key not in known for key, _ in problems)  # a wrong key's list
        super().__init__(text, remedy=f"known options: {', '.join(known)}" if unknown else "")


class Interrupted(BaseException):
    """A termination signal arrived; unwinds like KeyboardInterrupt so cleanup runs."""

    def __init__(self, signal_number: int) -> None:
        super().__init__(signal_number)
        self.signal_number = signal_number


class ForcedExit(BaseException):
    """A second termination signal arrived during the cleanup: stop cleaning up and exit now.

    Unwinding still runs the `finally` blocks on its way out (the test process group is killed,
    the lock released); the workspace is left for the next run's sweep.
    """

    def __init__(self, signal_number: int) -> None:
        super().__init__(signal_number)
        self.signal_number = signal_number
