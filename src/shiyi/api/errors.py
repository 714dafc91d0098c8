"""Every API error is ``{"error": {"code": ..., "message": ...}}`` with a stable code."""

from __future__ import annotations

from typing import Literal, TypeAlias

from pydantic import BaseModel

ErrorCode: TypeAlias = Literal[
    "not_found",
    "unauthorized",
    "payload_too_large",
    "validation_error",
    "conflict",
    "method_not_allowed",
    "bad_request",
    "internal",
]

STATUS_CODES: dict[int, ErrorCode] = {
    400: "bad_request",
    401: "unauthorized",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    422: "validation_error",
}


class ErrorBody(BaseModel):
    code: ErrorCode
    message: str


class ErrorResponse(BaseModel):
    error: ErrorBody
