"""Exception handlers: every error the API returns is an :class:`ErrorResponse`."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from shiyi.api.errors import STATUS_CODES, ErrorBody, ErrorCode, ErrorResponse, wire_error_for
from shiyi.errors import ShiyiError

log = logging.getLogger(__name__)


def error_response(
    status: int, code: ErrorCode, message: str, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    body = ErrorResponse(error=ErrorBody(code=code, message=message))
    return JSONResponse(body.model_dump(), status_code=status, headers=dict(headers or {}))


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    code = STATUS_CODES.get(
        exc.status_code, "internal" if exc.status_code >= 500 else "bad_request"
    )
    return error_response(exc.status_code, code, str(exc.detail), exc.headers)


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = [_problem(err, request.url.path) for err in exc.errors()]
    return error_response(422, "validation_error", "; ".join(problems) or "invalid request")


_FORMS = {
    "/v1/knowledge/uploads/": "a plain file name of a type the knowledge base reads "
    "(Markdown, text, HTML, PDF and source files), like 'notes.md'",
}
"""What a route's long name pattern says, in words (the pattern itself read as noise)."""


def _problem(err: Mapping[str, object], path: str = "") -> str:
    """One problem, named by where it is; a body that is not JSON said as such (it had read
    "body.12: JSON decode error")."""
    loc = err.get("loc", ())
    parts = [str(part) for part in loc] if isinstance(loc, (list, tuple)) else []
    if err.get("type") == "json_invalid":
        ctx = err.get("ctx")
        why = ctx.get("error", "") if isinstance(ctx, Mapping) else ""
        at = f" at character {parts[1]}" if len(parts) > 1 else ""
        return f"the body is not valid JSON ({why}{at}): send a JSON object"
    if parts == ["body"] and err.get("type") == "missing":
        return "the request needs a JSON body"
    if err.get("type") == "string_pattern_mismatch":
        form = next((said for prefix, said in _FORMS.items() if path.startswith(prefix)), "")
        if form:
            return f"{'.'.join(parts)}: {err.get('input')!r} is not {form}"
    return f"{'.'.join(parts)}: {err.get('msg', '')}"


async def _shiyi_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ShiyiError)
    row = wire_error_for(exc)
    if row.code == "bad_request":
        log.warning("request %s %s failed: %s", request.method, request.url.path, exc)
    return error_response(row.status, row.code, str(exc))


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.error("unhandled error in %s %s", request.method, request.url.path, exc_info=exc)
    return error_response(500, "internal", "internal server error; see the server log")


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(ShiyiError, _shiyi_error)
    app.add_exception_handler(Exception, _unexpected)
