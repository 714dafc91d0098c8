"""Build the chat model for a role from settings (providers are imported lazily)."""

from __future__ import annotations

from typing import Literal

from shiyi.config.settings import ModelSettings, Settings
from shiyi.errors import ConfigError
from shiyi.llm.protocol import ChatModel

# Hosted endpoints that refuse requests without a key: fail early with the fix instead.
_KEY_REQUIRED_HOSTS = ("api.deepseek.com", "api.openai.com")


def build_chat_model(settings: Settings, role: Literal["main", "fast"] = "main") -> ChatModel:
    model = settings.model_role(role)
    if model.provider == "openai_compat":
        _check_remote(model, role)
        from shiyi.llm.openai.model import OpenAICompatModel

        # The fast role does the background work: it gives way to conversations.
        return OpenAICompatModel(model, settings.prices, role=role, background=role == "fast")
    if model.provider == "scripted":
        from shiyi.llm.scripted import ScriptedModel

        if model.model_path is None:
            raise ConfigError(
                f"models.{role}.model_path must name a JSON script for the scripted provider."
            )
        return ScriptedModel.from_file(model.model_path)
    from shiyi.llm.local.model import LocalModel

    # One engine per model file: a fast role on the main role's weights shares its slots,
    # and gives way to conversations like background work on a model server.
    return LocalModel(model, cache_dir=settings.cache_dir, background=role == "fast")


def _check_remote(model: ModelSettings, role: str) -> None:
    if not model.base_url:
        raise ConfigError(
            f"models.{role}.base_url is required for provider openai_compat: set it in "
            f"shiyi.yaml or SHIYI_MODELS__{role.upper()}__BASE_URL, or pick a preset "
            "(preset: deepseek | openai | ollama)."
        )
    if model.api_key is None and any(host in model.base_url for host in _KEY_REQUIRED_HOSTS):
        where = f"export {model.api_key_env}=..." if model.api_key_env else ""
        raise ConfigError(
            f"models.{role}.api_key is not set for {model.base_url}: {where or 'set it'} "
            f"or set models.{role}.api_key in shiyi.yaml (SHIYI_MODELS__{role.upper()}__API_KEY)."
        )
