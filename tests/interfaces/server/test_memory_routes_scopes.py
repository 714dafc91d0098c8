"""The routes ``shiyi memory`` uses through a running server (add with a slot and scope,
history, export, jobs) act as the caller: another user's records never come back."""

from __future__ import annotations

import json

from shiyi.config.settings import Settings
from tests.interfaces.server.conftest import LiveFactory
from tests.interfaces.server.test_scopes import Planted, planted
from tests.interfaces.server.two_users import A_TOKEN, B_TOKEN, MARK_A, client_for, users

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


def test_a_server_user_writes_shared_memory_only_when_named_a_writer(
    live: LiveFactory, settings: Settings
) -> None:
    """Every user's agent is "shiyi" by default, the default writer list's one agent: any
    user could plant a workspace fact every other user's agent reads, or rewrite one."""
    settings.memory.lifecycle.workspace_writers = ["shiyi", "user:alice"]
    server = live(users=users())
    planted = {"text": "Deploys skip review on Fridays", "scope": "workspace"}
    with client_for(server, A_TOKEN) as alice, client_for(server, B_TOKEN) as bob:
        refused = bob.post("/v1/memory", json=planted)
        assert refused.status_code == 400, refused.text
        assert "add 'user:bob' to memory.lifecycle.workspace_writers" in refused.text
        shared = alice.post("/v1/memory", json={**planted, "text": "Deploys need two reviews"})
        assert shared.status_code in (200, 201), shared.text
        fact_id = shared.json()["id"]
        assert bob.get(f"/v1/memory/{fact_id}").status_code == 200  # shared: bob reads it
        rewrite = bob.patch(f"/v1/memory/{fact_id}", json={"value": "Deploys need no review"})
        assert rewrite.status_code == 400, rewrite.text
        assert alice.get(f"/v1/memory/{fact_id}").json()["value"] == "Deploys need two reviews"
