"""The memory page's API over a real uvicorn server and a real store: filtered fact lists,
overview, entity view, session timeline, expired clean-up and conflicts, all limited to what
the server's viewer may see."""

from __future__ import annotations

import time

from pydantic import SecretStr

from shiyi.memory.models import EntityRecord, RelationRecord
from shiyi.memory.scopes import Viewer
from shiyi.memory.service import Memory
from tests.interfaces.server.conftest import Live, LiveFactory
from tests.interfaces.web.conftest import add_turns, observe

BOB = Viewer(user_id="bob")
DAY = 86400.0


def _memory(server: Live) -> Memory:
    assert server.service.memory is not None
    return server.service.memory


def _ids(body: dict[str, list[dict[str, object]]], field: str = "facts") -> list[object]:
    return [item["id"] for item in body[field]]


def test_facts_are_listed_with_filters_and_only_when_visible(live: LiveFactory) -> None:
    server = live()
    memory, client = _memory(server), server.client
    # A preference: 7 days to live (the one short-term fact here), so current after 6.
    old = observe(memory, "Likes green tea from Uji", kind="preference", now=time.time() - 6 * DAY)
    deploy = memory.remember("Deploys go out with make release", kind="procedural")
    shared = memory.remember("Standups are at 9:30", kind="convention", scope="workspace")
    tagged = memory.remember("Alice leads the Kuzu migration", about=["Alice"])
    hidden = memory.remember("Bob's private note about Alice", about=["Alice"], viewer=BOB)

    listed = client.get("/v1/memory/facts")
    assert listed.status_code == 200, listed.text  # not taken for a memory id
    body = listed.json()
    assert set(_ids(body)) == {old.id, deploy.id, shared.id, tagged.id}
    assert body["total"] == 4 and body["complete"] is True
    assert hidden.id not in _ids(body)
    card = next(f for f in body["facts"] if f["id"] == tagged.id)
    assert card["entities"] == ["alice"] and card["agent_id"] == "shiyi"
    assert card["scope"] == "user" and card["evidence_count"] == 1

    def ids(**params: object) -> set[object]:
        response = client.get("/v1/memory/facts", params=params)
        assert response.status_code == 200, response.text
        return set(_ids(response.json()))

    assert ids(kind=["procedural", "convention"]) == {deploy.id, shared.id}
    assert ids(scope="workspace") == {shared.id}
    assert ids(tier="short") == {old.id}
    assert ids(q="MAKE release") == {deploy.id}
    assert ids(entity="Alice") == {tagged.id}
    assert ids(until=time.time() - 5 * DAY) == {old.id}
    assert old.id not in ids(since=time.time() - DAY)
    assert ids(status="superseded") == set()
    page = client.get("/v1/memory/facts", params={"limit": 2, "offset": 1}).json()
    assert len(page["facts"]) == 2 and page["total"] == 4
    ordered = client.get("/v1/memory/facts", params={"ids": [shared.id, hidden.id, deploy.id]})
    assert _ids(ordered.json()) == [shared.id, deploy.id]
    bad = client.get("/v1/memory/facts", params={"kind": "nope"})
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "validation_error"


def test_overview_counts_what_the_viewer_sees(live: LiveFactory) -> None:
    server = live()
    memory = _memory(server)
    observe(memory, "Berlin", key="lives in", confidence=0.9)
    observe(memory, "Munich", key="lives in", confidence=0.6)  # pending, contradicts Berlin
    short = observe(memory, "Likes rainy days", kind="mood", confidence=0.8)
    memory.remember("Bob's secret", viewer=BOB)
    memory.store.expire_facts(short.expires_at or 0.0)
    body = server.client.get("/v1/memory/overview").json()
    assert body["total"] == 2 and body["pending"] == 1
    assert body["conflicts"] == 1 and body["expired"] == 1
    assert body["average_confidence"] == 0.9
    assert body["by_kind"] == {"semantic": 2}


def test_entity_view_has_facts_neighbours_and_mentions(live: LiveFactory) -> None:
    server = live()
    memory, client = _memory(server), server.client
    fact = memory.remember("Alice leads the Kuzu migration", about=["Alice"])
    memory.remember("Bob thinks Alice is late", about=["Alice"], viewer=BOB)
    memory.store.upsert_entities([EntityRecord("acme", "org", "Acme"), EntityRecord("kuzu")])
    memory.store.add_relations(
        [RelationRecord("alice", "acme", "works_at"), RelationRecord("kuzu", "alice", "owned_by")]
    )
    mine = add_turns(memory, "ses_a", [("user", "Alice joined Acme")])
    theirs = add_turns(memory, "ses_b", [("user", "Alice again")], user_id="bob")
    memory.store.link_mentions([(mine[0].id, "alice"), (theirs[0].id, "alice")])

    response = client.get("/v1/memory/entities/Alice")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["entity"]["name"] == "alice"
    assert _ids(body) == [fact.id]
    assert _ids(body, "events") == [mine[0].id]
    neighbours = {(n["name"], n["relation"], n["direction"]) for n in body["neighbours"]}
    assert neighbours == {("acme", "works_at", "out"), ("kuzu", "owned_by", "in")}
    missing = client.get("/v1/memory/entities/nobody")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"


def test_session_timeline_links_facts_to_their_turns(live: LiveFactory) -> None:
    server = live()
    memory, client = _memory(server), server.client
    session = server.session()
    turns = add_turns(
        memory,
        session,
        [("user", "I moved to Munich"), ("assistant", "Noted."), ("user", "Tea, not coffee")],
    )
    fact = observe(
        memory,
        "Munich",
        key="lives in",
        anchor=turns[0].anchor.key(),
        source_events=[turns[0].id],
    )
    add_turns(memory, session, [("user", "hidden from us")], user_id="bob")
    body = client.get(f"/v1/memory/sessions/{session}/timeline").json()
    assert [e["content"] for e in body["events"]] == [t.content for t in turns]
    assert body["events"][0]["anchor"] == f"{turns[0].run_id}:1:0"
    assert _ids(body) == [fact.id]
    assert body["facts"][0]["anchor"] == body["events"][0]["anchor"]
    assert body["facts"][0]["source_events"] == [turns[0].id]
    assert body["title"] == "t"
    empty = server.session()
    assert client.get(f"/v1/memory/sessions/{empty}/timeline").json()["events"] == []
    missing = client.get("/v1/memory/sessions/ses_nope/timeline")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"


def test_expired_facts_are_listed_and_cleaned_up(live: LiveFactory) -> None:
    server = live()
    memory, client = _memory(server), server.client
    gone = observe(memory, "Wants pizza tonight", kind="preference")
    also = observe(memory, "Feels tired", kind="mood")
    theirs = observe(memory, "Bob is hungry", kind="mood", viewer=BOB)
    kept = memory.remember("Long-term fact")
    assert set(memory.store.expire_facts(time.time() + 30 * DAY)) == {gone.id, also.id, theirs.id}
    assert set(_ids(client.get("/v1/memory/expired").json())) == {gone.id, also.id}

    one = client.post("/v1/memory/expired/cleanup", json={"ids": [gone.id, kept.id, theirs.id]})
    assert one.status_code == 200, one.text
    assert one.json() == {"deleted": [gone.id], "skipped": [kept.id, theirs.id]}
    assert client.get(f"/v1/memory/{gone.id}").status_code == 404
    rest = client.post("/v1/memory/expired/cleanup").json()
    assert rest == {"deleted": [also.id], "skipped": []}
    assert client.get("/v1/memory/expired").json() == {"facts": []}
    assert {f.id for f in memory.store.get_facts([kept.id, theirs.id])} == {kept.id, theirs.id}
    bad = client.post("/v1/memory/expired/cleanup", json={"ids": "x", "extra": 1})
    assert bad.status_code == 422


def test_conflicts_resolve_by_keeping_either_version(live: LiveFactory) -> None:
    server = live()
    memory, client = _memory(server), server.client
    berlin = observe(memory, "Berlin", key="lives in", confidence=0.9)
    munich = observe(memory, "Munich", key="lives in", confidence=0.6)
    assert munich.status == "pending" and munich.conflicts_with == berlin.id
    conflicts = client.get("/v1/memory/conflicts").json()["conflicts"]
    assert [(c["pending"]["id"], c["current"]["id"]) for c in conflicts] == [(munich.id, berlin.id)]

    kept = client.post(f"/v1/memory/conflicts/{munich.id}/resolve", json={"keep": "new"})
    assert kept.status_code == 200, kept.text
    assert kept.json()["kept"]["status"] == "active" and kept.json()["superseded"] == berlin.id
    old = memory.store.get_facts([berlin.id])[0]
    assert old.status == "superseded" and old.valid_to is not None
    assert memory.store.superseded_by([berlin.id]) == {berlin.id: munich.id}
    assert [f.value for f in memory.history(key="lives in")] == ["Berlin", "Munich"]
    assert client.get("/v1/memory/conflicts").json() == {"conflicts": []}
    again = client.post(f"/v1/memory/conflicts/{munich.id}/resolve", json={"keep": "new"})
    assert again.status_code == 409 and again.json()["error"]["code"] == "conflict"

    tea = observe(memory, "Tea", key="drinks", confidence=0.9)
    coffee = observe(memory, "Coffee", key="drinks", confidence=0.6)
    dropped = client.post(f"/v1/memory/conflicts/{coffee.id}/resolve", json={"keep": "old"})
    assert dropped.json() == {
        "kept": dropped.json()["kept"],
        "superseded": None,
        "deleted": coffee.id,
    }
    assert dropped.json()["kept"]["id"] == tea.id
    assert memory.store.get_facts([coffee.id]) == []
    assert memory.store.get_facts([tea.id])[0].status == "active"

    theirs_old = observe(memory, "Paris", key="lives in", confidence=0.9, viewer=BOB)
    theirs = observe(memory, "Rome", key="lives in", confidence=0.6, viewer=BOB)
    assert theirs.conflicts_with == theirs_old.id
    hidden = client.post(f"/v1/memory/conflicts/{theirs.id}/resolve", json={"keep": "new"})
    assert hidden.status_code == 404 and hidden.json()["error"]["code"] == "not_found"
    wrong = client.post(f"/v1/memory/conflicts/{tea.id}/resolve", json={"keep": "both"})
    assert wrong.status_code == 422


def test_page_is_served_and_open_without_the_token(live: LiveFactory) -> None:
    server = live(host="0.0.0.0", token=SecretStr("s3cret"))
    client = server.client
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '<script type="module" src="/ui/app.js">' in page.text
    for asset in ("/ui/app.js", "/ui/api.js", "/ui/ui.js", "/ui/timeline.js", "/ui/app.css"):
        assert client.get(asset).status_code == 200, asset
    assert client.get("/ui/nope.js").status_code == 404
    assert client.get("/v1/memory/facts").status_code == 401
    authorised = client.get("/v1/memory/facts", headers={"authorization": "Bearer s3cret"})
    assert authorised.status_code == 200


def test_memory_disabled_is_a_conflict(live: LiveFactory) -> None:
    server = live(memory=False)
    response = server.client.get("/v1/memory/overview")
    assert response.status_code == 409 and response.json()["error"]["code"] == "conflict"


def test_the_page_runs_only_its_own_scripts_and_answers_head(live: LiveFactory) -> None:
    server = live()
    page = server.client.get("/")
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert "unsafe-inline" not in policy and page.headers["x-content-type-options"] == "nosniff"
    assert server.client.head("/").status_code == 200  # it had been 405
