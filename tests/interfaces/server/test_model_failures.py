"""A model endpoint that never finishes, or answers nothing, through a real server: the run
ends with a clear provider error event, not a stream that runs forever or an internal error.
The model is the real OpenAI-compatible client against the local fake server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from shiyi.config import Settings
from shiyi.interfaces.server import AgentService
from shiyi.llm.openai.model import OpenAICompatModel
from tests.interfaces.server.conftest import running, server_settings, stream_events
from tests.support.fake_openai import FakeOpenAIServer, FakeReply


@pytest.fixture
def served(settings: Settings) -> Iterator[tuple[FakeOpenAIServer, httpx.Client]]:
    with FakeOpenAIServer() as fake:
        model = OpenAICompatModel(
            fake.model_settings(timeout=5.0, deadline=1.0, max_retries=1), role="main"
        )
        effective = server_settings(settings, memory=False)
        service = AgentService(effective, model=model)
        with (
            running(service, effective.server.port) as url,
            httpx.Client(base_url=url, timeout=30) as client,
        ):
            yield fake, client


def run(client: httpx.Client, text: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    session = client.post("/v1/sessions", json={}).json()["id"]
    events = stream_events(client, session, text)
    errors = [data for kind, data in events if kind == "error"]
    [end] = [data for kind, data in events if kind == "run_end"]
    return errors, end


def test_a_trickling_model_ends_the_run_at_the_deadline(
    served: tuple[FakeOpenAIServer, httpx.Client],
) -> None:
    fake, client = served
    fake.enqueue(FakeReply("slow " * 200, chunk_size=1, delay=0.05))
    errors, end = run(client, "say something long")
    assert end["status"] == "failed"
    [error] = errors
    assert "did not finish its reply within 1s (models.main.deadline)" in error["message"]
    assert end["detail"] == error["message"]


def test_a_model_that_closes_with_no_data_is_a_provider_error(
    served: tuple[FakeOpenAIServer, httpx.Client],
) -> None:
    fake, client = served
    fake.enqueue(*[FakeReply(empty=True)] * 3)  # streamed, then whole replies (1 retry)
    errors, end = run(client, "hello")
    assert end["status"] == "failed"
    [error] = errors
    assert "internal error" not in error["message"] and "AttributeError" not in error["message"]
    assert f"model endpoint {fake.base_url} sent no reply after 2 attempts" in error["message"]
    assert "empty body instead of a chat completion" in error["message"]
