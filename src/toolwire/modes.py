"""Tool invocation modes: text events (`dual_agent`) or provider tool calls (`chat_agent_tools`)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol

Message = Mapping[str, Any]
Handler = Callable[[Mapping[str, Any]], str]
_EVENT_LINE = re.compile(r"^@event\s+(\S+)\s*(.*)$", re.MULTILINE)


class ToolInvocationMode(Enum):
    """How the chat model invokes tools."""

    DUAL_AGENT = "dual_agent"
    CHAT_AGENT_TOOLS = "chat_agent_tools"


class UnknownModeError(ValueError):
    """A `tool_invocation_mode` that is not one of the supported values."""

    def __init__(self, value: object) -> None:
        allowed = ", ".join(mode.value for mode in ToolInvocationMode)
        super().__init__(f"unknown tool_invocation_mode {value!r}; expected one of: {allowed}")
        self.value = value


def parse_mode(request: Mapping[str, Any]) -> ToolInvocationMode:
    """Read `tool_invocation_mode` from a request; absent or null means `dual_agent`."""
    value = request.get("tool_invocation_mode")
    if value is None:
        return ToolInvocationMode.DUAL_AGENT
    for mode in ToolInvocationMode:
        if mode.value == value:
            return mode
    raise UnknownModeError(value)


@dataclass(frozen=True)
class Tool:
    """A registered tool: its schema, its handler and whether it may run."""

    name: str
    description: str
    parameters: Mapping[str, Any]
    handler: Handler
    enabled: bool = True

    def schema(self) -> dict[str, Any]:
        """The OpenAI function schema advertised to the chat model."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": dict(self.parameters),
            },
        }


@dataclass(frozen=True)
class ToolCall:
    """A provider tool call; `raw_arguments` is the JSON text exactly as the provider sent it."""

    id: str
    name: str
    raw_arguments: str


@dataclass(frozen=True)
class ProviderReply:
    """What the chat model returned: visible content and tool calls in the provider's order."""

    content: str
    tool_calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True)
class ChatTurn:
    """One request to the chat model."""

    messages: tuple[Message, ...]
    tools: tuple[Mapping[str, Any], ...]
    instructions: str


class ChatProvider(Protocol):
    """The upstream chat model."""

    def complete(self, turn: ChatTurn) -> ProviderReply:
        """Answer one turn."""
        ...


@dataclass(frozen=True)
class AgentRun:
    """The transcript a run produced and how many event loops it spent."""

    transcript: tuple[Message, ...]
    loops_used: int


def event_instructions(tools: Sequence[Tool]) -> str:
    """The compact text-event block for `dual_agent`: one line per enabled tool."""
    lines = [f"- {tool.name}: {tool.description}" for tool in tools if tool.enabled]
    return "To use a tool, write a line `@event <name> <json-arguments>`. Tools:\n" + "\n".join(
        lines
    )


def parse_arguments(raw: str) -> dict[str, Any] | None:
    """Parse a JSON object of arguments; None when the text is not one."""
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def execute(tools: Sequence[Tool], name: str, raw_arguments: str) -> str:
    """Run a tool by name; unknown, disabled or malformed calls get a structured result instead."""
    tool = next((tool for tool in tools if tool.name == name), None)
    if tool is None or not tool.enabled:
        error = "unknown_tool" if tool is None else "tool_disabled"
        return json.dumps({"error": error, "tool": name})
    arguments = parse_arguments(raw_arguments)
    if arguments is None:
        return json.dumps({"error": "invalid_arguments", "tool": name})
    return tool.handler(arguments)


def _chat_turn(
    transcript: Sequence[Message], tools: Sequence[Tool], mode: ToolInvocationMode, live: bool
) -> ChatTurn:
    if live and mode is ToolInvocationMode.CHAT_AGENT_TOOLS:
        return ChatTurn(tuple(transcript), tuple(t.schema() for t in tools if t.enabled), "")
    instructions = event_instructions(tools) if live else ""
    return ChatTurn(tuple(transcript), (), instructions)


def _tool_round(reply: ProviderReply, tools: Sequence[Tool]) -> list[Message]:
    """One assistant message with the ordered calls, then one tool message per call, in order."""
    assistant = {
        "role": "assistant",
        "content": reply.content,
        "tool_calls": [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.raw_arguments},
            }
            for call in reply.tool_calls
        ],
    }
    results = [
        {
            "role": "tool",
            "tool_call_id": call.id,
            "name": call.name,
            "content": execute(tools, call.name, call.raw_arguments),
        }
        for call in reply.tool_calls
    ]
    return [assistant, *results]


def _event_round(reply: ProviderReply, tools: Sequence[Tool]) -> list[Message]:
    """The assistant's text, then one user message carrying every event's result, in order."""
    events = _EVENT_LINE.findall(reply.content)
    outcomes = [f"@result {name} {execute(tools, name, raw.strip())}" for name, raw in events]
    return [
        {"role": "assistant", "content": reply.content},
        {"role": "user", "content": "\n".join(outcomes)},
    ]


def run(
    messages: Sequence[Message],
    provider: ChatProvider,
    tools: Sequence[Tool],
    mode: ToolInvocationMode,
    max_event_loops: int,
) -> AgentRun:
    """Drive the chat model until it stops invoking tools or the shared event budget is spent.

    Once `max_event_loops` rounds have run, the next request sends no tools and whatever the
    provider asks for is ignored.
    """
    transcript = list(messages)
    loops_used = 0
    while True:
        live = loops_used < max_event_loops
        reply = provider.complete(_chat_turn(transcript, tools, mode, live))
        if not live:
            transcript.append({"role": "assistant", "content": reply.content})
            return AgentRun(tuple(transcript), loops_used)
        if mode is ToolInvocationMode.CHAT_AGENT_TOOLS and reply.tool_calls:
            transcript += _tool_round(reply, tools)
        elif mode is ToolInvocationMode.DUAL_AGENT and _EVENT_LINE.search(reply.content):
            transcript += _event_round(reply, tools)
        else:
            transcript.append({"role": "assistant", "content": reply.content})
            return AgentRun(tuple(transcript), loops_used)
        loops_used += 1
