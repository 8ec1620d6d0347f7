"""repo.files.write_atomic: a reader sees the old file or the new one, and never blocks a writer."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mutharness.repo import files
from mutharness.repo.files import create_atomic, write_atomic

HOLDER = '''\
import sys, time
with open(sys.argv[1], "rb") as handle:
    print("open", flush=True)
    time.sleep(0.5)
'''


def test_a_file_another_process_has_open_for_reading_is_still_replaced(tmp_path: Path) -> None:
    target = tmp_path / "results.json"
    target.write_text("old", encoding="utf-8")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(target)],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "open\n"

    write_atomic(target, "new")  # on Windows, while the reader holds it: retried, not refused

    assert holder.wait(timeout=60) == 0
    assert target.read_text(encoding="utf-8") == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]


def test_many_rewrites_while_another_process_reads_them_all_land(tmp_path: Path) -> None:
    target = tmp_path / "results.json"
    write_atomic(target, "0")
    reader = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\n"
        "end = time.monotonic() + 2\n"
        "while time.monotonic() < end:\n"
        "    try:\n"
        "        open(sys.argv[1], 'rb').read()\n"
        "    except OSError:\n"
        "        pass\n"
    ), str(target)])
    try:
        for number in range(1, 200):
            write_atomic(target, str(number))
            time.sleep(0.005)
    finally:
        reader.wait(timeout=60)
    assert target.read_text(encoding="utf-8") == "199"


def test_create_keeps_a_file_already_there_and_writes_a_new_one_whole(tmp_path: Path) -> None:
    target = tmp_path / "kept.log"

    assert create_atomic(target, b"first") is True
    assert create_atomic(target, b"second") is False
    assert target.read_bytes() == b"first"
    assert [p.name for p in tmp_path.iterdir()] == ["kept.log"]  # no temporary left


@pytest.mark.parametrize("errno_name", ["EPERM", "ENOTSUP", "EXDEV"])
def test_create_works_where_the_file_system_has_no_hard_links(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, errno_name: str
) -> None:
    """FAT, exFAT and some network file systems refuse `link()`: a fault injected at the one
    call that needs it, as such a file system answers it."""
    import errno

    def no_links(source: object, target: object) -> None:
        code = getattr(errno, errno_name)
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(files.os, "link", no_links)
    target = tmp_path / "kept.log"

    assert create_atomic(target, b"first") is True
    assert create_atomic(target, b"second") is False
    assert target.read_bytes() == b"first"
    assert [p.name for p in tmp_path.iterdir()] == ["kept.log"]
