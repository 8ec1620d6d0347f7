"""What the node tests share: the nodes they run on, their specs, their committed projects."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from conftest import git

NODE = shutil.which("node")


def major(node: str) -> int:
    """The major version `node --version` says."""
    said = subprocess.run([node, "--version"], capture_output=True, text=True).stdout
    return int(said.strip().lstrip("v").split(".")[0])


# node on PATH, then each node MUTHARNESS_NODES names (.ci/run: 22 and 24), as test parameters
OTHER_NODES = [path for path in os.environ.get("MUTHARNESS_NODES", "").split(os.pathsep) if path]
NODES = [pytest.param(node, id=f"node{major(node)}")
         for node in ([NODE] if NODE else []) + OTHER_NODES]


def spec_text(tests: list[str], passing: int, mutations: list[dict[str, Any]]) -> str:
    """A spec file's text."""
    return json.dumps({"tests": tests, "expectBaselinePass": passing, "mutations": mutations},
                      indent=1) + "\n"


def write_files(root: Path, files: Mapping[str, str]) -> None:
    """`files` (relative path -> text) written under `root`."""
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def committed(root: Path, files: Mapping[str, str], message: str) -> Path:
    """`files` written under `root`, a new git repository, and committed."""
    write_files(root, files)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return root


def results(root: Path) -> dict[str, Any]:
    """The results file a verify wrote in `root`."""
    found: dict[str, Any] = json.loads((root / ".mutharness/results.json").read_text("utf-8"))
    return found
