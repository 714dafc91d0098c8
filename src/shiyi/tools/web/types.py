"""What every web search provider speaks: results, the provider protocol, unavailability."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from shiyi.errors import WebSearchUnavailable


@dataclass(slots=True, frozen=True)
class WebResult:
    """One hit: the page, what the provider quoted from it and, when known, its date."""

    title: str
    url: str
    snippet: str
    published: str | None = None


@runtime_checkable
class SearchProvider(Protocol):
    """A web search backend. ``search`` raises only :class:`WebSearchUnavailable`."""

    @property
    def name(self) -> str: ...

    async def search(self, query: str, max_results: int) -> list[WebResult]: ...


class UnavailableProvider:
    """Stands in when no provider can be used, so the tool still answers with the reason."""

    def __init__(self, reason: str, name: str = "none") -> None:
        self.reason = reason
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    async def search(self, query: str, max_results: int) -> list[WebResult]:
        raise WebSearchUnavailable(self.reason)
