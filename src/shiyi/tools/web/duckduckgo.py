"""Keyless search through the ``ddgs`` metasearch package (DuckDuckGo and friends)."""

from __future__ import annotations

import asyncio
import importlib.util
import math
from collections.abc import Callable
from typing import Any

from shiyi.errors import WebSearchUnavailable
from shiyi.tools.web.types import WebResult

_NO_RESULTS = "No results found."  # what ddgs raises with when every engine came back empty
_REASON_CHARS = 200
_OFFLINE_MARKERS = ("dns", "connect", "resolv", "network", "unreachable", "sending request")

TextSearch = Callable[[str, int, float], list[dict[str, Any]]]


class DuckDuckGoProvider:
    """Runs ``ddgs``' blocking text search in a worker thread.

    ``ddgs`` is imported only when a search runs, so a missing package is a clear
    "install ddgs" result rather than an import error at start-up. ``text_search`` replaces
    the call into ``ddgs`` (tests).
    """

    def __init__(self, *, timeout: float = 8.0, text_search: TextSearch | None = None) -> None:
        self.timeout = timeout
        self._text_search = text_search or _ddgs_text

    @property
    def name(self) -> str:
        return "ddgs"

    async def search(self, query: str, max_results: int) -> list[WebResult]:
        try:
            raw = await asyncio.to_thread(self._text_search, query, max_results, self.timeout)
        except WebSearchUnavailable:
            raise
        except Exception as exc:  # ddgs wraps engine failures in its own exception types
            found_nothing = _NO_RESULTS in str(exc) and not _looks_offline(str(exc))
            if found_nothing:
                return []
            raise WebSearchUnavailable(_reason(exc)) from None
        return [result for item in raw if (result := _result(item)) is not None]


def ddgs_installed() -> bool:
    return importlib.util.find_spec("ddgs") is not None


def _ddgs_text(query: str, max_results: int, timeout: float) -> list[dict[str, Any]]:
    try:
        from ddgs import DDGS
    except ImportError:
        raise WebSearchUnavailable(
            "the ddgs package is not installed (install ddgs, or set TAVILY_API_KEY)"
        ) from None
    # ddgs wants whole seconds; rounding up keeps a short configured timeout from becoming 0.
    engine = DDGS(timeout=max(1, math.ceil(timeout)))
    results: list[dict[str, Any]] = engine.text(query, max_results=max_results)
    return results


def _looks_offline(text: str) -> bool:
    lowered = text.lower()
    return any(marker in lowered for marker in _OFFLINE_MARKERS)


def _reason(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    kind = type(exc).__name__
    if "Ratelimit" in kind:
        return "the search engines are rate limiting ddgs; wait a minute before searching again"
    if "Timeout" in kind or "timed out" in text:
        return "the search engines did not answer in time (ddgs timed out)"
    if _looks_offline(text):
        return f"no network connection (ddgs could not reach any search engine: {_how(text)})"
    return f"ddgs failed ({kind}: {_cut(text)})"


def _how(text: str) -> str:
    """The network failure in a few words; ddgs' own text is a long nested repr."""
    lowered = text.lower()
    if "dns" in lowered or "resolv" in lowered:
        return "the DNS lookup failed"
    if "refused" in lowered:
        return "the connection was refused"
    return _cut(text)


def _cut(text: str) -> str:
    return text if len(text) <= _REASON_CHARS else text[: _REASON_CHARS - 1] + "…"


def _result(item: object) -> WebResult | None:
    """One ddgs hit (``title``/``href``/``body``; news hits use ``url``/``date``)."""
    if not isinstance(item, dict):
        return None
    url = item.get("href") or item.get("url")
    if not isinstance(url, str) or not url:
        return None
    title = item.get("title")
    body = item.get("body")
    date = item.get("date")
    return WebResult(
        title=title if isinstance(title, str) and title else url,
        url=url,
        snippet=body if isinstance(body, str) else "",
        published=date if isinstance(date, str) and date else None,
    )
