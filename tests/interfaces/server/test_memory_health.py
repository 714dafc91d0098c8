"""``GET /v1/memory/health`` carries the lifecycle health report."""

from __future__ import annotations

from tests.interfaces.server.conftest import LiveFactory


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
