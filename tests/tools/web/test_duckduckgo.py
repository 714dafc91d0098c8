"""The keyless ddgs provider: a real call with the network shut off, and result mapping."""

from __future__ import annotations

import socket
import sys
import time
from typing import Any

import pytest

from shiyi.tools.web import DuckDuckGoProvider, WebResult, WebSearchUnavailable
from shiyi.tools.web.duckduckgo import ddgs_installed


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Route ddgs through a closed loopback port: offline even on a machine with network."""
    monkeypatch.setenv("DDGS_PROXY", f"http://127.0.0.1:{closed_port()}")


def replying(*items: dict[str, Any]) -> Any:
    def text_search(query: str, max_results: int, timeout: float) -> list[dict[str, Any]]:
        return list(items)

    return text_search


def raising(error: Exception) -> Any:
    def text_search(query: str, max_results: int, timeout: float) -> list[dict[str, Any]]:
        raise error

    return text_search


@pytest.mark.skipif(not ddgs_installed(), reason="the ddgs package is not installed")
@pytest.mark.usefixtures("no_network")
async def test_real_ddgs_offline_is_a_quick_not_available() -> None:
    started = time.perf_counter()
    with pytest.raises(WebSearchUnavailable) as info:
        await DuckDuckGoProvider(timeout=2).search("python asyncio tutorial", 3)
    assert time.perf_counter() - started < 10
    assert str(info.value) == (
        "web search is not available: no network connection (ddgs could not reach any search "
        "engine: the connection was refused); answer from what you know or ask the user."
    )


async def test_missing_package_says_install_ddgs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ddgs", None)  # makes `import ddgs` fail
    with pytest.raises(WebSearchUnavailable, match=r"ddgs package is not installed \(install"):
        await DuckDuckGoProvider().search("q", 3)


async def test_hits_are_mapped_and_entries_without_url_dropped() -> None:
    provider = DuckDuckGoProvider(
        text_search=replying(
            {"title": "Asyncio", "href": "https://docs.python.org/asyncio", "body": "Docs."},
            {"title": "News", "url": "https://news.example/a", "body": "B", "date": "2025-01-02"},
            {"title": "no link", "body": "dropped"},
        )
    )
    assert await provider.search("asyncio", 5) == [
        WebResult("Asyncio", "https://docs.python.org/asyncio", "Docs.", None),
        WebResult("News", "https://news.example/a", "B", "2025-01-02"),
    ]


async def test_no_results_is_an_empty_list() -> None:
    provider = DuckDuckGoProvider(text_search=raising(RuntimeError("No results found.")))
    assert await provider.search("zzqx", 5) == []


class RatelimitException(Exception):
    """Named like ddgs' own: the provider recognises it by name, without importing ddgs."""


class TimeoutException(Exception):
    pass


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (RatelimitException("202 Ratelimit"), r"rate limiting ddgs; wait a minute"),
        (TimeoutException("read timed out"), r"did not answer in time \(ddgs timed out\)"),
        (RuntimeError("DNSError: no records found"), r"no network connection .*DNS lookup failed"),
        (ValueError("unexpected page layout"), r"ddgs failed \(ValueError: unexpected page"),
    ],
)
async def test_failures_are_not_available(error: Exception, expected: str) -> None:
    with pytest.raises(WebSearchUnavailable, match=expected):
        await DuckDuckGoProvider(text_search=raising(error)).search("q", 3)
