"""Errors the client raises, one class per stable API error code."""

from __future__ import annotations

import json

import httpx

from shiyi.errors import ShiyiError


class ClientError(ShiyiError):
    """The service answered with an error (``code`` and ``status`` say which)."""

    code = "bad_request"

    def __init__(self, message: str, *, status: int = 0, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        if code is not None:
            self.code = code


class NotFoundError(ClientError):
    code = "not_found"


class UnauthorizedError(ClientError):
    code = "unauthorized"


class ConflictError(ClientError):
    code = "conflict"


class ValidationFailed(ClientError):
    code = "validation_error"


class PayloadTooLarge(ClientError):
    code = "payload_too_large"


class ServerError(ClientError):
    code = "internal"


class ServiceUnavailable(ClientError):
    """Nothing answers at the address (not started, or gone)."""

    code = "unavailable"


_BY_CODE: dict[str, type[ClientError]] = {
    cls.code: cls
    for cls in (
        NotFoundError,
        UnauthorizedError,
        ConflictError,
        ValidationFailed,
        PayloadTooLarge,
        ServerError,
    )
}


def error_from(status: int, body: bytes) -> ClientError:
    """The exception for an error response (its JSON body, or the raw text if not JSON)."""
    code, message = "", ""
    try:
        error = json.loads(body)["error"]
        code, message = str(error["code"]), str(error["message"])
    except (ValueError, KeyError, TypeError):
        message = body.decode("utf-8", "replace")[:500] or f"HTTP {status}"
        code = "internal" if status >= 500 else ""
    cls = _BY_CODE.get(code, ServerError if status >= 500 else ClientError)
    return cls(f"{message} (HTTP {status}, {code or 'no code'})", status=status, code=code or None)


def unavailable(base_url: str, exc: httpx.TransportError) -> ServiceUnavailable:
    return ServiceUnavailable(f"no shiyi service answers at {base_url}: {exc}")
