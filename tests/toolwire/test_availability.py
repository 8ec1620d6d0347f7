"""Tool callability follows the boundaries the serving provider really honours on the wire."""

from __future__ import annotations

import pytest

from toolwire.availability import (
    Message,
    Part,
    PartKind,
    Provider,
    is_tool_callable,
    is_wire_boundary,
    schemas_to_readvertise,
    trim_history,
)

OPENAI, ANTHROPIC, GOOGLE = Provider.OPENAI, Provider.ANTHROPIC, Provider.GOOGLE


def schema(name: str) -> Message:
    return Message("tool", (Part(PartKind.TOOL_SCHEMA, tool_name=name),))


def boundary(
    provider: Provider, content: str | None = None, encrypted: str | None = None
) -> Message:
    part = Part(PartKind.COMPACTION, provider, content=content, encrypted_content=encrypted)
    return Message("assistant", (part,), provider)


def response(provider: Provider | None, *parts: Part) -> Message:
    return Message("assistant", (*parts, Part(PartKind.TEXT)), provider)


OPENAI_CUT = boundary(OPENAI, content="summary", encrypted="gAAAA")
ANTHROPIC_CUT = boundary(ANTHROPIC, content="summary")
FAILED_ANTHROPIC_CUT = boundary(ANTHROPIC, content="")


def callable_in(history: list[Message], tool: str = "grep") -> bool:
    return is_tool_callable(history, len(history) - 1, tool)


def test_a_schema_with_no_boundary_after_it_is_callable() -> None:
    assert callable_in([schema("grep"), response(OPENAI)])


def test_a_schema_before_an_honoured_boundary_is_not_callable() -> None:
    assert not callable_in([schema("grep"), OPENAI_CUT, response(OPENAI)])
    assert not callable_in([schema("grep"), ANTHROPIC_CUT, response(ANTHROPIC)])


def test_a_schema_after_the_boundary_is_callable() -> None:
    assert callable_in([OPENAI_CUT, schema("grep"), response(OPENAI)])


def test_a_tool_never_shown_is_not_callable() -> None:
    assert not callable_in([schema("read"), response(OPENAI)])


def test_a_boundary_from_another_provider_is_not_honoured() -> None:
    assert callable_in([schema("grep"), OPENAI_CUT, response(ANTHROPIC)])
    assert callable_in([schema("grep"), ANTHROPIC_CUT, response(OPENAI)])


def test_an_openai_boundary_without_its_encrypted_payload_is_not_honoured() -> None:
    assert callable_in([schema("grep"), boundary(OPENAI, content="summary"), response(OPENAI)])


def test_a_failed_anthropic_compaction_is_not_honoured() -> None:
    assert callable_in([schema("grep"), FAILED_ANTHROPIC_CUT, response(ANTHROPIC)])


def test_a_provider_without_wire_compaction_honours_no_boundary() -> None:
    cut = boundary(GOOGLE, content="summary", encrypted="gAAAA")

    assert callable_in([schema("grep"), cut, response(GOOGLE)])


def test_a_boundary_inside_the_serving_response_does_not_count() -> None:
    cut = Part(PartKind.COMPACTION, OPENAI, encrypted_content="gAAAA")

    assert callable_in([schema("grep"), response(OPENAI, cut)])


def test_a_schema_after_a_boundary_in_the_same_message_is_visible() -> None:
    cut = Part(PartKind.COMPACTION, OPENAI, encrypted_content="gAAAA")
    shown = Part(PartKind.TOOL_SCHEMA, tool_name="grep")
    hidden = Part(PartKind.TOOL_SCHEMA, tool_name="read")
    history = [Message("assistant", (hidden, cut, shown), OPENAI), response(OPENAI)]

    assert callable_in(history, "grep")
    assert not callable_in(history, "read")


def test_with_no_provider_on_the_response_any_boundary_counts() -> None:
    assert not callable_in([schema("grep"), FAILED_ANTHROPIC_CUT, response(None)])
    assert callable_in([FAILED_ANTHROPIC_CUT, schema("grep"), response(None)])


@pytest.mark.parametrize("kind", [PartKind.TEXT, PartKind.TOOL_SCHEMA])
def test_only_compaction_parts_can_be_boundaries(kind: PartKind) -> None:
    part = Part(kind, OPENAI, tool_name="grep", content="c", encrypted_content="gAAAA")

    assert not is_wire_boundary(part, OPENAI)
    assert not is_wire_boundary(part, None)


def test_the_trim_keeps_history_from_the_last_honoured_boundary() -> None:
    history = [schema("read"), OPENAI_CUT, schema("grep"), response(OPENAI)]

    assert trim_history(history, OPENAI) == tuple(history[1:])


def test_the_trim_ignores_boundaries_the_provider_does_not_honour() -> None:
    history = [schema("read"), OPENAI_CUT, FAILED_ANTHROPIC_CUT, schema("grep")]

    assert trim_history(history, ANTHROPIC) == tuple(history)


HISTORIES = [
    [schema("grep"), OPENAI_CUT, schema("read"), ANTHROPIC_CUT],
    [schema("grep"), FAILED_ANTHROPIC_CUT, ANTHROPIC_CUT, schema("read")],
    [OPENAI_CUT, schema("grep"), boundary(OPENAI, content="no payload"), schema("read")],
]


@pytest.mark.parametrize("history", HISTORIES)
@pytest.mark.parametrize("provider", [OPENAI, ANTHROPIC, GOOGLE])
def test_callability_matches_what_the_trimmed_wire_shows(
    history: list[Message], provider: Provider
) -> None:
    served = [*history, response(provider)]
    on_wire = {
        part.tool_name for message in trim_history(history, provider) for part in message.parts
    }

    for tool in ("grep", "read"):
        assert is_tool_callable(served, len(history), tool) is (tool in on_wire)


def test_readvertising_keeps_the_conservative_window() -> None:
    history = [schema("grep"), schema("read"), FAILED_ANTHROPIC_CUT, schema("read")]

    assert schemas_to_readvertise(history, ["grep", "read", "bash"]) == ("grep", "bash")
