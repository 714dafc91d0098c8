"""Ready-made model roles for common providers; a preset fills what the user left unset."""

from __future__ import annotations

from typing import Any

# api_key_env: where the key is read from when the config does not give one.
PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "deepseek": {
        "main": {
            "provider": "openai_compat",
            "base_url": "https://api.deepseek.com/v1",
            "model": "deepseek-chat",
            "api_key_env": "DEEPSEEK_API_KEY",
            "context_window": 65536,
        },
        "fast": {
            "provider": "openai_compat",
            "base_url": "https://api.deepseek.com/v1",
            "model": "deepseek-chat",
            "api_key_env": "DEEPSEEK_API_KEY",
            "context_window": 65536,
        },
    },
    "openai": {
        "main": {
            "provider": "openai_compat",
            "base_url": "https://api.openai.com/v1",
            "model": "gpt-4o-mini",
            "api_key_env": "OPENAI_API_KEY",
            "context_window": 128000,
        },
        "fast": {
            "provider": "openai_compat",
            "base_url": "https://api.openai.com/v1",
            "model": "gpt-4o-mini",
            "api_key_env": "OPENAI_API_KEY",
            "context_window": 128000,
        },
    },
    "ollama": {
        "main": {
            "provider": "openai_compat",
            "base_url": "http://127.0.0.1:11434/v1",
            "model": "qwen2.5:7b",
            "api_key": "ollama",
            "context_window": 32768,
        },
        "fast": {
            "provider": "openai_compat",
            "base_url": "http://127.0.0.1:11434/v1",
            "model": "qwen2.5:1.5b",
            "api_key": "ollama",
            "context_window": 32768,
        },
    },
    "local": {
        "main": {
            "provider": "local",
            "model": "SmolLM2-135M-Instruct-Q4_1",
            "context_window": 8192,
        },
        "fast": {
            "provider": "local",
            "model": "SmolLM2-135M-Instruct-Q4_1",
            "context_window": 8192,
        },
    },
}

# USD per million tokens (input, output). Users extend or override this in config.
DEFAULT_PRICES: dict[str, dict[str, float]] = {
    "deepseek-chat": {"input": 0.27, "output": 1.10},
    "deepseek-reasoner": {"input": 0.55, "output": 2.19},
    "gpt-4o-mini": {"input": 0.15, "output": 0.60},
    "gpt-4o": {"input": 2.50, "output": 10.00},
}
