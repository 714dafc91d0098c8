"""The int8 graph of all-MiniLM-L6-v2: close to the float vectors, its own model id, and
built once into a cache that follows the weights."""

from __future__ import annotations

import shutil
import statistics
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from shiyi.errors import ConfigError
from shiyi.index.embeddings import INT8_MODEL_ID, local_minilm
from shiyi.index.embeddings.minilm import model_dir
from shiyi.index.embeddings.minilm_graphs import ROLES, Variant, graph_path, model_graph
from shiyi.index.embeddings.minilm_onnx import MODEL_IDS, OnnxMiniLMEmbedder, float_graph

SENTENCES = [
    "The cat sits on the mat.",
    "A kitten is resting on a rug.",
    "我喜欢吃苹果。",
    "Quarterly revenue grew by ten percent compared to last year.",
    "(8 May 2023) Caroline: I went to a LGBTQ support group yesterday and it was powerful.",
    "(25 May 2023) Melanie: We took the kids camping by the lake; they loved the stars.",
    "Could you remind me what we planned for the Kyoto trip budget?",
    "My knee has been hurting after the long runs, so I switched to cycling twice a week.",
    "The staging server returns error 404 for user3 on /api/login.",
    "ok",
]
MIN_COSINE = 0.95
"""Measured over the 1,451 LoCoMo dev turns: min 0.978, 1st percentile 0.985, mean 0.992;
a two-letter text ("ok") is the lowest here, 0.967."""
MIN_MEAN_COSINE = 0.985


def _cos(a: Sequence[float], b: Sequence[float]) -> float:
    return float(np.dot(a, b))


def test_int8_vectors_are_close_to_float_under_their_own_model_id() -> None:
    int8 = OnnxMiniLMEmbedder(variant="int8")
    assert (int8.model_id, int8.dimension) == (INT8_MODEL_ID, 384)
    cosines = [
        _cos(a, b)
        for a, b in zip(OnnxMiniLMEmbedder().embed(SENTENCES), int8.embed(SENTENCES), strict=True)
    ]
    assert min(cosines) > MIN_COSINE, cosines
    assert statistics.mean(cosines) > MIN_MEAN_COSINE, cosines
    assert min(cosines) < 0.9999  # quantized indeed: not the float graph under another name
    # a text's vector is the same alone (a query) as among others (an import's batch)
    batched = int8.embed(SENTENCES, batch_size=16)
    for text, vector in zip(SENTENCES, batched, strict=True):
        assert _cos(int8.embed([text])[0], vector) > 0.99999, text
    # similar sentences stay similar, unrelated ones apart
    v = int8.embed(SENTENCES[:4])
    assert _cos(v[0], v[1]) > 0.6 and max(_cos(v[0], v[2]), _cos(v[0], v[3])) < 0.12


def test_int8_is_chosen_by_model_name_and_needs_onnx() -> None:
    chosen = local_minilm("auto", INT8_MODEL_ID)
    assert isinstance(chosen, OnnxMiniLMEmbedder) and chosen.model_id == INT8_MODEL_ID
    assert local_minilm("auto").model_id == "all-MiniLM-L6-v2"
    with pytest.raises(ConfigError, match="ONNX Runtime only"):
        local_minilm("numpy", INT8_MODEL_ID)


@pytest.fixture
def weights(tmp_path: Path) -> Path:
    """A copy of the model folder whose weights the test may change."""
    folder = tmp_path / "model"
    folder.mkdir()
    for name in ("model.safetensors", "tokenizer.json"):
        shutil.copy(model_dir() / name, folder / name)
    return folder


def _change_weights(folder: Path) -> None:
    from safetensors.numpy import load_file, save_file

    tensors = load_file(str(folder / "model.safetensors"))
    name = "encoder.layer.0.output.dense.bias"
    tensors[name] = tensors[name] + np.float32(0.05)
    save_file(tensors, str(folder / "model.safetensors"))


def test_quantized_graph_is_cached_and_follows_the_weights(weights: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    built = model_graph(weights, "int8", cache, float_graph)
    cached = graph_path(weights, "int8", cache)
    assert [p.name for p in cache.iterdir()] == [cached.name]
    assert cached.read_bytes() == built
    # a hit reads the file: put the float graph there and it is what comes back
    plain = model_graph(weights, "float", None, float_graph)
    cached.write_bytes(plain)
    assert model_graph(weights, "int8", cache, float_graph) == plain
    cached.write_bytes(built)

    _change_weights(weights)
    moved = graph_path(weights, "int8", cache)
    assert moved != cached  # new weights name a new file: the stale graph is never read
    rebuilt = model_graph(weights, "int8", cache, float_graph)
    assert rebuilt != built and moved.read_bytes() == rebuilt
    # the float graph is cached apart from the int8 one
    assert graph_path(weights, "float", cache) not in (cached, moved)


def test_damaged_cached_graph_is_rebuilt(weights: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    path = graph_path(weights, "int8", cache)
    cache.mkdir()
    path.write_bytes(b"\x08\x07 truncated")
    vectors = OnnxMiniLMEmbedder(weights, variant="int8", cache=cache).embed(SENTENCES[:2])
    assert len(vectors) == 2 and _cos(vectors[0], vectors[1]) > 0.6
    assert path.read_bytes() != b"\x08\x07 truncated"
    assert not list(cache.glob("*.partial"))


def test_stores_with_their_own_graph_caches_share_one_session(tmp_path: Path) -> None:
    """A session is ~200 MB: one per model and variant in a process, whichever data dir's
    graph cache a store names (keyed by it, a test process grew to 24 GB)."""
    first = OnnxMiniLMEmbedder(cache=tmp_path / "one")
    second = OnnxMiniLMEmbedder(cache=tmp_path / "two")
    assert first.embed(["a shared session"]) == second.embed(["a shared session"])
    assert first._session is second._session
    int8 = OnnxMiniLMEmbedder(variant="int8", cache=tmp_path / "three")
    int8.embed(["x"])
    assert int8._session is not first._session


PARTIAL = {"int8-ffn": ("ffn_up",), "int8-nodown": ("attention", "attn_out", "ffn_up")}


@pytest.mark.parametrize("variant", sorted(PARTIAL))
def test_partial_variants_quantize_only_their_nodes(variant: Variant, tmp_path: Path) -> None:
    import onnx

    graph = onnx.load_model_from_string(model_graph(model_dir(), variant, tmp_path, float_graph))
    float_ops = {n.name: n.op_type for n in graph.graph.node if n.name}
    for role in ROLES:
        for layer in range(6):
            name = f"{role}_{layer}"
            if role in PARTIAL[variant]:
                assert name not in float_ops, name  # replaced by its quantized form
            else:
                assert float_ops.get(name) in ("MatMul", "Attention"), name
    quantized = [n for n in graph.graph.node if "Integer" in n.op_type or n.op_type[:1] == "Q"]
    assert quantized  # not the float graph under another name


@pytest.mark.parametrize("variant", sorted(PARTIAL))
def test_partial_variants_are_closer_to_float_than_int8(variant: Variant) -> None:
    partial = OnnxMiniLMEmbedder(variant=variant)
    assert partial.model_id == MODEL_IDS[variant] not in (INT8_MODEL_ID, "all-MiniLM-L6-v2")
    assert local_minilm("auto", partial.model_id).model_id == partial.model_id
    floats = OnnxMiniLMEmbedder().embed(SENTENCES)

    def cosines(embedder: OnnxMiniLMEmbedder) -> list[float]:
        return [_cos(a, b) for a, b in zip(floats, embedder.embed(SENTENCES), strict=True)]

    near, full = cosines(partial), cosines(OnnxMiniLMEmbedder(variant="int8"))
    assert statistics.mean(near) > statistics.mean(full) and min(near) > min(full)
    assert min(near) < 0.9999
    batched = partial.embed(SENTENCES, batch_size=16)  # alone as a query, as in a batch
    for text, vector in zip(SENTENCES, batched, strict=True):
        assert _cos(partial.embed([text])[0], vector) > 0.99999, text
