"""Tavily (https://tavily.com): a search API for agents, one JSON POST per query."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from shiyi.errors import WebSearchUnavailable
from shiyi.tools.web.types import WebResult

DEFAULT_BASE_URL = "https://api.tavily.com"
MAX_RETRY_DELAY = 10.0  # a longer Retry-After is not worth holding the model's turn for
_DETAIL_CHARS = 200


class TavilyProvider:
    """Searches with Tavily's ``POST /search``.

    ``transport`` and ``base_url`` are the seam for tests: an ``httpx.MockTransport`` or a
    loopback server speaking Tavily's format stands in for the real API.
    """

    def __init__(
        self,
        api_key: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        timeout: float = 8.0,
        max_retries: int = 2,
        retry_base_delay: float = 1.0,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.api_key = api_key
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.max_retries = max_retries
        self.retry_base_delay = retry_base_delay
        self._transport = transport
        self._sleep = sleep

    @property
    def name(self) -> str:
        return "tavily"

    async def search(self, query: str, max_results: int) -> list[WebResult]:
        body = {"query": query, "max_results": max_results, "search_depth": "basic"}
        headers = {"Authorization": f"Bearer {self.api_key}"}
        async with httpx.AsyncClient(
            base_url=self.base_url, timeout=self.timeout, transport=self._transport
        ) as client:
            for attempt in range(self.max_retries + 1):
                response = await self._post(client, body, headers)
                if response.status_code != 429 or attempt == self.max_retries:
                    break
                await self._sleep(self._backoff(attempt, response))
        return parse_response(response, retries=self.max_retries)

    async def _post(
        self, client: httpx.AsyncClient, body: dict[str, Any], headers: dict[str, str]
    ) -> httpx.Response:
        try:
            return await client.post("/search", json=body, headers=headers)
        except httpx.TimeoutException:
            raise WebSearchUnavailable(f"Tavily did not answer within {self.timeout:g} s") from None
        except httpx.HTTPError as exc:  # DNS, refused connection, TLS: the network is missing
            raise WebSearchUnavailable(
                f"cannot reach Tavily at {self.base_url} ({type(exc).__name__}: {exc})"
            ) from None

    def _backoff(self, attempt: int, response: httpx.Response) -> float:
        """Seconds before retry ``attempt + 1``: the server's Retry-After, else doubling."""
        try:
            asked = float(response.headers.get("retry-after", ""))
        except ValueError:
            asked = self.retry_base_delay * 2**attempt
        return min(max(asked, 0.0), MAX_RETRY_DELAY)


def parse_response(response: httpx.Response, *, retries: int = 0) -> list[WebResult]:
    """Results from a Tavily reply; every failure becomes :class:`WebSearchUnavailable`."""
    _check_status(response, retries)
    try:
        data = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise WebSearchUnavailable(
            f"Tavily sent a malformed reply (not JSON): {_excerpt(response.text)!r}"
        ) from None
    items = data.get("results") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise WebSearchUnavailable("Tavily sent a malformed reply (no results list)")
    return [result for item in items if (result := _result(item)) is not None]


def _check_status(response: httpx.Response, retries: int) -> None:
    status = response.status_code
    if status < 400:
        return
    detail = _error_detail(response)
    if status in (401, 403):
        raise WebSearchUnavailable(
            f"Tavily rejected the API key (HTTP {status}: {detail}); check TAVILY_API_KEY "
            "or tools.web_search.api_key"
        )
    if status == 429:
        raise WebSearchUnavailable(
            f"Tavily is rate limiting (HTTP 429) and still was after {retries} retries"
        )
    if status in (432, 433):  # Tavily's codes for an exhausted plan or pay-as-you-go limit
        raise WebSearchUnavailable(f"the Tavily plan's limit is reached (HTTP {status}: {detail})")
    raise WebSearchUnavailable(f"Tavily answered HTTP {status}: {detail}")


def _error_detail(response: httpx.Response) -> str:
    """Tavily's own words (``{"detail": {"error": ...}}``) or the start of the body."""
    try:
        data = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return _excerpt(response.text) or response.reason_phrase
    detail = data.get("detail") if isinstance(data, dict) else None
    if isinstance(detail, dict) and isinstance(detail.get("error"), str):
        return _excerpt(detail["error"])
    return _excerpt(detail if isinstance(detail, str) else json.dumps(data))


def _result(item: object) -> WebResult | None:
    """One result, or ``None`` for an entry without a URL (nothing to cite)."""
    if not isinstance(item, dict):
        return None
    url = item.get("url")
    if not isinstance(url, str) or not url:
        return None
    title = item.get("title")
    snippet = item.get("content")
    published = item.get("published_date")
    return WebResult(
        title=title if isinstance(title, str) and title else url,
        url=url,
        snippet=snippet if isinstance(snippet, str) else "",
        published=published if isinstance(published, str) and published else None,
    )


def _excerpt(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _DETAIL_CHARS else flat[: _DETAIL_CHARS - 1] + "…"
