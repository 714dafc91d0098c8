"""The web_search tool: a query to the configured provider, a compact numbered list back.

Read-only, so an identical query later in the session is answered from the session's tool
memory (:mod:`shiyi.context.tool_memory`) instead of the network. Web results watch no
files, so such an entry stays valid for the whole session; the model rephrases the query
when it wants fresh results. Failures (offline, no key, bad key, rate limit, a broken reply,
a timeout) are :class:`WebSearchUnavailable`: the model reads why and what to do instead,
the call counts as failed and is not cached, so a later retry can succeed.
"""

from __future__ import annotations

import asyncio

from shiyi.errors import ShiyiError, ToolError
from shiyi.tools.base import FunctionTool, ToolContext
from shiyi.tools.output import cap_output
from shiyi.tools.web import SearchProvider, WebResult, WebSearchUnavailable, select_provider

MAX_RESULTS = 10
SNIPPET_CHARS = 300
OUTPUT_CAP_CHARS = 6000  # ten results with full snippets fit; more is noise for the model


def web_search_for(provider: SearchProvider | None = None) -> FunctionTool:
    """The tool bound to ``provider``; without one, each call selects from the settings."""

    async def web_search(query: str, ctx: ToolContext, max_results: int | None = None) -> str:
        """Search the web; returns a numbered list of title, URL and snippet.

        Use it for facts that are recent or not in the workspace or memory. Identical
        queries in one session return the same (remembered) results.

        Args:
            query: What to search for, in plain words.
            max_results: How many results to return (1-10; default configured).
        """
        chosen = provider or select_provider(ctx.settings.web_search)
        return await run_search(chosen, query, max_results, ctx)

    return FunctionTool(web_search, read_only=True)


async def run_search(
    provider: SearchProvider, query: str, max_results: int | None, ctx: ToolContext
) -> str:
    """Search within the overall deadline and render the results for the model."""
    text = " ".join(query.split())
    if not text:
        raise ToolError("query is empty; pass the words to search the web for.")
    settings = ctx.settings.web_search
    count = min(max(max_results or settings.max_results, 1), MAX_RESULTS)
    results = await _search(provider, text, count, _deadline(ctx))
    limit = min(ctx.settings.output_cap_chars, OUTPUT_CAP_CHARS)
    return cap_output(render(text, provider.name, results[:count]), limit)


def _deadline(ctx: ToolContext) -> float:
    """Seconds for the whole search: every attempt plus backoff, under the registry's limit.

    The registry stops a tool after ``default_timeout`` with a generic message; stopping
    just before it lets the model read that the *web search* is unavailable, and why.
    """
    settings = ctx.settings.web_search
    wanted = settings.timeout * (settings.max_retries + 2)
    return max(min(wanted, ctx.settings.default_timeout - 1.0), 1.0)


async def _search(
    provider: SearchProvider, query: str, count: int, deadline: float
) -> list[WebResult]:
    try:
        return await asyncio.wait_for(provider.search(query, count), timeout=deadline)
    except TimeoutError:
        raise WebSearchUnavailable(
            f"{provider.name} did not answer within {deadline:g} s"
        ) from None
    except ShiyiError:
        raise
    except Exception as exc:  # a provider bug must still read as "unavailable", not a crash
        raise WebSearchUnavailable(
            f"{provider.name} failed ({type(exc).__name__}: {exc})"
        ) from None


def render(query: str, provider: str, results: list[WebResult]) -> str:
    """``N web results for "q" (via p):`` then one numbered block per result."""
    if not results:
        return f'No web results for "{query}" (via {provider}); try other words.'
    lines = [f'{len(results)} web results for "{query}" (via {provider}):']
    for number, result in enumerate(results, start=1):
        dated = f" ({result.published})" if result.published else ""
        lines.append(f"{number}. {_flat(result.title, SNIPPET_CHARS)}{dated}")
        lines.append(f"   {result.url}")
        snippet = _flat(result.snippet, SNIPPET_CHARS)
        if snippet:
            lines.append(f"   {snippet}")
    return "\n".join(lines)


def _flat(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


web_search = web_search_for()
