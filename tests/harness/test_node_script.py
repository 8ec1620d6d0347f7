"""node's preloads read from a package.json `test` script: a table of real scripts' shapes,
and a real `node --test` run of a project whose script names one."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Completed, git
from nodes import NODE, results

from mutharness.runners.node.rules import script_preloads

Cli = Callable[..., Completed]

TABLE = [
    ("node --test --test-concurrency=1 --import ./test/setup-env.mjs test/*.test.js",
     (("./test/setup-env.mjs",), ())),
    ("c8 --100 node --test", ((), ())),
    ("cross-env NODE_ENV=test node -r ts-node/register --import=tsx --test test/",
     (("tsx",), ("ts-node/register",))),
    ("npm run lint && node --import tsx --test", (("tsx",), ())),
    ("tsc&&node --require ./a.cjs --test", ((), ("./a.cjs",))),
    ("/usr/local/bin/node --require=./b.cjs --test", ((), ("./b.cjs",))),
    ("node --import ./one.mjs --import ./two.mjs --test", (("./one.mjs", "./two.mjs"), ())),
    # no node --test command: nothing to take
    ("jest", None),
    ("node test.js", None),
    ("node test.js --test --import ./late.mjs", None),  # after the file: the script's own
    ("mocha --require ./setup.js", None),
    ("node --test \"unclosed", None),
    ("", None),
    # a `#` starts a comment only at the start of a word, as in a POSIX shell
    ("node --test --import=#r ./tests/*.test.ts", (("#r",), ())),
    ("node --import #loader --test", None),  # a word's start: the shell's comment too
    ("node --test -r ./a#b.cjs", ((), ("./a#b.cjs",))),
    ("node --test # --import ./commented.mjs", ((), ())),
    ("node --import ./kept.mjs --test #--import ./commented.mjs", (("./kept.mjs",), ())),
    ("npm run lint;# just a comment\nnode --import ./next-line.mjs --test",
     (("./next-line.mjs",), ())),
    ("node --import '#quoted' --test", (("#quoted",), ())),
    ("echo \\#not-a-comment && node --import ./after.mjs --test", (("./after.mjs",), ())),
    ("# node --test --import ./all-commented.mjs", None),
]


@pytest.mark.parametrize(("script", "expected"), TABLE)
def test_the_preloads_of_a_test_script_are_its_node_test_commands_own(
    script: str, expected: tuple[tuple[str, ...], tuple[str, ...]] | None
) -> None:
    assert script_preloads(script) == expected


@pytest.mark.skipif(NODE is None, reason="node (.ci/run installs it)")
def test_a_preload_named_by_a_package_imports_subpath_in_the_test_script_is_not_a_comment(
    node_project: Path, cli: Cli
) -> None:
    # `#setup`: a subpath import of the package's own `imports`, as a loader is often named
    (node_project / "mutharness.toml").unlink()
    manifest = json.loads((node_project / "package.json").read_text("utf-8"))
    manifest["imports"] = {"#setup": "./test/setup-env.mjs"}
    manifest["scripts"]["test"] = "node --test --import=#setup test/*.test.js # the suite"
    (node_project / "package.json").write_text(json.dumps(manifest), encoding="utf-8")
    git(node_project, "commit", "-q", "-am", "the preload named by a subpath import")

    done = cli(node_project, "verify", "specs/app-mode.json")

    assert done.code == 0, done.out + done.err
    assert "node preloads from package.json's test script: --import #setup" in done.err
    found = results(node_project)
    assert found["settings"]["values"]["node.import"] == ["#setup"]
    assert [m["verdict"] for m in found["specs"][0]["mutations"]] == ["CAUGHT"] * 3
