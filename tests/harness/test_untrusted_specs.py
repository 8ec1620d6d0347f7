"""Untrusted specs: every hostile input is refused before any workspace exists.

Each test runs the real command line on a real committed repository with TMPDIR pointed at an
empty directory, and proves that a refused spec: exits 2 with one clear error naming the spec
and the JSON pointer of each problem; printed no `baseline:` line; left TMPDIR empty (no
workspace was ever made) and the user's tree and `.git` byte-identical (no `.mutharness/`
either); and finished in bounded time and memory (the child's own high-water RSS, on Linux).
Refusals are batched: one spec holds many bad mutations and the error must list them all.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import CALC, Completed, Project, default_spec, git
from liverun import Sandbox, snapshot

from mutharness.digest import changed_paths

Cli = Callable[..., Completed]
MakeProject = Callable[..., Project]

TIME_BOUND_S = 20.0
MEMORY_BOUND_MIB = 300.0
POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="symlinks and FIFOs")


@dataclass(frozen=True)
class Measured:
    """A finished CLI child: its exit status, output, wall time and peak resident memory."""

    code: int
    out: str
    err: str
    seconds: float
    peak_mib: float | None  # None where it cannot be measured

    def problems(self) -> list[str]:
        """The problem lines of a spec error (`  <spec>#<pointer>: <text>`)."""
        return [line.strip() for line in self.err.splitlines() if line.startswith("  ")]

    def problem_at(self, spec: str, pointer: str) -> str:
        """The one problem reported at `spec#pointer`."""
        found = [line for line in self.problems() if line.startswith(f"{spec}#{pointer}: ")]
        assert len(found) == 1, (spec, pointer, self.err)
        return found[0]


# `python -m mutharness` that, at exit, writes its own high-water RSS (VmHWM: the child's own
# address space only, unlike ru_maxrss, which a child inherits from the forking pytest) and
# the largest RSS of the processes it waited for (git), in KiB.
LAUNCHER = """\
import atexit, resource, runpy, sys
def _report(path=sys.argv.pop(1)):
    with open("/proc/self/status") as status:
        hwm = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    with open(path, "w") as out:
        out.write(f"{hwm} {children}")
atexit.register(_report)
sys.argv[0] = "mutharness"
runpy.run_module("mutharness", run_name="__main__", alter_sys=True)
"""
MEASURABLE = sys.platform == "linux" and Path("/proc/self/status").exists()


def run_measured(cwd: Path, args: Sequence[str], env: Mapping[str, str],
                 timeout: float = 120) -> Measured:
    """Run the real `mutharness` command line; measure its wall time and peak memory."""
    scratch = Path(tempfile.mkdtemp(prefix="measured-", dir=cwd.parent))
    rss = scratch / "rss"
    argv = [sys.executable, "-c", LAUNCHER, str(rss)] if MEASURABLE else [
        sys.executable, "-m", "mutharness"]
    started = time.monotonic()
    with (scratch / "out").open("wb") as out, (scratch / "err").open("wb") as err:
        proc = subprocess.Popen([*argv, *args], cwd=cwd, env=dict(env), stdout=out, stderr=err)
        try:
            proc.wait(timeout)
        finally:
            proc.kill()
            proc.wait()
    seconds = time.monotonic() - started
    peak = max(int(kib) for kib in rss.read_text().split()) / 1024 if rss.exists() else None
    done = Measured(
        proc.returncode,
        (scratch / "out").read_text(encoding="utf-8", errors="replace"),
        (scratch / "err").read_text(encoding="utf-8", errors="replace"),
        seconds, peak,
    )
    shutil.rmtree(scratch)
    return done


def refused(project: Project, sandbox: Sandbox, *args: str, command: str = "verify",
            **env: str) -> Measured:
    """Run `mutharness <command> args` and assert everything a refusal promises."""
    before = snapshot(project.root)
    done = run_measured(project.root, [command, *args],
                        {**sandbox.env(), "PYTHONIOENCODING": "utf-8", **env})
    print(f"\n[{command} {' '.join(args)[:80]}] exit {done.code} in {done.seconds:.2f} s, "
          f"peak RSS {done.peak_mib and round(done.peak_mib, 1)} MiB")
    assert done.code == 2, done.out + done.err
    assert "Traceback" not in done.err, done.err
    assert done.err.startswith("mutharness: error: "), done.err
    assert "baseline:" not in done.out, done.out
    assert list(sandbox.tmpdir.iterdir()) == [], "a workspace was made for a refused spec"
    assert changed_paths(before, snapshot(project.root)) == ()
    assert not (project.root / ".mutharness").exists()
    assert done.seconds < TIME_BOUND_S, done.seconds
    if done.peak_mib is not None:
        assert done.peak_mib < MEMORY_BOUND_MIB, done.peak_mib
    return done


def mutation(file: str, anchor: str = "return age >= 18", **extra: Any) -> dict[str, Any]:
    return {"name": f"target {file!r}", "file": file, "anchor": anchor,
            "replacement": "return age >= 17", **extra}


def spec_with(mutations: Iterable[dict[str, Any]], **overrides: Any) -> dict[str, Any]:
    return default_spec(mutations=list(mutations), **overrides)


# ---------------------------------------------------------------------------------------------
# `file`: path syntax (refused by the schema, before git is asked anything)

BAD_PATHS = [
    ("/etc/passwd", "is absolute"),
    ("C:/x.py", "starts with a drive letter"),
    ("C:x.py", "starts with a drive letter"),
    ("c:\\windows\\x.py", "contains a backslash"),
    ("//server/share/x.py", "is absolute"),
    ("src/../src/calc.py", "'..' component"),
    ("../outside.py", "'..' component"),
    ("./src/calc.py", "'.' or '..' component"),
    ("src//calc.py", "empty, '.' or '..' component"),
    ("src\\calc.py", "contains a backslash"),
    ("NUL.py", "reserved Windows device name"),
    ("con.txt", "reserved Windows device name"),
    ("src/aux", "reserved Windows device name"),
    ("src/calc.py.", "ending in a dot or space"),
    ("src/calc.py ", "ending in a dot or space"),
    ("src/calc.py:stream", "contains ':'"),
    ("src/calc\x00.py", "control character"),
    ("src/ca*lc.py", "which Windows does not allow"),
]


def test_absolute_drive_unc_dotdot_backslashed_and_reserved_file_paths_are_all_refused_together(
    make_project: MakeProject, tmp_path: Path
) -> None:
    project = make_project()
    spec = project.spec("paths", spec_with(mutation(path) for path, _ in BAD_PATHS), commit=True)
    sandbox = Sandbox.under(tmp_path)

    done = refused(project, sandbox, str(spec.relative_to(project.root)))

    assert f"{len(BAD_PATHS)} problem(s) in the spec(s); nothing was run:" in done.err
    for index, (path, reason) in enumerate(BAD_PATHS):
        line = done.problem_at("specs/paths.json", f"/mutations/{index}/file")
        assert reason in line, line
        assert repr(path) in line, line
    assert "\x00" not in done.err


# ---------------------------------------------------------------------------------------------
# `file`: syntactically fine, but not a tracked regular file (refused by the tree check)

SUBMODULE_FILE = "lib.py"


def _add_hostile_targets(project: Project, tmp_path: Path) -> None:
    """Commit a tracked symlink, a symlinked directory, a real submodule, a bare gitlink,
    UTF-16 text, a binary and an oversized file; leave an ignored and an untracked file."""
    root = project.root
    other = tmp_path / "other-repo"
    other.mkdir()
    git(other, "init", "-q")
    (other / SUBMODULE_FILE).write_text("value = 1\n")
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "library")
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(other),
        "vendored")
    (root / "link.py").symlink_to("src/calc.py")
    (root / "escape.py").symlink_to("/etc/passwd")
    (root / "srclink").symlink_to("src", target_is_directory=True)
    project.write(".gitignore", "ignored.py\n")
    project.write("ignored.py", CALC)
    project.write("src/wide.py", CALC.encode("utf-16"))
    project.write("data.bin", b"\x89PNG\r\n\x1a\n\x00\x00" + CALC.encode())
    project.write("big.py", b"# " + b"x" * (17 * 1024 * 1024) + b"\n" + CALC.encode())
    project.commit("hostile targets")
    head = git(other, "rev-parse", "HEAD").strip()  # a gitlink with no .gitmodules entry
    git(root, "update-index", "--add", "--cacheinfo", f"160000,{head},gitlinked")
    git(root, "commit", "-q", "-m", "a bare gitlink")
    (root / "gitlinked").mkdir()  # as a clone without --recurse-submodules leaves it
    project.write("untracked.py", CALC)


NOT_TRACKED = [
    ("src/Calc.py", "not a file tracked at HEAD (the tracked path is 'src/calc.py': case differs)"),
    ("SRC/CALC.PY", "case differs"),
    ("untracked.py", "not a file tracked at HEAD"),
    ("ignored.py", "not a file tracked at HEAD"),
    ("missing.py", "not a file tracked at HEAD"),
    ("src", "is a directory, not a file"),
    ("vendored", "is a submodule, not a regular file"),
    (f"vendored/{SUBMODULE_FILE}", "inside the submodule vendored"),
    ("gitlinked", "is a submodule, not a regular file"),
    ("link.py", "is a symlink, not a regular file"),
    ("escape.py", "is a symlink, not a regular file"),
    ("srclink/calc.py", "under srclink, a symlink"),
    ("src/wide.py", "is binary (a NUL byte at offset 3; UTF-16 text is binary here)"),
    ("data.bin", "is binary (a NUL byte at offset 8"),
    ("big.py", "bytes; the limit for a target is 16777216"),
]


@POSIX_ONLY
def test_targets_that_are_not_tracked_regular_text_files_are_all_refused_together_with_a_reason(
    make_project: MakeProject, tmp_path: Path
) -> None:
    project = make_project()
    _add_hostile_targets(project, tmp_path)
    spec = project.spec("targets", spec_with(mutation(path) for path, _ in NOT_TRACKED))
    sandbox = Sandbox.under(tmp_path)

    done = refused(project, sandbox, str(spec.relative_to(project.root)))

    assert f"{len(NOT_TRACKED)} problem(s) in the spec(s); nothing was run:" in done.err
    for index, (path, reason) in enumerate(NOT_TRACKED):
        line = done.problem_at("specs/targets.json", f"/mutations/{index}/file")
        assert reason in line, line
        assert f"file {path}" in line, line
    assert "root:" not in done.err  # nothing of /etc/passwd was read into a message


@POSIX_ONLY
def test_check_refuses_the_same_targets_for_the_same_reasons(
    make_project: MakeProject, tmp_path: Path
) -> None:
    project = make_project()
    _add_hostile_targets(project, tmp_path)
    spec = project.spec("targets", spec_with(mutation(path) for path, _ in NOT_TRACKED))
    sandbox = Sandbox.under(tmp_path)

    done = refused(project, sandbox, str(spec.relative_to(project.root)), command="check")

    assert f"{len(NOT_TRACKED) - 1} problem(s) in the spec(s)" in done.err
    for index, (path, reason) in enumerate(NOT_TRACKED):
        if path == "untracked.py":  # `check` sees the working tree: a new file is a target
            assert f"#/mutations/{index}/" not in done.err
            continue
        assert reason in done.problem_at("specs/targets.json", f"/mutations/{index}/file")


# ---------------------------------------------------------------------------------------------
# A tracked directory that the working tree replaced with a symlink out of the repository

OUTSIDE_ANCHOR = "SECRET = 'outside'"


def _symlink_pkg_out(project: Project, tmp_path: Path) -> Path:
    """Track `pkg/mod.py`, then replace `pkg/` in the working tree by a symlink to a directory
    outside the repository whose `mod.py` holds text found nowhere in the repository."""
    project.write("pkg/mod.py", "SECRET = 'inside'\n")
    project.commit("pkg")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "mod.py").write_text(f"{OUTSIDE_ANCHOR}\n")
    for path in (project.root / "pkg").iterdir():
        path.unlink()
    (project.root / "pkg").rmdir()
    (project.root / "pkg").symlink_to(outside, target_is_directory=True)
    return outside


@POSIX_ONLY
@pytest.mark.parametrize("command", [["verify"], ["verify", "--allow-dirty"], ["check"]])
def test_a_target_under_a_directory_the_working_tree_replaced_with_a_symlink_is_refused(
    make_project: MakeProject, tmp_path: Path, command: list[str]
) -> None:
    project = make_project()
    outside = _symlink_pkg_out(project, tmp_path)
    before = snapshot(outside)
    project.spec("pkg", spec_with([mutation("pkg/mod.py", OUTSIDE_ANCHOR)]), commit=False)
    sandbox = Sandbox.under(tmp_path)

    done = refused(project, sandbox, *command[1:], "specs/pkg.json", command=command[0])

    line = done.problem_at("specs/pkg.json", "/mutations/0/file")
    assert "under pkg, a symlink" in line, line
    assert snapshot(outside) == before


# ---------------------------------------------------------------------------------------------
# Spec files that are too big, too deep, too many, not UTF-8, or not files at all

def _write_whitespace(path: Path, size: int) -> None:
    chunk = b" " * (1024 * 1024)
    with path.open("wb") as out:
        for _ in range(size // len(chunk)):
            out.write(chunk)
        out.write(b"{}")


def _hostile_spec_files(directory: Path) -> dict[str, str]:
    """Write hostile spec files; map each file name to the reason its refusal must give."""
    directory.mkdir()
    expected: dict[str, str] = {}

    def put(name: str, data: bytes | str, reason: str) -> None:
        (directory / name).write_bytes(data if isinstance(data, bytes) else data.encode())
        expected[name] = reason

    _write_whitespace(directory / "huge.json", 100 * 1024 * 1024)
    expected["huge.json"] = "is larger than 1048576 bytes"
    put("deep.json", "[" * 100_000, "nests 100000 levels deep; the limit is 32")
    big_anchor = default_spec(mutations=[mutation("src/calc.py", "x" * (10 * 1024 * 1024))])
    put("anchor-10mib.json", json.dumps(big_anchor), "is larger than 1048576 bytes")
    long_anchor = default_spec(mutations=[mutation("src/calc.py", "x" * (100 * 1024))])
    put("anchor-100kib.json", json.dumps(long_anchor),
        "is 102400 characters; the limit is 65536")
    many = default_spec(mutations=[mutation("src/calc.py")] * 100_000)
    put("many-real.json", json.dumps(many), "is larger than 1048576 bytes")
    put("many-small.json", json.dumps(default_spec(mutations=[0] * 100_000)),
        "has 100000 mutations; the limit is 1000")
    put("digits.json", '{"tests": ["t.py"], "expectBaselinePass": ' + "9" * 100_000 + "}",
        "(100000 digits) is too large")
    put("empty-1000.json", json.dumps(default_spec(mutations=[{}] * 1000)),
        "and 3950 more problem(s) in this file")
    keys = {f"k{index}": 0 for index in range(50_000)}
    put("keys-50000.json", json.dumps({**default_spec(), **keys}),
        "and 49950 more problem(s) in this file")
    text = json.dumps(default_spec(), ensure_ascii=False).replace("the low bound", "caf\u00e9")
    put("latin-1.json", text.encode("latin-1"), "is not valid UTF-8")
    put("utf-16.json", text.encode("utf-16"), "is not valid UTF-8")
    put("bom.json", b"\xef\xbb\xbf" + text.encode("utf-8"), "starts with a UTF-8 byte order mark")
    if sys.platform != "win32":
        (directory / "zero.json").symlink_to("/dev/zero")
        expected["zero.json"] = "is not a regular file"
        os.mkfifo(directory / "fifo.json")
        expected["fifo.json"] = "is not a regular file"
    return expected


def test_oversized_deep_numerous_and_non_utf8_spec_files_are_refused_in_bounded_time_and_memory(
    make_project: MakeProject, tmp_path: Path
) -> None:
    project = make_project()
    expected = _hostile_spec_files(tmp_path / "hostile")
    sandbox = Sandbox.under(tmp_path)

    done = refused(project, sandbox, *(str(tmp_path / "hostile" / name) for name in expected))

    for name, reason in expected.items():
        lines = [line for line in done.problems()
                 if line.startswith(str(tmp_path / "hostile" / name))]
        assert lines, (name, done.err)
        assert any(reason in line for line in lines), (name, reason, lines)
    assert len(done.err.splitlines()) < 400  # 54,000 problems, but a bounded report
    assert len(done.err) < 100_000


# ---------------------------------------------------------------------------------------------
# `tests` entries and keys that try to choose what runs

EVIL_PLUGIN = '''\
import pathlib
pathlib.Path(__file__).with_name("EVIL_RAN").write_text("the plugin was imported")
'''

INJECTED_TESTS = [
    ("-p evil", "starts with '-'"),
    ("-pevil", "starts with '-'"),
    ("--basetemp=/", "starts with '-'"),
    ("--json-report-file=/tmp/x.json", "starts with '-'"),
    ("@args.txt", "starts with '@'"),
    ("/etc", "is absolute"),
    ("../tests/test_calc.py", "'..' component"),
    ("tests/test_calc.py::", "empty node id"),
]

COMMAND_KEYS = ("command", "cmd", "args", "pytestArgs", "addopts", "env", "environment",
                "python", "plugins", "cwd", "reportPath", "jsonReportFile", "timeout",
                "shell", "basetemp")


def test_tests_entries_that_inject_options_and_keys_that_choose_commands_are_all_refused(
    make_project: MakeProject, tmp_path: Path
) -> None:
    project = make_project()
    project.write("evil.py", EVIL_PLUGIN)
    project.write("args.txt", "-p evil\n")
    project.commit("an attacker's plugin and argument file")
    document = default_spec(tests=[entry for entry, _ in INJECTED_TESTS])
    document.update({key: ["-p", "evil"] for key in COMMAND_KEYS})
    document["mutations"][0].update({"env": {"PYTEST_PLUGINS": "evil"}, "command": "sh -c id",
                                     "timeout": 0})
    project.spec("inject", document, commit=True)
    sandbox = Sandbox.under(tmp_path)

    done = refused(project, sandbox, "specs/inject.json", PYTHONPATH=str(project.root))

    for index, (_, reason) in enumerate(INJECTED_TESTS):
        assert reason in done.problem_at("specs/inject.json", f"/tests/{index}")
    for key in COMMAND_KEYS:
        assert "unknown key" in done.problem_at("specs/inject.json", f"/{key}")
    for key in ("env", "command", "timeout"):
        assert "unknown key" in done.problem_at("specs/inject.json", f"/mutations/0/{key}")
    assert not (project.root / "EVIL_RAN").exists()


@POSIX_ONLY
def test_tests_entries_must_name_tracked_files_or_directories_never_a_symlink_out(
    make_project: MakeProject, tmp_path: Path
) -> None:
    project = make_project()
    (project.root / "tests_root").symlink_to("/", target_is_directory=True)
    (project.root / "test_link.py").symlink_to("tests/test_calc.py")
    project.commit("links")
    entries = [
        ("tests_root", "is a symlink"),
        ("tests_root/etc", "under tests_root, a symlink"),
        ("test_link.py::test_clamp_below", "is a symlink"),
        ("tests/test_missing.py", "names nothing tracked at HEAD"),
        ("Tests/test_calc.py", "names nothing tracked at HEAD"),
    ]
    project.spec("tests", default_spec(tests=[entry for entry, _ in entries]), commit=True)
    sandbox = Sandbox.under(tmp_path)

    done = refused(project, sandbox, "specs/tests.json")

    for index, (_, reason) in enumerate(entries):
        assert reason in done.problem_at("specs/tests.json", f"/tests/{index}")


def test_terminal_control_characters_in_names_and_keys_never_reach_the_terminal(
    make_project: MakeProject, tmp_path: Path
) -> None:
    project = make_project()
    document = default_spec()
    document["mutations"][0]["name"] = "clear the screen \x1b[2J\x1b]0;pwned\x07 now"
    document["mutations"][1]["name"] = "reads as harmless \u202egnp.exe"
    document["\x1b[31mred"] = 1
    project.spec("control", document, commit=True)
    sandbox = Sandbox.under(tmp_path)

    done = refused(project, sandbox, "specs/control.json")

    assert "\x1b" not in done.err and "\x07" not in done.err and "\u202e" not in done.err
    assert "control character" in done.problem_at("specs/control.json", "/mutations/0/name")
    assert "control character" in done.problem_at("specs/control.json", "/mutations/1/name")
    assert "unknown key" in done.problem_at("specs/control.json", "/\\x1b[31mred")


# ---------------------------------------------------------------------------------------------
# Hostile names that are valid text: escaped in the evidence of a real run

HOSTILE_NAMES = [
    "the low bound is ignored <script>alert(1)</script> @octocat [click](https://evil.example)",
    "SURVIVOR (documented): **bold** <img src=x onerror=alert(1)> | pipe @team/admins "
    "![x](http://evil.example/p.png) www.evil.example",
]


def test_a_real_verify_renders_hostile_mutation_names_as_inert_text_in_the_evidence(
    make_project: MakeProject, tmp_path: Path
) -> None:
    document = default_spec()
    for entry, name in zip(document["mutations"], HOSTILE_NAMES, strict=True):
        entry["name"] = name
    project = make_project(spec=document)
    sandbox = Sandbox.under(tmp_path)
    evidence = tmp_path / "evidence"

    done = run_measured(project.root, ["verify", "specs/calc.json", "--evidence",
                                       str(evidence), "--json", str(tmp_path / "results.json")],
                        {**sandbox.env(), "PYTHONIOENCODING": "utf-8"})

    assert done.code == 0, done.out + done.err
    text = (evidence / "calc.md").read_text(encoding="utf-8")
    assert "<script" not in text and "<img" not in text
    assert "@octocat" not in text and "@team" not in text
    assert "](" not in text.replace("\\](", "")  # no [text](target) or ![image](target)
    assert "https://evil.example" not in text and "www.evil.example" not in text
    assert "**bold**" not in text
    assert "&lt;script&gt;" in text and "&#64;octocat" in text  # shown, as typed
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    names = [m["name"] for m in results["specs"][0]["mutations"]]
    assert names == HOSTILE_NAMES  # the facts keep the names exactly; only rendering escapes
    assert list(sandbox.tmpdir.iterdir()) == []


# ---------------------------------------------------------------------------------------------
# --allow-dirty: the overlay of uncommitted paths never follows a symlinked directory

TEST_NOTHING_LEAKED = '''\
import pathlib


def test_no_outside_bytes_came_into_the_workspace():
    mod = pathlib.Path("pkg/mod.py")
    assert not mod.exists() or "LEAKED" not in mod.read_text(encoding="utf-8")
'''


@POSIX_ONLY
def test_allow_dirty_never_reads_writes_or_deletes_through_a_symlinked_directory(
    make_project: MakeProject, cli: Cli, tmp_path: Path
) -> None:
    outside = {name: tmp_path / "outside" / name for name in ("read", "write", "delete")}
    for directory in outside.values():
        directory.mkdir(parents=True)
    (outside["read"] / "mod.py").write_text("SECRET = 'LEAKED'\n")
    (outside["delete"] / "victim.py").write_text("precious = True\n")
    project = make_project(spec=default_spec(tests=["tests/"], expectBaselinePass=5))
    root = project.root
    project.write("pkg/mod.py", "SECRET = 'inside'\n")
    project.write("tests/test_leak.py", TEST_NOTHING_LEAKED)
    (root / "out").symlink_to(outside["write"], target_is_directory=True)
    (root / "out2").symlink_to(outside["delete"], target_is_directory=True)
    (root / "tests/notes.txt").symlink_to(outside["read"] / "mod.py")
    project.commit("a package and three committed links out of the repository")
    # the working tree: pkg/ became a link out; the links became real directories, holding an
    # untracked file (which the overlay must write) and an untracked link (which it deletes)
    shutil.rmtree(root / "pkg")
    (root / "pkg").symlink_to(outside["read"], target_is_directory=True)
    for link in ("out", "out2"):
        (root / link).unlink()
        (root / link).mkdir()
    (root / "out/new.py").write_text("NEW = 1\n")
    (root / "out2/victim.py").symlink_to("../src/calc.py")
    outside_before = snapshot(tmp_path / "outside")
    sandbox = Sandbox.under(tmp_path)
    before = snapshot(root)

    done = cli(root, "verify", "--allow-dirty", "specs/calc.json", "--json",
               str(tmp_path / "results.json"), env=sandbox.env())

    assert done.code == 0, done.out + done.err
    assert "dirty:" in done.out
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    depends_on = results["specs"][0]["depends_on"]
    assert "tests/test_leak.py" in depends_on
    assert "tests/notes.txt" not in depends_on  # a tracked link is never read through
    assert snapshot(tmp_path / "outside") == outside_before
    assert changed_paths(before, snapshot(root)) == ()
    assert sandbox.workspaces() == []
