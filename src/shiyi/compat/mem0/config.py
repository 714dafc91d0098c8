"""mem0's configuration dict read into shiyi's settings.

``vector_store`` picks the store: left out (or ``kuzu``/``embedded``, with an optional
``path`` for the data directory) the embedded Kuzu + SQLite store; ``pgvector``/``postgres``
with a ``connection_string`` (or ``host``/``port``/``user``/``password``/``dbname``) a
PostgreSQL database.  ``history_db_path`` moves the ledger (metadata and history).  ``shiyi``
holds settings of shiyi's own (``{"memory": {"store": "postgresql://..."}}``, ``home``...).
``llm``/``embedder``/``graph_store`` configure models mem0 would call: shiyi uses its own
(``models.fast`` extracts, MiniLM embeds), so they are ignored with a warning.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from shiyi.config import Settings, load_settings
from shiyi.errors import ConfigError

log = logging.getLogger(__name__)
IGNORED = ("llm", "embedder", "graph_store", "reranker", "version", "custom_fact_extraction_prompt",
           "custom_update_memory_prompt")  # fmt: skip
KNOWN = ("vector_store", "history_db_path", "shiyi", *IGNORED)
EMBEDDED = ("kuzu", "embedded", "shiyi", "sqlite")
POSTGRES = ("pgvector", "postgres", "postgresql")


def settings_from_config(config: Mapping[str, Any]) -> tuple[Settings, Path | None]:
    """The settings ``config`` describes and the ledger path it names (None: the default)."""
    if not isinstance(config, Mapping):
        raise ConfigError(f"Memory config must be a dict, got {type(config).__name__}")
    unknown = sorted(set(config) - set(KNOWN))
    if unknown:
        raise ConfigError(f"Memory config: unknown key(s) {unknown}; known: {', '.join(KNOWN)}")
    ignored = sorted(set(config) & set(IGNORED))
    if ignored:
        log.warning(
            "mem0 config %s ignored: shiyi extracts with its models.fast and embeds with its "
            "memory.embed_model (configure those in shiyi's config)",
            ignored,
        )
    own = config.get("shiyi") or {}
    if not isinstance(own, Mapping):
        raise ConfigError("Memory config: 'shiyi' must be a dict of shiyi settings")
    overrides: dict[str, Any] = dict(own)
    store = config.get("vector_store")
    if store is not None:
        _apply_store(store, overrides)
    settings = load_settings(**overrides)
    history = config.get("history_db_path")
    return settings, Path(history).expanduser() if history else None


def _apply_store(store: object, overrides: dict[str, Any]) -> None:
    if not isinstance(store, Mapping):
        raise ConfigError("Memory config: 'vector_store' must be a dict with a 'provider'")
    provider = str(store.get("provider") or "kuzu").lower()
    options = store.get("config") or {}
    if not isinstance(options, Mapping):
        raise ConfigError("Memory config: vector_store.config must be a dict")
    if provider in EMBEDDED:
        if path := options.get("path"):
            overrides["home"] = Path(str(path)).expanduser()
        return
    if provider not in POSTGRES:
        raise ConfigError(
            f"vector_store provider {provider!r} is not supported by shiyi's mem0 API: use "
            "'pgvector' with a connection_string (PostgreSQL), or leave vector_store out for "
            "the embedded Kuzu + SQLite store"
        )
    memory = dict(overrides.get("memory") or {})
    memory["store"] = postgres_url(options)
    overrides["memory"] = memory


def postgres_url(options: Mapping[str, Any]) -> str:
    """mem0's pgvector options as a URL: ``connection_string`` as given, else its parts."""
    if url := options.get("connection_string") or options.get("url"):
        return str(url)
    if "dbname" not in options:
        raise ConfigError(
            "vector_store pgvector: give 'connection_string' (postgresql://user:pass@host/db)"
            " or at least 'dbname' (with 'user', 'password', 'host', 'port' as needed)"
        )
    user = quote(str(options.get("user") or ""), safe="")
    password = quote(str(options.get("password") or ""), safe="")
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    host = options.get("host") or "localhost"
    port = options.get("port") or 5432
    return f"postgresql://{auth}{host}:{port}/{options['dbname']}"
