"""A real uvicorn server on a free loopback port, in a background thread."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import uvicorn

from shiyi.config import Settings
from shiyi.interfaces.server import AgentService, create_app
from shiyi.llm.scripted import ScriptedModel, ScriptStep


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_settings(settings: Settings, *, memory: bool = True, **server: Any) -> Settings:
    port = server.pop("port", free_port())
    return settings.model_copy(
        update={
            "memory": settings.memory.model_copy(update={"embedder": "none", "enabled": memory}),
            "server": settings.server.model_copy(update={"port": port, **server}),
        }
    )


@dataclass
class Live:
    url: str
    service: AgentService
    model: ScriptedModel
    client: httpx.Client

    def session(self) -> str:
        response = self.client.post("/v1/sessions", json={"title": "t"})
        assert response.status_code == 201, response.text
        return str(response.json()["id"])


@contextmanager
def running(service: AgentService, port: int) -> Iterator[str]:
    config = uvicorn.Config(
        create_app(service), host="127.0.0.1", port=port, log_level="warning", lifespan="on"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "server did not start"
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


LiveFactory = Callable[..., Live]


@pytest.fixture
def live(settings: Settings) -> Iterator[LiveFactory]:
    stack: list[Any] = []

    def start(
        script: Iterable[ScriptStep] = (),
        *,
        headers: dict[str, str] | None = None,
        repeat_last: bool = False,
        memory: bool = True,
        **server: Any,
    ) -> Live:
        effective = server_settings(settings, memory=memory, **server)
        model = ScriptedModel(script, repeat_last=repeat_last)
        service = AgentService(effective, model=model)
        context = running(service, effective.server.port)
        url = context.__enter__()
        stack.append(context)
        client = httpx.Client(base_url=url, headers=headers or {}, timeout=20)
        stack.append(client)
        return Live(url, service, model, client)

    yield start
    for item in reversed(stack):
        if isinstance(item, httpx.Client):
            item.close()
        else:
            item.__exit__(None, None, None)


def read_sse(lines: Iterable[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(event type, data) pairs from an SSE line stream."""
    kind = ""
    for line in lines:
        if line.startswith("event: "):
            kind = line[len("event: ") :]
        elif line.startswith("data: "):
            yield kind, json.loads(line[len("data: ") :])


def stream_events(
    client: httpx.Client, session_id: str, text: str, **body: Any
) -> list[tuple[str, dict[str, Any]]]:
    with client.stream(
        "POST", f"/v1/sessions/{session_id}/messages", json={"text": text, **body}
    ) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        return list(read_sse(response.iter_lines()))
