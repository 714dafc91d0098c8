"""Every API error is ``{"error": {"code": ..., "message": ...}}`` with a stable code.

:data:`WIRE_ERRORS` is the one table between :mod:`shiyi.errors` and the wire: which
exceptions the server answers with which status and code, and which exception the client
raises for each code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from pydantic import BaseModel

from shiyi.errors import (
    ClientError,
    ConfigError,
    Conflict,
    NotFound,
    PayloadTooLarge,
    RequestError,
    ServerError,
    ServiceUnavailable,
    ShiyiError,
    UnauthorizedError,
    ValidationFailed,
)

ErrorCode: TypeAlias = Literal[
    "not_found",
    "unauthorized",
    "payload_too_large",
    "validation_error",
    "conflict",
    "method_not_allowed",
    "bad_request",
    "internal",
    "unavailable",
]


@dataclass(frozen=True, slots=True)
class WireError:
    code: ErrorCode
    status: int
    """The HTTP status; 0 for ``unavailable``, which no server sends (nothing answered)."""
    raised_by: tuple[type[ShiyiError], ...]
    """Server side: shiyi errors answered with this code (the first matching row wins)."""
    client: type[ClientError] | type[RequestError]
    """Client side: what the client raises for this code (the server's own class for a
    concept both sides know: one name per wire concept)."""


WIRE_ERRORS: tuple[WireError, ...] = (
    WireError("not_found", 404, (NotFound,), NotFound),
    WireError("unauthorized", 401, (), UnauthorizedError),
    # A setting of the server forbids the request (e.g. memory is off): it conflicts with
    # the server's state rather than being malformed.
    WireError("conflict", 409, (Conflict, ConfigError), Conflict),
    WireError("validation_error", 422, (), ValidationFailed),
    WireError("payload_too_large", 413, (), PayloadTooLarge),
    WireError("method_not_allowed", 405, (), ClientError),
    WireError("bad_request", 400, (ShiyiError,), RequestError),  # any other shiyi error
    WireError("internal", 500, (), ServerError),
    WireError("unavailable", 0, (), ServiceUnavailable),
)

STATUS_CODES: dict[int, ErrorCode] = {row.status: row.code for row in WIRE_ERRORS if row.status}
"""The code for an HTTP status the web framework raised by itself (404 for a bad route...)."""


def wire_error_for(exc: ShiyiError) -> WireError:
    """The row a shiyi error is answered with."""
    return next(row for row in WIRE_ERRORS if isinstance(exc, row.raised_by))


def client_error_class(code: str, status: int) -> type[ClientError] | type[RequestError]:
    """What the client raises for an error response's code (5xx without a known code:
    :class:`~shiyi.errors.ServerError`)."""
    for row in WIRE_ERRORS:
        if row.code == code and row.client is not ClientError:
            return row.client
    return ServerError if status >= 500 else ClientError


class ErrorBody(BaseModel):
    code: ErrorCode
    message: str


class ErrorResponse(BaseModel):
    error: ErrorBody
