"""Two users of one real server: their tokens, markers, scripted model and client helpers."""

from __future__ import annotations

import time

import httpx
from pydantic import SecretStr

from shiyi.config.server_settings import ServerUser
from shiyi.llm.scripted import ScriptedReply, ScriptedRequest, call, reply
from tests.interfaces.server.conftest import Live

A_TOKEN, B_TOKEN = "token-of-alice", "token-of-bob"
MARK_A = "zebra4711quokka"
"""In every record of user A; must never reach user B."""
MARK_B = "kiwi0815narwhal"


def brain(request: ScriptedRequest) -> ScriptedReply:
    """The scripted model: asked to recall, it searches memory for A's marker."""
    last = request.last
    if last.role == "user" and "recall" in last.content:
        return reply("", call("query_memory", query=MARK_A))
    return reply("ok")


def users() -> list[ServerUser]:
    return [
        ServerUser(token=SecretStr(A_TOKEN), user_id="alice"),
        ServerUser(token=SecretStr(B_TOKEN), user_id="bob"),
    ]


def client_for(server: Live, token: str) -> httpx.Client:
    return httpx.Client(
        base_url=server.url, headers={"authorization": f"Bearer {token}"}, timeout=20
    )


def remembered_event(client: httpx.Client, word: str) -> str:
    """The id of a remembered turn holding ``word``, once the worker has stored it."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        hits = client.get("/v1/memory/search", params={"q": word, "mode": "keyword"}).json()
        events = [h["id"] for h in hits["hits"] if h["node"] == "event"]
        if events:
            return str(events[0])
        time.sleep(0.05)
    raise AssertionError(f"no remembered turn holds {word!r}")
