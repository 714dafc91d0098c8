"""Runs over HTTP: SSE event order, JSON form, injection, cancel and client disconnect."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from shiyi.config import Settings
from shiyi.interfaces.server import AgentService
from shiyi.llm.scripted import ScriptedModel, ScriptedReply, call, reply
from tests.interfaces.server.conftest import (
    LiveFactory,
    read_sse,
    server_settings,
    stream_events,
)
from tests.support.requests import user_words


def test_tool_run_streams_events_in_order(live: LiveFactory, workspace: Path) -> None:
    (workspace / "a.txt").write_text("hello from a\n")
    server = live([reply("reading", call("read_file", path="a.txt")), reply("it says hello")])
    session = server.session()
    events = stream_events(server.client, session, "what is in a.txt?")
    kinds = [kind for kind, _ in events]
    assert kinds[:3] == ["routed", "run_start", "response_start"]
    assert events[0][1]["decision"] == "new" and events[0][1]["run_id"] == events[1][1]["run_id"]
    assert kinds.index("tool_call") < kinds.index("tool_result") < kinds.index("run_end")
    assert kinds[-1] == "run_end"
    assert events[-1][1]["status"] == "completed"
    result = next(data for kind, data in events if kind == "tool_result")
    assert result["ok"] is True and result["name"] == "read_file"
    run_id = events[1][1]["run_id"]
    assert server.client.get(f"/v1/runs/{run_id}").json()["status"] == "completed"
    detail = server.client.get(f"/v1/sessions/{session}").json()
    assert detail["messages"][0]["role"] == "user"
    assert detail["runs"][0]["run_id"] == run_id
    offered = server.model.requests[0].tool_names
    assert "bash" not in offered and {"read_file", "remember", "create_plan"} <= set(offered)


def test_json_form(live: LiveFactory) -> None:
    server = live([reply("plain answer"), reply("second")])
    session = server.session()
    response = server.client.post(
        f"/v1/sessions/{session}/messages", params={"stream": "false"}, json={"text": "hi"}
    )
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "completed" and body["text"] == "plain answer"
    assert [e["type"] for e in body["events"][:2]] == ["routed", "run_start"]
    by_accept = server.client.post(
        f"/v1/sessions/{session}/messages",
        headers={"accept": "application/json"},
        json={"text": "again"},
    )
    assert by_accept.status_code == 200 and by_accept.json()["text"] == "second"


def test_message_joins_the_running_run(live: LiveFactory, workspace: Path) -> None:
    (workspace / "a.txt").write_text("x\n")
    slow = ScriptedReply(
        text="working on it slowly", tool_calls=(call("read_file", path="a.txt"),), delay=0.05
    )
    server = live([slow, reply("done")])
    session = server.session()
    first: list[tuple[str, dict[str, object]]] = []

    def consume() -> None:
        first.extend(stream_events(server.client, session, "start"))

    thread = threading.Thread(target=consume)
    thread.start()
    _wait_for_active(server)
    second = stream_events(server.client, session, "also mention cats")
    thread.join(20)
    assert [kind for kind, _ in second] == ["routed", "user_message"]
    assert second[0][1]["decision"] == "join" and second[0][1]["run_id"] == first[1][1]["run_id"]
    kinds = [kind for kind, _ in first]
    assert "user_message" in kinds and first[-1][1]["status"] == "completed"
    last_request = server.model.requests[-1]
    said = [user_words(m) for m in last_request.messages if m.role == "user"]
    assert "also mention cats" in said


def test_cancel_endpoint_ends_the_run(live: LiveFactory) -> None:
    server = live([ScriptedReply(text="x" * 400, delay=0.05)])
    session = server.session()
    with server.client.stream(
        "POST", f"/v1/sessions/{session}/messages", json={"text": "go"}
    ) as response:
        events = read_sse(response.iter_lines())
        assert next(events)[0] == "routed"
        kind, start = next(events)
        assert kind == "run_start"
        cancelled = server.client.post(f"/v1/runs/{start['run_id']}/cancel")
        assert cancelled.status_code == 200
        rest = list(events)
    assert rest[-1][0] == "run_end" and rest[-1][1]["status"] == "cancelled"
    again = server.client.post(f"/v1/runs/{start['run_id']}/cancel")
    assert again.status_code == 409 and again.json()["error"]["code"] == "conflict"


def test_client_disconnect_cancels_the_run(live: LiveFactory) -> None:
    server = live([ScriptedReply(text="y" * 400, delay=0.05)])
    session = server.session()
    with server.client.stream(
        "POST", f"/v1/sessions/{session}/messages", json={"text": "go"}
    ) as response:
        events = read_sse(response.iter_lines())
        assert next(events)[0] == "routed"
        kind, start = next(events)
        assert kind == "run_start"
    run_id = start["run_id"]
    deadline = time.monotonic() + 10
    status = ""
    while time.monotonic() < deadline:
        status = server.client.get(f"/v1/runs/{run_id}").json()["status"]
        if status != "running":
            break
        time.sleep(0.05)
    assert status == "cancelled"
    assert server.service.active_run_ids() == []


def test_unknown_runs_and_sessions_are_404(live: LiveFactory) -> None:
    server = live()
    assert server.client.get("/v1/runs/run_nope").json()["error"]["code"] == "not_found"
    missing = server.client.post("/v1/sessions/ses_nope/messages", json={"text": "x"})
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "not_found"


def _wait_for_active(server: object) -> None:
    deadline = time.monotonic() + 10
    while not server.service.active_run_ids():  # type: ignore[attr-defined]
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_a_served_process_freezes_its_start_up_objects(settings: Settings) -> None:
    """``shiyi serve`` exempts start-up objects from GC (a full collection stalled the first
    burst by 161 ms); a service inside someone else's process leaves their GC alone."""
    import gc

    gc.unfreeze()
    host_service = AgentService(server_settings(settings, memory=False), model=ScriptedModel([]))
    host_service.start()
    try:
        assert gc.get_freeze_count() == 0
    finally:
        host_service.close()
    owned = AgentService(
        server_settings(settings, memory=False), model=ScriptedModel([]), freeze_gc=True
    )
    owned.start()
    try:
        assert gc.get_freeze_count() > 1000
    finally:
        owned.close()
        gc.unfreeze()
