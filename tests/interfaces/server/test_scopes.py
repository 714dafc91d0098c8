"""Two users on one real server: each token acts as its own user, and nothing of one user's
sessions, runs or memories reaches the other (not-yours is the 404 of a missing id)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from pydantic import SecretStr, ValidationError

from shiyi.config import Settings
from shiyi.config.server_settings import ServerSettings, ServerUser
from shiyi.interfaces.server import AgentService, create_app
from shiyi.llm.scripted import ScriptedModel
from shiyi.scripts.library import Script, ScriptLibrary
from tests.interfaces.server.conftest import Live, LiveFactory, server_settings, stream_events
from tests.interfaces.server.two_users import (
    A_TOKEN,
    B_TOKEN,
    MARK_A,
    MARK_B,
    brain,
    client_for,
    remembered_event,
    users,
)


@dataclass
class Planted:
    server: Live
    a: httpx.Client
    b: httpx.Client
    session: str
    run: str
    fact: str
    event: str


def plant_a(server: Live, a: httpx.Client) -> tuple[str, str, str, str]:
    """A's session (its title, message and run goal hold the marker), fact and turn."""
    created = a.post("/v1/sessions", json={"title": f"plans {MARK_A}"})
    assert created.status_code == 201, created.text
    session = created.json()["id"]
    stream_events(a, session, f"my locker code is {MARK_A}")
    runs = a.get(f"/v1/sessions/{session}").json()["runs"]
    fact = a.post("/v1/memory", json={"text": f"Alice's locker code is {MARK_A}"})
    assert fact.status_code == 201, fact.text
    return session, runs[0]["run_id"], fact.json()["id"], remembered_event(a, MARK_A)


@pytest.fixture
def planted(live: LiveFactory) -> Iterator[Planted]:
    server = live([brain], repeat_last=True, users=users())
    with client_for(server, A_TOKEN) as a, client_for(server, B_TOKEN) as b:
        yield Planted(server, a, b, *plant_a(server, a))


def not_found_like_missing(got: httpx.Response, real_id: str, missing: httpx.Response) -> None:
    """``got`` (another user's id) is the 404 of a missing id, word for word."""
    assert got.status_code == 404 == missing.status_code, got.text
    body: dict[str, Any] = got.json()
    assert body["error"]["code"] == "not_found"
    assert body["error"]["message"].replace(real_id, "MISSING") == missing.json()["error"][
        "message"
    ].replace("nope_0", "MISSING")


def test_another_users_memories_are_not_found(planted: Planted) -> None:
    a, b = planted.a, planted.b
    for memory_id in (planted.fact, planted.event):
        for method in ("GET", "DELETE"):
            got = b.request(method, f"/v1/memory/{memory_id}")
            missing = b.request(method, "/v1/memory/nope_0")
            not_found_like_missing(got, memory_id, missing)
        assert a.get(f"/v1/memory/{memory_id}").status_code == 200  # still there
    patched = b.patch(f"/v1/memory/{planted.fact}", json={"value": "pwned"})
    assert patched.status_code == 404
    assert MARK_A in a.get(f"/v1/memory/{planted.fact}").json()["value"]
    hits = b.get("/v1/memory/search", params={"q": MARK_A, "mode": "keyword"}).json()["hits"]
    assert hits == []
    facts = b.get("/v1/memory/facts", params={"ids": [planted.fact]}).json()
    assert facts["facts"] == [] and MARK_A not in str(b.get("/v1/memory/facts").json())
    turn = a.get(f"/v1/memory/{planted.event}").json()
    anchor = f"{turn['run_id']}:{turn['iteration']}:{turn['segment']}"
    assert MARK_A in a.get("/v1/memory/expand", params={"anchor": anchor}).text
    around = b.get("/v1/memory/expand", params={"anchor": anchor})
    assert around.status_code == 200 and MARK_A not in around.text


def test_an_entity_only_another_user_speaks_of_is_not_found(planted: Planted) -> None:
    """Entities are shared nodes, but a name only A's memories mention is A's to see."""
    a, b = planted.a, planted.b
    stream_events(a, planted.session, f"Yesterday I met Thorvaldsen about {MARK_A}")
    deadline = time.monotonic() + 30
    while a.get("/v1/memory/entities/thorvaldsen").status_code != 200:
        assert time.monotonic() < deadline, "A's turn never linked the entity 'Thorvaldsen'"
        time.sleep(0.1)
    assert MARK_A in a.get("/v1/memory/entities/thorvaldsen").text
    not_found_like_missing(
        b.get("/v1/memory/entities/thorvaldsen"),
        "thorvaldsen",
        b.get("/v1/memory/entities/nope_0"),
    )


def test_forget_by_query_or_entity_reaches_only_the_callers(planted: Planted) -> None:
    a, b = planted.a, planted.b
    for by, text in (("query", MARK_A), ("query", "locker code"), ("entity", "alice")):
        body = {"by": by, "text": text}
        assert b.post("/v1/memory/forget", json={**body, "dry_run": True}).status_code == 404
        assert b.post("/v1/memory/forget", json=body).status_code == 404
    assert a.get(f"/v1/memory/{planted.fact}").status_code == 200
    listed = a.post("/v1/memory/forget", json={"by": "query", "text": MARK_A, "dry_run": True})
    assert planted.fact in {hit["id"] for hit in listed.json()["hits"]}
    assert listed.json()["forgotten"] is None
    assert a.get(f"/v1/memory/{planted.fact}").status_code == 200  # a dry run changes nothing
    done = a.post("/v1/memory/forget", json={"by": "query", "text": MARK_A, "limit": 10})
    assert done.status_code == 200 and done.json()["forgotten"]["deleted"] >= 2
    assert a.get(f"/v1/memory/{planted.fact}").status_code == 404
    assert a.get("/v1/memory/search", params={"q": MARK_A, "mode": "keyword"}).json() == {
        "hits": [],
        "read_as": {},
    }


def test_another_users_scripts_are_not_found(planted: Planted) -> None:
    settings = planted.server.service.settings
    mine = ScriptLibrary.for_user(settings.data_dir, "alice", configured_user="default")
    mine.save(Script("locker", f"open locker {MARK_A}", "bash", "echo open\n"))
    assert [s["name"] for s in planted.a.get("/v1/scripts").json()["scripts"]] == ["locker"]
    assert planted.b.get("/v1/scripts").json() == {"scripts": []}
    for method in ("GET", "DELETE"):
        missing = planted.b.request(method, "/v1/scripts/nope")
        theirs = planted.b.request(method, "/v1/scripts/locker")
        assert theirs.status_code == 404 == missing.status_code
        assert MARK_A not in theirs.text
    assert planted.a.get("/v1/scripts/locker").status_code == 200


def test_another_users_sessions_and_runs_are_not_found(planted: Planted) -> None:
    a, b, session, run = planted.a, planted.b, planted.session, planted.run
    assert b.get("/v1/sessions").json()["sessions"] == []
    assert b.get("/v1/memory/health").json()["sessions"] == 0
    for method, path in (
        ("GET", f"/v1/sessions/{session}"),
        ("DELETE", f"/v1/sessions/{session}"),
        ("GET", f"/v1/memory/sessions/{session}/timeline"),
    ):
        missing = b.request(method, path.replace(session, "nope_0"))
        not_found_like_missing(b.request(method, path), session, missing)
    for method, path in (("GET", f"/v1/runs/{run}"), ("POST", f"/v1/runs/{run}/cancel")):
        missing = b.request(method, path.replace(run, "nope_0"))
        not_found_like_missing(b.request(method, path), run, missing)
    sent = b.post(f"/v1/sessions/{session}/messages", json={"text": "hi"}, params={"stream": 0})
    assert sent.status_code == 404
    own = b.post("/v1/sessions").json()["id"]
    continued = b.post(
        f"/v1/sessions/{own}/messages", json={"text": "go on", "run_id": run}, params={"stream": 0}
    )
    assert continued.status_code == 404  # continuing A's run would seed it with A's turns
    # A still has everything, titled and with its messages.
    assert [s["id"] for s in a.get("/v1/sessions").json()["sessions"]] == [session]
    detail = a.get(f"/v1/sessions/{session}").json()
    assert MARK_A in detail["title"] and MARK_A in detail["messages"][0]["content"]
    timeline = a.get(f"/v1/memory/sessions/{session}/timeline").json()
    assert timeline["events"] and a.get(f"/v1/runs/{run}").status_code == 200


def test_each_user_chats_with_their_own_memory(planted: Planted) -> None:
    server, a, b = planted.server, planted.a, planted.b
    session = b.post("/v1/sessions").json()["id"]
    before = len(server.model.requests)
    events = stream_events(b, session, f"recall {MARK_A} for me, my pet is {MARK_B}")

    result = next(data for kind, data in events if kind == "tool_result")
    assert result["ok"] is True
    seen = " ".join(m.content for r in server.model.requests[before:] for m in r.messages)
    assert "locker" not in seen  # neither the memory hint nor query_memory showed A's
    remembered_event(b, MARK_B)  # B's turn is remembered as B's ...
    hits = a.get("/v1/memory/search", params={"q": MARK_B, "mode": "keyword"}).json()["hits"]
    assert hits == []  # ... and not A's


def import_body(session: str, said: str) -> dict[str, Any]:
    turns = [
        {
            "id": f"{session}:D1:{i}",
            "run": "2024-05-01",
            "ts": 1.7e9 + i,
            "role": "caroline",
            "content": f"{said} {i}",
        }
        for i in range(2)
    ]
    return {"session_id": session, "turns": turns}


def wait_for_turn(client: httpx.Client, memory_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 20
    while (got := client.get(f"/v1/memory/{memory_id}")).status_code == 404:
        assert time.monotonic() < deadline, f"{memory_id} was never stored"
        time.sleep(0.05)
    assert got.status_code == 200, got.text
    body: dict[str, Any] = got.json()
    return body


def test_an_import_never_takes_over_another_users_names(planted: Planted) -> None:
    """B imports the file A imported, then into A's chat session: B's turns get B's tag,
    A's stay A's, and B learns nothing of A's (the answer is the same as for a fresh name)."""
    a, b = planted.a, planted.b
    first = a.post("/v1/memory/import", json=import_body("conv-1", f"alice {MARK_A}"))
    assert first.json() == {"session_id": "conv-1", "renamed_from": "", "queued": 2}
    wait_for_turn(a, "conv-1:D1:1")
    for session in ("conv-1", planted.session):
        got = b.post("/v1/memory/import", json=import_body(session, f"bob {MARK_B}"))
        assert got.status_code == 200, got.text
        stored = got.json()["session_id"]
        assert stored.startswith(f"{session}~") and got.json()["renamed_from"] == session
        mine = wait_for_turn(b, f"{stored}:D1:1")
        assert (mine["content"], mine["session_id"]) == (f"bob {MARK_B} 1", stored)
    assert wait_for_turn(a, "conv-1:D1:1")["content"] == f"alice {MARK_A} 1"
    assert b.get("/v1/memory/conv-1:D1:1").status_code == 404
    assert MARK_B not in a.get("/v1/memory/export").text
    assert MARK_A not in b.get("/v1/memory/export").text


def test_an_import_names_what_is_wrong_with_it(planted: Planted) -> None:
    for field, value in (("run", "2024 05 01"), ("ts", 1e15), ("id", "")):
        body = import_body("conv-2", "hello")
        body["turns"][1][field] = value
        got = planted.b.post("/v1/memory/import", json=body)
        assert got.status_code == 422 and f"turns.1.{field}" in got.text, got.text
    empty = planted.b.post("/v1/memory/import", json={"session_id": "conv-2", "turns": []})
    assert empty.status_code == 422 and "turns" in empty.text
    assert planted.b.get("/v1/memory/conv-2:D1:0").status_code == 404  # nothing was stored


def test_the_configured_token_keeps_the_sessions_logged_before_owners(
    live: LiveFactory,
) -> None:
    server = live(token=SecretStr("configured"), users=users())
    legacy = server.service.log.create_session(title="from before")  # no owner: 'default'
    with client_for(server, "configured") as me, client_for(server, B_TOKEN) as b:
        assert [s["id"] for s in me.get("/v1/sessions").json()["sessions"]] == [legacy]
        assert b.get(f"/v1/sessions/{legacy}").status_code == 404
        assert b.get("/v1/sessions").json()["sessions"] == []
        assert me.get(f"/v1/sessions/{legacy}").status_code == 200
        unknown = httpx.get(f"{server.url}/v1/sessions", headers={"authorization": "Bearer x"})
        assert unknown.status_code == 401


def test_users_tokens_must_differ_and_may_stand_in_for_server_token(
    settings: Settings,
) -> None:
    with pytest.raises(ValidationError, match="must all differ"):
        ServerSettings(token=SecretStr(A_TOKEN), users=users())
    with pytest.raises(ValidationError, match="must not be empty"):
        ServerUser(token=SecretStr(" "), user_id="x")
    exposed = server_settings(settings, host="0.0.0.0", users=users())
    service = AgentService(exposed, model=ScriptedModel())
    try:
        create_app(service)  # a token per user is enough to serve beyond loopback
    finally:
        service.close()


def test_another_users_crowd_does_not_hide_ones_own_memory(planted: Planted) -> None:
    """A's hundred turns about sourdough take every recall path's first places; B's own turn
    about it is still what B's search finds first (memory/recall/widen.py)."""
    crowd = [
        {"id": f"bakes:D1:{i}", "run": "2024-05-01", "ts": 1.7e9 + i, "role": "alice",
         "content": f"I baked sourdough bread with rye flour, loaf {i}."}
        for i in range(100)
    ]  # fmt: skip
    assert planted.a.post("/v1/memory/import", json={"session_id": "bakes", "turns": crowd})
    wait_for_turn(planted.a, "bakes:D1:99")
    told = "I baked a sourdough loaf with rye flour this morning; the kitchen smelled of it."
    own = [dict(crowd[0], id="mine:D1:0", role="bob", content=told)]
    assert planted.b.post("/v1/memory/import", json={"session_id": "mine", "turns": own})
    wait_for_turn(planted.b, "mine:D1:0")
    for mode in ("hybrid", "keyword"):
        params = {"q": "What bread did I bake with rye flour?", "mode": mode, "limit": 3}
        hits = planted.b.get("/v1/memory/search", params=params).json()["hits"]
        assert [h["id"] for h in hits] == ["mine:D1:0"], mode
