"""The upstream wire: what reaches the backend is proven by decoding the frame."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolwire.gate import Backend, Transport, check_parallel_tool_calls
from toolwire.wire import (
    ChatMessage,
    WireError,
    WireRequest,
    build_wire_request,
    decode_fields,
    decode_request,
    decode_varint,
    encode_request,
    encode_varint,
    frame,
    unframe,
)

WIRE_OFF = Backend("cascade", tool_choice_passthrough=False)
WIRE_ON = Backend("cascade", tool_choice_passthrough=True)


def chat(**fields: Any) -> dict[str, Any]:
    return {"model": "m", "messages": [{"role": "user", "content": "hi"}], **fields}


@pytest.mark.parametrize(
    ("value", "encoded"),
    [(127, b"\x7f"), (128, b"\x80\x01"), (300, b"\xac\x02")],
)
def test_varints_are_encoded_as_protobuf_does(value: int, encoded: bytes) -> None:
    assert encode_varint(value) == encoded
    assert decode_varint(encoded, 0) == (value, len(encoded))


def test_a_negative_varint_is_refused() -> None:
    with pytest.raises(WireError):
        encode_varint(-1)


def test_the_switched_frame_has_these_exact_bytes() -> None:
    data = encode_request(chat(parallel_tool_calls=False, tool_choice="auto"), WIRE_ON)

    assert data == bytes.fromhex(
        "0000000017"  # flag 0, big-endian length 23
        "0a016d"  # 1: model "m"
        "120a0a04757365721202"
        "6869"  # 2: message {role "user", content "hi"}
        "5801"  # 11: disable_parallel_tool_calls = true
        "6204"
        "6175746f"  # 12: tool_choice "auto"
    )


def test_false_reaches_the_wire_as_field_11_when_the_switch_is_on() -> None:
    decoded = decode_request(encode_request(chat(parallel_tool_calls=False), WIRE_ON))

    assert decoded.request.disable_parallel_tool_calls is True
    assert decoded.field_numbers.count(11) == 1


@pytest.mark.parametrize("fields", [{"parallel_tool_calls": True}, {}])
def test_true_and_absent_put_no_field_11_on_the_wire(fields: dict[str, Any]) -> None:
    decoded = decode_request(encode_request(chat(**fields), WIRE_ON))

    assert 11 not in decoded.field_numbers
    assert decoded.request.disable_parallel_tool_calls is False


def test_the_default_wire_carries_neither_field_11_nor_12() -> None:
    request = chat(parallel_tool_calls=True, tool_choice="required")

    decoded = decode_request(encode_request(request, WIRE_OFF))

    assert decoded.field_numbers == (1, 2)
    assert decoded.request.tool_choice is None


def test_tool_choice_travels_as_field_12_on_the_switch() -> None:
    decoded = decode_request(encode_request(chat(tool_choice="required"), WIRE_ON))

    assert decoded.request.tool_choice == "required"
    assert decoded.field_numbers == (1, 2, 12)


def test_an_object_tool_choice_is_sent_as_compact_json() -> None:
    choice = {"type": "function", "function": {"name": "Bash"}}

    decoded = decode_request(encode_request(chat(tool_choice=choice), WIRE_ON))

    assert decoded.request.tool_choice == '{"function":{"name":"Bash"},"type":"function"}'


def test_the_builder_refuses_to_drop_false_when_the_switch_is_off() -> None:
    with pytest.raises(WireError, match="dropped"):
        build_wire_request(chat(parallel_tool_calls=False), WIRE_OFF)


@pytest.mark.parametrize("backend", [WIRE_OFF, WIRE_ON])
@pytest.mark.parametrize(
    "fields", [{"parallel_tool_calls": False}, {"parallel_tool_calls": True}, {}]
)
def test_the_gate_refuses_exactly_what_the_wire_would_drop(
    backend: Backend, fields: dict[str, Any]
) -> None:
    refused = check_parallel_tool_calls(chat(**fields), backend) is not None
    try:
        sent = decode_request(encode_request(chat(**fields), backend)).request
    except WireError:
        sent = None

    assert refused is (sent is None)
    if sent is not None:
        assert sent.disable_parallel_tool_calls is (fields.get("parallel_tool_calls") is False)


def test_a_native_backend_never_gets_the_upstream_wire() -> None:
    with pytest.raises(WireError, match="openai-direct"):
        build_wire_request(chat(), Backend("openai-direct", True, Transport.NATIVE))


def test_messages_and_tools_survive_a_round_trip() -> None:
    tools = [{"type": "function", "function": {"name": "Read", "parameters": {}}}]
    request = chat(
        messages=[
            {"role": "system", "content": "be brief"},
            {
                "role": "user",
                "content": [{"type": "text", "text": "é"}, {"type": "text", "text": "!"}],
            },
        ],
        tools=tools,
    )

    decoded = decode_request(encode_request(request, WIRE_ON)).request

    assert decoded == WireRequest(
        model="m",
        messages=(ChatMessage("system", "be brief"), ChatMessage("user", "é!")),
        tools=(json.dumps(tools[0]["function"], sort_keys=True, separators=(",", ":")),),
    )


def test_the_frame_header_is_a_flag_byte_and_a_big_endian_length() -> None:
    payload = b"x" * 300

    data = frame(payload)

    assert data[:5] == b"\x00\x00\x00\x01\x2c"
    assert unframe(data) == payload


@pytest.mark.parametrize(
    "data",
    [
        b"\x00\x00\x00",
        b"\x00\x00\x00\x00\x05abc",
        b"\x00\x00\x00\x00\x01ab",
        b"\x01\x00\x00\x00\x00",
    ],
    ids=["short-header", "truncated-payload", "trailing-bytes", "compressed-flag"],
)
def test_a_malformed_frame_is_rejected(data: bytes) -> None:
    with pytest.raises(WireError):
        unframe(data)


@pytest.mark.parametrize("payload", [b"\x0d\x00\x00\x00\x00", b"\x0a\x05ab", b"\x08\x80"])
def test_malformed_fields_are_rejected(payload: bytes) -> None:
    with pytest.raises(WireError):
        decode_fields(payload)
