"""Two users on one real server: the ids an import supplies never take, shadow or delete the
other user's records (issue 29, item 3)."""

from __future__ import annotations

from typing import Any

import httpx

from tests.interfaces.server.conftest import LiveFactory, stream_events
from tests.interfaces.server.test_scopes import wait_for_turn
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


def turns(ids: list[str], said: str) -> list[dict[str, Any]]:
    return [
        {"id": i, "run": "day-1", "ts": 1_700_000_000 + n, "role": "bob", "content": f"{said} {n}"}
        for n, i in enumerate(ids)
    ]


def imported(b: httpx.Client, session: str, ids: list[str], said: str) -> list[str]:
    """B imports turns under ``ids``; returns the ids they were stored under (once stored)."""
    got = b.post("/v1/memory/import", json={"session_id": session, "turns": turns(ids, said)})
    assert got.status_code == 200, got.text
    tag = got.json()["session_id"].removeprefix(session)
    stored = [i + tag for i in ids]
    for i in stored:  # none is dropped: each is B's, under its id or B's tag
        assert wait_for_turn(b, i)["session_id"] == session + tag
    return stored


def test_an_import_cannot_take_the_ids_of_anothers_next_messages(live: LiveFactory) -> None:
    """B learns how turn ids are made from one of B's own, imports turns under the ids the
    next logged messages will get, and A's next message is still remembered."""
    server = live([brain], repeat_last=True, users=users())
    with client_for(server, A_TOKEN) as a, client_for(server, B_TOKEN) as b:
        own = b.post("/v1/sessions", json={}).json()["id"]
        stream_events(b, own, f"hello {MARK_B}")
        prefix, row, _ = remembered_event(b, MARK_B).rsplit("_", 2)
        # Row + 1 is B's own reply; A's message comes next.
        squat = [f"{prefix}_{int(row) + k}_{s}" for k in range(2, 9) for s in range(2)]
        stored = imported(b, "squat", squat, "squatted")

        session = a.post("/v1/sessions", json={}).json()["id"]
        stream_events(a, session, f"my locker code is {MARK_A}")
        event = remembered_event(a, MARK_A)  # A's message reached A's memory
        assert event not in stored
        assert a.get(f"/v1/memory/{event}").json()["content"].endswith(MARK_A)
        assert not set(stored) & set(squat)  # an internal id's shape is never used as is


def test_an_import_under_anothers_fact_id_leaves_the_fact_alone(live: LiveFactory) -> None:
    server = live([brain], repeat_last=True, users=users())
    with client_for(server, A_TOKEN) as a, client_for(server, B_TOKEN) as b:
        made = a.post("/v1/memory", json={"text": f"Alice's locker code is {MARK_A}"})
        assert made.status_code == 201, made.text
        fact = made.json()["id"]
        [stored] = imported(b, "conv-9", [fact], f"bob {MARK_B}")

        def alices_fact() -> None:
            got = a.get(f"/v1/memory/{fact}")
            assert got.status_code == 200, got.text
            assert got.json()["node"] == "fact" and MARK_A in got.text
            hits = a.get("/v1/memory/search", params={"q": MARK_A, "mode": "keyword"}).json()
            assert fact in [h["id"] for h in hits["hits"]]

        alices_fact()
        assert b.delete(f"/v1/memory/{stored}").status_code == 200
        alices_fact()
        assert stored != fact and b.get(f"/v1/memory/{fact}").status_code == 404


def test_a_message_cannot_name_its_run_after_an_imported_one(live: LiveFactory) -> None:
    """Imported runs are named `<session>:<run>`: a run a caller names cannot share one, so
    B's turns never join A's imported run."""
    server = live([brain], repeat_last=True, users=users())
    with client_for(server, A_TOKEN) as a, client_for(server, B_TOKEN) as b:
        got = a.post("/v1/memory/import", json={"session_id": "trip", "turns": turns(["t1"], "x")})
        assert got.status_code == 200, got.text
        session = b.post("/v1/sessions", json={}).json()["id"]
        for run_id in ("trip:day-1", "trip~1a2b3c4d:day-1"):
            sent = b.post(
                f"/v1/sessions/{session}/messages",
                params={"stream": "false"},
                json={"text": f"hi {MARK_B}", "run_id": run_id},
            )
            assert sent.status_code == 422, sent.text
            assert "run_id" in sent.text
        named = b.post(
            f"/v1/sessions/{session}/messages",
            params={"stream": "false"},
            json={"text": f"hi {MARK_B}", "run_id": "my-run-1"},
        )
        assert named.status_code == 200, named.text
        assert named.json()["events"][0]["run_id"] == "my-run-1"
