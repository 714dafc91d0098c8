"""From an error response to the exception the client raises (the classes live in
:mod:`shiyi.errors`, the table in :data:`shiyi.api.errors.WIRE_ERRORS`)."""

from __future__ import annotations

import json

import httpx

from shiyi.api.errors import client_error_class
from shiyi.errors import ClientError, RequestError, ServiceUnavailable


def error_from(status: int, body: bytes) -> ClientError | RequestError:
    """The exception for an error response (its JSON body, or the raw text if not JSON)."""
    code, message = "", ""
    try:
        error = json.loads(body)["error"]
        code, message = str(error["code"]), str(error["message"])
    except (ValueError, KeyError, TypeError):
        message = body.decode("utf-8", "replace")[:500] or f"HTTP {status}"
        code = "internal" if status >= 500 else ""
    cls = client_error_class(code, status)
    return cls(f"{message} (HTTP {status}, {code or 'no code'})", status=status, code=code or None)


def unavailable(base_url: str, exc: httpx.TransportError) -> ServiceUnavailable:
    return ServiceUnavailable(f"no shiyi service answers at {base_url}: {exc}")
