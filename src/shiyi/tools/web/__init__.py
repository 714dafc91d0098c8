"""Web search providers behind the ``web_search`` tool: Tavily (keyed) and ddgs (keyless)."""

from shiyi.errors import WebSearchUnavailable
from shiyi.tools.web.duckduckgo import DuckDuckGoProvider, ddgs_installed
from shiyi.tools.web.selection import PROVIDERS, select_provider
from shiyi.tools.web.tavily import TavilyProvider
from shiyi.tools.web.types import SearchProvider, UnavailableProvider, WebResult

__all__ = [
    "PROVIDERS",
    "DuckDuckGoProvider",
    "SearchProvider",
    "TavilyProvider",
    "UnavailableProvider",
    "WebResult",
    "WebSearchUnavailable",
    "ddgs_installed",
    "select_provider",
]
