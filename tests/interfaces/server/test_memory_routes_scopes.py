"""The routes ``shiyi memory`` uses through a running server (add with a slot and scope,
history, export, jobs) act as the caller: another user's records never come back."""

from __future__ import annotations

import json

from tests.interfaces.server.test_scopes import Planted, planted
from tests.interfaces.server.two_users import MARK_A

__all__ = ["planted"]  # the fixture, used by name


def test_memory_routes_answer_as_the_caller(planted: Planted) -> None:
    a, b = planted.a, planted.b
    first = a.post("/v1/memory", json={"text": f"Oslo {MARK_A}", "key": "lives in"})
    moved = a.post(
        "/v1/memory",
        json={"text": "Bergen", "key": "lives in", "scope": "agent", "kind": "semantic"},
    )
    assert first.status_code == moved.status_code == 201, moved.text
    assert moved.json()["key"] == "lives in"

    mine = a.get("/v1/memory/history", params={"key": "lives in"}).json()["facts"]
    assert [(f["value"], f["scope"], f["user_id"]) for f in mine][-1] == (
        "Bergen",
        "agent",
        "alice",
    )
    assert b.get("/v1/memory/history", params={"key": "lives in"}).json() == {"facts": []}
    assert a.get("/v1/memory/history").json() == {"facts": []}  # neither key nor entity
    assert a.get("/v1/memory/history", params={"entity": "Nobody"}).json() == {"facts": []}

    exported_a = a.get("/v1/memory/export")
    assert exported_a.headers["content-type"].startswith("application/x-ndjson")
    assert any(MARK_A in line for line in exported_a.text.splitlines())
    exported_b = [json.loads(line) for line in b.get("/v1/memory/export").text.splitlines()]
    assert all(MARK_A not in json.dumps(record) for record in exported_b)

    queue = b.get("/v1/memory/jobs").json()
    assert queue["summary"] and queue["failed"] == []  # counts only: errors may quote text
    refused = b.post("/v1/memory/jobs/retry")
    assert refused.status_code == 409 and "server.token" in refused.json()["error"]["message"]
