"""The rules that keep specs honest, at unit level: skip counting, pins, red-first pairing,
`--since` selection. Fast, so `specs/mutharness-honesty.json` mutates them."""

from __future__ import annotations

import json

import pytest
from madefacts import pytest_facts

from mutharness.errors import ExitCode, SpecError
from mutharness.model.affected import Record, select
from mutharness.model.pins import Pin, PinState, exit_code
from mutharness.model.redfirst import Pairing, RedFirst, pair
from mutharness.model.skips import count_skips, parse_policy
from mutharness.model.spec import Mutation, Spec
from mutharness.model.verdict import baseline_problem, run_problem
from mutharness.runners.base import Outcome, ReportState, RunExit, TestOutcome
from mutharness.runners.pytest.rules import covers, split_id

REASON = "needs a real Windows console"


def policy(platform: str = "linux", reason: str = REASON, *tests: tuple[str, str]) -> bytes:
    return json.dumps({
        "version": 1, "note": "reviewed",
        "platforms": {platform: {"reason": reason,
                                 "tests": [{"file": f, "name": n} for f, n in tests]}},
    }).encode()


def outcome(nodeid: str, word: str = "passed", reason: str = "") -> TestOutcome:
    return TestOutcome(nodeid, Outcome(word), 0.0, reason)


def judge(outcomes: list[TestOutcome], data: bytes, strict: bool = False) -> object:
    return count_skips(
        outcomes, parse_policy(data, "specs/platform-skips.json", "d"), "linux", split_id,
        lambda file, name: covers(["tests/test_a.py"], file, name), strict,
    )


LISTED = ("tests/test_a.py", "test_console")


def test_a_listed_test_that_skipped_for_the_policy_s_reason_counts() -> None:
    found = judge([outcome("tests/test_a.py::test_one"),
                   outcome("tests/test_a.py::test_console", "skipped", REASON)],
                  policy("linux", REASON, LISTED))

    assert found.approved == ("tests/test_a.py::test_console",)  # type: ignore[attr-defined]
    assert found.problem is None  # type: ignore[attr-defined]


@pytest.mark.parametrize(("run", "said"), [
    ([outcome("tests/test_a.py::test_console")], "did not skip (passed)"),
    ([outcome("tests/test_a.py::test_console", "skipped", "flaky network")],
     "skipped for another reason: 'flaky network'"),
    ([outcome("tests/test_a.py::test_other")], "did not run (it vanished)"),
], ids=["did-not-skip", "another-reason", "vanished"])
def test_a_listed_test_that_did_not_skip_as_listed_makes_the_run_untrustworthy(
    run: list[TestOutcome], said: str
) -> None:
    found = judge(run, policy("linux", REASON, LISTED))

    assert found.problem is not None and said in found.problem  # type: ignore[attr-defined]
    assert found.approved == ()  # type: ignore[attr-defined]


def test_a_listed_test_of_another_platform_or_outside_the_spec_s_tests_is_not_required() -> None:
    run = [outcome("tests/test_a.py::test_one")]

    assert judge(run, policy("win32", REASON, LISTED)).problem is None  # type: ignore[attr-defined]
    assert judge(run, policy("linux", REASON, ("tests/test_b.py", "test_x"))).problem is None  # type: ignore[attr-defined]


def test_an_unlisted_skip_is_accepted_and_never_counted_unless_strict() -> None:
    run = [outcome("tests/test_a.py::test_one"),
           outcome("tests/test_a.py::test_later", "skipped", "not yet")]

    lenient = judge(run, policy("linux", REASON))
    strict = judge(run, policy("linux", REASON), strict=True)

    assert lenient.approved == () and lenient.unlisted == ("tests/test_a.py::test_later",)  # type: ignore[attr-defined]
    assert lenient.problem is None  # type: ignore[attr-defined]
    assert strict.problem is not None and "--strict-skips" in strict.problem  # type: ignore[attr-defined]


@pytest.mark.parametrize(("document", "said"), [
    ({"version": 2, "platforms": {}}, "/version: must be 1"),
    ({"version": 1, "platforms": {"linux": {"tests": []}}}, "/platforms/linux/reason"),
    ({"version": 1, "platforms": {"linux": {"reason": "r", "tests": [{"file": "a"}]}}},
     "/platforms/linux/tests/0"),
    ({"version": 1, "platforms": {}, "extra": 1}, "/extra: is not a policy key"),
    ({"version": 1, "platforms": {"linux": {"reason": "r", "tests": [
        {"file": "a", "name": "b"}, {"file": "a", "name": "b"}]}}}, "a second time"),
], ids=["version", "no-reason", "test-shape", "unknown-key", "duplicate"])
def test_a_malformed_policy_is_refused_naming_the_pointer(
    document: dict[str, object], said: str
) -> None:
    with pytest.raises(SpecError) as raised:
        parse_policy(json.dumps(document).encode(), "specs/platform-skips.json", "d")

    assert said in raised.value.message()


# -- the pin --------------------------------------------------------------------------


def test_approved_skips_count_toward_the_pin_in_verify_s_baseline_check() -> None:
    facts = pytest_facts(outcomes=tuple(outcome(f"t.py::t{n}") for n in range(3)))

    assert baseline_problem(facts, 4, approved=1) is None
    assert baseline_problem(facts, 4) is not None


def test_a_pin_off_the_measured_count_is_drift_and_exits_1() -> None:
    drifted = Pin("specs/a.json", 5, passed=4)
    ok = Pin("specs/b.json", 4, passed=3, approved=("t.py::skip",))

    assert drifted.state is PinState.DRIFT and ok.state is PinState.OK
    assert ok.line() == ("ok specs/b.json: 3 pass + 1 approved skips = 4 "
                         "(approved platform skips counted)")
    assert exit_code([ok, drifted]) is ExitCode.UNEXPECTED
    assert exit_code([ok, Pin("specs/c.json", 1, reason="red")]) is ExitCode.BASELINE
    assert exit_code([ok]) is ExitCode.OK


# -- red-first ------------------------------------------------------------------------


def ran(*tests: tuple[str, str], errors: tuple[str, ...] = ()) -> object:
    status = 1 if errors or any(word in ("failed", "error") for _, word in tests) else 0
    return pytest_facts(outcomes=tuple(outcome(nodeid, word) for nodeid, word in tests),
                        collection_errors=errors, exit_status=status)


def proof(head: object, reverted: object, load_error_is_red: bool = False,
          expect_red: tuple[str, ...] = ()) -> RedFirst:
    return RedFirst("base", "b" * 40, "h" * 40, "pytest", ("t.py",), ("src/a.py",),
                    pair(head, reverted, split_id), load_error_is_red, expect_red)  # type: ignore[arg-type]


def test_a_test_green_at_head_and_red_reverted_is_red_first_and_exits_0() -> None:
    done = proof(ran(("t.py::new", "passed"), ("t.py::old", "passed")),
                 ran(("t.py::new", "failed"), ("t.py::old", "passed")))

    assert [item.pairing for item in done.pairs] == [Pairing.RED_FIRST, Pairing.INVARIANT]
    assert done.exit_code() is ExitCode.OK
    assert done.line() == ("red-first: 1 of 2 test(s) fail with the fix reverted "
                           "(HEAD: 2 pass / 0 fail; reverted: 1 pass / 1 fail)")


def test_tests_green_on_both_sides_do_not_pin_the_fix() -> None:
    assert proof(ran(("t.py::a", "passed")), ran(("t.py::a", "passed"))).exit_code() \
        is ExitCode.UNEXPECTED


def test_a_test_red_at_head_gives_no_answer() -> None:
    done = proof(ran(("t.py::a", "failed"), ("t.py::b", "passed")),
                 ran(("t.py::a", "failed"), ("t.py::b", "failed")))

    assert done.exit_code() is ExitCode.NO_VERDICT
    assert "do not pass at HEAD" in done.why_no_answer()


def test_a_load_error_is_red_only_when_opted_in() -> None:
    head = ran(("t_new.py::a", "passed"), ("t.py::b", "passed"))
    reverted = ran(("t.py::b", "passed"), errors=("t_new.py",))

    plain, opted = proof(head, reverted), proof(head, reverted, load_error_is_red=True)

    assert plain.pairs[0].pairing is Pairing.LOAD_ERROR
    assert plain.exit_code() is ExitCode.NO_VERDICT and not plain.red
    assert opted.exit_code() is ExitCode.OK and len(opted.red) == 1


def test_an_expected_red_test_that_stayed_green_fails_the_proof() -> None:
    head = ran(("t.py::a", "passed"), ("t.py::b", "passed"))
    reverted = ran(("t.py::a", "failed"), ("t.py::b", "passed"))

    assert proof(head, reverted, expect_red=("t.py::b",)).exit_code() is ExitCode.UNEXPECTED
    assert proof(head, reverted, expect_red=("t.py",)).exit_code() is ExitCode.OK


def test_the_reverted_side_may_fail_to_load_files_but_nothing_else() -> None:
    loaded = pytest_facts(outcomes=(outcome("t.py::b"),), collection_errors=("t_new.py",),
                          exit_status=1)
    crashed = pytest_facts(outcomes=(outcome("t.py::b"),), report=ReportState.MISSING,
                           exit_status=1)

    assert run_problem(loaded, load_errors=True) is None
    assert run_problem(loaded) is not None
    assert run_problem(crashed, load_errors=True) is not None
    assert loaded.exit is RunExit.TESTS_FAILED


# -- --since --------------------------------------------------------------------------

SPECS = (
    Spec("calc", "specs/calc.json", "d", ("tests/test_calc.py",), 4,
         (Mutation(0, "m", "src/calc.py", "a", "b", True, ()),), "pytest"),
    Spec("other", "specs/other.json", "d", ("tests/test_other.py",), 1,
         (Mutation(0, "m", "src/other.py", "a", "b", True, ()),), "pytest"),
)


EVERY_FILE = frozenset({"imports", "reads"})  # a record of imports and of every file opened
RECORDED = {"calc": Record(frozenset({"src/calc.py", "src/helper.py", "src/rates.json"}),
                           EVERY_FILE),
            "other": Record(frozenset(), EVERY_FILE)}


@pytest.mark.parametrize(("changed", "selected"), [
    (("src/helper.py",), ["calc"]),
    (("src/other.py",), ["other"]),
    (("tests/test_calc.py",), ["calc"]),
    (("specs/other.json",), ["other"]),
    (("tests/conftest.py",), ["calc", "other"]),
    (("src/conftest.py",), ["calc", "other"]),
    (("tox.ini",), ["calc", "other"]),
    (("tests/helpers.py",), ["calc", "other"]),
    (("tests/fixtures/data.txt",), ["calc", "other"]),
    (("specs/platform-skips.json",), ["calc", "other"]),
    (("tests/test_unlisted.py",), []),
    (("README.md",), []),
    (("src/unrecorded.py",), []),
], ids=["imported-by-the-last-run", "target", "test", "spec", "conftest", "conftest-anywhere",
        "config", "helper", "fixture", "policy",
        "another-test-module", "unrelated", "not-imported-by-the-last-run"])
def test_since_selects_by_json_tests_targets_and_shared_infrastructure(
    changed: tuple[str, ...], selected: list[str]
) -> None:
    chosen = select("main", "c" * 40, changed, SPECS, ["specs/platform-skips.json"], RECORDED)

    assert [spec.id for spec in chosen.specs] == selected


def test_the_tests_side_is_the_tests_their_directories_and_their_helpers() -> None:
    from mutharness.model.affected import fix_files

    changed = ("src/calc.py", "tests/helpers.py", "tests/unit/test_x.py", "calc/ops.py",
               "calc/test_ops.py", "calc/conftest.py", "evidence/calc.md", "tools/keep.py")

    found = fix_files(changed, "pytest", ("tests/unit/test_x.py",), ("tools",), ("evidence",))

    assert found == ("src/calc.py", "calc/ops.py")


def test_code_in_a_package_named_testing_or_beside_a_directory_entry_is_the_fix() -> None:
    from mutharness.model.affected import fix_files

    shipped = fix_files(("src/mypkg/testing/factories.py", "tests/helpers.py"), "pytest",
                        ("tests/test_core.py",), (), ())
    beside = fix_files(("calc/ops.py", "calc/test_ops.py", "calc/conftest.py"), "pytest",
                       ("calc",), (), ())
    nested = fix_files(("src/pkg/tests/helpers.py", "src/pkg/core.py"), "pytest",
                       ("src/pkg/tests/test_core.py",), (), ())

    assert shipped == ("src/mypkg/testing/factories.py",)
    assert beside == ("calc/ops.py",)
    assert nested == ("src/pkg/core.py",)


def test_a_module_that_skips_as_a_whole_without_the_fix_is_a_load_error() -> None:
    head = ran(("t_new.py::a", "passed"), ("t.py::b", "passed"))
    reverted = pytest_facts(outcomes=(outcome("t_new.py", "skipped", "needs mypkg.new"),
                                      outcome("t.py::b")))

    done = proof(head, reverted, load_error_is_red=True)

    assert done.pairs[0].pairing is Pairing.LOAD_ERROR
    assert done.pairs[0].reverted == "module-skipped"
    assert done.exit_code() is ExitCode.OK


def test_a_directory_entry_watches_for_a_conftest_in_every_directory_below_it() -> None:
    from mutharness.runners.pytest.rules import config_candidates

    found = config_candidates(("tests",), frozenset({"tests/test_a.py", "tests/sub/test_b.py"}))

    assert {"conftest.py", "tests/conftest.py", "tests/sub/conftest.py", "pyproject.toml"} \
        <= set(found)


@pytest.mark.parametrize("named", ["./policy/skips.json", "policy//skips.json",
                                   "policy\\skips.json", "./policy/./skips.json"])
def test_since_compares_a_configured_path_with_git_s_paths_after_normalising_it(
    named: str
) -> None:
    chosen = select("main", "c" * 40, ("policy/skips.json",), SPECS, [named], RECORDED)

    assert [spec.id for spec in chosen.specs] == ["calc", "other"]


def test_since_selects_a_spec_without_a_record_of_its_last_run_whatever_changed() -> None:
    chosen = select("main", "c" * 40, ("README.md",), SPECS, [],
                    {"calc": Record(frozenset(), EVERY_FILE)})

    assert [spec.id for spec in chosen.specs] == ["other"]
    assert "no record of its last run" in dict(chosen.reasons)["other"]


@pytest.mark.parametrize(("kinds", "changed", "selected"), [
    # a record of every file the run opened speaks for every file
    (EVERY_FILE, "src/rates.json", ["calc"]),
    (EVERY_FILE, "data/other.json", []),
    (EVERY_FILE, "README.md", []),
    # a record of imports alone (an older record) speaks for modules only
    (frozenset({"imports"}), "src/rates.json", ["calc", "other"]),
    (frozenset({"imports"}), "data/other.json", ["other"]),
    (frozenset({"imports"}), "src/unrecorded.py", []),
    # a record of no use (node's) speaks for no file it does not list
    (frozenset(), "src/unrecorded.py", ["other"]),
    (frozenset(), "README.md", ["other"]),
], ids=["reads-a-read-file", "reads-an-unread-file", "reads-an-unrelated-file",
        "imports-a-listed-data-file", "imports-a-data-file", "imports-an-unimported-module",
        "nothing-a-module", "nothing-a-text"])
def test_since_never_says_no_spec_is_affected_by_a_file_its_record_cannot_speak_for(
    kinds: frozenset[str], changed: str, selected: list[str]
) -> None:
    records = {**RECORDED, "other": Record(frozenset(), kinds)}

    chosen = select("main", "c" * 40, (changed,), SPECS, [], records)

    assert [spec.id for spec in chosen.specs] == selected
    if "other" in selected:
        assert "does not say whether that run read it" in dict(chosen.reasons)["other"]


@pytest.mark.parametrize(("log_tail", "free_bytes", "blames_space"), [
    ("OSError: [Errno 28] No space left on device", None, True),  # the run said so
    ("  File \"_mutharness_probe.py\", line 136, in _write", 0, True),  # its words were cut
    ("", 4096, True),  # nothing reached the log: the device had a page left
    ("", None, False),  # not measured (a results file of an older run)
    ("", 512 * 1024 * 1024, False),  # plenty of space: something else lost the report
])
def test_a_lost_report_is_blamed_on_space_when_the_run_said_so_or_the_device_was_left_full(
    log_tail: str, free_bytes: int | None, blames_space: bool
) -> None:
    facts = pytest_facts(report=ReportState.MISSING, exit_status=120, log_tail=log_tail,
                         free_bytes=free_bytes)

    problem = run_problem(facts)

    assert problem is not None
    assert ("no space left" in problem) is blames_space, problem
