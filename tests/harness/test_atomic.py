"""atomic.write_atomic: a reader sees the old file or the new one, and never blocks a writer."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from mutharness.atomic import write_atomic

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
