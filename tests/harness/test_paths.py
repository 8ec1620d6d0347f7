"""paths.path_problem and the pytest runner's entry_problem: portable, repo-relative paths."""

from __future__ import annotations

import pytest

from mutharness.paths import MAX_PATH_CHARS, path_problem
from mutharness.runners.pytest.rules import entry_problem

GOOD_PATHS = [
    "src/toolwire/gate.py",
    "gate.py",
    "a/b/c/d.txt",
    ".github/workflows/ci.yml",
    "src/.hidden",
    "tests/__init__.py",
    "src/nul_device.py",
    "src/console.py",
    "src/com10.py",
    "src/lpt.py",
    "src/my file.py",
    "src/caf\u00e9.py",
    "-starts-with-dash.py",
    "x" * MAX_PATH_CHARS,
]


@pytest.mark.parametrize("path", GOOD_PATHS)
def test_a_portable_repo_relative_path_has_no_problem(path: str) -> None:
    assert path_problem(path) is None


BAD_PATHS = [
    # (path, a phrase of the reason)
    pytest.param("", "empty", id="empty"),
    pytest.param("x" * (MAX_PATH_CHARS + 1), "longer than", id="too-long"),
    pytest.param("/etc/passwd", "absolute", id="posix-absolute"),
    pytest.param("//server/share/x.py", "absolute", id="unc-forward-slashes"),
    pytest.param("\\\\server\\share\\x.py", "backslash", id="unc-backslashes"),
    pytest.param("C:x.py", "drive letter", id="drive-relative"),
    pytest.param("c:/x.py", "drive letter", id="drive-forward-slash"),
    pytest.param("C:\\x.py", "backslash", id="drive-backslash"),
    pytest.param("src\\gate.py", "backslash", id="backslash-separator"),
    pytest.param("../outside.py", "'..'", id="dotdot-leading"),
    pytest.param("src/../../outside.py", "'..'", id="dotdot-inside"),
    pytest.param("src/..", "'..'", id="dotdot-trailing"),
    pytest.param("./src/gate.py", "'.'", id="dot-leading"),
    pytest.param("src/./gate.py", "'.'", id="dot-inside"),
    pytest.param("src//gate.py", "empty", id="empty-component"),
    pytest.param("src/", "empty", id="trailing-slash"),
    pytest.param("src/gate.py.", "dot or space", id="trailing-dot"),
    pytest.param("src/gate.py ", "dot or space", id="trailing-space"),
    pytest.param("src./gate.py", "dot or space", id="directory-trailing-dot"),
    pytest.param("NUL.py", "reserved", id="NUL.py"),
    pytest.param("con", "reserved", id="con"),
    pytest.param("src/com1.txt", "reserved", id="com1.txt"),
    pytest.param("LPT9", "reserved", id="LPT9"),
    pytest.param("aux.tar.gz", "reserved", id="aux-double-extension"),
    pytest.param("prn/x.py", "reserved", id="reserved-directory"),
    pytest.param("nul .txt", "reserved", id="reserved-with-space-before-extension"),
    pytest.param("COM\u00b9.py", "reserved", id="com-superscript-one"),
    pytest.param("lpt\u00b3", "reserved", id="lpt-superscript-three"),
    pytest.param("CONIN$", "reserved", id="CONIN$"),
    pytest.param("conout$.log", "reserved", id="conout$"),
    pytest.param("src/ga\x00te.py", "control character", id="nul-byte"),
    pytest.param("src/gate\n.py", "control character", id="newline"),
    pytest.param("src/gate\x1b.py", "control character", id="escape"),
    pytest.param("src/gate\x7f.py", "control character", id="delete"),
    pytest.param("src/gate.py:stream", "':'", id="colon-stream"),
    pytest.param("src/a:b.py", "':'", id="colon"),
    pytest.param("src/what?.py", "Windows", id="question-mark"),
    pytest.param("src/*.py", "Windows", id="asterisk"),
    pytest.param("src/a<b.py", "Windows", id="less-than"),
    pytest.param("src/a>b.py", "Windows", id="greater-than"),
    pytest.param("src/a|b.py", "Windows", id="pipe"),
    pytest.param('src/"q".py', "Windows", id="double-quote"),
]


@pytest.mark.parametrize(("path", "reason"), BAD_PATHS)
def test_a_non_portable_path_is_refused_with_its_reason(path: str, reason: str) -> None:
    problem = path_problem(path)

    assert problem is not None
    assert reason in problem


GOOD_ENTRIES = [
    "tests/test_x.py",
    "tests/test_x.py::test_a",
    "tests/test_x.py::test_a[1-2]",
    "tests/test_x.py::TestClass::test_a",
    "tests/test_x.py::test_a[a:b/c\\d]",
    "tests/test_x.py::test_a[-1]",
    "tests/",
    "tests",
]


@pytest.mark.parametrize("entry", GOOD_ENTRIES)
def test_a_test_path_or_node_id_is_a_valid_tests_entry(entry: str) -> None:
    assert entry_problem(entry) is None


BAD_ENTRIES = [
    pytest.param("-p", "command-line option", id="short-option"),
    pytest.param("--import=evil.py", "command-line option", id="long-option"),
    pytest.param("-", "command-line option", id="bare-dash"),
    pytest.param("@args.txt", "argument file", id="at-argument-file"),
    pytest.param("@tests/test_x.py", "argument file", id="at-before-a-path"),
    pytest.param("tests/test_x.py::", "empty node id", id="empty-node-id"),
    pytest.param("::test_a", "empty", id="empty-file-part"),
    pytest.param("/abs/tests/test_x.py", "absolute", id="absolute"),
    pytest.param("C:/tests/test_x.py::test_a", "drive letter", id="drive"),
    pytest.param("../tests/test_x.py::test_a", "'..'", id="dotdot"),
    pytest.param("tests\\test_x.py", "backslash", id="backslash"),
    pytest.param("tests/nul.py::test_a", "reserved", id="reserved"),
]


@pytest.mark.parametrize(("entry", "reason"), BAD_ENTRIES)
def test_an_unsafe_tests_entry_is_refused_with_its_reason(entry: str, reason: str) -> None:
    problem = entry_problem(entry)

    assert problem is not None
    assert reason in problem


def test_a_path_problem_in_a_node_id_names_the_file_part() -> None:
    problem = entry_problem("../x.py::test_a[../y]")

    assert problem is not None
    assert problem.startswith("path '../x.py' ")
