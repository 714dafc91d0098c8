"""Which provider answers ``web_search``, from ``tools.web_search`` and the environment."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from shiyi.config.settings import WebSearchSettings
from shiyi.errors import ConfigError
from shiyi.tools.web.duckduckgo import DuckDuckGoProvider, ddgs_installed
from shiyi.tools.web.tavily import TavilyProvider
from shiyi.tools.web.types import SearchProvider, UnavailableProvider

PROVIDERS = ("auto", "tavily", "ddgs", "none")


def select_provider(
    settings: WebSearchSettings,
    env: Mapping[str, str] | None = None,
    *,
    has_ddgs: Callable[[], bool] = ddgs_installed,
) -> SearchProvider:
    """The configured provider; ``auto`` is Tavily with a key, else ddgs if installed.

    Missing pieces (no key, no package, ``none``) give an :class:`UnavailableProvider`
    that tells the model why; only a provider name shiyi does not know is a
    :class:`ConfigError` (the settings model rejects it on load already).
    """
    env = os.environ if env is None else env
    choice = settings.provider
    if choice not in PROVIDERS:
        raise ConfigError(
            f"tools.web_search.provider is {choice!r}, which is not a provider shiyi knows. "
            f"Use one of: {', '.join(PROVIDERS)}."
        )
    key = tavily_key(settings, env)
    if choice == "none":
        return UnavailableProvider("it is switched off (tools.web_search.provider: none)")
    if choice == "tavily" or (choice == "auto" and key):
        if not key:
            return UnavailableProvider(
                f"Tavily is configured but has no API key; set {settings.api_key_env} or "
                "tools.web_search.api_key",
                name="tavily",
            )
        return tavily_from(settings, key)
    if choice == "ddgs" or has_ddgs():
        # Explicit ddgs without the package still selects it: its search says "install ddgs".
        return DuckDuckGoProvider(timeout=settings.timeout)
    return UnavailableProvider(
        f"no web search provider is set up; set {settings.api_key_env} for Tavily or "
        "install the ddgs package"
    )


def tavily_key(settings: WebSearchSettings, env: Mapping[str, str]) -> str | None:
    if settings.api_key is not None and settings.api_key.get_secret_value():
        return settings.api_key.get_secret_value()
    return env.get(settings.api_key_env) or None


def tavily_from(settings: WebSearchSettings, key: str) -> TavilyProvider:
    return TavilyProvider(
        key,
        base_url=settings.base_url,
        timeout=settings.timeout,
        max_retries=settings.max_retries,
        retry_base_delay=settings.retry_base_delay,
    )
