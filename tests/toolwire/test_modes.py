"""Tool invocation modes: only the selected path executes, through the same registry."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from toolwire.modes import (
    ChatTurn,
    ProviderReply,
    Tool,
    ToolCall,
    ToolInvocationMode,
    UnknownModeError,
    parse_mode,
    run,
)

DUAL = ToolInvocationMode.DUAL_AGENT
CHAT = ToolInvocationMode.CHAT_AGENT_TOOLS
START = ({"role": "user", "content": "fix the build"},)


class ScriptedProvider:
    """Replays canned replies, then answers plainly; records every turn it was sent."""

    def __init__(self, *replies: ProviderReply) -> None:
        self.replies = list(replies)
        self.turns: list[ChatTurn] = []

    def complete(self, turn: ChatTurn) -> ProviderReply:
        self.turns.append(turn)
        assert len(self.turns) <= 10, "the run did not stop"
        return self.replies.pop(0) if self.replies else ProviderReply("done")


class Registry:
    """Tools whose handlers record the arguments they were run with."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, Mapping[str, Any]]] = []
        self.tools = [self.tool("read", "read a file"), self.tool("bash", "run a command")]
        self.tools.append(self.tool("deploy", "ship it", enabled=False))

    def tool(self, name: str, description: str, enabled: bool = True) -> Tool:
        def handler(arguments: Mapping[str, Any]) -> str:
            self.ran.append((name, arguments))
            return f"{name} ok"

        schema = {"type": "object", "properties": {"path": {"type": "string"}}}
        return Tool(name, description, schema, handler, enabled)


def calls(*specs: tuple[str, str, str]) -> ProviderReply:
    return ProviderReply("working", tuple(ToolCall(*spec) for spec in specs))


@pytest.mark.parametrize("request_fields", [{}, {"tool_invocation_mode": None}])
def test_the_mode_defaults_to_dual_agent(request_fields: dict[str, Any]) -> None:
    assert parse_mode(request_fields) is DUAL


def test_chat_agent_tools_is_selected_by_name() -> None:
    assert parse_mode({"tool_invocation_mode": "chat_agent_tools"}) is CHAT


@pytest.mark.parametrize("value", ["chat", "DUAL_AGENT", 1])
def test_an_unknown_mode_is_rejected_with_the_allowed_values(value: object) -> None:
    with pytest.raises(UnknownModeError, match="dual_agent, chat_agent_tools"):
        parse_mode({"tool_invocation_mode": value})


def test_dual_agent_sends_no_tools_and_an_event_block_of_enabled_tools() -> None:
    provider, registry = ScriptedProvider(), Registry()

    run(START, provider, registry.tools, DUAL, max_event_loops=3)

    turn = provider.turns[0]
    assert turn.tools == ()
    assert "@event <name> <json-arguments>" in turn.instructions
    assert "- read: read a file" in turn.instructions
    assert "deploy" not in turn.instructions


def test_dual_agent_ignores_provider_tool_calls() -> None:
    provider, registry = ScriptedProvider(calls(("c1", "bash", '{"path": "x"}'))), Registry()

    outcome = run(START, provider, registry.tools, DUAL, max_event_loops=3)

    assert registry.ran == []
    assert outcome.transcript[1:] == ({"role": "assistant", "content": "working"},)
    assert len(provider.turns) == 1


def test_dual_agent_resolves_text_events_through_the_registry() -> None:
    reply = ProviderReply('let me look\n@event read {"path": "a.py"}')
    provider, registry = ScriptedProvider(reply), Registry()

    outcome = run(START, provider, registry.tools, DUAL, max_event_loops=3)

    assert registry.ran == [("read", {"path": "a.py"})]
    assert outcome.transcript[1:3] == (
        {"role": "assistant", "content": reply.content},
        {"role": "user", "content": "@result read read ok"},
    )


def test_chat_agent_tools_sends_exactly_the_enabled_schemas_and_no_event_block() -> None:
    provider, registry = ScriptedProvider(), Registry()

    run(START, provider, registry.tools, CHAT, max_event_loops=3)

    turn = provider.turns[0]
    assert [tool["function"]["name"] for tool in turn.tools] == ["read", "bash"]
    assert turn.tools[0] == registry.tools[0].schema()
    assert turn.instructions == ""


def test_chat_agent_tools_ignores_text_events() -> None:
    provider, registry = ScriptedProvider(ProviderReply('@event read {"path": "a.py"}')), Registry()

    run(START, provider, registry.tools, CHAT, max_event_loops=3)

    assert registry.ran == []


def test_chat_agent_tools_records_one_assistant_message_then_its_results_in_order() -> None:
    raw_read, raw_bash = '{"path":"b.py"}', '{ "path" : "a.py" }'
    provider = ScriptedProvider(calls(("id-9", "read", raw_read), ("id-2", "bash", raw_bash)))
    registry = Registry()

    outcome = run(START, provider, registry.tools, CHAT, max_event_loops=3)

    assert outcome.transcript[1:4] == (
        {
            "role": "assistant",
            "content": "working",
            "tool_calls": [
                {
                    "id": "id-9",
                    "type": "function",
                    "function": {"name": "read", "arguments": raw_read},
                },
                {
                    "id": "id-2",
                    "type": "function",
                    "function": {"name": "bash", "arguments": raw_bash},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "id-9", "name": "read", "content": "read ok"},
        {"role": "tool", "tool_call_id": "id-2", "name": "bash", "content": "bash ok"},
    )
    assert registry.ran == [("read", {"path": "b.py"}), ("bash", {"path": "a.py"})]


def test_an_unknown_tool_gets_a_structured_result_and_runs_nothing() -> None:
    provider, registry = ScriptedProvider(calls(("c1", "rm", "{}"))), Registry()

    outcome = run(START, provider, registry.tools, CHAT, max_event_loops=3)

    assert registry.ran == []
    assert json.loads(outcome.transcript[2]["content"]) == {"error": "unknown_tool", "tool": "rm"}


def test_a_disabled_tool_call_gets_a_structured_result_and_never_runs() -> None:
    provider, registry = ScriptedProvider(calls(("c1", "deploy", "{}"))), Registry()

    outcome = run(START, provider, registry.tools, CHAT, max_event_loops=3)

    assert registry.ran == []
    assert json.loads(outcome.transcript[2]["content"]) == {
        "error": "tool_disabled",
        "tool": "deploy",
    }


def test_a_disabled_tool_event_never_runs() -> None:
    provider, registry = ScriptedProvider(ProviderReply("@event deploy {}")), Registry()

    outcome = run(START, provider, registry.tools, DUAL, max_event_loops=3)

    assert registry.ran == []
    assert "tool_disabled" in outcome.transcript[2]["content"]


def test_malformed_arguments_get_a_structured_result_and_run_nothing() -> None:
    provider, registry = ScriptedProvider(calls(("c1", "read", '{"path": '))), Registry()

    outcome = run(START, provider, registry.tools, CHAT, max_event_loops=3)

    assert registry.ran == []
    assert json.loads(outcome.transcript[2]["content"])["error"] == "invalid_arguments"


def test_after_the_budget_is_spent_no_tools_are_sent_and_calls_are_ignored() -> None:
    first, second = calls(("c1", "read", "{}")), calls(("c2", "bash", "{}"))
    provider, registry = ScriptedProvider(first, second), Registry()

    outcome = run(START, provider, registry.tools, CHAT, max_event_loops=1)

    assert [name for name, _ in registry.ran] == ["read"]
    assert provider.turns[1].tools == ()
    assert provider.turns[1].instructions == ""
    assert outcome.transcript[-1] == {"role": "assistant", "content": "working"}
    assert outcome.loops_used == 1


def test_the_event_budget_bounds_dual_agent_loops_too() -> None:
    event = ProviderReply("@event bash {}")
    provider, registry = ScriptedProvider(event, event, event), Registry()

    outcome = run(START, provider, registry.tools, DUAL, max_event_loops=2)

    assert len(registry.ran) == 2
    assert [turn.instructions != "" for turn in provider.turns] == [True, True, False]
    assert outcome.loops_used == 2


def test_a_zero_budget_sends_no_tools_from_the_start() -> None:
    provider, registry = ScriptedProvider(calls(("c1", "read", "{}"))), Registry()

    run(START, provider, registry.tools, CHAT, max_event_loops=0)

    assert provider.turns[0].tools == ()
    assert registry.ran == []


def test_the_run_stops_when_the_model_stops_calling_tools() -> None:
    provider, registry = ScriptedProvider(calls(("c1", "read", "{}"))), Registry()

    outcome = run(START, provider, registry.tools, CHAT, max_event_loops=5)

    assert len(provider.turns) == 2
    assert outcome.transcript[-1] == {"role": "assistant", "content": "done"}
    assert outcome.loops_used == 1
