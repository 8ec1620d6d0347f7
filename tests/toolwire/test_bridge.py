"""Native tool history tells the truth: observed steps only, real exit codes, nothing dropped."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolwire.bridge import StepKind, bridge_history, parse_exit_code

Msg = dict[str, Any]


def call(call_id: str, name: str, **arguments: Any) -> Msg:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def assistant(*calls: Msg, content: str = "") -> Msg:
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


def result(call_id: str, content: Any, **extra: Any) -> Msg:
    return {"role": "tool", "tool_call_id": call_id, "content": content, **extra}


def user(text: str) -> Msg:
    return {"role": "user", "content": text}


def bash_round(output: str, **extra: Any) -> list[Msg]:
    return [
        user("go"),
        assistant(call("c1", "Bash", command="make")),
        result("c1", output, **extra),
    ]


def only_step(history: list[Msg]) -> Any:
    steps = bridge_history(history, reuse=False).steps
    assert len(steps) == 1
    return steps[0]


def test_an_observed_bash_call_becomes_a_completed_run_command_step() -> None:
    step = only_step(bash_round("built\nExit code: 0"))

    assert (step.call_id, step.kind, step.observed) == ("c1", StepKind.RUN_COMMAND, True)
    assert step.arguments == {"command": "make"}
    assert step.to_upstream()["status"] == "completed"
    assert step.exit_code == 0


def test_an_unobserved_call_produces_no_step_and_stays_on_the_text_path() -> None:
    pending = assistant(call("c1", "Bash", command="make"))

    converted = bridge_history([user("go"), pending], reuse=False)

    assert converted.steps == ()
    assert converted.emulation_messages == (user("go"), pending)


def test_a_result_before_its_call_does_not_observe_it() -> None:
    history = [user("go"), result("c1", "early"), assistant(call("c1", "Bash", command="ls"))]

    assert bridge_history(history, reuse=False).steps == ()


def test_the_run_command_observation_is_sent_once() -> None:
    output = "line one\nline two\nExit code: 0"

    sent = json.dumps(only_step(bash_round(output)).to_upstream())

    assert sent.count("line one") == 1


@pytest.mark.parametrize(
    ("observation", "code"),
    [
        ("oops\nExit code: 2", 2),
        ("process exited with code 3", 3),
        ("failed [exit 4]", 4),
        ('{"exit_code": 5, "output": "x"}', 5),
        ('{"metadata": {"exit_code": 6}, "output": "x"}', 6),
        ("Exit code: 1\nretrying\nExit code: 0", 0),
        ("Error: Exit code 127\n/bin/sh: nope: not found", 127),  # Claude Code's Bash tool
    ],
)
def test_the_exit_code_is_parsed_from_the_observation(observation: str, code: int) -> None:
    step = only_step(bash_round(observation))

    assert step.exit_code == code
    assert step.to_upstream()["exit_code"] == code


def test_an_anthropic_is_error_without_a_number_is_encoded_as_1() -> None:
    assert only_step(bash_round("permission denied", is_error=True)).exit_code == 1


def test_a_tool_error_prefix_without_a_number_is_encoded_as_1() -> None:
    assert only_step(bash_round("  [tool error] command timed out")).exit_code == 1


def test_a_signalled_failure_never_reads_as_success() -> None:
    assert parse_exit_code("Exit code: 0", is_error=True) == 1
    assert parse_exit_code("Exit code: 7", is_error=True) == 7


def test_claude_code_s_failure_line_gives_its_number_not_1() -> None:
    # its Bash tool's failed result: is_error, and "Exit code N" (no colon) as the first line
    assert only_step(bash_round("Exit code 2\nboom", is_error=True)).exit_code == 2


def test_claude_code_s_leading_failure_line_wins_over_an_exit_code_its_output_mentions() -> None:
    output = "Exit code 1\nlint: exit code: 2 means warnings only"
    assert only_step(bash_round(output, is_error=True)).exit_code == 1


def test_output_that_mentions_an_exit_code_without_a_colon_reports_none() -> None:
    assert parse_exit_code("the manual says exit code 2 means misuse") is None


def test_an_unknown_status_leaves_the_exit_code_absent() -> None:
    step = only_step(bash_round("just some output"))

    assert step.exit_code is None
    assert "exit_code" not in step.to_upstream()


def test_a_read_call_becomes_a_view_file_step_with_its_text_content() -> None:
    history = [
        assistant(call("r1", "Read", file_path="/a.py")),
        result("r1", [{"type": "text", "text": "x = 1"}, {"type": "text", "text": "y = 2"}]),
    ]

    step = only_step(history)

    assert (step.kind, step.observation, step.exit_code) == (
        StepKind.VIEW_FILE,
        "x = 1\ny = 2",
        None,
    )


def test_a_result_s_image_part_adds_nothing_to_the_observation() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": "iVBORw0KGgo="}}
    history = [
        assistant(call("r1", "Read", file_path="/shot.png")),
        result("r1", [{"type": "text", "text": "x = 1"}, image, {"type": "text", "text": "y = 2"}]),
    ]

    assert only_step(history).observation == "x = 1\ny = 2"


def test_an_unmapped_call_and_its_result_are_kept_for_the_text_path() -> None:
    history = [assistant(call("g1", "Grep", pattern="x")), result("g1", "a.py:1")]

    converted = bridge_history(history, reuse=False)

    assert converted.steps == ()
    assert converted.emulation_messages == tuple(history)


def test_a_lossy_translation_is_kept_for_the_text_path() -> None:
    history = [
        assistant(call("c1", "Bash", command="serve", run_in_background=True)),
        result("c1", "started"),
    ]

    converted = bridge_history(history, reuse=False)

    assert converted.steps == ()
    assert converted.emulation_messages == tuple(history)


def test_an_orphan_tool_result_is_kept_for_the_text_path() -> None:
    orphan = result("ghost", "who called me")

    converted = bridge_history([user("go"), orphan], reuse=False)

    assert converted.emulation_messages == (user("go"), orphan)


def test_a_mixed_message_keeps_only_the_calls_that_were_not_sent_as_steps() -> None:
    grep = call("g1", "Grep", pattern="x")
    history = [
        assistant(call("c1", "Bash", command="ls"), grep, content="looking"),
        result("c1", "a.py\nExit code: 0"),
        result("g1", "a.py:1"),
    ]

    converted = bridge_history(history, reuse=False)

    assert [step.call_id for step in converted.steps] == ["c1"]
    assert converted.emulation_messages == (
        {"role": "assistant", "content": "looking", "tool_calls": [grep]},
        result("g1", "a.py:1"),
    )


def test_a_fully_sent_message_keeps_its_visible_content_for_the_text_path() -> None:
    history = [assistant(call("c1", "Bash", command="ls"), content="checking"), result("c1", "ok")]

    converted = bridge_history(history, reuse=False)

    assert converted.emulation_messages == ({"role": "assistant", "content": "checking"},)


HISTORY = [
    user("build it"),
    assistant(call("c1", "Bash", command="make")),
    result("c1", "Exit code: 2"),
    assistant(call("c2", "Read", file_path="/Makefile"), call("c3", "Bash", command="make -k")),
    result("c2", "all:"),
    result("c3", "[exit 0]"),
]


def test_reuse_sends_only_the_newest_pending_tool_round() -> None:
    reused = bridge_history(HISTORY, reuse=True)

    assert [step.call_id for step in reused.steps] == ["c2", "c3"]
    assert reused.delta_start is None


def test_reuse_with_a_user_message_tail_yields_zero_steps() -> None:
    history = [*HISTORY, {"role": "assistant", "content": "done"}, user("thanks")]

    reused = bridge_history(history, reuse=True)

    assert reused.steps == ()
    assert reused.emulation_messages == (user("thanks"),)


@pytest.mark.parametrize(
    "history",
    [
        HISTORY,
        HISTORY[:3],
        [*HISTORY, user("again")],
        [
            assistant(call("c1", "Bash", command="a")),
            assistant(call("c2", "Bash", command="b")),
            result("c1", "late"),
            result("c2", "[exit 1]"),
        ],
    ],
    ids=["two-rounds", "one-round", "user-tail", "late-result"],
)
def test_full_history_reports_where_the_reused_steps_begin(history: list[Msg]) -> None:
    full = bridge_history(history, reuse=False)
    reused = bridge_history(history, reuse=True)

    assert full.delta_start is not None
    assert full.steps[full.delta_start :] == reused.steps


def test_nothing_is_dropped_between_the_two_paths() -> None:
    history = [
        *HISTORY,
        assistant(call("g1", "Grep", pattern="x"), call("c4", "Bash", command="ls")),
        result("g1", "hit"),
        result("zz", "orphan"),
    ]

    converted = bridge_history(history, reuse=False)

    stepped = {step.call_id for step in converted.steps}
    texted = {c["id"] for m in converted.emulation_messages for c in m.get("tool_calls", [])}
    results = {m["tool_call_id"] for m in converted.emulation_messages if m["role"] == "tool"}
    assert stepped == {"c1", "c2", "c3"}
    assert texted == {"g1", "c4"}
    assert results == {"g1", "zz"}
