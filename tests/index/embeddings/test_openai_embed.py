"""OpenAIEmbedder against a minimal stdlib fake of ``POST /v1/embeddings``."""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from shiyi.errors import ConfigError, ModelError, ModelUnavailable
from shiyi.index.embeddings.openai_embed import OpenAIEmbedder
from shiyi.llm.retry import RetryPolicy
from shiyi.memory.protocol import Embedder


@dataclass
class FakeState:
    """Failures to serve first (status, headers), then successes of ``dimension`` floats."""

    dimension: int = 3
    failures: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    auth: list[str] = field(default_factory=list)


def _vector(text: str, dimension: int) -> list[float]:
    return [float(len(text) + 1), 2.0, 2.0][:dimension] + [0.0] * max(0, dimension - 3)


def _handler(state: FakeState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append(body)
            state.auth.append(self.headers.get("Authorization", ""))
            if self.path != "/v1/embeddings":
                return self._send(404, {"error": {"message": "no such route"}})
            if state.failures:
                status, headers = state.failures.pop(0)
                return self._send(status, {"error": {"message": "nope"}}, headers)
            data = [
                {"object": "embedding", "index": i, "embedding": _vector(t, state.dimension)}
                for i, t in enumerate(body["input"])
            ]
            data.reverse()  # the client must order by index, not by position
            usage = {"prompt_tokens": 1, "total_tokens": 1}
            self._send(
                200, {"object": "list", "data": data, "model": body["model"], "usage": usage}
            )

        def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            raw = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(raw)

    return Handler


@pytest.fixture
def state() -> FakeState:
    return FakeState()


@pytest.fixture
def base_url(state: FakeState) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def _embedder(
    base_url: str, sleeps: list[float], dimension: int = 3, attempts: int = 3
) -> OpenAIEmbedder:
    policy = RetryPolicy(max_attempts=attempts, base_delay=0.5, random=lambda: 1.0)
    return OpenAIEmbedder(
        base_url, "sk-test", "text-embed", dimension, retry=policy, sleep=sleeps.append
    )


def test_embeds_in_order_and_normalises(base_url: str, state: FakeState) -> None:
    sleeps: list[float] = []
    embedder = _embedder(base_url, sleeps)
    assert isinstance(embedder, Embedder)
    assert (embedder.model_id, embedder.dimension) == ("openai:text-embed", 3)
    vectors = embedder.embed(["a", "abc"])
    assert vectors[0] == pytest.approx([2 / math.sqrt(12), 2 / math.sqrt(12), 2 / math.sqrt(12)])
    assert vectors[1] == pytest.approx([x / math.sqrt(24) for x in (4, 2, 2)])
    assert state.requests == [
        {"model": "text-embed", "input": ["a", "abc"], "encoding_format": "float"}
    ]
    assert state.auth == ["Bearer sk-test"]
    assert sleeps == []


def test_batches_of_128(base_url: str, state: FakeState) -> None:
    texts = [f"t{i}" for i in range(300)]
    vectors = _embedder(base_url, []).embed(texts)
    assert len(vectors) == 300
    assert [len(r["input"]) for r in state.requests] == [128, 128, 44]
    assert vectors[299] == pytest.approx(_embedder(base_url, []).embed(["t299"])[0])


def test_empty_input_makes_no_request(base_url: str, state: FakeState) -> None:
    assert _embedder(base_url, []).embed([]) == []
    assert state.requests == []


def test_rate_limit_honours_retry_after(base_url: str, state: FakeState) -> None:
    state.failures = [(429, {"Retry-After": "7"}), (503, {})]
    sleeps: list[float] = []
    assert len(_embedder(base_url, sleeps).embed(["x"])) == 1
    assert sleeps == [7.0, 1.0]  # server hint, then full-jitter backoff 0.5 * 2
    assert len(state.requests) == 3


def test_gives_up_after_max_attempts(base_url: str, state: FakeState) -> None:
    state.failures = [(500, {})] * 5
    sleeps: list[float] = []
    with pytest.raises(ModelError, match="HTTP 500") as info:
        _embedder(base_url, sleeps, attempts=3).embed(["x"])
    assert info.value.retryable
    assert info.value.status == 500
    assert len(state.requests) == 3
    assert len(sleeps) == 2


def test_auth_failure_is_not_retried(base_url: str, state: FakeState) -> None:
    state.failures = [(401, {})]
    with pytest.raises(ModelUnavailable, match="API key"):
        _embedder(base_url, []).embed(["x"])
    assert len(state.requests) == 1


def test_bad_request_is_not_retried(base_url: str, state: FakeState) -> None:
    state.failures = [(400, {})]
    with pytest.raises(ModelError, match="HTTP 400") as info:
        _embedder(base_url, []).embed(["x"])
    assert not info.value.retryable
    assert len(state.requests) == 1


def test_dimension_mismatch_is_a_clear_error(base_url: str, state: FakeState) -> None:
    state.dimension = 5
    with pytest.raises(
        ConfigError, match=r"returns 5-dimensional vectors.*configured dimension is 3"
    ):
        _embedder(base_url, [], dimension=3).embed(["x"])


def test_unreachable_server_is_retryable_model_error() -> None:
    sleeps: list[float] = []
    embedder = _embedder("http://127.0.0.1:9/v1", sleeps, attempts=2)
    with pytest.raises(ModelError, match="unreachable") as info:
        embedder.embed(["x"])
    assert info.value.retryable
    assert len(sleeps) == 1


def test_rejects_nonpositive_dimension() -> None:
    with pytest.raises(ConfigError):
        OpenAIEmbedder(None, None, "m", 0)
