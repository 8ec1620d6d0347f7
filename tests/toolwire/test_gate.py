"""The parallel_tool_calls gate: honoured or refused, never ignored."""

from __future__ import annotations

from typing import Any

import pytest

from toolwire.gate import (
    Admitted,
    Backend,
    ErrorCode,
    ErrorType,
    GateError,
    Transport,
    admit,
    backend_from_env,
    check_parallel_tool_calls,
    is_parallel_tool_calls_unsupported,
)

WIRE_OFF = Backend("cascade", tool_choice_passthrough=False)
WIRE_ON = Backend("cascade", tool_choice_passthrough=True)
NATIVE = Backend("openai-direct", transport=Transport.NATIVE)


def chat(**fields: Any) -> dict[str, Any]:
    return {"model": "m1", "messages": [{"role": "user", "content": "hi"}], **fields}


class Registry:
    """Resolves every known model to one backend and records the lookups."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.lookups: list[str] = []

    def __call__(self, model: str) -> Backend | None:
        self.lookups.append(model)
        return self.backend if model == "m1" else None


class Capacity:
    """A capacity gate with a fixed answer that records whether it was consulted."""

    def __init__(self, available: bool) -> None:
        self.available = available
        self.consulted = 0

    def __call__(self, backend: Backend) -> bool:
        self.consulted += 1
        return self.available


def test_false_is_refused_when_backend_lacks_the_switch() -> None:
    refusal = check_parallel_tool_calls(chat(parallel_tool_calls=False), WIRE_OFF)

    assert refusal is not None
    assert refusal.status == 400
    assert refusal.type is ErrorType.INVALID_REQUEST
    assert refusal.code is ErrorCode.UNSUPPORTED_PARAMETER
    assert refusal.param == "parallel_tool_calls"


def test_refusal_message_names_the_switch_that_would_make_it_work() -> None:
    refusal = check_parallel_tool_calls(chat(parallel_tool_calls=False), WIRE_OFF)

    assert refusal is not None
    assert "TOOL_CHOICE_PASSTHROUGH=1" in refusal.message


def test_refusal_body_is_the_openai_error_envelope() -> None:
    refusal = check_parallel_tool_calls(chat(parallel_tool_calls=False), WIRE_OFF)

    assert refusal is not None
    body = refusal.to_body()
    assert set(body) == {"error"}
    assert body["error"]["type"] == "invalid_request_error"
    assert body["error"]["code"] == "unsupported_parameter"
    assert body["error"]["param"] == "parallel_tool_calls"
    assert body["error"]["message"] == refusal.message


def test_false_is_forwarded_unchanged_when_the_switch_is_on() -> None:
    request = chat(parallel_tool_calls=False, tool_choice="auto")

    outcome = admit(request, Registry(WIRE_ON), Capacity(True))

    assert outcome == Admitted(request, WIRE_ON)
    assert isinstance(outcome, Admitted)
    assert outcome.request["parallel_tool_calls"] is False


@pytest.mark.parametrize(
    "fields", [{"parallel_tool_calls": True}, {}, {"parallel_tool_calls": None}]
)
def test_true_absent_and_null_are_accepted_without_the_switch(fields: dict[str, Any]) -> None:
    assert check_parallel_tool_calls(chat(**fields), WIRE_OFF) is None


@pytest.mark.parametrize("value", ["false", 0, []])
def test_non_boolean_values_are_refused_as_invalid_type(value: object) -> None:
    refusal = check_parallel_tool_calls(chat(parallel_tool_calls=value), WIRE_ON)

    assert refusal is not None
    assert (refusal.status, refusal.code) == (400, ErrorCode.INVALID_TYPE)
    assert refusal.param == "parallel_tool_calls"
    assert "boolean" in refusal.message


def test_a_backend_that_forwards_natively_is_never_refused_over_false() -> None:
    assert check_parallel_tool_calls(chat(parallel_tool_calls=False), NATIVE) is None
    assert not is_parallel_tool_calls_unsupported(chat(parallel_tool_calls=False), NATIVE)


@pytest.mark.parametrize(
    ("value", "unsupported"),
    [(False, True), (True, False), (None, False), (0, False), ("false", False)],
)
def test_only_the_exact_boolean_false_triggers_the_refusal_predicate(
    value: object, unsupported: bool
) -> None:
    assert is_parallel_tool_calls_unsupported(chat(parallel_tool_calls=value), WIRE_OFF) is (
        unsupported
    )


def test_the_predicate_is_silent_once_the_switch_is_on() -> None:
    assert not is_parallel_tool_calls_unsupported(chat(parallel_tool_calls=False), WIRE_ON)


@pytest.mark.parametrize(
    ("env", "enabled"),
    [
        ({"TOOL_CHOICE_PASSTHROUGH": "1"}, True),
        ({"TOOL_CHOICE_PASSTHROUGH": " 1\n"}, True),
        ({"TOOL_CHOICE_PASSTHROUGH": "0"}, False),
        ({}, False),
    ],
)
def test_the_switch_is_on_only_for_the_value_1(env: dict[str, str], enabled: bool) -> None:
    backend = backend_from_env("cascade", env)

    assert backend == Backend("cascade", enabled, Transport.UPSTREAM_WIRE)


def test_refusal_wins_over_a_capacity_503_and_capacity_is_not_consulted() -> None:
    capacity = Capacity(False)

    outcome = admit(chat(parallel_tool_calls=False), Registry(WIRE_OFF), capacity)

    assert isinstance(outcome, GateError)
    assert (outcome.status, outcome.code) == (400, ErrorCode.UNSUPPORTED_PARAMETER)
    assert capacity.consulted == 0


def test_an_acceptable_request_still_meets_the_capacity_503() -> None:
    outcome = admit(chat(parallel_tool_calls=True), Registry(WIRE_OFF), Capacity(False))

    assert isinstance(outcome, GateError)
    assert (outcome.status, outcome.code) == (503, ErrorCode.CAPACITY)


def test_model_resolution_runs_before_the_gate() -> None:
    registry = Registry(WIRE_OFF)

    outcome = admit({"model": "nope", "parallel_tool_calls": False}, registry, Capacity(True))

    assert isinstance(outcome, GateError)
    assert (outcome.status, outcome.code) == (404, ErrorCode.MODEL_NOT_FOUND)
    assert registry.lookups == ["nope"]


def test_a_request_without_a_model_is_refused_before_resolution() -> None:
    registry = Registry(WIRE_OFF)

    outcome = admit({"messages": []}, registry, Capacity(True))

    assert isinstance(outcome, GateError)
    assert (outcome.status, outcome.param) == (400, "model")
    assert registry.lookups == []
