"""Approved platform skips: the reviewed policy file, and which of a run's skips count."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mutharness.digest import file_digest
from mutharness.errors import SpecError, SpecProblem
from mutharness.runners.base import Outcome, RunFacts, TestOutcome
from mutharness.runners.registry import runner_kind

POLICY_FILE = "specs/platform-skips.json"
POLICY_VERSION = 1
MAX_POLICY_BYTES = 1024 * 1024
_TOP_KEYS = frozenset({"version", "note", "platforms"})
_PLATFORM_KEYS = frozenset({"reason", "tests", "note"})
_TEST_KEYS = frozenset({"file", "name"})
EXAMPLES = 3

# a test's (file, name) from its id, as the runner writes ids
Split = Callable[[str], tuple[str, str]]


@dataclass(frozen=True)
class ApprovedTest:
    """One test a platform is allowed to skip."""

    file: str
    name: str

    def key(self) -> tuple[str, str]:
        """(file, name), as a runner's id splits."""
        return self.file, self.name


@dataclass(frozen=True)
class PlatformSkips:
    """One platform's reason and the tests that may skip for exactly it."""

    reason: str
    tests: tuple[ApprovedTest, ...]


@dataclass(frozen=True)
class Policy:
    """The policy file as read: per platform (`sys.platform`, node's `process.platform`)."""

    path: str  # repo-relative; "" when the repository has no policy file
    digest: str
    platforms: Mapping[str, PlatformSkips]

    def on(self, platform: str) -> PlatformSkips:
        """The platform's entry (no tests when it has none)."""
        return self.platforms.get(platform, PlatformSkips("", ()))


NO_POLICY = Policy("", "", {})


def load_policy(data: bytes | None, path: str) -> Policy:
    """The policy from its committed bytes (None: the repository has none, nothing approved)."""
    if data is None:
        return NO_POLICY
    return parse_policy(data, path, file_digest(data))


def this_platform() -> str:
    """The platform key of this machine: `linux`, `win32`, `darwin`..."""
    return sys.platform


def parse_policy(data: bytes, path: str, digest: str) -> Policy:
    """A policy file's bytes -> `Policy` (raises SpecError listing every problem)."""
    problems: list[SpecProblem] = []

    def bad(pointer: str, message: str) -> None:
        problems.append(SpecProblem(path, pointer, message))

    if len(data) > MAX_POLICY_BYTES:
        raise SpecError((SpecProblem(path, "", f"is larger than {MAX_POLICY_BYTES} bytes"),))
    try:
        document: Any = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise SpecError((SpecProblem(path, "", f"is not JSON: {error}"),)) from None
    if not isinstance(document, dict):
        raise SpecError((SpecProblem(path, "", "must be a JSON object"),))
    for key in sorted(set(document) - _TOP_KEYS):
        bad(f"/{key}", "is not a policy key (version, note, platforms)")
    if document.get("version") != POLICY_VERSION or isinstance(document.get("version"), bool):
        bad("/version", f"must be {POLICY_VERSION}, not {document.get('version')!r}")
    platforms: dict[str, PlatformSkips] = {}
    table = document.get("platforms")
    if not isinstance(table, dict):
        bad("/platforms", "must be an object of platform -> {reason, tests}")
        table = {}
    for platform, entry in table.items():
        where = f"/platforms/{platform}"
        if not isinstance(entry, dict):
            bad(where, "must be an object with reason and tests")
            continue
        for key in sorted(set(entry) - _PLATFORM_KEYS):
            bad(f"{where}/{key}", "is not a platform key (reason, tests, note)")
        reason = entry.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            bad(f"{where}/reason", "must be the skip reason, a non-empty string")
            reason = ""
        tests: list[ApprovedTest] = []
        listed = entry.get("tests")
        if not isinstance(listed, list):
            bad(f"{where}/tests", "must be an array of {file, name}")
            listed = []
        for number, test in enumerate(listed):
            at = f"{where}/tests/{number}"
            if not isinstance(test, dict) or set(test) != _TEST_KEYS or not all(
                isinstance(test[key], str) and test[key] for key in _TEST_KEYS
            ):
                bad(at, "must be an object with exactly file and name, both non-empty strings")
                continue
            approved = ApprovedTest(test["file"], test["name"])
            if approved in tests:
                bad(at, f"lists {approved.file} {approved.name} a second time")
                continue
            tests.append(approved)
        platforms[platform] = PlatformSkips(reason, tuple(tests))
    if problems:
        raise SpecError(tuple(problems))
    return Policy(path, digest, platforms)


def _examples(items: Sequence[str]) -> str:
    text = ", ".join(items[:EXAMPLES])
    return text + (f" and {len(items) - EXAMPLES} more" if len(items) > EXAMPLES else "")


@dataclass(frozen=True)
class SkipCount:
    """Which of a run's skips count toward the spec's pin, and why the run cannot be used."""

    approved: tuple[str, ...] = ()  # skipped exactly as the policy lists them: counted
    unlisted: tuple[str, ...] = ()  # skipped or todo, not listed: accepted, never counted
    problem: str | None = None


def count_skips(
    outcomes: Sequence[TestOutcome], policy: Policy, platform: str, split: Split,
    covers: Callable[[str, str], bool], strict: bool = False,
) -> SkipCount:
    """Judge one run's skips against the policy for `platform`.

    A skip counts only when that exact test (file + name) is listed for the platform and it
    skipped with the platform's reason. A listed test the run covers (`covers(file, name)`)
    that did not skip, skipped for another reason, or did not run at all makes the run
    untrustworthy; an unlisted skip (or todo) is accepted and not counted, or refused under
    `strict`."""
    entry = policy.on(platform)
    listed = {test.key(): test for test in entry.tests}
    by_key = {split(outcome.nodeid): outcome for outcome in outcomes}
    approved: list[str] = []
    problems: list[str] = []
    for key, test in listed.items():
        if not covers(test.file, test.name):
            continue
        found = by_key.get(key)
        label = f"{test.file} {test.name}"
        if found is None:
            problems.append(f"{label} is listed for {platform} but did not run (it vanished)")
        elif found.outcome is not Outcome.SKIPPED:
            problems.append(
                f"{label} is listed for {platform} but did not skip ({found.outcome.value})"
            )
        elif found.reason != entry.reason:
            problems.append(
                f"{label} skipped for another reason: {found.reason!r} (the policy's reason "
                f"for {platform} is {entry.reason!r})"
            )
        else:
            approved.append(found.nodeid)
    unlisted = tuple(
        outcome.nodeid for outcome in outcomes
        if outcome.outcome in (Outcome.SKIPPED, Outcome.TODO)
        and split(outcome.nodeid) not in listed
    )
    if strict and unlisted:
        problems.append(
            f"{len(unlisted)} skip(s) not in the platform skip policy (--strict-skips): "
            + _examples(unlisted)
        )
    problem = None
    if problems:
        where = policy.path or POLICY_FILE
        problem = f"platform skips ({where}): " + "; ".join(problems[:EXAMPLES]) + (
            f"; and {len(problems) - EXAMPLES} more" if len(problems) > EXAMPLES else ""
        )
    return SkipCount(tuple(approved), unlisted, problem)


@dataclass(frozen=True)
class SkipRules:
    """The policy in force for a run: the file, this platform, and `--strict-skips`."""

    policy: Policy = NO_POLICY
    platform: str = ""
    strict: bool = False

    def count(self, facts: RunFacts, runner: str, tests: Sequence[str]) -> SkipCount:
        """Judge one run of a spec's `tests` (run by `runner`)."""
        kind = runner_kind(runner)
        return count_skips(
            facts.outcomes, self.policy, self.platform or this_platform(), kind.split_id,
            lambda file, name: kind.covers(tests, file, name), self.strict,
        )
