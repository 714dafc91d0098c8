"""Text embedders: the local MiniLM (ONNX Runtime, or numpy), OpenAI-compatible endpoints,
and a cache.

Importing this package is cheap: numpy, tokenizers, safetensors, onnxruntime and openai load
lazily.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from shiyi.index.embeddings.cache import CachedEmbedder, EmbeddingCache, content_hash
from shiyi.index.embeddings.minilm import MiniLMEmbedder
from shiyi.index.embeddings.minilm_onnx import OnnxMiniLMEmbedder, onnx_available
from shiyi.index.embeddings.openai_embed import OpenAIEmbedder
from shiyi.index.types import Embedder

__all__ = [
    "CachedEmbedder",
    "EmbeddingCache",
    "MiniLMEmbedder",
    "OnnxMiniLMEmbedder",
    "OpenAIEmbedder",
    "content_hash",
    "local_minilm",
]

Runtime: TypeAlias = Literal["auto", "onnx", "numpy"]


def local_minilm(runtime: Runtime = "auto") -> Embedder:
    """all-MiniLM-L6-v2 on ONNX Runtime (``auto`` when onnxruntime is installed: 3-4x the
    throughput, 5x faster single queries) or on numpy; both give the same vectors."""
    if runtime == "onnx" or (runtime == "auto" and onnx_available()):
        return OnnxMiniLMEmbedder()
    return MiniLMEmbedder()
