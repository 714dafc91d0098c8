"""``shiyi.client`` against a real uvicorn: typed events, errors by code, cancel, continue."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from pydantic import SecretStr

from shiyi.client import (
    AsyncClient,
    Client,
    Conflict,
    NotFound,
    ServiceUnavailable,
    UnauthorizedError,
    ValidationFailed,
)
from shiyi.events import Event, Routed, RunEnd, RunStart, ToolResultEvent
from shiyi.llm.scripted import ScriptedReply, call, reply
from tests.interfaces.server.conftest import LiveFactory, free_port


def test_sync_client_iterates_typed_events(live: LiveFactory, workspace: Path) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    server = live([reply("reading", call("read_file", path="a.txt")), reply("it says alpha")])
    with Client(server.url) as client:
        session = client.create_session("demo").id
        events = list(client.send(session, "what is in a.txt?"))
        assert isinstance(events[0], Routed) and isinstance(events[1], RunStart)
        result = next(e for e in events if isinstance(e, ToolResultEvent))
        assert result.ok and result.name == "read_file"
        end = events[-1]
        assert isinstance(end, RunEnd) and end.status == "completed"
        assert client.get_run(end.run_id).status == "completed"
        detail = client.get_session(session)
        assert detail.messages[0].role == "user" and detail.title == "demo"
        assert session in [s.id for s in client.list_sessions()]


def test_errors_map_to_their_codes(live: LiveFactory) -> None:
    server = live()
    with Client(server.url) as client:
        with pytest.raises(NotFound, match="no session 'ses_nope'"):
            list(client.send("ses_nope", "hi"))
        with pytest.raises(NotFound) as missing:
            client.get_run("run_nope")
        assert missing.value.status == 404 and missing.value.code == "not_found"
        with pytest.raises(ValidationFailed):
            client.memory_search("x", limit=1000)
    with Client(f"http://127.0.0.1:{free_port()}") as nowhere, pytest.raises(ServiceUnavailable):
        nowhere.health()


def test_token_is_sent_and_a_wrong_one_is_unauthorized(live: LiveFactory) -> None:
    server = live(token=SecretStr("right-token"))
    with Client(server.url, token="right-token") as client:
        assert client.create_session().id.startswith("ses_")
    with Client(server.url, token="wrong") as client, pytest.raises(UnauthorizedError):
        client.list_sessions()


def test_memory_calls(live: LiveFactory) -> None:
    server = live()
    with Client(server.url) as client:
        fact = client.memory_add("Deploys go out on Tuesdays", kind="procedural")
        assert fact.kind == "procedural"
        assert client.memory_get(fact.id).node == "fact"
        assert client.memory_update(fact.id, confidence=0.5).confidence == 0.5
        hits = client.memory_search("Tuesdays", mode="keyword")
        assert [h.id for h in hits] == [fact.id] and hits[0].paths == ["keyword"]
        assert client.memory_health().counts["facts"] >= 1
        client.memory_delete(fact.id)
        with pytest.raises(NotFound):
            client.memory_get(fact.id)
        assert client.memory_expand("run_none:0:0") == []


async def test_async_client_cancels_and_continues(live: LiveFactory) -> None:
    server = live([ScriptedReply(text="z" * 400, delay=0.05), reply("picked up")])
    async with AsyncClient(server.url) as client:
        session = (await client.create_session()).id
        events: list[Event] = []
        async for event in client.send(session, "go"):
            events.append(event)
            if isinstance(event, RunStart):
                assert (await client.cancel(event.run_id)).run_id == event.run_id
        end = events[-1]
        assert isinstance(end, RunEnd) and end.status == "cancelled"
        with pytest.raises(Conflict):
            await client.cancel(end.run_id)
        again = [e async for e in client.send(session, "carry on", run_id=end.run_id)]
        first = again[0]
        assert isinstance(first, Routed) and first.decision == "continue"
        assert first.from_run_id == end.run_id
        assert isinstance(again[-1], RunEnd) and again[-1].status == "completed"


def test_json_form_through_the_client(live: LiveFactory) -> None:
    server = live([reply("plain")])
    with Client(server.url) as client:
        result = client.send_json(client.create_session().id, "hi")
        assert result.status == "completed" and result.text == "plain"


def test_closing_the_event_iterator_cancels_the_run(live: LiveFactory) -> None:
    server = live([ScriptedReply(text="w" * 400, delay=0.05)])
    with Client(server.url) as client:
        session = client.create_session().id
        stream = client.send(session, "go")
        run_id = next(e for e in stream if isinstance(e, RunStart)).run_id
        stream.close()
        done = threading.Event()
        for _ in range(200):
            if client.get_run(run_id).status != "running":
                done.set()
                break
            done.wait(0.05)
        assert client.get_run(run_id).status == "cancelled"
