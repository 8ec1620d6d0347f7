"""Turn OpenAI-style tool history into upstream trajectory steps that tell the truth."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

Message = Mapping[str, Any]


class StepKind(Enum):
    """Upstream trajectory step types the bridge can produce."""

    RUN_COMMAND = "run_command"
    VIEW_FILE = "view_file"


KNOWN_TOOLS = {"Bash": StepKind.RUN_COMMAND, "Read": StepKind.VIEW_FILE}
_CARRIED_ARGS = {
    StepKind.RUN_COMMAND: frozenset({"command", "description", "timeout"}),
    StepKind.VIEW_FILE: frozenset({"file_path", "offset", "limit"}),
}
_REQUIRED_ARG = {StepKind.RUN_COMMAND: "command", StepKind.VIEW_FILE: "file_path"}
_EXIT_PATTERN = re.compile(
    r"exit code:\s*(-?\d+)|exited with code\s+(-?\d+)|\[exit\s+(-?\d+)\]", re.IGNORECASE
)
# Claude Code's failed Bash result starts "Exit code N" (no colon), "Error: " before it at times
_LEADING_EXIT = re.compile(r"\s*(?:error:\s*)?exit code\s+(-?\d+)\b", re.IGNORECASE)
TOOL_ERROR_PREFIX = "[tool error]"


@dataclass(frozen=True)
class TrajectoryStep:
    """One completed upstream step; `observed=True` claims a matching tool result exists."""

    call_id: str
    kind: StepKind
    arguments: Mapping[str, Any]
    observation: str
    observed: bool
    exit_code: int | None = None

    def to_upstream(self) -> dict[str, Any]:
        """The step as sent upstream: the observation once, the exit code only when known."""
        step: dict[str, Any] = {
            "type": self.kind.value,
            "call_id": self.call_id,
            "status": "completed" if self.observed else "pending",
            "arguments": dict(self.arguments),
            "output": self.observation,
        }
        if self.exit_code is not None:
            step["exit_code"] = self.exit_code
        return step


@dataclass(frozen=True)
class BridgeResult:
    """Steps for the native path, everything else for the text path, and the reuse offset."""

    steps: tuple[TrajectoryStep, ...]
    emulation_messages: tuple[Message, ...]
    delta_start: int | None


def observation_text(content: object) -> str:
    """Flatten a tool result's content (a string or a list of parts) into one string: its
    text parts' texts, one a line; an image or any other part adds nothing."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part["text"]) for part in content
            if isinstance(part, Mapping) and part.get("type", "text") == "text"
            and "text" in part
        )
    return ""


def _json_exit_code(observation: str) -> int | None:
    try:
        data = json.loads(observation)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    metadata = data.get("metadata")
    nested = metadata.get("exit_code") if isinstance(metadata, dict) else None
    for code in (data.get("exit_code"), nested):
        if isinstance(code, int) and not isinstance(code, bool):
            return code
    return None


def parse_exit_code(observation: str, is_error: bool = False) -> int | None:
    """The exit code a result reports; 1 for a failure signalled without a number, else None."""
    code = _json_exit_code(observation)
    leading = _LEADING_EXIT.match(observation)
    if code is None and leading is not None:
        code = int(leading.group(1))
    if code is None:
        matches = list(_EXIT_PATTERN.finditer(observation))
        if matches:
            code = int(next(group for group in matches[-1].groups() if group is not None))
    failed = is_error or observation.lstrip().startswith(TOOL_ERROR_PREFIX)
    if failed and not code:
        return 1
    return code


def _parse_arguments(raw: object) -> dict[str, Any] | None:
    if isinstance(raw, Mapping):
        return dict(raw)
    try:
        parsed = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _translate(call: Mapping[str, Any]) -> tuple[StepKind, dict[str, Any]] | None:
    """Map a call onto a step kind; None when it is unmapped or translating it would be lossy."""
    function = call.get("function", {})
    kind = KNOWN_TOOLS.get(function.get("name", ""))
    arguments = _parse_arguments(function.get("arguments", "{}"))
    if kind is None or arguments is None or _REQUIRED_ARG[kind] not in arguments:
        return None
    if not set(arguments) <= _CARRIED_ARGS[kind]:
        return None
    return kind, arguments


def _step(
    call: Mapping[str, Any], kind: StepKind, arguments: dict[str, Any], result: Message
) -> TrajectoryStep:
    observation = observation_text(result.get("content"))
    exit_code = None
    if kind is StepKind.RUN_COMMAND:
        exit_code = parse_exit_code(observation, result.get("is_error") is True)
    return TrajectoryStep(str(call.get("id")), kind, arguments, observation, True, exit_code)


def _without_calls(message: Message) -> Message:
    return {key: value for key, value in message.items() if key != "tool_calls"}


def _convert(messages: Sequence[Message]) -> tuple[list[tuple[int, TrajectoryStep]], list[Message]]:
    """Steps (with the index of the message that made each) and the messages left for text."""
    first_result: dict[object, int] = {}
    for index, message in enumerate(messages):
        if message.get("role") == "tool":
            first_result.setdefault(message.get("tool_call_id"), index)
    steps: list[tuple[int, TrajectoryStep]] = []
    consumed: set[int] = set()
    emulation: list[tuple[int, Message]] = []
    for index, message in enumerate(messages):
        if message.get("role") == "tool":
            continue
        calls = message.get("tool_calls") or ()
        kept = []
        for call in calls:
            translated = _translate(call)
            at = first_result.get(call.get("id"), -1)
            result = messages[at] if at > index else None
            if translated is None or result is None:
                kept.append(call)
                continue
            steps.append((index, _step(call, *translated, result)))
            consumed.add(at)
        if not calls:
            emulation.append((index, message))
        elif kept:
            emulation.append((index, {**message, "tool_calls": kept}))
        elif message.get("content"):
            emulation.append((index, _without_calls(message)))
    emulation += [
        (i, m) for i, m in enumerate(messages) if m.get("role") == "tool" and i not in consumed
    ]
    return steps, [message for _, message in sorted(emulation, key=lambda pair: pair[0])]


def pending_round_start(messages: Sequence[Message]) -> int | None:
    """Index of the last assistant `tool_calls` message if everything after it is a tool result."""
    for index in range(len(messages) - 1, -1, -1):
        role = messages[index].get("role")
        if role == "tool":
            continue
        if role == "assistant" and messages[index].get("tool_calls"):
            return index
        return None
    return None


def _reuse_window(messages: Sequence[Message], start: int | None) -> Sequence[Message]:
    """What a resumed session still needs: the pending round, else what follows the last reply."""
    if start is not None:
        return messages[start:]
    replies = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
    return messages[replies[-1] + 1 :] if replies else messages


def bridge_history(messages: Sequence[Message], reuse: bool) -> BridgeResult:
    """Convert history; `reuse=True` sends only the newest pending tool round (a user tail: none).

    With `reuse=False`, `delta_start` is chosen so that `full.steps[delta_start:] == reused.steps`.
    """
    start = pending_round_start(messages)
    if reuse:
        steps, emulation = _convert(_reuse_window(messages, start))
        return BridgeResult(tuple(step for _, step in steps), tuple(emulation), None)
    steps, emulation = _convert(messages)
    cut = len(messages) if start is None else start
    delta_start = sum(1 for index, _ in steps if index < cut)
    return BridgeResult(tuple(step for _, step in steps), tuple(emulation), delta_start)
