"""node's preloads read from a package.json `test` script: a table of real scripts' shapes."""

from __future__ import annotations

import pytest

from mutharness.runners.node.rules import script_preloads

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
]


@pytest.mark.parametrize(("script", "expected"), TABLE)
def test_the_preloads_of_a_test_script_are_its_node_test_commands_own(
    script: str, expected: tuple[tuple[str, ...], tuple[str, ...]] | None
) -> None:
    assert script_preloads(script) == expected
