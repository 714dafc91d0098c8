"""A huge unspaced message over a real server (issue 29): a 120k-character base64 blob in one
user's turn stalled the memory worker for minutes (quadratic entity patterns, holding the
interpreter lock), so every other user's next turn waited that long to become searchable.
Now the turn is stored, its entities linked and the next user's turn searchable at once."""

from __future__ import annotations

import base64
import random
import time

from tests.interfaces.server.conftest import LiveFactory, stream_events
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


def blob(size: int) -> str:
    """URL-safe base64: one run of word characters and "-", no "/" or "+" to break it."""
    raw = base64.urlsafe_b64encode(random.Random(size).randbytes(size)).decode()
    return raw[:size]


def test_a_blob_in_one_turn_does_not_hold_up_anyone_elses(live: LiveFactory) -> None:
    server = live([brain], repeat_last=True, users=users())
    with client_for(server, A_TOKEN) as a, client_for(server, B_TOKEN) as b:
        session_a = a.post("/v1/sessions", json={"title": "paste"}).json()["id"]
        stream_events(a, session_a, f"Yesterday I met Thorvaldsen about {MARK_A}: {blob(120_000)}")
        assert remembered_event(a, MARK_A)
        # The turn's entities are linked (the old patterns needed minutes on the blob, holding
        # the worker and the interpreter lock all along).
        deadline = time.monotonic() + 30
        while a.get("/v1/memory/entities/thorvaldsen").status_code != 200:
            assert time.monotonic() < deadline, "the blob's turn never got its entities linked"
            time.sleep(0.1)
        session_b = b.post("/v1/sessions", json={"title": "note"}).json()["id"]
        stream_events(b, session_b, f"remember {MARK_B} please")
        assert remembered_event(b, MARK_B)  # within remembered_event's 20 s


def test_an_unbroken_chinese_paste_does_not_hold_up_anyone_elses(live: LiveFactory) -> None:
    # 100,000 characters without punctuation, of one character jieba pairs with itself
    # ("上上"): jieba's time grew with the square of such a run (40 s for this one, in the
    # reply path's search and again in the worker) until runs were cut into pieces
    paste = "上" * 100_000
    server = live([brain], repeat_last=True, users=users())
    with client_for(server, A_TOKEN) as a, client_for(server, B_TOKEN) as b:
        session_a = a.post("/v1/sessions", json={"title": "paste"}).json()["id"]
        stream_events(a, session_a, f"昨天我见了老王，{MARK_A}：{paste}")
        assert remembered_event(a, MARK_A)
        session_b = b.post("/v1/sessions", json={"title": "note"}).json()["id"]
        stream_events(b, session_b, f"remember {MARK_B} please")
        assert remembered_event(b, MARK_B)  # within remembered_event's 20 s
