"""Entities and their relations, aliases and neighbours, as two users of one real server see
them (issue 29): only through records the caller may read, and a name only the other user's
records hold answers exactly like a name never stored."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from shiyi.memory.models import EntityRecord, RelationRecord
from shiyi.memory.service import Memory
from tests.interfaces.server.conftest import Live, LiveFactory, stream_events
from tests.interfaces.server.two_users import (
    A_TOKEN,
    B_TOKEN,
    MARK_A,
    MARK_B,
    brain,
    client_for,
    users,
)

ALIAS = "Thor the Hammer"


@dataclass
class Two:
    server: Live
    a: httpx.Client
    b: httpx.Client

    @property
    def memory(self) -> Memory:
        assert self.server.service.memory is not None
        return self.server.service.memory


@pytest.fixture
def two(live: LiveFactory) -> Iterator[Two]:
    server = live([brain], repeat_last=True, users=users())
    with client_for(server, A_TOKEN) as a, client_for(server, B_TOKEN) as b:
        yield Two(server, a, b)


def say(client: httpx.Client, text: str) -> None:
    session = client.post("/v1/sessions", json={"title": "t"}).json()["id"]
    stream_events(client, session, text)


def entity(client: httpx.Client, name: str) -> httpx.Response:
    return client.get(f"/v1/memory/entities/{name}")


def wait_visible(client: httpx.Client, name: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while (got := entity(client, name)).status_code != 200:
        assert time.monotonic() < deadline, f"the turn never linked the entity {name!r}"
        time.sleep(0.1)
    body: dict[str, Any] = got.json()
    return body


def like_missing(client: httpx.Client, name: str) -> None:
    """``name`` answers as a name no memory holds: the same 404, word for word."""
    got, missing = entity(client, name), entity(client, "nope_0")
    assert got.status_code == 404 == missing.status_code, got.text
    assert (
        got.json()["error"]["message"].replace(name, "nope_0")
        == (missing.json()["error"]["message"])
    )


def plant_alices_graph(two: Two) -> None:
    """A's turn names Thorvaldsen (and the alias A uses); A's extraction related him to
    Glimmerhaven, a name no turn mentions (a relation-only entity)."""
    say(two.a, f"Yesterday I met Thorvaldsen, known as {ALIAS}, about {MARK_A}")
    wait_visible(two.a, "thorvaldsen")
    agent = two.memory.settings.agent_id
    two.memory.store.upsert_entities([
        EntityRecord("thorvaldsen", "person", "Thorvaldsen", [ALIAS]),
        EntityRecord("glimmerhaven", "place", "Glimmerhaven"),
    ])  # fmt: skip
    two.memory.store.add_relations(
        [RelationRecord("thorvaldsen", "glimmerhaven", "lives_in", user_id="alice", agent_id=agent)]
    )


def test_alices_relations_aliases_and_relation_only_names_never_reach_bob(two: Two) -> None:
    plant_alices_graph(two)
    mine = wait_visible(two.a, "thorvaldsen")
    assert ALIAS in mine["entity"]["aliases"]
    assert [n["name"] for n in mine["neighbours"]] == ["glimmerhaven"]
    assert wait_visible(two.a, "glimmerhaven")["entity"]["name"] == "glimmerhaven"
    assert wait_visible(two.a, ALIAS)["entity"]["name"] == "thorvaldsen"

    # B has said none of it: every one of these names is a missing name to B.
    for name in ("thorvaldsen", "glimmerhaven", ALIAS, "Thorvaldsen"):
        like_missing(two.b, name)

    # Once B names Thorvaldsen too, B sees B's own turn, and nothing of A's.
    say(two.b, f"Today I met Thorvaldsen about {MARK_B}")
    theirs = wait_visible(two.b, "thorvaldsen")
    assert MARK_B in str(theirs) and MARK_A not in str(theirs)
    assert theirs["entity"]["aliases"] == [] and theirs["neighbours"] == []
    for name in ("glimmerhaven", ALIAS):
        like_missing(two.b, name)


def test_forgetting_a_name_only_alice_uses_answers_bob_like_a_missing_name(two: Two) -> None:
    plant_alices_graph(two)

    def forget(name: str) -> httpx.Response:
        body = {"by": "entity", "text": name, "dry_run": True}
        return two.b.post("/v1/memory/forget", json=body)

    for name in ("thorvaldsen", "glimmerhaven", ALIAS):
        got, missing = forget(name), forget("nope_0")
        assert got.status_code == 404 == missing.status_code, got.text
        message = got.json()["error"]["message"]
        assert message.replace(name, "nope_0") == missing.json()["error"]["message"]
    assert (
        two.a.post(
            "/v1/memory/forget", json={"by": "entity", "text": "thorvaldsen", "dry_run": True}
        ).json()["events"]
        == 1
    )


def test_the_configured_identity_keeps_relations_stored_before_owners(live: LiveFactory) -> None:
    server = live()
    assert server.service.memory is not None
    memory = server.service.memory
    memory.remember("Ada wrote the engine notes", about=["Ada"])
    memory.store.upsert_entities([EntityRecord("engine", "concept", "Engine")])
    memory.store.add_relations([RelationRecord("ada", "engine", "wrote")])  # no owner: older
    body = server.client.get("/v1/memory/entities/ada").json()
    assert [n["name"] for n in body["neighbours"]] == ["engine"]
