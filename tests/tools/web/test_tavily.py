"""The Tavily provider against Tavily's wire format: a loopback server and httpx mocks."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator

import httpx
import pytest

from shiyi.tools.web import TavilyProvider, WebResult, WebSearchUnavailable
from tests.support.fake_tavily import FakeTavilyServer, TavilyStep


@pytest.fixture
def server() -> Iterator[FakeTavilyServer]:
    with FakeTavilyServer() as srv:
        yield srv


class Sleeps:
    """Records backoff delays instead of sleeping them."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def mocked(
    handler: Callable[[httpx.Request], httpx.Response], sleep: Sleeps | None = None
) -> TavilyProvider:
    transport = httpx.MockTransport(handler)
    return TavilyProvider("tvly-test", transport=transport, max_retries=2, sleep=sleep or Sleeps())


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_results_are_parsed_from_a_real_http_reply(server: FakeTavilyServer) -> None:
    server.enqueue(
        TavilyStep.results(
            {"title": "Python 3.13", "url": "https://python.org/3.13", "content": "Released.",
             "score": 0.9, "published_date": "2024-10-07"},
            {"title": "", "url": "https://docs.python.org", "content": "Docs", "score": 0.5},
            {"title": "no url", "content": "dropped: nothing to cite"},
            "not an object",
        )
    )  # fmt: skip
    provider = TavilyProvider("tvly-test", base_url=server.base_url, timeout=5)
    results = await provider.search("python 3.13 release", 4)
    assert results == [
        WebResult("Python 3.13", "https://python.org/3.13", "Released.", "2024-10-07"),
        WebResult("https://docs.python.org", "https://docs.python.org", "Docs", None),
    ]
    [request] = server.recorded
    assert request.path == "/search"
    assert request.headers["authorization"] == "Bearer tvly-test"
    assert request.body == {
        "query": "python 3.13 release", "max_results": 4, "search_depth": "basic"
    }  # fmt: skip


async def test_bad_key_says_so(server: FakeTavilyServer) -> None:
    server.enqueue(TavilyStep.error(401, "Unauthorized: missing or invalid API key."))
    provider = TavilyProvider("tvly-wrong", base_url=server.base_url, timeout=5)
    with pytest.raises(WebSearchUnavailable) as info:
        await provider.search("q", 3)
    assert str(info.value) == (
        "web search is not available: Tavily rejected the API key (HTTP 401: Unauthorized: "
        "missing or invalid API key.); check TAVILY_API_KEY or tools.web_search.api_key; "
        "answer from what you know or ask the user."
    )


async def test_rate_limit_is_retried_with_backoff_then_succeeds(
    server: FakeTavilyServer,
) -> None:
    server.enqueue(
        TavilyStep.error(429, "slow down", retry_after="3"),
        TavilyStep.error(429, "slow down"),
        TavilyStep.results({"title": "A", "url": "https://a.example", "content": "a"}),
    )
    sleeps = Sleeps()
    provider = TavilyProvider(
        "tvly-test", base_url=server.base_url, max_retries=2, retry_base_delay=0.5, sleep=sleeps
    )
    results = await provider.search("q", 3)
    assert [r.url for r in results] == ["https://a.example"]
    assert sleeps.delays == [3.0, 1.0]  # Retry-After first, then base x 2^attempt
    assert len(server.recorded) == 3


async def test_persistent_rate_limit_is_not_available_after_the_retries() -> None:
    calls: list[httpx.Request] = []

    def always_429(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(429, headers={"retry-after": "120"}, json={"detail": "busy"})

    sleeps = Sleeps()
    provider = mocked(always_429, sleeps)
    with pytest.raises(WebSearchUnavailable, match=r"rate limiting \(HTTP 429\).*2 retries"):
        await provider.search("q", 3)
    assert len(calls) == 3
    assert sleeps.delays == [10.0, 10.0]  # a long Retry-After is capped


async def test_timeout_is_not_available(server: FakeTavilyServer) -> None:
    server.enqueue(TavilyStep.results(delay=1.0))
    provider = TavilyProvider("tvly-test", base_url=server.base_url, timeout=0.2)
    with pytest.raises(WebSearchUnavailable, match=r"Tavily did not answer within 0\.2 s"):
        await provider.search("q", 3)


async def test_unreachable_api_is_not_available() -> None:
    provider = TavilyProvider("tvly-test", base_url=f"http://127.0.0.1:{closed_port()}")
    with pytest.raises(WebSearchUnavailable, match=r"cannot reach Tavily at http://127\.0\.0\.1"):
        await provider.search("q", 3)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"<html>Bad gateway</html>", r"malformed reply \(not JSON\): '<html>Bad gateway"),
        (b'{"query": "q"}', r"malformed reply \(no results list\)"),
        (b'["a", "b"]', r"malformed reply \(no results list\)"),
        (b'{"results": {"title": "x"}}', r"malformed reply \(no results list\)"),
    ],
)
async def test_malformed_replies_are_not_available(body: bytes, expected: str) -> None:
    provider = mocked(lambda request: httpx.Response(200, content=body))
    with pytest.raises(WebSearchUnavailable, match=expected):
        await provider.search("q", 3)


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (403, r"rejected the API key \(HTTP 403"),
        (432, r"plan's limit is reached \(HTTP 432: limit\)"),
        (500, r"Tavily answered HTTP 500: limit"),
    ],
)
async def test_other_errors_name_the_status(status: int, expected: str) -> None:
    provider = mocked(lambda request: httpx.Response(status, json={"detail": {"error": "limit"}}))
    with pytest.raises(WebSearchUnavailable, match=expected):
        await provider.search("q", 3)


async def test_empty_result_list_is_no_results_not_an_error() -> None:
    body = json.dumps({"query": "q", "results": []}).encode()
    provider = mocked(lambda request: httpx.Response(200, content=body))
    assert await provider.search("q", 3) == []
