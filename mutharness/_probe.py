"""pytest plugin loaded into each child: records which files the imported modules came from."""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    """Write the module -> file map and sys.path where the harness asked (atomically)."""
    out = os.environ.get("MUTHARNESS_PROBE_OUT")
    if not out:
        return
    modules = {
        name: module.__file__
        for name, module in list(sys.modules.items())
        if isinstance(getattr(module, "__file__", None), str)
    }
    with open(out + ".tmp", "w", encoding="utf-8") as handle:
        json.dump({"modules": modules, "sys_path": sys.path}, handle)
    os.replace(out + ".tmp", out)
