"""`--since REV`: the specs that the changes since a revision can affect, and why."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mutharness.runners import runner_kind
from mutharness.spec import Spec

# configuration a test run reads wherever it sits: any change to one selects every spec
CONFIG_NAMES = frozenset({
    "conftest.py", "pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml",
    "pyproject.toml", "tox.ini", "setup.cfg", "package.json", "mutharness.toml",
})
MAX_SHOWN = 5


def test_roots(tests: Sequence[str], runner: str, tracked: frozenset[str]) -> tuple[str, ...]:
    """The directories that hold `tests`: a file entry's directory, a directory entry."""
    kind = runner_kind(runner)
    roots: list[str] = []
    for entry in tests:
        path = kind.entry_path(entry)
        if path in tracked:  # a file: its directory holds the tests' helpers
            path = path.rsplit("/", 1)[0] if "/" in path else ""
        roots.append(path)
    return tuple(dict.fromkeys(roots))


def _under(path: str, root: str) -> bool:
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
    tracked: frozenset[str],
) -> tuple[str, ...]:
    """The changed paths that are shared test infrastructure: a config file or conftest.py
    anywhere, one of `extra` (the policy file, the project config, node preloads), or a
    helper: a file that is not a test module in a directory holding spec tests."""
    entries = {
        runner_kind(spec.runner).entry_path(entry) for spec in specs for entry in spec.tests
    }
    spec_files = {spec.path for spec in specs}
    roots = {root: spec.runner for spec in specs
             for root in test_roots(spec.tests, spec.runner, tracked)}
    shared: list[str] = []
    for path in changed:
        name = path.rsplit("/", 1)[-1]
        if name in CONFIG_NAMES or path in extra:
            shared.append(path)
            continue
        if path in entries or path in spec_files:
            continue
        for root, runner in roots.items():
            if _under(path, root) and not runner_kind(runner).is_test_module(path):
                shared.append(path)
                break
    return tuple(shared)


def _why(spec: Spec, changed: frozenset[str]) -> str | None:
    kind = runner_kind(spec.runner)
    if spec.path in changed:
        return "its spec file changed"
    for entry in spec.tests:
        path = kind.entry_path(entry)
        hit = next((item for item in sorted(changed) if _under(item, path)), None)
        if hit is not None:
            return f"test {hit} changed"
    for mutation in spec.mutations:
        if mutation.file in changed:
            return f"target {mutation.file} changed"
    return None


def select(
    rev: str, base: str, changed: Sequence[str], specs: Sequence[Spec], extra: Sequence[str],
    tracked: frozenset[str],
) -> Selection:
    """The specs affected by `changed`: a spec whose JSON, a test file or a target changed;
    every spec when shared test infrastructure changed."""
    shared = shared_changes(changed, specs, extra, tracked)
    paths = frozenset(changed)
    if shared:
        return Selection(rev, base, tuple(changed), tuple(specs), shared,
                         tuple((spec.id, "shared infrastructure") for spec in specs))
    chosen: list[Spec] = []
    reasons: list[tuple[str, str]] = []
    for spec in specs:
        why = _why(spec, paths)
        if why is not None:
            chosen.append(spec)
            reasons.append((spec.id, why))
    return Selection(rev, base, tuple(changed), tuple(chosen), (), tuple(reasons))
