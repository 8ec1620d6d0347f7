"""Honour or refuse `parallel_tool_calls: false` before any upstream turn; never ignore it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

SWITCH_ENV = "TOOL_CHOICE_PASSTHROUGH"
PARAM = "parallel_tool_calls"


class Transport(Enum):
    """How a backend carries a chat request upstream."""

    UPSTREAM_WIRE = "upstream_wire"  # the framed protobuf wire; the hint needs the switch
    NATIVE = "native"  # forwards OpenAI fields as they are; the gate never applies


@dataclass(frozen=True)
class Backend:
    """A selected upstream backend and whether its wire can carry the tool-choice hints."""

    name: str
    tool_choice_passthrough: bool = False
    transport: Transport = Transport.UPSTREAM_WIRE


class ErrorType(Enum):
    """OpenAI error `type` values the gate can produce."""

    INVALID_REQUEST = "invalid_request_error"
    SERVER = "server_error"


class ErrorCode(Enum):
    """OpenAI error `code` values the gate can produce."""

    UNSUPPORTED_PARAMETER = "unsupported_parameter"
    INVALID_TYPE = "invalid_type"
    MISSING_MODEL = "missing_required_parameter"
    MODEL_NOT_FOUND = "model_not_found"
    CAPACITY = "capacity_exhausted"


@dataclass(frozen=True)
class GateError:
    """A refusal: the HTTP status and the OpenAI-style error body fields."""

    status: int
    type: ErrorType
    code: ErrorCode
    param: str | None
    message: str

    def to_body(self) -> dict[str, Any]:
        """Render the OpenAI error envelope."""
        return {
            "error": {
                "message": self.message,
                "type": self.type.value,
                "param": self.param,
                "code": self.code.value,
            }
        }


@dataclass(frozen=True)
class Admitted:
    """A request that passed every gate, forwarded unchanged to `backend`."""

    request: Mapping[str, Any]
    backend: Backend


def backend_from_env(
    name: str, env: Mapping[str, str], transport: Transport = Transport.UPSTREAM_WIRE
) -> Backend:
    """Build a backend whose switch is on exactly when `TOOL_CHOICE_PASSTHROUGH` is `1`."""
    return Backend(name, env.get(SWITCH_ENV, "").strip() == "1", transport)


def requests_single_tool_call(request: Mapping[str, Any]) -> bool:
    """True only for the exact boolean `false`; `true`, absent and non-booleans are not the hint."""
    return request.get(PARAM) is False


def is_parallel_tool_calls_unsupported(request: Mapping[str, Any], backend: Backend) -> bool:
    """The one refusal predicate, shared by the gate and the wire builder's emission condition."""
    return (
        requests_single_tool_call(request)
        and backend.transport is Transport.UPSTREAM_WIRE
        and not backend.tool_choice_passthrough
    )


def check_parallel_tool_calls(request: Mapping[str, Any], backend: Backend) -> GateError | None:
    """Validate `parallel_tool_calls` for `backend`; None means forward the request unchanged.

    `null` is treated as absent. Any other non-boolean (`"false"`, `0`) is refused with
    400 `invalid_type` on every backend: guessing its meaning would be silently ignoring it.
    """
    value = request.get(PARAM)
    if value is not None and not isinstance(value, bool):
        return GateError(
            400,
            ErrorType.INVALID_REQUEST,
            ErrorCode.INVALID_TYPE,
            PARAM,
            f"{PARAM} must be a boolean, got {type(value).__name__}",
        )
    if is_parallel_tool_calls_unsupported(request, backend):
        return GateError(
            400,
            ErrorType.INVALID_REQUEST,
            ErrorCode.UNSUPPORTED_PARAMETER,
            PARAM,
            f"{PARAM}=false is not supported by backend '{backend.name}' unless "
            f"{SWITCH_ENV}=1 is set; enable that switch or omit {PARAM}",
        )
    return None


def admit(
    request: Mapping[str, Any],
    resolve_model: Callable[[str], Backend | None],
    has_capacity: Callable[[Backend], bool],
) -> Admitted | GateError:
    """Resolve the model, then run this gate, then the capacity check, in that order.

    A permanent request-shape error (400) is reported before a transient 503, and the
    capacity check is not consulted for a request that would be refused anyway.
    """
    model = request.get("model")
    if not isinstance(model, str) or not model:
        return GateError(
            400, ErrorType.INVALID_REQUEST, ErrorCode.MISSING_MODEL, "model", "model is required"
        )
    backend = resolve_model(model)
    if backend is None:
        return GateError(
            404,
            ErrorType.INVALID_REQUEST,
            ErrorCode.MODEL_NOT_FOUND,
            "model",
            f"model '{model}' does not exist",
        )
    refusal = check_parallel_tool_calls(request, backend)
    if refusal is not None:
        return refusal
    if not has_capacity(backend):
        return GateError(
            503, ErrorType.SERVER, ErrorCode.CAPACITY, None, "upstream is at capacity; retry later"
        )
    return Admitted(request, backend)
