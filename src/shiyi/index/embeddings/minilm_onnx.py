"""all-MiniLM-L6-v2 on ONNX Runtime: the same model as :mod:`.minilm`, about 5x faster.

No ONNX file ships with the model package (it holds ``model.safetensors``), and exporting
one needs torch.  So the graph is written here with ``onnx.helper`` from the same weights the
numpy runtime loads (:func:`.minilm._load_weights`), computing what :func:`.minilm.forward`
computes: embeddings + LayerNorm, six encoder layers, mean pooling over the mask, L2
normalisation.  The encoder layers use ONNX Runtime's fused CPU kernels (``com.microsoft``
``Attention``, ``BiasGelu``, ``SkipLayerNormalization``).  Building the graph and the session
takes ~1 s once per process, on the first embedding.

Measured on the 2-core machine (``bench/embed_bench.py``, 1,000 mixed sentences): numpy 35/s,
ONNX Runtime 129/s; one query 23 ms -> 4.6 ms; cosine to the numpy vectors >= 0.9999995.
The numpy runtime stays as the fallback when ``onnxruntime`` is not installed.

``memory.embed_model: all-MiniLM-L6-v2-int8`` runs a dynamically quantized copy of the graph
(:mod:`.minilm_graphs`): ~2x the throughput, vectors within cosine ~0.99 of these, and
recall on the dev sets 0.005-0.02 lower (``bench/realmem_bench.py``), so it is opt-in and
a store of its own.  Built graphs are cached on disk (:mod:`.minilm_graphs`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shiyi.errors import ModelUnavailable
from shiyi.index.embeddings.minilm import (
    INSTALL_HINT,
    LAYER_NORM_EPS,
    NUM_HEADS,
    BatchRunner,
    LocalMiniLM,
    _load_tokenizer,
    _load_weights,
    _Weights,
    embed_by_length,
    model_dir,
)
from shiyi.index.embeddings.minilm_graphs import Variant, model_graph

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Array = npt.NDArray[np.float32]

OPSET = 17


class _Graph:
    """A small builder: named nodes and initialisers for one ONNX graph."""

    def __init__(self) -> None:
        self.nodes: list[Any] = []
        self.inits: list[Any] = []
        self._count = 0

    def const(self, value: Any, name: str | None = None) -> str:
        import numpy as np
        from onnx import numpy_helper

        self._count += 1
        key = name or f"c{self._count}"
        self.inits.append(numpy_helper.from_array(np.asarray(value), key))
        return key

    def op(self, kind: str, *inputs: str, name: str = "", **attrs: Any) -> str:
        """A node; ``name`` marks one the quantizer may pick (:data:`.minilm_graphs.ROLES`)."""
        from onnx import helper

        self._count += 1
        out = f"{kind.lower()}{self._count}"
        self.nodes.append(helper.make_node(kind, list(inputs), [out], name=name, **attrs))
        return out

    def layer_norm(self, x: str, params: tuple[Array, Array]) -> str:
        weight, bias = params
        return self.op(
            "LayerNormalization", x, self.const(weight), self.const(bias),
            axis=-1, epsilon=LAYER_NORM_EPS,
        )  # fmt: skip


def _add_norm(g: _Graph, x: str, y: str, bias: Array, params: tuple[Array, Array]) -> str:
    """LayerNorm(x + y + bias) as one kernel (``com.microsoft.SkipLayerNormalization``)."""
    weight, beta = params
    return g.op(
        "SkipLayerNormalization", x, y, g.const(weight), g.const(beta), g.const(bias),
        domain="com.microsoft", epsilon=LAYER_NORM_EPS,
    )  # fmt: skip


def build_model(weights: _Weights) -> bytes:
    """The serialised ONNX model of :func:`.minilm.forward` for these weights."""
    import numpy as np
    from onnx import TensorProto, helper

    hidden = int(weights.position.shape[1])
    g = _Graph()
    ids, mask = "input_ids", "attention_mask"
    length = g.op("Gather", g.op("Shape", ids), g.const(np.array([1], dtype=np.int64)))
    positions = g.op(
        "Slice", g.const(weights.position), g.const(np.array([0], dtype=np.int64)), length,
        g.const(np.array([0], dtype=np.int64)),
    )  # fmt: skip
    words = g.op("Gather", g.const(weights.word), ids, axis=0)
    x = g.layer_norm(g.op("Add", words, positions), weights.norm)
    maskf = g.op("Cast", mask, to=TensorProto.FLOAT)
    mask32 = g.op("Cast", mask, to=TensorProto.INT32)
    for i, layer in enumerate(weights.layers):
        attended = g.op(
            "Attention", x, g.const(layer.qkv_w), g.const(layer.qkv_b), mask32,
            domain="com.microsoft", num_heads=NUM_HEADS, name=f"attention_{i}",
        )  # fmt: skip
        projected = g.op("MatMul", attended, g.const(layer.attn_out_w), name=f"attn_out_{i}")
        x = _add_norm(g, projected, x, layer.attn_out_b, layer.attn_norm)
        up = g.op("MatMul", x, g.const(layer.inter_w), name=f"ffn_up_{i}")
        inner = g.op("BiasGelu", up, g.const(layer.inter_b), domain="com.microsoft")
        output = g.op("MatMul", inner, g.const(layer.out_w), name=f"ffn_down_{i}")
        x = _add_norm(g, output, x, layer.out_b, layer.out_norm)
    weights_3d = g.op("Unsqueeze", maskf, g.const(np.array([2], dtype=np.int64)))
    axis1 = g.const(np.array([1], dtype=np.int64))
    summed = g.op("ReduceSum", g.op("Mul", x, weights_3d), axis1, keepdims=0)
    count = g.op("Max", g.op("ReduceSum", maskf, axis1, keepdims=1), g.const(np.float32(1e-9)))
    pooled = g.op("Div", summed, count)
    norm = g.op("Max", g.op("ReduceL2", pooled, axes=[1], keepdims=1), g.const(np.float32(1e-12)))
    out = g.op("Div", pooled, norm)
    graph = helper.make_graph(
        g.nodes,
        "minilm",
        [
            helper.make_tensor_value_info(ids, TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info(mask, TensorProto.INT64, ["batch", "seq"]),
        ],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, ["batch", hidden])],
        initializer=g.inits,
    )
    opsets = [helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)]
    model = helper.make_model(graph, opset_imports=opsets)
    return bytes(model.SerializeToString())


def float_graph(folder: Path) -> bytes:
    """The float graph of the weights in ``folder``."""
    return build_model(_load_weights(folder / "model.safetensors"))


class _Session:
    def __init__(self, folder: Path, threads: int, variant: Variant, cache: Path | None) -> None:
        import onnxruntime

        self.tokenizer = _load_tokenizer(folder / "tokenizer.json")
        options = onnxruntime.SessionOptions()
        if threads > 0:
            options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Idle pool threads would spin for a while after each run, taking the cores from the
        # search that embedded its query (hybrid p95 at 100k events: 82 ms spinning).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = onnxruntime.InferenceSession(
            model_graph(folder, variant, cache, float_graph),
            options,
            providers=["CPUExecutionProvider"],
        )
        self.dimension = int(self.session.get_outputs()[0].shape[1])

    def embed(self, texts: Sequence[str], batch_size: int) -> list[list[float]]:
        def run(ids: Any, mask: Any) -> Array:
            out: Array = self.session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
            return out

        return embed_by_length(self.tokenizer, texts, batch_size, self.dimension, run)


INT8_MODEL_ID = "all-MiniLM-L6-v2-int8"
MODEL_IDS: dict[Variant, str] = {
    "float": "all-MiniLM-L6-v2",
    "int8": INT8_MODEL_ID,
    "int8-ffn": "all-MiniLM-L6-v2-int8-ffn",
    "int8-nodown": "all-MiniLM-L6-v2-int8-nodown",
}
"""The int8 graph's vectors are close to the float ones, not equal (cosine ~0.99): its own
model id keeps them apart in the embedding cache and in a store (which refuses a model
other than the one it was embedded with)."""


class OnnxMiniLMEmbedder(LocalMiniLM):
    """:class:`.minilm.MiniLMEmbedder`'s model on ONNX Runtime (same ``model_id``: the
    vectors agree to cosine > 0.9999, so a store embedded by either serves the other).

    ``threads``: ONNX Runtime's intra-op threads (0: one per core).  ``variant="int8"``: the
    dynamically quantized graph (:mod:`.minilm_graphs`), model id :data:`INT8_MODEL_ID`.
    ``cache``: where built graphs are kept between processes (None: built in each).  The
    session builds on the first :meth:`embed` (or :meth:`load`), once, under a lock.
    """

    default_batch = 16
    """Measured: batch 16 129/s, batch 64 105/s (longer batches pad more and leave the cache)."""

    def __init__(
        self,
        folder: Path | None = None,
        *,
        threads: int = 0,
        variant: Variant = "float",
        cache: Path | None = None,
    ) -> None:
        self._folder = folder
        self._threads = threads
        self._variant: Variant = variant
        self._cache = cache
        self._session: _Session | None = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return MODEL_IDS[self._variant]

    def embed(self, texts: Sequence[str], batch_size: int | None = None) -> list[list[float]]:
        """The int8 graph embeds one text per run, whatever ``batch_size`` says: it quantizes
        activations with one scale per run, so a text batched with others (and their
        padding) came out different (cosine 0.95-0.99) from the same text alone, a query.
        One at a time, a text's vector depends on the text only, and the int8 graph at
        batch 1 still ran ~2x the float graph's throughput at batch 16."""
        if self._variant != "float" and (batch_size is None or batch_size >= 1):
            batch_size = 1
        return super().embed(texts, batch_size)

    @property
    def loaded(self) -> bool:
        return self._session is not None

    def load(self) -> None:
        self._ensure_session()

    def _runner(self) -> BatchRunner:
        return self._ensure_session()

    def _ensure_session(self) -> _Session:
        if (session := self._session) is not None:
            return session
        with self._lock:
            if self._session is None:
                key = _Key(self._folder or model_dir(), self._threads, self._variant)
                self._session = _shared_session(key, self._cache)
            return self._session


@dataclass(frozen=True, slots=True)
class _Key:
    folder: Path
    threads: int
    variant: Variant
    # Not the graph cache's folder: it only says where to find a built graph.  Keyed by it,
    # every Memory with its own data dir (each test's) built a session of its own, ~200 MB
    # kept for the life of the process (CI's test process reached 24 GB and was killed).


_sessions: dict[_Key, _Session] = {}
_sessions_lock = threading.Lock()


def _shared_session(key: _Key, cache: Path | None) -> _Session:
    """One session per model folder, variant and thread count in a process: building one
    takes ~1 s and ~90 MB, and ``InferenceSession.run`` is safe to call from several threads."""
    with _sessions_lock:
        session = _sessions.get(key)
        if session is None:
            session = _sessions[key] = _build_session(key, cache)
        return session


def _build_session(key: _Key, cache: Path | None) -> _Session:
    try:
        return _Session(key.folder, key.threads, key.variant, cache)
    except ImportError as exc:
        raise ModelUnavailable(
            f"The ONNX embedder needs onnx and onnxruntime ({exc}). "
            "Fix: pip install onnx onnxruntime, or set memory.embed_runtime: numpy"
        ) from exc
    except Exception as exc:
        raise ModelUnavailable(
            f"Could not build all-MiniLM-L6-v2 for ONNX Runtime from {key.folder}: "
            f"{exc}. Fix: reinstall it with {INSTALL_HINT} --force-reinstall"
        ) from exc


def onnx_available() -> bool:
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("onnx", "onnxruntime"))
