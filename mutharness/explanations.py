"""What each error of `mutharness.errors` says, why, and the next step: one entry per class,
printed by `mutharness explain NAME` (the line every error ends with names it) and rendered as
the errors half of docs/messages.md (a test keeps the page equal to `errors_page_section()`)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final


@dataclass(frozen=True)
class Explanation:
    """One error class's entry: a heading saying what happened, then Markdown paragraphs
    (what the message says, why, its exit code, and the next step)."""

    title: str
    text: str


EXPLANATIONS: Final[Mapping[str, Explanation]] = MappingProxyType({
    "SpecError": Explanation(
        'A spec has problems',
        """\
`3 problem(s) in the spec(s); nothing was run:` followed by one line per problem, each located
by its file and JSON pointer (`specs/gate.json#/mutations/2/anchor: the anchor occurs 2 times`).
Exit 2. Every spec is checked before anything runs, and every problem is listed at once. Fix
each line; `mutharness check` repeats the check without running tests, and `check --suggest`
proposes repaired anchors.
"""),
    "GitError": Explanation(
        'git failed, is missing or too old',
        """\
`git ... failed in DIR: <git's own words>`, `... is not inside a git repository`,
`... has no commits yet (unborn HEAD)`, `HEAD does not name a commit in DIR: <git's words or
its exit status>`, `git version 2.20.1 is too old`, or `git refuses DIR: it is owned by another
user (dubious ownership)`. Exit 5. mutharness runs the committed tree through git 2.30 or newer
from `PATH`. Commit first; install a newer git; for dubious ownership, add the directory to
`safe.directory` yourself if you trust it (mutharness never changes your git config).
"""),
    "DirtyTreeError": Explanation(
        'The working tree has changes',
        """\
`the working tree has N uncommitted change(s)` with the changed paths. Exit 5. `verify` runs
the committed tree, so a result never silently depends on files that are not in the commit.
Commit (specs included), stash, or pass `--allow-dirty`, which copies the changes into the
workspace and records them in the results. An untracked virtual environment (a directory
holding a `pyvenv.cfg`, such as a `python -m venv .venv` that writes no `.gitignore`), an
untracked `node_modules`, an install's metadata (an untracked `NAME.egg-info` directory holding
a `PKG-INFO`, as setuptools' `pip install -e .` leaves it) and an untracked `.venv` file that
names an environment (one line naming a directory that holds a `pyvenv.cfg`, relative to the
root or absolute; a regular file of at most 512 bytes, never a link: the redirect file tox
writes for an editable environment) are environments, not changes: they are never counted,
never copied, and the run's first lines say once that they were left out. So are the evidence
and reports a run wrote into the tree, while each holds the bytes the run wrote (edited, it is
a change).
"""),
    "LockBusyError": Explanation(
        'Another run holds the lock',
        """\
`another mutharness run holds .mutharness/lock (waited 60 s); holder: ...`. Exit 5. One run at a
time per repository. Wait for it (`--lock-timeout SECONDS`), or end the named holder; a lock of
a dead process is taken over at once.
"""),
    "EnvironmentProblem": Explanation(
        'The machine cannot run a trustworthy verify',
        """\
A tool or library that is missing or below its floor (`node 18.19.0 is older than 20`,
`pytest 7.3.2 is older than 7.4`, a library under its security floor, an unusable `TMPDIR`),
with the remedy on the next line. Exit 5. Install or upgrade what it names, or point at another
with `--python` or `--node`. When nothing chose the tests' interpreter (no `--python`, no active
virtual environment, no usable `.venv`) and the one running mutharness (a tool install's) has
no pytest, the remedy names the repository's environments to pass to `--python` (`--python
.tox/py/bin/python (tox's py environment)`), or, with none, how to make the `.venv` mutharness
then finds; never an install beside mutharness, whose environment is not the project's.
"""),
    "InputProblem": Explanation(
        'A file you named is not what the command needs',
        """\
A template override, a results file or an evidence directory that is missing or of the wrong
kind, with what to do. Exit 2. Name the right file.
"""),
    "BaselineError": Explanation(
        'The baseline is not trustworthy',
        """\
`spec ID: baseline is not trustworthy: not green: 1 test(s) failed ...`, or its count differs
from `expectBaselinePass`, or a test is unstable between baseline runs, or the run changed
tracked files; the failing tests and the log follow. Exit 3: no mutant of that spec ran, since
every verdict would be meaningless. Read the log it names; fix the suite, the spec's count
(`mutharness baseline` measures it) or the project config (`pytest-drop-addopts` for an addopts
option that fails a subset of the suite).
"""),
    "WorkspaceError": Explanation(
        'The workspace could not be built or kept',
        """\
The disposable checkout could not be made, restored or verified, or a run wrote into your
installed `node_modules` through the workspace's links (or into a package linked there from
outside your repository, `npm link` or a `file:` dependency beside it: named with the
directory it is in); the paths follow. Exit 5. Free disk space or fix permissions under
`TMPDIR`; for a write into installed packages, stop the test from writing there (a cache
directory inside `node_modules/.cache` stays in the workspace) and restore what it wrote (a
linked package is restored where it lives, not by `npm ci`).
"""),
    "OSProblem": Explanation(
        'An operation of the machine failed',
        """\
`no space left on the device while ...` or `<the system's words> [ERRNO] while ... (path)`.
Exit 5. Free space or fix the permission it names; nothing of your tree is left half-written
(every write is atomic).
"""),
    "OutputClosed": Explanation(
        'Standard output is closed',
        """\
`standard output cannot be written (...); the run stopped there`. Exit 5. The output was piped
into a program that stopped reading (`| head`); the results file still holds everything.
"""),
    "ShadowedImportError": Explanation(
        'The tests imported your tree, not the workspace',
        """\
A tracked file of the spec was imported from your repository instead of the workspace (a
`sys.path` entry, a `.pth` file or a `conftest.py` that points at the user's tree). Exit 3:
mutants written into the workspace would never run. Make the import relative to the project
(pytest's `pythonpath`, an editable install) instead of an absolute path to your checkout.
"""),
    "InstalledCopyError": Explanation(
        'A target was imported from an installed copy',
        """\
A mutation target's module was loaded from a copy outside the workspace (a non-editable
install in `site-packages`). Exit 3: a mutant would change a file the tests never load.
Install the project editable (`pip install -e .`, `uv sync`), or run the tests with an
interpreter that does not hold a copy.
"""),
    "RedFirstError": Explanation(
        'A red-first proof cannot be set up',
        """\
Its base, what is wrong (no such revision, no test to run, a fix file that cannot be reverted)
and what to do. Exit 2. Name an existing base with `--base`, or the tests with `--test`.
"""),
    "SuggestError": Explanation(
        '`suggest` cannot be set up',
        """\
Its revision and flag, what is wrong (no `--since` or `--commit`, both given, a `--commit`
that names no commit or a merge, nothing changed since it, no test to run: none named, no
spec covering or recording a changed file and no test file in the project, a baseline that
cannot be trusted) and what to do (for a merge, one of its commits or `--since` its first
parent; for a baseline, its own remedy: an installed copy's is an editable install). Exit 2.
Name the revision the change started from with `--since REV` (or the one commit with
`--commit REV`), the tests with `--test`.
"""),
    "NothingSelected": Explanation(
        '`--since` selected no spec',
        """\
No spec is affected by the changes since the revision: nothing is measured and nothing is
claimed. Exit 0 for `verify`. Nothing to do; run without `--since` to verify everything.
"""),
    "ShardError": Explanation(
        'A `--shard` value is wrong',
        """\
`--shard` takes `K/N`, 1-based, with 1 <= K <= N. Exit 2.
"""),
    "OptionConflict": Explanation(
        'Options that do not go together',
        """\
Which options were given together and why they conflict (`--shard` with `--fail-fast` or
`--evidence`). Exit 2. Drop one; shards are joined and rendered by `mutharness merge`.
"""),
    "MergeError": Explanation(
        'Shards that are not one run',
        """\
Every problem found in the files given to `merge`, each naming its file: another commit, plan
or settings, a shard missing or repeated, a record whose verdict its facts do not give. Exit 2.
Merge the results of one run's shards, as they were written, in a checkout of its commit.
"""),
    "FeedError": Explanation(
        "A worker's feed line is wrong",
        """\
A `-j` worker read a line that is not a mutation of its run. Exit 5. An internal hand-over
failed; run again, and report it if it repeats.
"""),
    "WorkerFailed": Explanation(
        'A `-j` worker died',
        """\
A worker ended without its results, and how it ended (a signal, an exit code, its log). Exit 5.
Read its log; run with `-j 1` to see the same spec in one process.
"""),
    "RecordedError": Explanation(
        'An error a results file recorded',
        """\
`render` or `merge` read a results file of a run that stopped on an error: its message and its
exit code again. Fix what it names and run `verify` again.
"""),
    "ResultsError": Explanation(
        'Not a results file',
        """\
The document given to `render`, `merge` or `evidence-check` is not a results file of this
schema, or fails a check of its facts (a forged verdict, a text that is not its digest), with
the first thing wrong. Exit 2. Give the file `verify --json` wrote, unedited.
"""),
    "OlderResults": Explanation(
        'A results file from before column locations',
        """\
The results were written by a mutharness that did not locate mutations to the column, which
the reports need. Exit 2. Run `verify` again with this version.
"""),
    "ElementsDamaged": Explanation(
        "The report viewer's copy is damaged",
        """\
The shipped copy of the mutation-testing-elements web component is not the pinned one (its
checksum differs). Exit 5. Reinstall mutharness.
"""),
    "ConfigProblem": Explanation(
        'The project config cannot be used',
        """\
Every problem of the file at once, each naming the key: an unknown key (with the option
nearest it: `timeout-flor: is not a mutharness option (did you mean timeout-floor?)`), a wrong
type, a value out of range, a file that is not TOML, or a config git does not report. Exit 2.
Fix each key (`mutharness verify --help` lists every option).
"""),
})

COMMAND: Final = "mutharness explain"  # the command that prints an entry
_LINK = re.compile(r"\[([^\]]+)\]\([^)]+\)")  # a Markdown link: its text stays on a terminal


def pointer(name: str) -> str:
    """The line every error ends with: the command that prints its entry wherever mutharness
    is installed (a tool install holds no docs/ directory)."""
    return f"explained: {COMMAND} {name}"


def errors_page_section() -> str:
    """The errors half of docs/messages.md: an entry per class, anchored by its name."""
    return "\n\n".join(f"### {entry.title} {{#{name}}}\n\n{entry.text.strip()}"
                       for name, entry in EXPLANATIONS.items())


def as_text(name: str) -> str:
    """`name`'s entry for a terminal: its heading, then its paragraphs, links as their text."""
    entry = EXPLANATIONS[name]
    text = _LINK.sub(r"\1", entry.text)
    return f"{name}: {entry.title}\n\n{text}"
