"""Encode and decode the framed upstream "get chat message" request (a minimal protobuf subset)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from toolwire.gate import (
    Backend,
    Transport,
    is_parallel_tool_calls_unsupported,
    requests_single_tool_call,
)

FIELD_MODEL = 1
FIELD_MESSAGE = 2
FIELD_TOOL = 3
FIELD_DISABLE_PARALLEL_TOOL_CALLS = 11
FIELD_TOOL_CHOICE = 12
MESSAGE_ROLE = 1
MESSAGE_CONTENT = 2
HEADER_SIZE = 5
FLAG_UNCOMPRESSED = 0


class WireType(IntEnum):
    """The protobuf wire types this subset speaks."""

    VARINT = 0
    LEN = 2


class WireError(ValueError):
    """Bytes that are not a well-formed frame, or a request that cannot be put on the wire."""


@dataclass(frozen=True)
class ChatMessage:
    """One chat message as the upstream sees it."""

    role: str
    content: str


@dataclass(frozen=True)
class WireRequest:
    """The upstream request; defaults are omitted from the wire as proto3 does."""

    model: str
    messages: tuple[ChatMessage, ...] = ()
    tools: tuple[str, ...] = ()
    disable_parallel_tool_calls: bool = False
    tool_choice: str | None = None


@dataclass(frozen=True)
class Field:
    """One decoded field: its number, wire type and raw value."""

    number: int
    wire_type: WireType
    value: int | bytes


@dataclass(frozen=True)
class DecodedFrame:
    """A decoded frame: the request and the top-level field numbers in wire order."""

    request: WireRequest
    field_numbers: tuple[int, ...]


def encode_varint(value: int) -> bytes:
    """Encode a non-negative integer as a base-128 varint."""
    if value < 0:
        raise WireError(f"varint must be non-negative, got {value}")
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def decode_varint(data: bytes, pos: int) -> tuple[int, int]:
    """Decode a varint at `pos`; return (value, position after it)."""
    result = shift = 0
    while pos < len(data):
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
    raise WireError("truncated varint")


def _key(number: int, wire_type: WireType) -> bytes:
    return encode_varint(number << 3 | wire_type)


def _len_field(number: int, payload: bytes) -> bytes:
    return _key(number, WireType.LEN) + encode_varint(len(payload)) + payload


def _string_field(number: int, text: str) -> bytes:
    return _len_field(number, text.encode("utf-8"))


def encode_message(request: WireRequest) -> bytes:
    """Serialise `request` to protobuf bytes (no frame)."""
    out = bytearray(_string_field(FIELD_MODEL, request.model))
    for message in request.messages:
        body = _string_field(MESSAGE_ROLE, message.role) + _string_field(
            MESSAGE_CONTENT, message.content
        )
        out += _len_field(FIELD_MESSAGE, body)
    for tool in request.tools:
        out += _string_field(FIELD_TOOL, tool)
    if request.disable_parallel_tool_calls:
        out += _key(FIELD_DISABLE_PARALLEL_TOOL_CALLS, WireType.VARINT) + encode_varint(1)
    if request.tool_choice is not None:
        out += _string_field(FIELD_TOOL_CHOICE, request.tool_choice)
    return bytes(out)


def frame(payload: bytes) -> bytes:
    """Prefix `payload` with the 5-byte header: a flag byte and a 4-byte big-endian length."""
    return bytes([FLAG_UNCOMPRESSED]) + len(payload).to_bytes(4, "big") + payload


def unframe(data: bytes) -> bytes:
    """Check the 5-byte header and return the payload it announces."""
    if len(data) < HEADER_SIZE:
        raise WireError(f"frame shorter than its {HEADER_SIZE}-byte header")
    if data[0] != FLAG_UNCOMPRESSED:
        raise WireError(f"unsupported frame flag {data[0]}")
    length = int.from_bytes(data[1:HEADER_SIZE], "big")
    if length != len(data) - HEADER_SIZE:
        raise WireError(f"frame announces {length} bytes, carries {len(data) - HEADER_SIZE}")
    return data[HEADER_SIZE:]


def decode_fields(payload: bytes) -> tuple[Field, ...]:
    """Split protobuf bytes into fields, in wire order."""
    fields: list[Field] = []
    pos = 0
    while pos < len(payload):
        key, pos = decode_varint(payload, pos)
        number, wire_type = key >> 3, key & 0x7
        if wire_type == WireType.VARINT:
            value, pos = decode_varint(payload, pos)
            fields.append(Field(number, WireType.VARINT, value))
        elif wire_type == WireType.LEN:
            size, pos = decode_varint(payload, pos)
            if pos + size > len(payload):
                raise WireError(f"field {number} runs past the end of the message")
            fields.append(Field(number, WireType.LEN, payload[pos : pos + size]))
            pos += size
        else:
            raise WireError(f"unsupported wire type {wire_type} for field {number}")
    return tuple(fields)


def _payload(field: Field) -> bytes:
    if not isinstance(field.value, bytes):
        raise WireError(f"field {field.number} must be length-delimited")
    return field.value


def _text(field: Field) -> str:
    return _payload(field).decode("utf-8")


def _decode_chat_message(field: Field) -> ChatMessage:
    role = content = ""
    for inner in decode_fields(_payload(field)):
        if inner.number == MESSAGE_ROLE:
            role = _text(inner)
        elif inner.number == MESSAGE_CONTENT:
            content = _text(inner)
    return ChatMessage(role, content)


def decode_request(data: bytes) -> DecodedFrame:
    """Decode a framed request; the inverse of `encode_request`."""
    fields = decode_fields(unframe(data))
    model, tool_choice, disable = "", None, False
    messages: list[ChatMessage] = []
    tools: list[str] = []
    for field in fields:
        if field.number == FIELD_MODEL:
            model = _text(field)
        elif field.number == FIELD_MESSAGE:
            messages.append(_decode_chat_message(field))
        elif field.number == FIELD_TOOL:
            tools.append(_text(field))
        elif field.number == FIELD_DISABLE_PARALLEL_TOOL_CALLS:
            disable = field.value != 0
        elif field.number == FIELD_TOOL_CHOICE:
            tool_choice = _text(field)
    request = WireRequest(model, tuple(messages), tuple(tools), disable, tool_choice)
    return DecodedFrame(request, tuple(field.number for field in fields))


def _compact_json(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _tool_choice(request: Mapping[str, Any], backend: Backend) -> str | None:
    value = request.get("tool_choice")
    if value is None or not backend.tool_choice_passthrough:
        return None
    return value if isinstance(value, str) else _compact_json(value)


def build_wire_request(request: Mapping[str, Any], backend: Backend) -> WireRequest:
    """Map an admitted chat request onto the wire; the tool-choice hints travel only on the switch.

    Raises WireError rather than build a request that would drop `parallel_tool_calls: false`.
    """
    if backend.transport is not Transport.UPSTREAM_WIRE:
        raise WireError(f"backend '{backend.name}' does not use the upstream wire")
    if is_parallel_tool_calls_unsupported(request, backend):
        raise WireError("parallel_tool_calls=false would be dropped: the gate must refuse it")
    return WireRequest(
        model=str(request.get("model", "")),
        messages=tuple(
            ChatMessage(str(m.get("role", "")), _content_text(m.get("content")))
            for m in request.get("messages", ())
        ),
        tools=tuple(_compact_json(t.get("function", t)) for t in request.get("tools", ())),
        disable_parallel_tool_calls=requests_single_tool_call(request),
        tool_choice=_tool_choice(request, backend),
    )


def encode_request(request: Mapping[str, Any], backend: Backend) -> bytes:
    """The exact framed bytes that would be sent upstream for `request` on `backend`."""
    return frame(encode_message(build_wire_request(request, backend)))
