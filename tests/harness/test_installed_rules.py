"""Where the workspace looks for the user's installed packages: beside each package.json."""

from __future__ import annotations

import pytest

from mutharness.repo.installed import _manifest_directories

TABLE = [
    ((), [""]),  # the root always
    (("package.json", "src/index.js"), [""]),
    (("package.json", "packages/a/package.json", "packages/b/package.json",
      "packages/b/src/x.js"), ["", "packages/a", "packages/b"]),
    (("docs/package.json.md", "tools/mypackage.json"), [""]),  # not a manifest
    (("vendor/node_modules/x/package.json",), [""]),  # a committed package, not a project
]


@pytest.mark.parametrize(("paths", "expected"), TABLE)
def test_node_modules_are_looked_for_at_the_root_and_beside_each_manifest(
    paths: tuple[str, ...], expected: list[str]
) -> None:
    assert _manifest_directories(paths) == expected
