"""Schemathesis against the live server's /openapi.json: no 5xx, responses conform."""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, given, settings
from pydantic import SecretStr

from shiyi.llm.scripted import reply
from tests.interfaces.server.conftest import LiveFactory

TOKEN = "schema-token"


def test_api_conforms_to_its_schema(live: LiveFactory) -> None:
    headers = {"authorization": f"Bearer {TOKEN}"}
    server = live([reply("ok")], repeat_last=True, token=SecretStr(TOKEN), headers=headers)
    server.session()  # something to find besides 404s
    schema = schemathesis.openapi.from_url(f"{server.url}/openapi.json", headers=headers)
    checked = 0
    for result in schema.get_all_operations():
        operation = result.ok()

        @given(case=operation.as_strategy())
        @settings(
            max_examples=15,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
        )
        def check(case: schemathesis.Case) -> None:
            case.call_and_validate(base_url=server.url, headers=headers, timeout=20)

        check()
        checked += 1
    assert checked >= 12
