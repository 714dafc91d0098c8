"""``GET /v1/memory/health`` carries the lifecycle health report."""

from __future__ import annotations

import time
from typing import Any

import httpx

from tests.interfaces.server.conftest import LiveFactory, stream_events
from tests.interfaces.server.two_users import (
    A_TOKEN,
    B_TOKEN,
    MARK_A,
    brain,
    client_for,
    remembered_event,
    users,
)


def test_memory_health_reports_facts_by_kind_and_status(live: LiveFactory) -> None:
    server = live()
    memory = server.service.memory
    assert memory is not None
    memory.remember("The VPN config lives in ops/vpn.conf", kind="convention")
    body = server.client.get("/v1/memory/health").json()
    assert body["enabled"] is True and "pending_jobs" in body["counts"]
    detail = body["detail"]
    assert detail["facts"] == 1
    assert detail["by_kind"] == {"convention": 1}
    assert detail["by_status"] == {"active": 1}
    assert detail["active_confidence"] == 1.0
    assert detail["jobs_failed"] == 0


def test_memory_health_reports_each_caches_hit_rate(live: LiveFactory) -> None:
    """The same search twice over HTTP: the second is a result-cache hit, and the health
    answer counts it (the counters are the process's, so compare before and after)."""
    server = live()
    memory = server.service.memory
    assert memory is not None
    memory.remember("The VPN config lives in ops/vpn.conf", kind="convention")

    def caches() -> dict[str, dict[str, object]]:
        detail = server.client.get("/v1/memory/health").json()["detail"]
        return {rate["name"]: rate for rate in detail["caches"]}

    before = caches()
    assert set(before) == {"retrieval results", "embeddings", "summaries", "system prompt"}
    for _ in range(2):
        found = server.client.get("/v1/memory/search", params={"q": "vpn config"})
        assert "ops/vpn.conf" in found.json()["hits"][0]["text"]
    after = caches()["retrieval results"]
    assert after["hits"] == before["retrieval results"]["hits"] + 1
    assert after["misses"] == before["retrieval results"]["misses"] + 1
    assert 0 < after["rate"] <= 1  # type: ignore[operator]


def test_a_forget_over_http_leaves_no_cached_hit(live: LiveFactory) -> None:
    """The page's delete between two identical searches: the second never shows it."""
    server = live()
    memory = server.service.memory
    assert memory is not None
    fact = memory.remember("The locker code is okapi-9043", kind="semantic")

    def texts() -> list[str]:
        found = server.client.get("/v1/memory/search", params={"q": "locker code okapi"})
        return [hit["text"] for hit in found.json()["hits"]]

    assert any("okapi-9043" in text for text in texts())
    assert any("okapi-9043" in text for text in texts())  # now answered from the cache
    assert server.client.delete(f"/v1/memory/{fact.id}").status_code == 200
    assert not any("okapi-9043" in text for text in texts())


def test_health_counts_only_what_the_caller_may_read(live: LiveFactory) -> None:
    """Issue 29: store-wide counts let user B watch user A's activity."""
    server = live([brain], repeat_last=True, users=users())
    with client_for(server, A_TOKEN) as a, client_for(server, B_TOKEN) as b:

        def health(client: httpx.Client) -> dict[str, Any]:
            body: dict[str, Any] = client.get("/v1/memory/health").json()
            return body

        before = health(b)
        session = a.post("/v1/sessions", json={"title": "t"}).json()["id"]
        stream_events(a, session, f"Yesterday I met Thorvaldsen about {MARK_A}")
        assert a.post("/v1/memory", json={"text": f"my code is {MARK_A}"}).status_code == 201
        remembered_event(a, MARK_A)
        deadline = time.monotonic() + 30
        while a.get("/v1/memory/entities/thorvaldsen").status_code != 200:
            assert time.monotonic() < deadline, "A's turn never linked its entity"
            time.sleep(0.1)
        mine = health(a)
        assert mine["counts"]["events"] >= 1 and mine["detail"]["facts"] >= 1
        assert mine["sessions"] == 1 and mine["detail"]["entities"] >= 1
        after = health(b)
        assert after == before  # nothing of A's: not a count, not a session
        assert after["detail"]["events"] == after["detail"]["facts"] == 0
        assert "pending_jobs" not in after["counts"]  # the queue is everyone's: operator only
