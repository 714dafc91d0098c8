"""Sessions CRUD and the memory endpoints against a real store in a tmp data dir."""

from __future__ import annotations

import json

from shiyi.llm.scripted import reply
from shiyi.llm.types import Message
from shiyi.memory.models import MemoryHit
from tests.interfaces.server.conftest import LiveFactory, stream_events
from tests.support.waiting import wait_for


def test_sessions_crud(live: LiveFactory) -> None:
    server = live()
    client = server.client
    created = client.post("/v1/sessions", json={"title": "first"})
    assert created.status_code == 201
    session = created.json()
    assert session["title"] == "first" and session["message_count"] == 0
    untitled = client.post("/v1/sessions")
    assert untitled.status_code == 201
    listed = [s["id"] for s in client.get("/v1/sessions").json()["sessions"]]
    assert session["id"] in listed and untitled.json()["id"] in listed
    detail = client.get(f"/v1/sessions/{session['id']}").json()
    assert detail["messages"] == [] and detail["runs"] == []
    assert client.delete(f"/v1/sessions/{session['id']}").status_code == 204
    assert client.get(f"/v1/sessions/{session['id']}").status_code == 404
    assert client.delete(f"/v1/sessions/{session['id']}").status_code == 404


def test_server_json_records_the_owner(live: LiveFactory) -> None:
    server = live()
    owner = json.loads((server.service.settings.data_dir / "server.json").read_text())
    assert owner["address"] == server.url and owner["pid"] > 0


def test_memory_search_get_patch_delete(live: LiveFactory) -> None:
    server = live()
    client = server.client
    memory = server.service.memory
    assert memory is not None
    fact = memory.remember("The VPN config lives in ops/vpn.conf", kind="convention")
    memory.record_message(
        Message("user", "my dog Biscuit likes carrots"),
        message_id=1,
        session_id="ses_x",
        run_id="run_x",
        iteration=1,
    )
    memory.worker.flush_graph()
    hits = client.get("/v1/memory/search", params={"q": "vpn.conf", "mode": "keyword"}).json()
    assert fact.id in [h["id"] for h in hits["hits"]]
    got = client.get(f"/v1/memory/{fact.id}").json()
    assert got["node"] == "fact" and got["kind"] == "convention"
    patched = client.patch(
        f"/v1/memory/{fact.id}", json={"value": "VPN: ops/vpn2.conf", "confidence": 0.5}
    )
    assert patched.status_code == 200
    assert patched.json()["value"] == "VPN: ops/vpn2.conf" and patched.json()["confidence"] == 0.5
    assert client.get(f"/v1/memory/{fact.id}").json()["value"] == "VPN: ops/vpn2.conf"
    assert client.patch(f"/v1/memory/{fact.id}", json={"kind": "nope"}).status_code == 422
    health = client.get("/v1/memory/health").json()
    assert health["enabled"] is True and "pending_jobs" in health["counts"]
    deleted = client.delete(f"/v1/memory/{fact.id}")
    assert deleted.status_code == 200, deleted.text
    body = deleted.json()
    # the fact, and what it said before its edit
    assert (body["deleted"], body["counts"]["facts"]) == (2, 2)
    # The server does not compact while it serves: it says where the bytes stay and how.
    assert [path.rsplit("/", 1)[-1] for path in body["bytes_remain"]] == ["graph.kuzu"]
    assert "shiyi memory compact" in body["note"]
    missing = client.get(f"/v1/memory/{fact.id}")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    assert client.delete(f"/v1/memory/{fact.id}").status_code == 404


def test_events_are_read_only(live: LiveFactory) -> None:
    server = live()
    memory = server.service.memory
    assert memory is not None
    memory.record_message(
        Message("user", "remember the staging host is stg-7"),
        message_id=1,
        session_id="ses_x",
        run_id="run_x",
        iteration=1,
    )
    event_id = ""
    for _ in range(200):
        hits = memory.search("staging host", mode="keyword", limit=5)
        event_id = next((h.id for h in hits if h.node == "event"), "")
        if event_id:
            break
        memory.worker.flush_graph()
        import time

        time.sleep(0.05)
    assert event_id, "the event never reached the store"
    assert server.client.get(f"/v1/memory/{event_id}").json()["node"] == "event"
    response = server.client.patch(f"/v1/memory/{event_id}", json={"value": "x"})
    assert response.status_code == 409 and response.json()["error"]["code"] == "conflict"
    assert "read-only" in response.json()["error"]["message"]


def test_a_forgotten_message_leaves_the_sessions_next_prompt(live: LiveFactory) -> None:
    """The session's agent held the message in its transcript: after DELETE the next run's
    prompt is built from the log without it."""
    server = live([reply("Filed."), reply("Sure.")])
    session = server.session()
    stream_events(server.client, session, "my locker code is narwhal-2207")
    memory = server.service.memory
    assert memory is not None

    def stored() -> list[MemoryHit]:
        hits = memory.search("narwhal-2207", mode="keyword")
        return [h for h in hits if h.node == "event"]

    [event] = wait_for(stored)
    assert server.client.delete(f"/v1/memory/{event.id}").status_code == 200
    stream_events(server.client, session, "what else?")
    prompt = " ".join(m.content for m in server.model.requests[-1].messages)
    assert "what else?" in prompt and "narwhal-2207" not in prompt
