"""What every web search provider speaks: results, the provider protocol, unavailability."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from shiyi.errors import ToolError

ADVICE = "answer from what you know or ask the user"


@dataclass(slots=True, frozen=True)
class WebResult:
    """One hit: the page, what the provider quoted from it and, when known, its date."""

    title: str
    url: str
    snippet: str
    published: str | None = None


class WebSearchUnavailable(ToolError):
    """The search could not run (offline, unconfigured, bad key, rate limited, broken reply).

    A :class:`ToolError`, so the registry hands the message to the model as the call's
    result (``ok=False``, never cached) instead of letting anything escape the run.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(f"web search is not available: {reason}; {ADVICE}.")
        self.reason = reason


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
