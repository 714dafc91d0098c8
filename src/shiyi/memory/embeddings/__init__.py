"""Text embedders: the local numpy MiniLM (default), OpenAI-compatible endpoints, and a cache.

Importing this package is cheap: numpy, tokenizers, safetensors and openai load lazily.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from shiyi.errors import ConfigError
from shiyi.memory.embeddings.cache import CachedEmbedder, EmbeddingCache, content_hash
from shiyi.memory.embeddings.minilm import MiniLMEmbedder
from shiyi.memory.embeddings.openai_embed import OpenAIEmbedder
from shiyi.memory.protocol import Embedder

__all__ = [
    "CachedEmbedder",
    "EmbeddingCache",
    "MiniLMEmbedder",
    "OpenAIEmbedder",
    "build_embedder",
    "content_hash",
]


def build_embedder(kind: str = "local", *, cache_path: Path | None = None, **kw: Any) -> Embedder:
    """``"local"`` -> MiniLM; ``"openai"`` -> OpenAIEmbedder(**kw); wrapped in a cache if given."""
    inner: Embedder
    if kind == "local":
        inner = MiniLMEmbedder(**kw)
    elif kind in ("openai", "openai_compat"):
        inner = OpenAIEmbedder(**kw)
    else:
        raise ConfigError(f"Unknown embedder kind {kind!r}. Fix: use 'local' or 'openai'.")
    if cache_path is None:
        return inner
    return CachedEmbedder(inner, EmbeddingCache(cache_path))
