"""The red-first proof as data: each test at HEAD and with the fix reverted, the line, the exit."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from mutharness.errors import ExitCode
from mutharness.model.spec import Spec
from mutharness.runners.base import Outcome, RunFacts

Split = Callable[[str], tuple[str, str]]  # a test id -> (file, name), as the runner writes ids

LOAD_ERROR = "load-error"  # the test's file did not load with the fix reverted
MODULE_SKIPPED = "module-skipped"  # its file skipped as a whole (an importorskip of the fix)
ABSENT = "absent"  # the test did not run with the fix reverted, and its file loaded


@dataclass(frozen=True)
class Proof:
    """What a red-first run proves: the tests, the fix and the base it is reverted to."""

    rev: str  # as the user named it
    base: str  # the commit the fix is reverted to (REV, or its merge base with HEAD)
    spec: Spec  # the tests to run, as a spec without mutations (named `red-first`)
    fix: tuple[str, ...]  # the files put back to their bytes at `base`
    timeout_s: float
    load_error_is_red: bool
    expect_red: tuple[str, ...]
    named: str = ""  # the commit REV names, when it is not `base` (a branch that moved on)


class Pairing(StrEnum):
    """What one test's two runs prove about the fix."""

    RED_FIRST = "RED-FIRST"  # passes at HEAD, fails with the fix reverted: it pins the fix
    INVARIANT = "INVARIANT"  # passes on both sides: what the fix must not change
    RED_AT_HEAD = "RED-AT-HEAD"  # does not pass at HEAD: no answer
    LOAD_ERROR = "LOAD-ERROR"  # its file cannot load without the fix (red only if opted in)
    ABSENT = "ABSENT"  # loaded, but did not run with the fix reverted: no answer
    SKIPPED = "SKIPPED"  # skipped on a side: proves nothing either way


@dataclass(frozen=True)
class TestPair:
    """One test at HEAD and with the fix reverted."""

    __test__ = False  # not a pytest test class

    nodeid: str
    head: str  # the outcome word at HEAD
    reverted: str  # the outcome word with the fix reverted, LOAD_ERROR or ABSENT
    pairing: Pairing

    def red(self, load_error_is_red: bool) -> bool:
        """Whether it counts as failing with the fix reverted."""
        return self.pairing is Pairing.RED_FIRST or (
            load_error_is_red and self.pairing is Pairing.LOAD_ERROR
        )


def _file_of(nodeid: str, load_errors: Sequence[str], split: Split) -> bool:
    file = split(nodeid)[0]
    return any(file == error or error.startswith(f"{file}::") for error in load_errors)


def pair(head: RunFacts, reverted: RunFacts, split: Split) -> tuple[TestPair, ...]:
    """Every test that ran at HEAD, paired with its run with the fix reverted."""
    after = {outcome.nodeid: outcome.outcome for outcome in reverted.outcomes}
    errors = reverted.collection_errors
    skipped_files = tuple(outcome.nodeid for outcome in reverted.outcomes
                          if outcome.outcome is Outcome.SKIPPED and not split(outcome.nodeid)[1])
    pairs: list[TestPair] = []
    for test in head.outcomes:
        there = after.get(test.nodeid)
        word = there.value if there is not None else (
            LOAD_ERROR if _file_of(test.nodeid, errors, split)
            else MODULE_SKIPPED if _file_of(test.nodeid, skipped_files, split) else ABSENT
        )
        if test.outcome.is_inert:
            pairing = Pairing.SKIPPED
        elif not test.outcome.is_pass:
            pairing = Pairing.RED_AT_HEAD
        elif there is None:
            pairing = Pairing.ABSENT if word == ABSENT else Pairing.LOAD_ERROR
        elif there.is_failure:
            pairing = Pairing.RED_FIRST
        elif there is Outcome.PASSED:
            pairing = Pairing.INVARIANT
        else:
            pairing = Pairing.SKIPPED
        pairs.append(TestPair(test.nodeid, test.outcome.value, word, pairing))
    return tuple(pairs)


@dataclass(frozen=True)
class RedFirst:
    """One red-first proof: what was run, what was reverted, each test's two outcomes."""

    rev: str  # the base as the user named it
    base: str  # the commit it names
    head: str  # the commit measured
    runner: str
    tests: tuple[str, ...]  # the entries run on both sides
    reverted_files: tuple[str, ...]  # the fix: put back to their bytes at `base`
    pairs: tuple[TestPair, ...] = ()
    load_error_is_red: bool = False
    expect_red: tuple[str, ...] = ()
    problem: str = ""  # why no trustworthy answer is possible (a run that cannot be believed)
    load_errors: tuple[str, ...] = ()  # what failed to load with the fix reverted
    depends_on: Mapping[str, str] = field(default_factory=dict)  # path -> sha256 at HEAD
    flags: tuple[str, ...] = ()  # the options that were not the default, as flags
    keep: tuple[str, ...] = ()  # --keep: paths kept on the tests' side

    def _count(self, pairing: Pairing) -> int:
        return sum(1 for item in self.pairs if item.pairing is pairing)

    @property
    def counted(self) -> tuple[TestPair, ...]:
        """The tests that passed or failed at HEAD (skips prove nothing)."""
        return tuple(item for item in self.pairs if not Outcome(item.head).is_inert)

    @property
    def red(self) -> tuple[TestPair, ...]:
        """The tests that fail with the fix reverted (load errors only when opted in)."""
        return tuple(item for item in self.counted if item.red(self.load_error_is_red))

    def _named(self, wanted: str, pairs: Sequence[TestPair]) -> bool:
        return any(item.nodeid == wanted or item.nodeid.startswith((f"{wanted}::",
                   f"{wanted} > ")) for item in pairs)

    def _expected_missing(self) -> tuple[str, ...]:
        red = self.red
        return tuple(wanted for wanted in self.expect_red if not self._named(wanted, red))

    def why_no_answer(self) -> str:
        """Why the proof gives no trustworthy answer ("" when it does)."""
        if self.problem:
            return self.problem
        if not self.counted:
            return "no test passed or failed at HEAD: nothing to prove"
        at_head = [item.nodeid for item in self.pairs if item.pairing is Pairing.RED_AT_HEAD]
        if at_head:
            return f"{len(at_head)} test(s) do not pass at HEAD: {', '.join(at_head[:3])}"
        absent = [item.nodeid for item in self.pairs if item.pairing is Pairing.ABSENT]
        if absent:
            return (f"{len(absent)} test(s) did not run with the fix reverted although their "
                    f"file loaded: {', '.join(absent[:3])}")
        unknown = [wanted for wanted in self.expect_red if not self._named(wanted, self.pairs)]
        if unknown:
            return f"--expect-red {unknown[0]} names no test that ran"
        if self._count(Pairing.LOAD_ERROR) and not self.load_error_is_red:
            files = sorted({item.nodeid.split("::")[0].split(" > ")[0] for item in self.pairs
                            if item.pairing is Pairing.LOAD_ERROR})
            return (f"{self._count(Pairing.LOAD_ERROR)} test(s) cannot load (or skip as a "
                    f"module) with the fix reverted ({', '.join(files[:3])}); pass "
                    "--load-error-is-red to count a file that needs the fix to load as red")
        return ""

    def line(self) -> str:
        """`red-first: R of T test(s) fail with the fix reverted (HEAD: ...; reverted: ...)`."""
        counted = self.counted
        head_pass = sum(1 for item in counted if item.head == Outcome.PASSED.value)
        reverted_pass = sum(1 for item in counted if item.reverted == Outcome.PASSED.value)
        red = len(self.red)
        return (
            f"red-first: {red} of {len(counted)} test(s) fail with the fix reverted (HEAD: "
            f"{head_pass} pass / {len(counted) - head_pass} fail; reverted: {reverted_pass} "
            f"pass / {red} fail)"
        )

    def before(self) -> str:
        """The reverted side as evidence notes write it: `tests 9 / pass 3 / fail 6`."""
        ran = [item for item in self.counted
               if item.reverted not in (LOAD_ERROR, ABSENT, MODULE_SKIPPED)]
        passed = sum(1 for item in ran if item.reverted == Outcome.PASSED.value)
        failed = sum(1 for item in ran if Outcome(item.reverted).is_failure)
        return f"tests {len(ran)} / pass {passed} / fail {failed}"

    def after(self) -> str:
        """HEAD as evidence notes write it: `10 / 10` (passed of tests)."""
        counted = self.counted
        passed = sum(1 for item in counted if item.head == Outcome.PASSED.value)
        return f"{passed} / {len(counted)}"

    def exit_code(self) -> ExitCode:
        """0 pinned (every `expect_red` test red); 1 not pinned; 4 no trustworthy answer."""
        if self.why_no_answer():
            return ExitCode.NO_VERDICT
        if not self.red or self._expected_missing():
            return ExitCode.UNEXPECTED
        return ExitCode.OK

    def verdict(self) -> str:
        """What the proof says, in one sentence."""
        if (why := self.why_no_answer()):
            return f"no trustworthy answer: {why}"
        if not self.red:
            return "the tests do not pin the fix: none fails with it reverted"
        if (missing := self._expected_missing()):
            return f"--expect-red test(s) not red with the fix reverted: {', '.join(missing)}"
        return "the tests pin the fix"

    def to_json(self) -> dict[str, Any]:
        """The results' record (also what a spec's evidence keeps)."""
        return {
            "line": self.line(), "verdict": self.verdict(), "exit_code": int(self.exit_code()),
            "rev": self.rev, "base": self.base, "head": self.head, "runner": self.runner,
            "tests": list(self.tests), "reverted_files": list(self.reverted_files),
            "load_error_is_red": self.load_error_is_red, "expect_red": list(self.expect_red),
            "problem": self.problem, "load_errors": list(self.load_errors),
            "before": self.before(), "after": self.after(),
            "pairs": [
                {"nodeid": item.nodeid, "head": item.head, "reverted": item.reverted,
                 "pairing": item.pairing.value}
                for item in self.pairs
            ],
            "depends_on": dict(sorted(self.depends_on.items())),
            "flags": list(self.flags),
            "keep": list(self.keep),
        }


def red_first_from_json(document: Mapping[str, Any]) -> RedFirst:
    """A record read back (raises KeyError, TypeError or ValueError when it is not one)."""
    def texts(key: str) -> tuple[str, ...]:
        value = document[key]
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise TypeError(f"{key} is not a list of strings")
        return tuple(value)

    def text(key: str) -> str:
        value = document[key]
        if not isinstance(value, str):
            raise TypeError(f"{key} is not a string")
        return value

    pairs = tuple(
        TestPair(str(item["nodeid"]), str(item["head"]), str(item["reverted"]),
                 Pairing(item["pairing"]))
        for item in document["pairs"]
    )
    depends = document["depends_on"]
    if not isinstance(depends, dict) or not all(isinstance(v, str) for v in depends.values()):
        raise TypeError("depends_on is not an object of digests")
    return RedFirst(
        text("rev"), text("base"), text("head"), text("runner"), texts("tests"),
        texts("reverted_files"), pairs, bool(document["load_error_is_red"]),
        texts("expect_red"), text("problem"), texts("load_errors"), dict(depends),
        texts("flags") if "flags" in document else (),
        texts("keep") if "keep" in document else (),
    )
