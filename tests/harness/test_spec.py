"""spec.parse_spec / spec.load_specs: the Node-project spec format, strictly validated."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from mutharness.errors import SpecError, SpecProblem
from mutharness.model.spec import (
    MAX_DEPTH,
    MAX_MUTATIONS,
    MAX_SPEC_BYTES,
    Mutation,
    Spec,
    load_specs,
    parse_spec,
)

PATH = "specs/gate.json"


def document(**top: Any) -> dict[str, Any]:
    """A valid spec document in the Node-project format, with top-level overrides."""
    doc: dict[str, Any] = {
        "tests": ["tests/toolwire/test_gate.py"],
        "expectBaselinePass": 10,
        "mutations": [
            {
                "name": "the gate is removed",
                "file": "src/toolwire/gate.py",
                "anchor": "    if unsupported(request):\n",
                "replacement": "    if False:\n",
            },
            {
                "name": "SURVIVOR (documented): harmless because ...",
                "file": "src/toolwire/gate.py",
                "anchor": "return age >= 18",
                "replacement": "return age >= 17",
                "expectCaught": False,
            },
        ],
    }
    doc.update(top)
    return doc


def with_mutation(index: int, **fields: Any) -> dict[str, Any]:
    """A valid document whose mutation `index` has `fields` set (a value of ... deletes)."""
    doc = document()
    mutation = doc["mutations"][index]
    for key, value in fields.items():
        if value is ...:
            del mutation[key]
        else:
            mutation[key] = value
    return doc


def without(key: str) -> dict[str, Any]:
    doc = document()
    del doc[key]
    return doc


def encode(doc: dict[str, Any] | str | bytes) -> bytes:
    if isinstance(doc, bytes):
        return doc
    if isinstance(doc, str):
        return doc.encode("utf-8")
    return json.dumps(doc, indent=2).encode("utf-8")


def parsed(doc: dict[str, Any] | str | bytes) -> Spec:
    spec, problems = parse_spec(encode(doc), PATH)
    assert problems == ()
    assert spec is not None
    return spec


def problems_of(doc: dict[str, Any] | str | bytes) -> tuple[SpecProblem, ...]:
    spec, problems = parse_spec(encode(doc), PATH)
    assert spec is None
    assert problems
    return problems


def pointers(problems: tuple[SpecProblem, ...]) -> list[str]:
    return [problem.pointer for problem in problems]


# --- accepted -------------------------------------------------------------------------------


def test_a_node_project_spec_parses_into_its_fields() -> None:
    spec = parsed(document())

    assert spec.id == "gate"
    assert spec.path == PATH
    assert spec.tests == ("tests/toolwire/test_gate.py",)
    assert spec.expect_baseline_pass == 10
    assert spec.runner == "pytest"
    assert spec.mutations == (
        Mutation(0, "the gate is removed", "src/toolwire/gate.py",
                 "    if unsupported(request):\n", "    if False:\n", True, ()),
        Mutation(1, "SURVIVOR (documented): harmless because ...", "src/toolwire/gate.py",
                 "return age >= 18", "return age >= 17", False, ()),
    )


def test_every_bundled_spec_in_the_repository_parses() -> None:
    specs_dir = Path(__file__).resolve().parents[2] / "specs"
    paths = sorted(path for path in specs_dir.glob("*.json")
                   if path.name != "platform-skips.json")  # the skip policy, not a spec
    assert paths, "the repository bundles specs"

    specs = load_specs(paths)

    assert [spec.id for spec in specs] == [path.stem for path in paths]


def test_the_spec_id_is_the_file_stem() -> None:
    spec, _ = parse_spec(encode(document()), "some/dir/parallel-tool-calls.v2.json")

    assert spec is not None
    assert spec.id == "parallel-tool-calls.v2"


def test_the_digest_is_the_sha256_of_the_exact_bytes() -> None:
    compact = json.dumps(document()).encode()
    pretty = json.dumps(document(), indent=4).encode()

    assert parsed(compact).digest != parsed(pretty).digest
    assert parsed(compact).digest == parsed(compact).digest
    assert len(parsed(compact).digest) == 64


def test_expect_caught_defaults_to_true_and_false_is_read() -> None:
    spec = parsed(document())

    assert "expectCaught" not in document()["mutations"][0]
    assert spec.mutations[0].expect_caught is True
    assert spec.mutations[1].expect_caught is False


def test_an_explicit_expect_caught_true_is_read() -> None:
    assert parsed(with_mutation(1, expectCaught=True)).mutations[1].expect_caught is True


def test_an_empty_replacement_deletes_the_anchor_and_is_accepted() -> None:
    spec = parsed(with_mutation(0, replacement=""))

    assert spec.mutations[0].replacement == ""


def test_killed_by_and_runner_extensions_are_read() -> None:
    doc = with_mutation(0, killedBy=["tests/toolwire/test_gate.py::test_refused"])
    doc["runner"] = "pytest"

    spec = parsed(doc)

    assert spec.mutations[0].killed_by == ("tests/toolwire/test_gate.py::test_refused",)
    assert spec.runner == "pytest"


@pytest.mark.parametrize(
    "place",
    [
        pytest.param(lambda d: d.update(_provenance="measured by x"), id="top-level-string"),
        pytest.param(lambda d: d.update(_scope_note={"any": [1, None, {"x": True}]}),
                     id="top-level-object"),
        pytest.param(lambda d: d["mutations"][0].update(_why="free text"), id="in-a-mutation"),
        pytest.param(lambda d: d.update(_unknownThing=3, _=""), id="any-underscore-name"),
    ],
)
def test_underscore_metadata_keys_are_kept_and_ignored(place: Any) -> None:
    doc = document()
    place(doc)
    spec = parsed(doc)

    assert spec == dataclasses.replace(parsed(document()), digest=spec.digest)


@pytest.mark.parametrize(
    "entry",
    [
        "tests/toolwire/test_gate.py::test_a[1-2]",
        "tests/toolwire/test_gate.py::TestGate::test_a",
        "tests/toolwire/",
        "tests",
    ],
)
def test_node_ids_and_directories_are_valid_tests_entries(entry: str) -> None:
    assert parsed(document(tests=[entry])).tests == (entry,)


def test_a_spec_nested_exactly_to_the_depth_cap_is_accepted() -> None:
    nested: Any = "leaf"
    for _ in range(MAX_DEPTH - 1):  # the top-level object is the first level
        nested = [nested]
    doc = document(_deep=nested)

    assert parsed(doc).id == "gate"


def test_exactly_the_mutation_cap_is_accepted() -> None:
    mutation = document()["mutations"][0]
    doc = document(mutations=[mutation] * MAX_MUTATIONS)

    assert len(parsed(doc).mutations) == MAX_MUTATIONS


# --- refused: one problem, located by its JSON pointer -----------------------------------------

REFUSED: list[Any] = [
    # unknown keys: a typo must never silently default
    pytest.param(with_mutation(1, expectCaugth=False), "/mutations/1/expectCaugth", "unknown key",
                 id="typo-expectCaugth"),
    pytest.param(document(expectBaselinePas=10), "/expectBaselinePas", "unknown key",
                 id="typo-top-level"),
    pytest.param(document(**{"a/b~c": 1}), "/a~1b~0c", "unknown key", id="pointer-is-escaped"),
    # required keys
    pytest.param(without("tests"), "/tests", "is required", id="tests-missing"),
    pytest.param(without("expectBaselinePass"), "/expectBaselinePass", "is required",
                 id="expectBaselinePass-missing"),
    pytest.param(without("mutations"), "/mutations", "is required", id="mutations-missing"),
    pytest.param(with_mutation(0, name=...), "/mutations/0/name", "is required",
                 id="name-missing"),
    pytest.param(with_mutation(0, file=...), "/mutations/0/file", "is required",
                 id="file-missing"),
    pytest.param(with_mutation(0, anchor=...), "/mutations/0/anchor", "is required",
                 id="anchor-missing"),
    pytest.param(with_mutation(0, replacement=...), "/mutations/0/replacement", "is required",
                 id="replacement-missing"),
    # wrong types
    pytest.param(document(tests="tests/x.py"), "/tests", "must be an array", id="tests-string"),
    pytest.param(document(tests=["tests/x.py", 3]), "/tests/1", "must be a string",
                 id="tests-entry-number"),
    pytest.param(document(mutations={"0": {}}), "/mutations", "must be an array",
                 id="mutations-object"),
    pytest.param(document(mutations=["x"]), "/mutations/0", "must be an object",
                 id="mutation-string"),
    pytest.param(with_mutation(0, name=7), "/mutations/0/name", "must be a string",
                 id="name-number"),
    pytest.param(with_mutation(0, anchor=None), "/mutations/0/anchor", "must be a string",
                 id="anchor-null"),
    pytest.param(with_mutation(0, replacement=["x"]), "/mutations/0/replacement",
                 "must be a string", id="replacement-array"),
    pytest.param(with_mutation(0, expectCaught="false"), "/mutations/0/expectCaught",
                 "must be true or false", id="expectCaught-string"),
    pytest.param(with_mutation(0, expectCaught=0), "/mutations/0/expectCaught",
                 "must be true or false", id="expectCaught-zero"),
    pytest.param(with_mutation(0, killedBy="tests/x.py::t"), "/mutations/0/killedBy",
                 "must be an array", id="killedBy-string"),
    pytest.param(with_mutation(0, killedBy=[""]), "/mutations/0/killedBy/0", "must not be empty",
                 id="killedBy-empty-entry"),
    pytest.param(document(runner="jest"), "/runner", "not a supported runner",
                 id="runner-unsupported"),
    pytest.param(document(runner=1), "/runner", "not a supported runner", id="runner-number"),
    # expectBaselinePass must be a positive integer
    pytest.param(document(expectBaselinePass=0), "/expectBaselinePass", "positive integer",
                 id="expectBaselinePass-zero"),
    pytest.param(document(expectBaselinePass=-3), "/expectBaselinePass", "positive integer",
                 id="expectBaselinePass-negative"),
    pytest.param(document(expectBaselinePass=True), "/expectBaselinePass", "positive integer",
                 id="expectBaselinePass-true"),
    pytest.param(document(expectBaselinePass=10.0), "/expectBaselinePass", "positive integer",
                 id="expectBaselinePass-float"),
    pytest.param(document(expectBaselinePass="10"), "/expectBaselinePass", "positive integer",
                 id="expectBaselinePass-string"),
    pytest.param(document(expectBaselinePass=None), "/expectBaselinePass", "positive integer",
                 id="expectBaselinePass-null"),
    # empty things
    pytest.param(document(tests=[]), "/tests", "must not be empty", id="tests-empty"),
    pytest.param(document(tests=[""]), "/tests/0", "must not be empty", id="tests-entry-empty"),
    pytest.param(document(mutations=[]), "/mutations", "must not be empty", id="mutations-empty"),
    pytest.param(with_mutation(0, anchor=""), "/mutations/0/anchor", "must not be empty",
                 id="anchor-empty"),
    pytest.param(with_mutation(0, name=""), "/mutations/0/name", "must not be empty",
                 id="name-empty"),
    # meaningless or unsafe values
    pytest.param(with_mutation(1, replacement="return age >= 18"), "/mutations/1/replacement",
                 "equals the anchor", id="replacement-equals-anchor"),
    pytest.param(document(tests=["--import=evil"]), "/tests/0", "command-line option",
                 id="tests-entry-dash"),
    pytest.param(document(tests=["-p", "tests/x.py"]), "/tests/0", "command-line option",
                 id="tests-entry-short-option"),
    pytest.param(document(tests=["@args.txt"]), "/tests/0", "argument file",
                 id="tests-entry-at-argfile"),
    pytest.param(document(tests=["../outside/test_x.py"]), "/tests/0", "'..'",
                 id="tests-entry-dotdot"),
    pytest.param(with_mutation(0, file="/etc/passwd"), "/mutations/0/file", "absolute",
                 id="file-absolute"),
    pytest.param(with_mutation(0, file="src\\toolwire\\gate.py"), "/mutations/0/file",
                 "backslash", id="file-backslash"),
    pytest.param(with_mutation(0, file="C:/x.py"), "/mutations/0/file", "drive letter",
                 id="file-drive"),
    pytest.param(with_mutation(0, anchor="\ud800"), "/mutations/0/anchor", "surrogate",
                 id="anchor-lone-surrogate"),
    pytest.param(document(**{"_\udc00": 1}), "/_\\udc00", "surrogate",
                 id="key-lone-surrogate"),
    pytest.param(document(_note="a\ud83d"), "/_note", "surrogate",
                 id="surrogate-even-in-metadata"),
    pytest.param(document(tests={"tests/x.py": True}), "/tests", "must be an array",
                 id="tests-object"),
    pytest.param(with_mutation(0, killedBy={"a": "b"}), "/mutations/0/killedBy",
                 "must be an array", id="killedBy-object"),
]


@pytest.mark.parametrize(("doc", "pointer", "text"), REFUSED)
def test_a_bad_spec_is_refused_with_the_pointer_of_its_problem(
    doc: dict[str, Any], pointer: str, text: str
) -> None:
    problems = problems_of(doc)

    assert [(p.pointer, text in p.text) for p in problems] == [(pointer, True)], problems
    assert all(p.path == PATH for p in problems)


RAW_REFUSED: list[Any] = [
    pytest.param(
        '{"tests": ["t.py"], "expectBaselinePass": 1, "tests": ["u.py"], "mutations": '
        '[{"name": "n", "file": "a.py", "anchor": "x", "replacement": "y"}]}',
        "/tests", "duplicate key", id="duplicate-top-level-key"),
    pytest.param(
        '{"tests": ["t.py"], "expectBaselinePass": 1, "mutations": [{"name": "n", "file": "a.py",'
        ' "anchor": "x", "replacement": "y"}, {"name": "n", "file": "a.py", "anchor": "z",'
        ' "replacement": "y", "expectCaught": true, "expectCaught": false}]}',
        "/mutations/1/expectCaught", "duplicate key", id="duplicate-key-in-mutation"),
    pytest.param(
        '{"tests": ["t.py"], "expectBaselinePass": NaN, "mutations": [{"name": "n",'
        ' "file": "a.py", "anchor": "x", "replacement": "y"}]}',
        "/expectBaselinePass", "NaN", id="NaN"),
    pytest.param(
        '{"tests": ["t.py"], "expectBaselinePass": 1, "_note": -Infinity, "mutations": [{"name":'
        ' "n", "file": "a.py", "anchor": "x", "replacement": "y"}]}',
        "/_note", "-Infinity", id="Infinity-even-in-metadata"),
    pytest.param(
        '{"tests": ["t.py"], "expectBaselinePass": 1e400, "mutations": [{"name": "n",'
        ' "file": "a.py", "anchor": "x", "replacement": "y"}]}',
        "/expectBaselinePass", "finite", id="float-overflowing-to-infinity"),
    pytest.param(
        '{"tests": ["t.py"], "expectBaselinePass": 1' + "0" * 400 + ', "mutations": [{"name":'
        ' "n", "file": "a.py", "anchor": "x", "replacement": "y"}]}',
        "/expectBaselinePass", "too large", id="huge-integer-literal"),
    pytest.param(
        '{"tests": ["t.py"], "expectBaselinePass": 1' + "0" * 5000 + ', "mutations": [{"name":'
        ' "n", "file": "a.py", "anchor": "x", "replacement": "y"}]}',
        "/expectBaselinePass", "too large", id="integer-beyond-pythons-digit-limit"),
    pytest.param(
        '{"tests": ["t.py"], "expectBaselinePass": 9007199254740992, "mutations": [{"name":'
        ' "n", "file": "a.py", "anchor": "x", "replacement": "y"}]}',
        "/expectBaselinePass", "too large", id="integer-beyond-2-to-the-53"),
    pytest.param("[]", "", "must be an object", id="top-level-array"),
    pytest.param("null", "", "must be an object", id="top-level-null"),
    pytest.param('{"tests": [', "", "not valid JSON", id="truncated-json"),
    pytest.param("", "", "not valid JSON", id="empty-file"),
    pytest.param('{"tests": ["t.py"],}', "", "not valid JSON", id="trailing-comma"),
    pytest.param("// comment\n{}", "", "not valid JSON", id="comment"),
    pytest.param(b"\xef\xbb\xbf" + encode(document()), "", "byte order mark", id="utf8-bom"),
    pytest.param(json.dumps(document(_note="caf\u00e9"), ensure_ascii=False).encode("latin-1"),
                 "",
                 "not valid UTF-8", id="latin-1-bytes"),
    pytest.param(b"\xff\xfe" + json.dumps(document()).encode("utf-16-le"), "", "UTF-8",
                 id="utf16-with-bom"),
    pytest.param("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "", "levels deep",
                 id="nesting-beyond-the-cap"),
    pytest.param("[" * 100_000 + "]" * 100_000, "", "levels deep", id="recursion-bomb"),
    pytest.param(encode(document(_pad="x" * MAX_SPEC_BYTES)), "", "the limit is",
                 id="over-the-size-cap"),
]


@pytest.mark.parametrize(("raw", "pointer", "text"), RAW_REFUSED)
def test_malformed_spec_text_is_refused_with_a_pointer(
    raw: str | bytes, pointer: str, text: str
) -> None:
    problems = problems_of(raw)

    assert [(p.pointer, text in p.text) for p in problems] == [(pointer, True)], problems


def test_more_mutations_than_the_cap_are_refused() -> None:
    mutation = document()["mutations"][0]
    problems = problems_of(document(mutations=[mutation] * (MAX_MUTATIONS + 1)))

    assert pointers(problems) == ["/mutations"]
    assert "limit is" in problems[0].text


def test_nesting_beyond_the_cap_inside_strings_does_not_count() -> None:
    doc = document(_note="[[[[" * MAX_DEPTH + '\\"{{{{' * MAX_DEPTH)

    assert parsed(doc).id == "gate"


def test_every_problem_in_one_spec_is_reported_together() -> None:
    doc = document(tests=["-x", "tests/ok.py"], expectBaselinePass=0, colour="red")
    doc["mutations"][0].update(expectCaugth=False, anchor="")
    doc["mutations"][1].update(file="../x.py")
    del doc["mutations"][1]["name"]

    problems = problems_of(doc)

    assert sorted(pointers(problems)) == sorted([
        "/tests/0",
        "/expectBaselinePass",
        "/colour",
        "/mutations/0/expectCaugth",
        "/mutations/0/anchor",
        "/mutations/1/name",
        "/mutations/1/file",
    ])


def test_a_mutation_that_is_not_an_object_does_not_hide_the_next_ones() -> None:
    doc = document()
    doc["mutations"].insert(0, 5)
    doc["mutations"][2]["expectCaught"] = "no"

    assert pointers(problems_of(doc)) == ["/mutations/0", "/mutations/2/expectCaught"]


def test_problems_read_as_file_pointer_and_text() -> None:
    problem = problems_of(with_mutation(1, expectCaugth=False))[0]

    assert str(problem).startswith(f"{PATH}#/mutations/1/expectCaugth: unknown key")


# --- load_specs: many files, one report ------------------------------------------------------


def write(directory: Path, name: str, content: dict[str, Any] | str | bytes) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(encode(content))
    return path


def test_load_specs_returns_every_spec_in_order(tmp_path: Path) -> None:
    paths = [write(tmp_path, "b.json", document()), write(tmp_path, "a.json", document())]

    specs = load_specs(paths)

    assert [spec.id for spec in specs] == ["b", "a"]
    assert [spec.path for spec in specs] == [str(path) for path in paths]


def test_load_specs_names_files_by_their_display_names(tmp_path: Path) -> None:
    path = write(tmp_path, "gate.json", with_mutation(0, expectCaugth=True))

    with pytest.raises(SpecError) as raised:
        load_specs([path], ["specs/gate.json"])

    assert [p.path for p in raised.value.problems] == ["specs/gate.json"]


def test_every_problem_in_every_spec_file_is_reported_in_one_error(tmp_path: Path) -> None:
    good = write(tmp_path, "good.json", document())
    typo = write(tmp_path, "typo.json", with_mutation(1, expectCaugth=False))
    broken = write(tmp_path, "broken.json", '{"tests": ')
    empty = write(tmp_path, "empty.json", document(tests=[], mutations=[]))
    bom = write(tmp_path, "bom.json", b"\xef\xbb\xbf{}")
    missing = tmp_path / "missing.json"

    with pytest.raises(SpecError) as raised:
        load_specs([good, typo, broken, empty, bom, missing])

    found = [(Path(p.path).name, p.pointer) for p in raised.value.problems]
    assert found == [
        ("typo.json", "/mutations/1/expectCaugth"),
        ("broken.json", ""),
        ("empty.json", "/tests"),
        ("empty.json", "/mutations"),
        ("bom.json", ""),
        ("missing.json", ""),
    ]
    message = str(raised.value)
    assert message.startswith("6 problem(s) in the spec(s); nothing was run:")
    assert f"{typo}#/mutations/1/expectCaugth: unknown key" in message
    assert "cannot be read" in message


def test_two_specs_with_the_same_id_are_refused(tmp_path: Path) -> None:
    first = write(tmp_path, "one/gate.json", document())
    second = write(tmp_path, "two/gate.json", document())

    with pytest.raises(SpecError) as raised:
        load_specs([first, second])

    (problem,) = raised.value.problems
    assert problem.path == str(second)
    assert str(first) in problem.text


def test_the_same_spec_given_twice_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, "gate.json", document())

    with pytest.raises(SpecError) as raised:
        load_specs([path, path])

    assert "same id" in raised.value.problems[0].text


def test_a_file_over_the_size_cap_is_refused_without_being_parsed(tmp_path: Path) -> None:
    path = write(tmp_path, "big.json", b"{" + b" " * MAX_SPEC_BYTES + b"}")

    with pytest.raises(SpecError) as raised:
        load_specs([path])

    (problem,) = raised.value.problems
    assert (problem.pointer, "larger than" in problem.text) == ("", True)


def test_a_directory_given_as_a_spec_is_reported_not_raised(tmp_path: Path) -> None:
    directory = tmp_path / "dir.json"
    directory.mkdir()

    with pytest.raises(SpecError) as raised:
        load_specs([directory])

    assert "cannot be read" in raised.value.problems[0].text
