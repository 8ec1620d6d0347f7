"""The Anthropic `/v1/messages` front door: map `disable_parallel_tool_use` onto the same gate."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from toolwire.gate import SWITCH_ENV, Admitted, Backend, ErrorCode, GateError, admit

FIELD = "disable_parallel_tool_use"


class AnthropicErrorType(Enum):
    """Anthropic error `type` values this front door can produce."""

    INVALID_REQUEST = "invalid_request_error"
    NOT_FOUND = "not_found_error"
    OVERLOADED = "overloaded_error"


@dataclass(frozen=True)
class AnthropicError:
    """A refusal restated in Anthropic vocabulary."""

    status: int
    type: AnthropicErrorType
    message: str

    def to_body(self) -> dict[str, Any]:
        """Render the Anthropic error envelope."""
        return {"type": "error", "error": {"type": self.type.value, "message": self.message}}


_STATUS_TYPES = {404: AnthropicErrorType.NOT_FOUND, 503: AnthropicErrorType.OVERLOADED}


def _chat_tool_choice(tool_choice: Mapping[str, Any]) -> str | dict[str, Any] | None:
    kind = tool_choice.get("type")
    if kind == "tool":
        return {"type": "function", "function": {"name": tool_choice.get("name")}}
    return {"auto": "auto", "any": "required", "none": "none"}.get(str(kind))


def _parallel_tool_calls(tool_choice: Mapping[str, Any]) -> object:
    """`disable_parallel_tool_use: true` is `parallel_tool_calls: false`; non-booleans pass."""
    value = tool_choice[FIELD]
    return not value if isinstance(value, bool) else value


def to_chat_request(body: Mapping[str, Any]) -> dict[str, Any]:
    """Translate an Anthropic messages body into the OpenAI-style chat request the gate checks."""
    system = body.get("system")
    messages = ([{"role": "system", "content": system}] if system else []) + list(
        body.get("messages", ())
    )
    chat: dict[str, Any] = {"model": body.get("model"), "messages": messages}
    if "max_tokens" in body:
        chat["max_tokens"] = body["max_tokens"]
    tools = body.get("tools")
    if tools:
        chat["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": tool.get("name"),
                    "description": tool.get("description", ""),
                    "parameters": tool.get("input_schema", {}),
                },
            }
            for tool in tools
        ]
    tool_choice = body.get("tool_choice")
    if isinstance(tool_choice, Mapping):
        choice = _chat_tool_choice(tool_choice)
        if choice is not None:
            chat["tool_choice"] = choice
        if FIELD in tool_choice:
            chat["parallel_tool_calls"] = _parallel_tool_calls(tool_choice)
    return chat


def restate(error: GateError) -> AnthropicError:
    """Restate a refusal naming `disable_parallel_tool_use`, never the internal field or backend."""
    if error.code is ErrorCode.UNSUPPORTED_PARAMETER:
        message = (
            f"tool_choice.{FIELD}=true is not supported by this deployment unless "
            f"{SWITCH_ENV}=1 is set; enable that switch or omit {FIELD}"
        )
    elif error.code is ErrorCode.INVALID_TYPE:
        message = f"tool_choice.{FIELD} must be a boolean"
    else:
        message = error.message
    return AnthropicError(
        error.status, _STATUS_TYPES.get(error.status, AnthropicErrorType.INVALID_REQUEST), message
    )


def admit_messages(
    body: Mapping[str, Any],
    resolve_model: Callable[[str], Backend | None],
    has_capacity: Callable[[Backend], bool],
) -> Admitted | AnthropicError:
    """Run the `/v1/messages` body through the same gate as chat completions."""
    outcome = admit(to_chat_request(body), resolve_model, has_capacity)
    return restate(outcome) if isinstance(outcome, GateError) else outcome
