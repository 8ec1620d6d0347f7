"""`--since REV`: the specs that the changes since a revision can affect, and why."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from mutharness.model.spec import Spec
from mutharness.paths import repo_path
from mutharness.runners.registry import runner_kind

# configuration a test run reads wherever it sits: any change to one selects every spec
CONFIG_NAMES = frozenset({
    "conftest.py", "pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml",
    "pyproject.toml", "tox.ini", "setup.cfg", "package.json", "mutharness.toml",
})
MAX_SHOWN = 5


TEST_DIRECTORIES = frozenset({"tests", "test", "testing", "__tests__"})


def _test_directories(entries: Sequence[str], kind_entry_path: Callable[[str], str]) -> set[str]:
    """The directories that hold tests: `tests`/`test`/`testing`/`__tests__` at the root, and
    each such directory on the way to a test entry (`src/pkg/tests/`), never a same-named
    package elsewhere (`src/pkg/testing/` shipped to users is code)."""
    found = set(TEST_DIRECTORIES)
    for entry in entries:
        parts = kind_entry_path(entry).split("/")
        found.update("/".join(parts[: depth + 1]) for depth, part in enumerate(parts)
                     if part in TEST_DIRECTORIES)
    return found


def on_test_side(
    path: str, runner: str, entries: Sequence[str], keep: Sequence[str] = ()
) -> bool:
    """Whether a path belongs to the tests rather than the code they test: a file `tests`
    entry, a test module by the runner's names (`test_*.py`, `*.test.js`...), a
    `conftest.py`, anything in a directory that holds tests (`_test_directories`: helpers,
    fixtures), or under a `keep` path. Code beside the tests in any other directory (a
    directory entry `calc/` holding `calc/ops.py`) is not."""
    kind = runner_kind(runner)
    name = path.rsplit("/", 1)[-1]
    return (
        path in {kind.entry_path(entry) for entry in entries}
        or name == "conftest.py" or kind.is_test_module(path)
        or any(under(path, directory) and path != directory
               for directory in _test_directories(entries, kind.entry_path))
        or any(under(path, kept) for kept in keep)
    )


def under(path: str, root: str) -> bool:
    """Whether repo-relative `path` is `root` or lies below it (every path, for root "")."""
    return not root or path == root or path.startswith(root + "/")


@dataclass(frozen=True)
class Selection:
    """The specs `--since` selects: every one when shared test infrastructure changed."""

    rev: str  # as the user named it
    base: str  # the commit it names
    changed: tuple[str, ...]
    specs: tuple[Spec, ...]  # selected, in the order given
    shared: tuple[str, ...]  # changed shared infrastructure: why every spec is selected
    reasons: tuple[tuple[str, str], ...]  # (spec id, why it is selected)

    def describe(self) -> str:
        """One line for the terminal: what changed and what it selects."""
        head = f"--since {self.rev} ({self.base[:12]}): {len(self.changed)} changed path(s)"
        if self.shared:
            shown_paths = ", ".join(self.shared[:MAX_SHOWN]) + (
                f" and {len(self.shared) - MAX_SHOWN} more" if len(self.shared) > MAX_SHOWN
                else ""
            )
            return f"{head}; shared test infrastructure changed ({shown_paths}): every spec"
        if not self.specs:
            return f"{head}; no spec is affected: no measurement is claimed"
        return f"{head}; {len(self.specs)} affected spec(s): " + "; ".join(
            f"{spec_id} ({why})" for spec_id, why in self.reasons
        )


def shared_changes(
    changed: Sequence[str], specs: Sequence[Spec], extra: Sequence[str],
) -> tuple[str, ...]:
    """The changed paths that are shared test infrastructure: a config file or conftest.py
    anywhere, one of `extra` (the policy file, the project config, node preloads), or a
    helper: a file on the tests' side (see `on_test_side`) that is neither a spec's test
    entry nor a test module."""
    entries = {
        runner_kind(spec.runner).entry_path(entry) for spec in specs for entry in spec.tests
    }
    spec_files = {spec.path for spec in specs}
    runners = {spec.runner for spec in specs}
    extra = [normal for named in extra if (normal := repo_path(named)) is not None]
    shared: list[str] = []
    for path in changed:
        name = path.rsplit("/", 1)[-1]
        if name in CONFIG_NAMES or path in extra:
            shared.append(path)
        elif path in entries or path in spec_files or any(
            runner_kind(runner).is_test_module(path) for runner in runners
        ):
            continue  # a spec's own file, or a test module: it selects what runs it
        elif any(on_test_side(path, spec.runner, spec.tests) for spec in specs):
            shared.append(path)
    return tuple(shared)


@dataclass(frozen=True)
class Record:
    """A spec's record of its last run: the files it depended on, and what kinds of use the
    record lists ("imports": the files imported; "reads": every file of the checkout opened)."""

    files: frozenset[str]
    kinds: frozenset[str]

    def speaks_for(self, path: str, modules: tuple[str, ...]) -> bool:
        """Whether a file absent from the record was untouched by that run: always when it
        recorded reads; a module (`modules`: its suffixes) when it recorded imports; else
        nothing is known of it."""
        return "reads" in self.kinds or ("imports" in self.kinds and path.endswith(modules))


Records = Mapping[str, Record | None]
"""Spec id -> the record of its last run (None: it has no record)."""


def _why(spec: Spec, changed: frozenset[str], recorded: Record | None) -> str | None:
    kind = runner_kind(spec.runner)
    if spec.path in changed:
        return "its spec file changed"
    for entry in spec.tests:
        path = kind.entry_path(entry)
        hit = next((item for item in sorted(changed) if under(item, path)), None)
        if hit is not None:
            return f"test {hit} changed"
    for mutation in spec.mutations:
        if mutation.file in changed:
            return f"target {mutation.file} changed"
    if recorded is None:
        return "no record of its last run: what its tests import is unknown"
    hit = next((path for path in sorted(changed) if path in recorded.files), None)
    if hit is not None:
        return f"{hit}, which its last recorded run depended on, changed"
    unknown = next((path for path in sorted(changed)
                    if not recorded.speaks_for(path, kind.modules)), None)
    if unknown is not None:  # the record cannot say the run never read it
        return (f"{unknown} changed, and the record of its last run does not say whether "
                "that run read it")
    return None


def select(
    rev: str, base: str, changed: Sequence[str], specs: Sequence[Spec], extra: Sequence[str],
    records: Records,
) -> Selection:
    """The specs affected by `changed`: a spec whose JSON, a test file, a target or a file its
    last recorded run depended on (an imported helper, a data file it read) changed, one whose
    record cannot speak for a changed file, or that has no record; every spec when shared
    test infrastructure changed."""
    shared = shared_changes(changed, specs, extra)
    paths = frozenset(changed)
    if shared:
        return Selection(rev, base, tuple(changed), tuple(specs), shared,
                         tuple((spec.id, "shared infrastructure") for spec in specs))
    chosen: list[Spec] = []
    reasons: list[tuple[str, str]] = []
    for spec in specs:
        why = _why(spec, paths, records.get(spec.id))
        if why is not None:
            chosen.append(spec)
            reasons.append((spec.id, why))
    return Selection(rev, base, tuple(changed), tuple(chosen), (), tuple(reasons))


def fix_files(
    changed: Sequence[str], runner: str, tests: Sequence[str], keep: Sequence[str],
    records: Sequence[str],
) -> tuple[str, ...]:
    """The files of a fix, for red-first: every changed path that is not on the tests' side
    (`on_test_side`, with `keep`) nor under a directory of `records` (specs, evidence)."""
    return tuple(
        path for path in changed
        if not on_test_side(path, runner, tests, keep)
        and not any(under(path, record) for record in records)
    )
