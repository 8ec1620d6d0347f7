"""Tool callability anchored to the compaction boundaries the serving provider honours."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum


class Provider(Enum):
    """Upstream providers whose adapters replay history differently."""

    OPENAI = "openai"
    ANTHROPIC = "anthropic"
    GOOGLE = "google"


class PartKind(Enum):
    """What a history part is."""

    TEXT = "text"
    TOOL_SCHEMA = "tool_schema"  # a tool's schema made visible to the model
    COMPACTION = "compaction"  # a compaction boundary, stamped with the provider that made it


@dataclass(frozen=True)
class Part:
    """One part of a history message."""

    kind: PartKind
    provider: Provider | None = None
    tool_name: str | None = None
    content: str | None = None  # Anthropic-style compaction summary
    encrypted_content: str | None = None  # OpenAI-style compaction payload


@dataclass(frozen=True)
class Message:
    """A history message; `provider` is set on responses and names who served them."""

    role: str
    parts: tuple[Part, ...]
    provider: Provider | None = None


def is_wire_boundary(part: Part, serving_provider: Provider | None) -> bool:
    """Whether `serving_provider` cuts history at `part`; None: the conservative any-boundary view.

    The single predicate behind both the callability check and the history trim.
    """
    if part.kind is not PartKind.COMPACTION:
        return False
    if serving_provider is None:
        return True
    if part.provider is not serving_provider:
        return False  # that provider's adapter replays the full history
    if serving_provider is Provider.OPENAI:
        return bool(part.encrypted_content)
    if serving_provider is Provider.ANTHROPIC:
        return bool(part.content)  # an empty summary is a failed compaction
    return False


def _last_boundary(parts: Sequence[Part], serving_provider: Provider | None) -> int:
    """Position of the last wire boundary in `parts`, or -1 when there is none."""
    positions = [i for i, part in enumerate(parts) if is_wire_boundary(part, serving_provider)]
    return positions[-1] if positions else -1


def visible_tools(
    history: Sequence[Message], end: int, serving_provider: Provider | None
) -> frozenset[str]:
    """Tool names whose schema the model sees in `history[:end]` through `serving_provider`."""
    parts = [part for message in history[:end] for part in message.parts]
    window = parts[_last_boundary(parts, serving_provider) + 1 :]
    return frozenset(
        part.tool_name
        for part in window
        if part.kind is PartKind.TOOL_SCHEMA and part.tool_name is not None
    )


def is_tool_callable(history: Sequence[Message], response_index: int, tool_name: str) -> bool:
    """Retrospective check: could the response at `response_index` legitimately call `tool_name`?

    Only boundaries strictly before the serving response count; with no provider on the
    response, the conservative provider-agnostic window is used.
    """
    serving = history[response_index].provider
    return tool_name in visible_tools(history, response_index, serving)


def trim_history(history: Sequence[Message], serving_provider: Provider) -> tuple[Message, ...]:
    """The history `serving_provider` replays on the wire: from its last honoured boundary on."""
    cuts = [
        index
        for index, message in enumerate(history)
        if _last_boundary(message.parts, serving_provider) >= 0
    ]
    return tuple(history[cuts[-1] :]) if cuts else tuple(history)


def schemas_to_readvertise(history: Sequence[Message], tools: Iterable[str]) -> tuple[str, ...]:
    """Prospective use: tools to advertise again, judged on the conservative window."""
    visible = visible_tools(history, len(history), None)
    return tuple(name for name in tools if name not in visible)
