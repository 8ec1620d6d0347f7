"""The terminal: a live status line on a terminal (a real pseudo-terminal here), plain flushed
lines in a pipe or with --no-progress, colour only on a terminal, never with NO_COLOR, forced
with --color."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Project, default_spec

from mutharness.model.spec import Mutation, Spec
from mutharness.reports.progress import Progress, clock

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX pseudo-terminals")

ProjectFactory = Callable[..., Project]
COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def in_terminal(project: Project, *args: str, columns: int = 120,
                env: dict[str, str] | None = None,
                release: tuple[Callable[[bytes], bool], Path] | None = None) -> bytes:
    """What `mutharness verify specs ARGS` writes to a terminal `columns` wide; with
    `release` (seen, file), the file is created once the output so far is `seen`."""
    import fcntl
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    child = subprocess.Popen(
        [sys.executable, "-m", "mutharness", "verify", "specs", *args], cwd=project.root,
        env={**os.environ, **(env or {})}, stdin=follower, stdout=follower, stderr=follower)
    os.close(follower)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: every writer has closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
        if release is not None and release[0](b"".join(chunks)):
            release[1].touch()
    os.close(leader)
    assert child.wait(timeout=600) == 0, b"".join(chunks)[-2000:]
    return b"".join(chunks)


def screen(raw: bytes) -> list[str]:
    """The lines a terminal shows at the end: carriage returns, line clears and colours
    applied as a terminal applies them."""
    lines: list[str] = []
    current: list[str] = []
    cursor = 0
    text = COLOUR.sub("", raw.decode("utf-8"))
    for token in re.split(r"(\r|\n|\x1b\[2K)", text):
        if token == "\r":
            cursor = 0
        elif token == "\n":
            lines.append("".join(current))
            current, cursor = [], 0
        elif token == "\x1b[2K":
            current = []
        else:
            current[cursor:cursor + len(token)] = list(token)
            cursor += len(token)
    if current:
        lines.append("".join(current))
    return lines


def masked(lines: list[str]) -> list[str]:
    return [re.sub(r"\(\d+\.\d\d s\)", "(T s)", line) for line in lines]


def test_a_terminal_gets_a_status_line_that_leaves_the_screen_as_plain_lines_would(
    make_project: ProjectFactory
) -> None:
    project = make_project()
    plain = subprocess.run([sys.executable, "-m", "mutharness", "verify", "specs"],
                           cwd=project.root, capture_output=True, text=True, timeout=300)

    raw = in_terminal(project)

    statuses = re.findall(rb"\r\x1b\[2K(?:\x1b\[[0-9;]*m)*(\[\d+/2\][^\r\n\x1b]*)", raw)
    assert statuses, raw[-2000:]
    shown = [status.decode("utf-8") for status in statuses]
    assert any(s.startswith("[0/2]") and "running calc #1 the low bound is ignored" in s
               for s in shown), shown
    assert any(s.startswith("[1/2] · 1 caught · ") for s in shown), shown
    assert all(len(s) <= 119 for s in shown)
    assert b"\x1b[32m" in raw  # green: a terminal gets colour
    assert masked(screen(raw)) == masked(plain.stdout.splitlines())  # nothing left over
    assert "\r" not in plain.stdout and "\x1b" not in plain.stdout  # a pipe: plain lines


def test_no_color_no_progress_and_color_do_what_they_say(make_project: ProjectFactory) -> None:
    project = make_project()

    bare = in_terminal(project, env={"NO_COLOR": "1"})
    quiet = in_terminal(project, "--no-progress")
    piped = subprocess.run([sys.executable, "-m", "mutharness", "verify", "specs", "--color"],
                           cwd=project.root, capture_output=True, text=True, timeout=300,
                           env={**os.environ, "NO_COLOR": "1"})

    assert b"\x1b[2K" in bare and not COLOUR.search(bare.decode("utf-8"))
    assert b"\x1b[2K" not in quiet and b"\x1b[32m" in quiet
    assert "\x1b[32m" in piped.stdout and "\x1b[2K" not in piped.stdout


def test_the_eta_weighs_the_work_left_by_each_spec_s_baseline() -> None:
    quick = Spec("quick", "specs/quick.json", "0" * 64, ("t",), 1, (), "pytest")
    slow = Spec("slow", "specs/slow.json", "1" * 64, ("t",), 1, (), "pytest")
    progress = Progress(started=0.0)
    progress.plan({"quick": 4, "slow": 2})
    assert progress.eta(5.0) is None  # nothing measured yet
    progress.baseline(quick, 1.0, now=10.0)
    progress.baseline(slow, 5.0, now=10.0)
    mutation = Mutation(0, "m", "f.py", "a", "b", True, ())
    progress.start(quick, mutation)
    assert "running quick #1 m" in progress.line(12.0, 200)
    progress.done["quick"] = 4  # 4 s of estimated work took 8 s: twice as slow

    assert progress.eta(18.0) == pytest.approx(2 * 5.0 * 8 / 4)  # slow's 10 s, at that pace
    assert progress.line(18.0, 200).startswith("[4/6] · 0:18 elapsed · ETA 0:20")
    assert progress.line(18.0, 10) == "[4/6] · 0…"
    assert (clock(65), clock(3725)) == ("1:05", "1:02:05")


def test_during_a_baseline_the_status_line_says_which_run_and_for_how_long() -> None:
    calc = Spec("calc", "specs/calc.json", "0" * 64, ("t",), 1, (), "pytest")
    progress = Progress(started=0.0)
    progress.plan({"calc": 2})

    progress.baseline_run(calc, 1, 3, now=1.0)
    first = progress.line(2.0, 200)
    progress.baseline_run(calc, 2, 3, now=3.0)
    second = progress.line(7.0, 200)
    progress.baseline(calc, 4.0, now=8.0)

    assert first.endswith(" · baseline calc (run 1 of 3) 0:01")
    assert second.endswith(" · baseline calc (run 2 of 3) 0:04")
    assert "baseline" not in progress.line(9.0, 200)  # measured: nothing runs until a mutant


def test_the_status_line_clock_moves_while_a_long_mutant_runs(
    make_project: ProjectFactory, tmp_path: Path
) -> None:
    release = tmp_path / "release"
    waits = default_spec(mutations=[{
        "name": "the low bound waits to be released", "file": "src/calc.py",
        "anchor": "        return low\n",
        "replacement": ("        import os, time\n"
                        f"        while not os.path.exists({str(release)!r}):\n"
                        "            time.sleep(0.05)\n"
                        "        return low\n"),
        "expectCaught": False}])
    project = make_project(spec=waits)
    running = re.compile(rb"(\d+:\d\d) elapsed[^\r\n]*running calc #1")

    def two_clocks(raw: bytes) -> bool:  # the mutant is released once the clock has moved
        return len(set(running.findall(raw))) >= 2

    raw = in_terminal(project, "--timeout-floor", "3600", release=(two_clocks, release))

    assert two_clocks(raw) and release.exists()
    assert screen(raw)[-2].startswith("all 1 mutation(s) behaved as expected")
