"""Which provider ``tools.web_search`` selects, and how a bad choice is reported."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import SecretStr

from shiyi.config import load_settings
from shiyi.config.loader import masked_dump
from shiyi.config.settings import WebSearchSettings
from shiyi.errors import ConfigError
from shiyi.tools.web import (
    DuckDuckGoProvider,
    TavilyProvider,
    UnavailableProvider,
    WebSearchUnavailable,
    select_provider,
)

KEY = {"TAVILY_API_KEY": "tvly-from-env"}


def installed() -> bool:
    return True


def missing() -> bool:
    return False


async def unavailable_reason(settings: WebSearchSettings, has_ddgs: bool) -> str:
    provider = select_provider(settings, {}, has_ddgs=installed if has_ddgs else missing)
    assert isinstance(provider, UnavailableProvider)
    with pytest.raises(WebSearchUnavailable) as info:
        await provider.search("anything", 3)
    return str(info.value)


def test_auto_with_a_key_in_the_environment_is_tavily() -> None:
    provider = select_provider(WebSearchSettings(), KEY, has_ddgs=installed)
    assert isinstance(provider, TavilyProvider)
    assert provider.api_key == "tvly-from-env"
    assert provider.name == "tavily"


def test_auto_with_a_configured_key_is_tavily_with_the_configured_settings() -> None:
    settings = WebSearchSettings(
        api_key=SecretStr("tvly-config"), base_url="http://127.0.0.1:9", timeout=2.5
    )
    provider = select_provider(settings, KEY, has_ddgs=installed)
    assert isinstance(provider, TavilyProvider)
    assert provider.api_key == "tvly-config"  # the config wins over the environment
    assert (provider.base_url, provider.timeout) == ("http://127.0.0.1:9", 2.5)


def test_auto_reads_the_configured_key_variable() -> None:
    settings = WebSearchSettings(api_key_env="MY_TAVILY")
    provider = select_provider(settings, {"MY_TAVILY": "tvly-x"}, has_ddgs=missing)
    assert isinstance(provider, TavilyProvider)
    assert isinstance(select_provider(settings, KEY, has_ddgs=installed), DuckDuckGoProvider)


def test_auto_without_a_key_is_ddgs_when_installed() -> None:
    provider = select_provider(WebSearchSettings(timeout=3.0), {}, has_ddgs=installed)
    assert isinstance(provider, DuckDuckGoProvider)
    assert (provider.name, provider.timeout) == ("ddgs", 3.0)


async def test_auto_with_nothing_set_up_is_not_available_with_the_fix() -> None:
    reason = await unavailable_reason(WebSearchSettings(), has_ddgs=False)
    assert reason == (
        "web search is not available: no web search provider is set up; set TAVILY_API_KEY "
        "for Tavily or install the ddgs package; answer from what you know or ask the user."
    )


async def test_explicit_none_is_not_available_even_with_a_key() -> None:
    provider = select_provider(WebSearchSettings(provider="none"), KEY, has_ddgs=installed)
    assert isinstance(provider, UnavailableProvider)
    with pytest.raises(WebSearchUnavailable, match=r"switched off \(tools\.web_search"):
        await provider.search("q", 3)


async def test_explicit_tavily_without_a_key_says_which_variable_to_set() -> None:
    reason = await unavailable_reason(WebSearchSettings(provider="tavily"), has_ddgs=True)
    assert "Tavily is configured but has no API key; set TAVILY_API_KEY" in reason


def test_explicit_ddgs_is_chosen_over_a_key_and_even_when_not_installed() -> None:
    settings = WebSearchSettings(provider="ddgs")
    assert isinstance(select_provider(settings, KEY, has_ddgs=missing), DuckDuckGoProvider)


def test_unknown_provider_in_the_config_file_is_a_config_error(tmp_path: Path) -> None:
    config = tmp_path / "shiyi.yaml"
    config.write_text("tools:\n  web_search:\n    provider: bing\n")
    with pytest.raises(ConfigError, match=r"tools\.web_search\.provider.*'bing'"):
        load_settings(cwd=tmp_path, config_file=config)


def test_unknown_provider_that_skipped_validation_is_a_config_error() -> None:
    settings = WebSearchSettings().model_copy(update={"provider": "bing"})
    with pytest.raises(ConfigError, match=r"'bing'.*auto, tavily, ddgs, none"):
        select_provider(settings, {})


def test_provider_from_the_environment_and_key_masked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHIYI_TOOLS__WEB_SEARCH__PROVIDER", "none")
    monkeypatch.setenv("SHIYI_TOOLS__WEB_SEARCH__API_KEY", "tvly-secret-value")
    settings = load_settings(cwd=tmp_path)
    assert settings.tools.web_search.provider == "none"
    assert "tvly-secret-value" not in str(masked_dump(settings))
