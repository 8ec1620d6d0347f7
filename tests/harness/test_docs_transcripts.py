"""Every command shown with its output in the docs is run by this module, and prints that now.

A transcript is a ```text block whose lines start with `$ COMMAND` followed by what the
command printed (stdout and stderr as a terminal interleaves them), marked in the page by the
comment `<!-- transcript: NAME -->` on the line above it. NAME is a scene below: a real
project made in a temp directory, in which each command of the block runs (`mutharness` is the
command line of the interpreter running this suite). What the page shows and what the commands
print now must agree line by line, but for the values that change from run to run (commits,
digests, durations) and a line `...`, which stands for any number of lines left out.
Regenerate a page's blocks that differ with MUTHARNESS_WRITE_DOCS=1 (a block with `...` lines
is left for a person to edit: which lines it leaves out is a choice).
"""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import BOUNDS, CALC, calc_project, default_spec, git, run_cli
from nodes import NODE, OTHER_NODES, committed, major, spec_text
from test_node_concurrency import BESIDE, MUTATIONS, SHAPES, _beside
from test_node_installed import _clamp, monorepo, tally
from test_node_linger import lingering_project

ROOT = Path(__file__).resolve().parents[2]
# the pages that show commands: the README and the site's hand-written pages; docs/index.md
# is the README (test_reference_docs keeps it so); PERFORMANCE.md shows measurements of one
# machine, which a test cannot repeat
PAGES = [ROOT / "README.md", *sorted(
    page for page in (ROOT / "docs").glob("*.md")
    if page.name not in {"index.md", "PERFORMANCE.md"})]
MARKER = re.compile(r"<!-- transcript: ([a-z0-9-]+) -->\n```text\n(.*?)```", re.S)
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
ELIDED = "..."

pytestmark = pytest.mark.skipif(os.name == "nt", reason="the docs' transcripts are POSIX shells")


@dataclass(frozen=True)
class Block:
    """One transcript in a page: its scene and its lines."""

    page: Path
    scene: str
    text: str


def blocks() -> list[Block]:
    """Every transcript of every page, in page order."""
    return [Block(page, found.group(1), found.group(2))
            for page in PAGES
            for found in MARKER.finditer(page.read_text("utf-8"))]


def commands(text: str) -> list[str]:
    """The commands of a transcript: its `$ ` lines, a line ending in `\\` joined to the next."""
    found: list[str] = []
    lines = iter(text.splitlines())
    for line in lines:
        if not line.startswith("$ "):
            continue
        command = line[2:]
        while command.endswith("\\"):
            command = command[:-1] + next(lines).strip()
        found.append(command)
    return found


VOLATILE = [
    (re.compile(r"\b[0-9a-f]{40}\b"), "<commit>"),
    (re.compile(r"\b[0-9a-f]{12}\b"), "<commit>"),
    (re.compile(r"sha256:[0-9a-f]{16,64}"), "sha256:<digest>"),
    (re.compile(r"\b\d+(?:\.\d+)? s\b"), "<t> s"),
    (re.compile(r'time="[0-9.]+"'), 'time="<t>"'),
]


def normal(line: str) -> str:
    """A line with what changes from run to run (commits, digests, durations) made constant."""
    for pattern, constant in VOLATILE:
        line = pattern.sub(constant, line)
    return line.rstrip()


def align(shown: list[str], printed: list[str]) -> list[str] | None:
    """`printed` as the page would show it (each `...` of `shown` kept in place of the lines
    it stands for), when `shown` matches it; None when it does not."""
    wanted = [normal(line) for line in shown]
    got = [normal(line) for line in printed]

    @functools.cache
    def match(i: int, j: int) -> tuple[str, ...] | None:
        if i == len(wanted):
            return () if j == len(got) else None
        if wanted[i].strip() == ELIDED:
            for k in range(j, len(got) + 1):
                rest = match(i + 1, k)
                if rest is not None:
                    return (shown[i], *rest)
            return None
        if j < len(got) and wanted[i] == got[j]:
            rest = match(i + 1, j + 1)
            return None if rest is None else (printed[j].rstrip(), *rest)
        return None

    found = match(0, 0)
    return None if found is None else list(found)


# ---- the scenes: a project in `base`, and the directory the commands run in ----

Scene = Callable[[Path], Path]


def _this_repository(base: Path) -> Path:
    """A clone of this repository (its committed tree, as CI checks it out)."""
    git(base, "clone", "-q", "--no-hardlinks", str(ROOT), "mutharness")
    return base / "mutharness"


SESSION_FIX = "5e656c04663a89a8460e4ebb0c9ac5396a9b5a32"  # the bridge fix suggest drafted for


def _session(base: Path) -> Path:
    """This repository at its bridge fix (a real commit of its history: Claude Code's failed
    Bash result read, image parts left out), the change `mutharness suggest` drafted
    specs/bridge-observations.json from, in the commit after it."""
    shallow = git(ROOT, "rev-parse", "--is-shallow-repository").strip() == "true"
    if shallow:  # a CI checkout of depth 1: the recorded commit is not in it
        pytest.skip(f"a shallow checkout lacks the session's commit {SESSION_FIX[:12]}")
    root = _this_repository(base)
    git(root, "reset", "-q", "--hard", SESSION_FIX)
    return root


def _calc(base: Path) -> Path:
    """The calc project: two specs on one test file (4 tests)."""
    project = calc_project(base / "calc")
    project.spec("bounds", BOUNDS, commit=True)
    return project.root


def _since(base: Path) -> Path:
    """The calc project with the evidence of its last run committed (the record of what its
    verdicts depend on), then a commit that adds a conftest.py (shared test infrastructure),
    then one that changes only a README."""
    project = calc_project(base / "calc")
    _mutharness(project.root, "verify", "--evidence", "evidence")
    project.commit("evidence")
    project.write("tests/conftest.py", "import pytest\n")
    project.commit("a conftest for the tests")
    project.write("README.md", "# calc\n")
    project.commit("a readme")
    return project.root


def _shallow(base: Path) -> Path:
    """The calc project with a branch `fix` one commit ahead of `main`; the commands run
    beside it, where a CI job's shallow clone of `fix` is made."""
    project = calc_project(base / "project")
    git(project.root, "switch", "-q", "-c", "fix")
    project.write("src/calc.py", (project.root / "src/calc.py").read_text("utf-8") + "\n")
    project.commit("the fix")
    return base


BUGGY = CALC.replace("return age >= 18", "return age > 18")
TESTS_BEFORE_THE_FIX = '''\
from calc import clamp, is_adult


def test_clamp_below():
    assert clamp(-5, 0, 10) == 0


def test_adult_at_nineteen():
    assert is_adult(19)
'''
TESTS_OF_THE_FIX = '''\
from calc import is_adult


def test_adult_at_eighteen():
    assert is_adult(18)


def test_a_child_is_not_an_adult():
    assert not is_adult(17)
'''


def _redfirst(base: Path) -> Path:
    """The calc project with an off-by-one in `is_adult`, then the commit that fixes it and
    adds its tests."""
    project = calc_project(base / "calc", default_spec(mutations=[]))
    project.write("src/calc.py", BUGGY)
    project.write("tests/test_calc.py", TESTS_BEFORE_THE_FIX)
    project.commit("is_adult, as first written")
    project.write("src/calc.py", CALC)
    project.write("tests/test_adult.py", TESTS_OF_THE_FIX)
    project.commit("fix: 18 is an adult")
    return project.root


def _suggest(base: Path) -> Path:
    """The fix of `_redfirst`, which also touches a line of `clamp` its tests do not pin."""
    root = _redfirst(base)
    text = (root / "src/calc.py").read_text("utf-8")
    (root / "src/calc.py").write_text(
        text.replace("    if value > high:\n", "    if value > high:  # the cap\n"), "utf-8")
    git(root, "commit", "-q", "--amend", "-a", "--no-edit")
    return root


def _evidence_check(base: Path) -> Path:
    """The calc project with a conftest.py, verified into committed evidence; then the
    conftest edited."""
    project = calc_project(base / "calc")
    project.write("tests/conftest.py", "import pytest\n")
    project.commit("a conftest")
    _mutharness(project.root, "verify", "--evidence", "evidence")
    project.commit("evidence")
    project.write("tests/conftest.py", "import pytest\n\nAGE = 18\n")
    return project.root


def _reports(base: Path) -> Path:
    return calc_project(base / "calc").root


def _node_tally(base: Path) -> Path:
    """A package that imports `is-number` from the registry (npm installed it), its spec in
    `test/mutations/`, no config file."""
    root = tally(base / "tally", "commonjs")
    (root / "test/mutations").mkdir(parents=True)
    git(root, "mv", "specs/tally.json", "test/mutations/tally.json")
    (root / "specs").rmdir()
    git(root, "commit", "-q", "-m", "specs where the original harness keeps them")
    return root


def _node_monorepo(base: Path) -> Path:
    return monorepo(base / "mono")


def _node_typescript(base: Path) -> Path:
    return _clamp(base / "ts", {
        "package.json": json.dumps({"name": "ts", "version": "1.0.0", "type": "module"})})


# a timer that holds its file 3 s after its test: the note is certain under any load
TIMER = """\
const test = require('node:test');
const assert = require('node:assert');
const { add } = require('../lib/calc.js');
test('adds zero', () => { assert.strictEqual(add(4, 0), 4); });
setTimeout(() => {}, 3000);
"""


def _node_linger(base: Path) -> Path:
    """Two test files that leave a server open and one that a timer holds."""
    root = lingering_project(base / "linger")
    (root / "test/timer.test.js").write_text(TIMER, encoding="utf-8")
    git(root, "commit", "-q", "-a", "-m", "a longer timer")
    return root


def _node_concurrency(base: Path) -> Path:
    """Two test files of which one fails when they run at once (the first watches for the
    second), and `[node] concurrency = 2`."""
    return committed(base / "shapes", {
        ".gitignore": ".mutharness/\n",
        "package.json": json.dumps({"name": "shapes", "version": "1.0.0"}),
        "mutharness.toml": "[node]\nconcurrency = 2\n",
        "lib/shapes.js": SHAPES,
        "test/beside.js": BESIDE,
        # both run 4 s: at once they overlap unless node starts them 4 s apart
        "test/first.test.js": _beside("first area", "first", "second", 4000,
                                      "shapes.area(1, 1)", 1),
        "test/second.test.js": _beside("second perimeter", "second", "nobody", 4000,
                                       "shapes.perimeter(1, 1)", 4),
        "specs/beside.json": spec_text(["test/first.test.js", "test/second.test.js"], 2,
                                       MUTATIONS[:1]),
    }, "shapes, and two test files that must not run at once")


def _newest_node() -> str | None:
    found = [node for node in ([NODE] if NODE else []) + OTHER_NODES]
    return max(found, key=major, default=None)


@dataclass(frozen=True)
class Setting:
    """A scene and what its commands need: the newest node this machine has on PATH, when it
    is new enough; npm."""

    make: Scene
    node: int = 0  # the lowest major version of node the scene runs on (0: no node)
    needs_npm: bool = False


SCENES: dict[str, Setting] = {
    "wire-encoding": Setting(_this_repository),
    "baseline-all": Setting(_calc),
    "since": Setting(_since),
    "shallow-clone": Setting(_shallow),
    "redfirst": Setting(_redfirst),
    "evidence-check": Setting(_evidence_check),
    "suggest": Setting(_suggest),
    "suggest-session": Setting(_session),
    "suggest-draft": Setting(_session),
    "reports": Setting(_reports),
    "node-tally": Setting(_node_tally, node=20, needs_npm=True),
    "node-monorepo": Setting(_node_monorepo, node=20, needs_npm=True),
    "node-typescript": Setting(_node_typescript, node=23, needs_npm=True),  # types stripped
    "node-linger": Setting(_node_linger, node=20),
    "node-concurrency": Setting(_node_concurrency, node=20),
}


def _shim(directory: Path) -> Path:
    """A directory holding a `mutharness` command: this interpreter's mutharness (`-P`: never
    the copy in the directory a command runs in, as in a clone of this repository)."""
    directory.mkdir(parents=True, exist_ok=True)
    command = directory / "mutharness"
    command.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -P -m mutharness "$@"\n',
                       encoding="utf-8")
    command.chmod(0o755)
    return directory


def _environment(bin_dir: Path, node: str | None) -> dict[str, str]:
    """The commands' environment: a terminal's, unbuffered so stdout and stderr interleave as
    written, with no active virtual environment and no colour."""
    env = {key: value for key, value in os.environ.items()
           if key != "VIRTUAL_ENV" and not key.startswith(("TOX_", "PYTEST_", "MUTHARNESS_"))}
    path = [str(bin_dir)] + ([str(Path(node).parent)] if node else [])
    env.update(PATH=os.pathsep.join([*path, env.get("PATH", "")]), PYTHONUNBUFFERED="1",
               NO_COLOR="1", COLUMNS="100")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _mutharness(cwd: Path, *args: str) -> None:
    done = run_cli(cwd, *args)
    assert done.code == 0, done.out + done.err


def run(cwd: Path, lines: list[str], env: dict[str, str]) -> list[str]:
    """Each command run by the shell in `cwd`, as the page shows it: `$ COMMAND`, then what
    it printed."""
    printed: list[str] = []
    for command in lines:
        done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, timeout=600,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        printed.append(f"$ {command}")
        printed.extend(done.stdout.splitlines())
    return printed


def test_every_command_the_docs_show_with_its_output_is_a_transcript_of_a_scene() -> None:
    unmarked = []
    for page in PAGES:
        text = page.read_text("utf-8")
        marked = {found.start(2) for found in MARKER.finditer(text)}
        for fence in FENCE.finditer(text):
            shows_a_command = any(line.startswith("$ ") for line in fence.group(2).splitlines())
            if shows_a_command and fence.start(2) not in marked:
                unmarked.append(f"{page.relative_to(ROOT)}: {fence.group(2).splitlines()[0]}")
    assert unmarked == []
    named = {block.scene for block in blocks()}
    assert named <= set(SCENES), named - set(SCENES)
    assert set(SCENES) <= named, set(SCENES) - named  # no scene left that no page shows


def _scene_blocks(scene: str) -> Iterator[Block]:
    return (block for block in blocks() if block.scene == scene)


@pytest.mark.parametrize("scene", sorted(SCENES))
def test_each_transcript_in_the_docs_is_what_its_commands_print_now(
    scene: str, tmp_path: Path, git_home: Path
) -> None:
    setting = SCENES[scene]
    node = _newest_node() if setting.node else None
    if setting.node and (node is None or major(node) < setting.node):
        pytest.skip(f"node {setting.node} or newer (.ci/run installs 22 and 24)")
    if setting.needs_npm and shutil.which("npm") is None:
        pytest.skip("npm (.ci/run installs it)")
    cwd = setting.make(tmp_path)
    env = _environment(_shim(tmp_path / "bin"), node)
    writing = os.environ.get("MUTHARNESS_WRITE_DOCS") == "1"
    differ = []
    for block in _scene_blocks(scene):
        shown = block.text.splitlines()
        printed = run(cwd, commands(block.text), env)
        aligned = align(shown, printed)
        if aligned is None:
            differ.append(f"{block.page.relative_to(ROOT)} shows:\n{block.text}\n"
                          "and its commands print:\n" + "\n".join(printed))
            if writing and ELIDED in (line.strip() for line in shown):
                differ.append("(not rewritten: its `...` lines are a person's choice; edit it "
                              "by hand, or drop them and write it again)")
            elif writing:
                _rewrite(block, printed)
    assert differ == [], "\n\n".join(differ)


def _rewrite(block: Block, printed: list[str]) -> None:
    page = block.page.read_text("utf-8")
    old = f"<!-- transcript: {block.scene} -->\n```text\n{block.text}```"
    assert page.count(old) == 1
    new = f"<!-- transcript: {block.scene} -->\n```text\n" + "\n".join(printed) + "\n```"
    block.page.write_text(page.replace(old, new), encoding="utf-8")


ALIGN_TABLE = [
    (["a", "b"], ["a", "b"], ["a", "b"]),
    (["a", "b"], ["a", "c"], None),
    (["a", "...", "d"], ["a", "b", "c", "d"], ["a", "...", "d"]),
    (["a", "...", "d"], ["a", "d"], ["a", "...", "d"]),
    (["...", "x"], ["a", "x", "b"], None),  # what follows the last `...` must end it
    (["HEAD 6a84ce220cbb  clean"], ["HEAD 0123456789ab  clean"], ["HEAD 0123456789ab  clean"]),
    (["baseline 4 pass (0.07 s)"], ["baseline 4 pass (12.50 s)"], ["baseline 4 pass (12.50 s)"]),
    (["baseline 4 pass (0.07 s)"], ["baseline 5 pass (0.07 s)"], None),
]


@pytest.mark.parametrize(("shown", "printed", "aligned"), ALIGN_TABLE)
def test_a_transcript_matches_what_was_printed_but_for_what_changes_per_run(
    shown: list[str], printed: list[str], aligned: list[str] | None
) -> None:
    assert align(shown, printed) == aligned


def test_a_transcript_s_commands_are_its_dollar_lines_with_continuations_joined() -> None:
    text = "$ mutharness redfirst --base c40b5bc \\\n    --test a \\\n    --test b\nout\n$ ls\n"
    assert commands(text) == ["mutharness redfirst --base c40b5bc --test a --test b", "ls"]
