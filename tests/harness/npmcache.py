"""The npm packages the suite's real `npm install`s use, fetched once before it runs (tox's
commands_pre): `python tests/harness/npmcache.py DIR` fills an npm cache at DIR. The suite
then installs from it alone (`--offline`, MUTHARNESS_NPM_CACHE); without that variable the
tests' installs use npm's own cache and the registry."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# every package a test installs, at the version it names (with what they need)
PACKAGES = {"is-number": "7.0.0", "tsx": "4.19.2"}


def fill(cache: Path) -> None:
    """Install `PACKAGES` once into a scratch project with `cache` as npm's cache."""
    npm = shutil.which("npm")
    if npm is None:  # the tests that install packages skip without npm, as without node
        print("npmcache: npm is not installed (.ci/run installs it): nothing to fetch")
        return
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        project = Path(scratch)
        (project / "package.json").write_text(json.dumps(
            {"name": "npm-cache-fill", "version": "1.0.0", "private": True,
             "dependencies": PACKAGES}), encoding="utf-8")
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", "--cache",
             str(cache)], cwd=project, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            sys.exit(f"npm install into the cache failed:\n{done.stdout}{done.stderr}")


if __name__ == "__main__":
    fill(Path(sys.argv[1]))
