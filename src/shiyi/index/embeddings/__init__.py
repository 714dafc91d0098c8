"""Text embedders: the local MiniLM (ONNX Runtime, or numpy), OpenAI-compatible endpoints,
and a cache.

Importing this package is cheap: numpy, tokenizers, safetensors, onnxruntime and openai load
lazily.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, TypeAlias

from shiyi.config.settings import MemorySettings
from shiyi.errors import ConfigError
from shiyi.index.embeddings.cache import CachedEmbedder, EmbeddingCache, content_hash
from shiyi.index.embeddings.minilm import MiniLMEmbedder
from shiyi.index.embeddings.minilm_onnx import (
    INT8_MODEL_ID,
    MODEL_IDS,
    OnnxMiniLMEmbedder,
    onnx_available,
)
from shiyi.index.embeddings.openai_embed import OpenAIEmbedder
from shiyi.index.types import Embedder

__all__ = [
    "INT8_MODEL_ID",
    "CachedEmbedder",
    "EmbeddingCache",
    "MiniLMEmbedder",
    "OnnxMiniLMEmbedder",
    "OpenAIEmbedder",
    "build_embedder",
    "content_hash",
    "local_minilm",
]

Runtime: TypeAlias = Literal["auto", "onnx", "numpy"]


def local_minilm(
    runtime: Runtime = "auto", model: str = "all-MiniLM-L6-v2", cache: Path | None = None
) -> Embedder:
    """all-MiniLM-L6-v2 on ONNX Runtime (``auto`` when onnxruntime is installed: 3-4x the
    throughput, 5x faster single queries) or on numpy; both give the same vectors.

    ``model`` :data:`INT8_MODEL_ID`: its int8 graph on ONNX Runtime (faster imports, vectors
    within cosine ~0.99 of the float ones, so a store of its own).  ``cache``: where ONNX
    graphs are kept between processes."""
    variant = next((v for v, name in MODEL_IDS.items() if name == model and v != "float"), None)
    if variant is not None:
        if runtime == "numpy":
            raise ConfigError(
                f"memory.embed_model {model} runs on ONNX Runtime only; set "
                "memory.embed_runtime to auto or onnx, or memory.embed_model to all-MiniLM-L6-v2"
            )
        return OnnxMiniLMEmbedder(variant=variant, cache=cache)
    if runtime == "onnx" or (runtime == "auto" and onnx_available()):
        return OnnxMiniLMEmbedder(cache=cache)
    return MiniLMEmbedder()


def build_embedder(
    settings: MemorySettings, cache_path: Path, model_cache: Path | None = None
) -> Embedder | None:
    """The configured embedder behind a content-hash cache (nothing is embedded twice);
    ``model_cache``: the folder for derived model files (built ONNX graphs)."""
    inner: Embedder
    if settings.embedder == "none":
        return None
    if settings.embedder == "openai_compat":
        if not settings.embed_base_url:
            raise ConfigError(
                "memory.embed_base_url is required when memory.embedder is openai_compat."
            )
        key = settings.embed_api_key.get_secret_value() if settings.embed_api_key else None
        inner = OpenAIEmbedder(
            base_url=settings.embed_base_url,
            api_key=key,
            model=settings.embed_model,
            dimension=settings.embed_dimension,
        )
    else:
        inner = local_minilm(settings.embed_runtime, settings.embed_model, model_cache)
    return CachedEmbedder(inner, EmbeddingCache(cache_path))
