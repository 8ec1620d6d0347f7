"""The Anthropic /v1/messages front door runs the same gate and speaks Anthropic errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from toolwire.gate import Admitted, Backend
from toolwire.messages import AnthropicError, AnthropicErrorType, admit_messages, to_chat_request
from toolwire.wire import decode_request, encode_request

BACKEND_NAME = "cascade-east"
WIRE_OFF = Backend(BACKEND_NAME, tool_choice_passthrough=False)
WIRE_ON = Backend(BACKEND_NAME, tool_choice_passthrough=True)


def body(**fields: Any) -> dict[str, Any]:
    return {
        "model": "claude-x",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "hi"}],
        **fields,
    }


def resolver(backend: Backend) -> Callable[[str], Backend | None]:
    return lambda model: backend if model == "claude-x" else None


def always(answer: bool) -> Callable[[Backend], bool]:
    return lambda backend: answer


def refuse(payload: dict[str, Any], capacity: bool = True) -> AnthropicError:
    outcome = admit_messages(payload, resolver(WIRE_OFF), always(capacity))
    assert isinstance(outcome, AnthropicError)
    return outcome


def test_disable_parallel_tool_use_true_becomes_parallel_tool_calls_false() -> None:
    chat = to_chat_request(body(tool_choice={"type": "auto", "disable_parallel_tool_use": True}))

    assert chat["parallel_tool_calls"] is False


def test_disable_parallel_tool_use_false_allows_parallel_calls() -> None:
    chat = to_chat_request(body(tool_choice={"type": "auto", "disable_parallel_tool_use": False}))

    assert chat["parallel_tool_calls"] is True


def test_a_tool_choice_without_the_field_adds_no_parallel_hint() -> None:
    assert "parallel_tool_calls" not in to_chat_request(body(tool_choice={"type": "auto"}))


def test_the_refusal_is_an_anthropic_error_envelope() -> None:
    error = refuse(body(tool_choice={"type": "any", "disable_parallel_tool_use": True}))

    assert error.status == 400
    assert error.to_body() == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": error.message},
    }


def test_the_refusal_names_the_field_the_caller_sent_and_the_switch() -> None:
    error = refuse(body(tool_choice={"type": "any", "disable_parallel_tool_use": True}))

    assert "disable_parallel_tool_use" in error.message
    assert "TOOL_CHOICE_PASSTHROUGH=1" in error.message


def test_the_refusal_never_names_the_internal_field_or_the_backend() -> None:
    error = refuse(body(tool_choice={"type": "any", "disable_parallel_tool_use": True}))

    assert "parallel_tool_calls" not in error.message
    assert BACKEND_NAME not in error.message
    assert error.message != "Invalid request"


@pytest.mark.parametrize("value", ["true", 1])
def test_a_non_boolean_disable_parallel_tool_use_is_refused_by_its_own_name(value: object) -> None:
    error = refuse(body(tool_choice={"type": "auto", "disable_parallel_tool_use": value}))

    assert (error.status, error.type) == (400, AnthropicErrorType.INVALID_REQUEST)
    assert error.message == "tool_choice.disable_parallel_tool_use must be a boolean"


def test_with_the_switch_the_hint_reaches_the_wire() -> None:
    payload = body(tool_choice={"type": "any", "disable_parallel_tool_use": True})

    outcome = admit_messages(payload, resolver(WIRE_ON), always(True))

    assert isinstance(outcome, Admitted)
    sent = decode_request(encode_request(outcome.request, outcome.backend)).request
    assert sent.disable_parallel_tool_calls is True
    assert sent.tool_choice == "required"


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ({"type": "auto"}, "auto"),
        ({"type": "any"}, "required"),
        ({"type": "none"}, "none"),
        ({"type": "tool", "name": "Bash"}, {"type": "function", "function": {"name": "Bash"}}),
    ],
)
def test_tool_choice_is_mapped_to_its_openai_equivalent(
    choice: dict[str, Any], expected: object
) -> None:
    assert to_chat_request(body(tool_choice=choice))["tool_choice"] == expected


def test_tools_become_function_schemas() -> None:
    schema = {"type": "object", "properties": {"command": {"type": "string"}}}

    chat = to_chat_request(
        body(tools=[{"name": "Bash", "description": "run", "input_schema": schema}])
    )

    assert chat["tools"] == [
        {
            "type": "function",
            "function": {"name": "Bash", "description": "run", "parameters": schema},
        }
    ]


def test_the_system_prompt_becomes_the_first_message() -> None:
    chat = to_chat_request(body(system="be brief"))

    assert chat["messages"][0] == {"role": "system", "content": "be brief"}
    assert chat["messages"][1:] == [{"role": "user", "content": "hi"}]
    assert chat["max_tokens"] == 64


def test_an_unknown_model_is_a_not_found_error() -> None:
    error = refuse(body(model="gpt-nothing"))

    assert (error.status, error.type) == (404, AnthropicErrorType.NOT_FOUND)
    assert "gpt-nothing" in error.message


def test_capacity_is_an_overloaded_error_but_only_after_the_refusal() -> None:
    overloaded = refuse(body(), capacity=False)
    refused = refuse(
        body(tool_choice={"type": "auto", "disable_parallel_tool_use": True}), capacity=False
    )

    assert (overloaded.status, overloaded.type) == (503, AnthropicErrorType.OVERLOADED)
    assert (refused.status, refused.type) == (400, AnthropicErrorType.INVALID_REQUEST)
