from __future__ import annotations

import json

import pytest

from shiyi.api.errors import STATUS_CODES, WIRE_ERRORS, client_error_class, wire_error_for
from shiyi.client.errors import error_from
from shiyi.errors import (
    ClientError,
    ConfigError,
    Conflict,
    NotFound,
    RequestError,
    ServerError,
    SessionNotFound,
    ShiyiError,
    StorageError,
    ToolError,
)


@pytest.mark.parametrize(
    ("error", "status", "code", "client"),
    [
        # One name per wire concept: the client raises the server's own class.
        (SessionNotFound("no session s1"), 404, "not_found", NotFound),
        (NotFound("no run r1"), 404, "not_found", NotFound),
        (Conflict("the run is still going"), 409, "conflict", Conflict),
        (ConfigError("memory is disabled"), 409, "conflict", Conflict),
        (StorageError("the store is locked"), 400, "bad_request", RequestError),
        (ToolError("refused"), 400, "bad_request", RequestError),
    ],
)
def test_a_server_error_comes_back_to_the_client_as_its_class(
    error: ShiyiError, status: int, code: str, client: type[ClientError | RequestError]
) -> None:
    row = wire_error_for(error)
    assert (row.status, row.code) == (status, code)
    body = json.dumps({"error": {"code": row.code, "message": str(error)}}).encode()
    raised = error_from(row.status, body)
    assert type(raised) is client
    assert (raised.status, raised.code) == (status, code)
    assert str(error) in str(raised)


def test_codes_the_client_does_not_know_fall_back_by_status() -> None:
    assert client_error_class("teapot", 418) is ClientError
    assert client_error_class("", 502) is ServerError
    assert type(error_from(503, b"<html>proxy down</html>")) is ServerError


def test_each_code_appears_once_and_framework_statuses_map_to_it() -> None:
    codes = [row.code for row in WIRE_ERRORS]
    assert len(codes) == len(set(codes))
    assert STATUS_CODES[404] == "not_found"
    assert STATUS_CODES[405] == "method_not_allowed"
    assert 0 not in STATUS_CODES  # "unavailable" is the client's own: nothing answered
