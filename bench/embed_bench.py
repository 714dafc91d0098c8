"""Local MiniLM embedder: numpy and ONNX Runtime side by side: load time, sentences/s,
single-query latency, agreement (cosine), cache-hit rate.

``--ceiling``: how fast the ONNX graphs (float and the int8 variants) embed real conversation
turns as the importer indexes them (``(day) Speaker: text``, the LoCoMo dev turns), at batch
1, 16 and 64, with the arithmetic each run did per second.  MiniLM costs ~21 MFLOP per token
(six layers of 384x1152 attention, 384x384 output and 384x1536x2 feed-forward matmuls, plus
attention scores), so the figure says how close the machine runs to its peak and what an
import's embedding can reach at best.

~1000 generated sentences of mixed length, English and Chinese.  Import time is measured in
a fresh interpreter so earlier imports in this process do not hide it.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from shiyi.index.embeddings import (
    CachedEmbedder,
    EmbeddingCache,
    MiniLMEmbedder,
    OnnxMiniLMEmbedder,
)
from shiyi.memory.protocol import Embedder

COUNT = 1000
BATCH = 64
EN_TEXT = (
    "memory agent user remembers the meeting about budget next week project deadline "
    "coffee train Berlin server database vector search friend birthday recipe"
)
ZH_TEXT = "我 记得 明天 会议 项目 预算 朋友 生日 火车 北京 数据库 咖啡 周末 计划 提醒"


def sentences(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    english, chinese = EN_TEXT.split(), ZH_TEXT.split()
    out = []
    for i in range(count):
        words = chinese if i % 3 == 0 else english
        length = rng.choice((3, 6, 10, 20, 40, 80))
        sep = "" if words is chinese else " "
        out.append(sep.join(rng.choice(words) for _ in range(length)) + f" #{i}")
    return out


def import_seconds() -> float:
    code = (
        "import time; t = time.perf_counter(); import numpy, tokenizers, safetensors.numpy; "
        "print(time.perf_counter() - t)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(done.stdout)


def measure(name: str, embedder: MiniLMEmbedder | OnnxMiniLMEmbedder, texts: list[str]) -> Embedder:
    started = time.perf_counter()
    embedder.load()
    print(f"{name}: load {time.perf_counter() - started:.2f} s", end="; ")
    embedder.embed(texts[:BATCH])  # warm-up
    rates = []
    for batch in (16, BATCH):
        started = time.perf_counter()
        embedder.embed(texts, batch_size=batch)
        rates.append(f"batch {batch} {len(texts) / (time.perf_counter() - started):.0f}/s")
    single = []
    for text in texts[:40]:
        started = time.perf_counter()
        embedder.embed([text])
        single.append((time.perf_counter() - started) * 1000)
    print(", ".join(rates) + f"; one query p50 {sorted(single)[len(single) // 2]:.1f} ms")
    return embedder


LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo-dev.json"
HIDDEN, INNER, LAYERS = 384, 1536, 6


def locomo_turns(path: Path = LOCOMO) -> list[str]:
    """Every turn of the LoCoMo file as the importer indexes it (the day is fixed: its length
    is what counts here)."""
    turns = []
    for conversation in json.loads(path.read_text(encoding="utf-8")):
        for key, session in conversation["conversation"].items():
            if key.startswith("session_") and isinstance(session, list):
                turns += [f"(8 May 2023) {t['speaker']}: {t['text']}" for t in session]
    return turns


def flops(tokens: int) -> int:
    """Floating-point operations of one MiniLM forward pass over ``tokens`` tokens."""
    matmuls = tokens * (4 * HIDDEN * HIDDEN + 2 * HIDDEN * INNER)
    attention = 2 * tokens * tokens * HIDDEN
    return 2 * LAYERS * (matmuls + attention)


def ceiling() -> None:
    from shiyi.index.embeddings.minilm import embed_by_length
    from shiyi.index.embeddings.minilm_graphs import Variant

    turns = locomo_turns()
    variants: tuple[Variant, ...] = ("float", "int8-nodown", "int8")
    for variant in variants:
        session = OnnxMiniLMEmbedder(variant=variant)._ensure_session()

        def run(ids: object, mask: object) -> np.ndarray:
            feeds = {"input_ids": ids, "attention_mask": mask}
            out: np.ndarray = session.session.run(None, feeds)[0]  # noqa: B023
            return out

        lengths = [sum(e.attention_mask) for e in session.tokenizer.encode_batch(turns)]
        work = sum(flops(n) for n in lengths)
        embed_by_length(session.tokenizer, turns[:64], 16, HIDDEN, run)  # warm-up
        for batch in (1, 16, 64):
            started = time.perf_counter()
            embed_by_length(session.tokenizer, turns, batch, HIDDEN, run)
            took = time.perf_counter() - started
            print(
                f"{variant:<12} batch {batch:>2}: {len(turns) / took:5.0f} turns/s "
                f"({sum(lengths) / len(turns):.0f} tokens each), {work / took / 1e9:4.0f} GFLOP/s",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ceiling", action="store_true", help="real turns, each ONNX graph")
    if parser.parse_args().ceiling:
        ceiling()
        return
    texts = sentences(COUNT)
    print(f"import numpy+tokenizers+safetensors (fresh process): {import_seconds():.3f} s")
    numpy_model = measure("numpy MiniLM", MiniLMEmbedder(), texts)
    onnx_model = measure("ONNX Runtime MiniLM", OnnxMiniLMEmbedder(), texts)
    a = np.array(numpy_model.embed(texts), dtype=np.float32)
    b = np.array(onnx_model.embed(texts), dtype=np.float32)
    cosine = (a * b).sum(axis=1)
    print(f"agreement: cosine min {cosine.min():.7f}, mean {cosine.mean():.7f}")
    embedder = onnx_model
    with tempfile.TemporaryDirectory() as tmp:
        cached = CachedEmbedder(embedder, EmbeddingCache(Path(tmp) / "cache.sqlite"))
        started = time.perf_counter()
        cached.embed(texts)
        cold = time.perf_counter() - started
        started = time.perf_counter()
        cached.embed(texts)
        hot = time.perf_counter() - started
        print(f"cache miss (embed + store): {COUNT / cold:.0f}/s; cache hit: {COUNT / hot:.0f}/s")


if __name__ == "__main__":
    main()
