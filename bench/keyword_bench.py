"""Keyword index benchmark: index 100k synthetic short docs, then time queries.

Run: ``python bench/keyword_bench.py [--docs 100000] [--queries 500]``.
Docs mix English, Chinese, numbers, dates and identifiers like real chat segments.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from shiyi.index.keyword import KeywordIndex
from shiyi.index.text import load_jieba

EN = [
    "error",
    "server",
    "deploy",
    "user",
    "login",
    "cache",
    "database",
    "query",
    "timeout",
    "retry",
    "config",
    "release",
    "memory",
    "graph",
    "vector",
    "search",
    "index",
    "token",
    "model",
    "agent",
    "session",
    "latency",
    "throughput",
    "bug",
    "fix",
    "build",
    "test",
    "commit",
    "branch",
    "merge",
    "review",
    "docker",
    "kubernetes",
    "sqlite",
    "kuzu",
    "python",
    "rust",
]
ZH = [
    "部署",
    "版本",
    "数据库",
    "迁移",
    "服务器",
    "用户",
    "登录",
    "缓存",
    "查询",
    "超时",
    "重试",
    "配置",
    "发布",
    "内存",
    "搜索",
    "模型",
    "测试",
]
IDENT = ["user{}", "parse_config", "KeywordIndex", "src/app/main.py", "http_{}", "job{}"]
BATCH = 1000


def make_doc(rng: random.Random) -> str:
    words = rng.choices(EN, k=rng.randint(4, 10))
    words += [rng.choice(IDENT).format(rng.randint(0, 999))]
    words += [str(rng.choice([200, 404, 500, 503, rng.randint(0, 99999)]))]
    if rng.random() < 0.3:
        words.append(f"20{rng.randint(20, 25)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}")
    rng.shuffle(words)
    english = " ".join(words)
    if rng.random() < 0.5:
        return english
    chinese = "我们" + "".join(rng.choices(ZH, k=rng.randint(2, 5))) + "了"
    return f"{chinese}，{english}"


def make_query(rng: random.Random) -> str:
    kind = rng.randint(0, 3)
    if kind == 0:
        return f"error {rng.choice([404, 500, 503])}"
    if kind == 1:
        return f"user{rng.randint(0, 999)} login"
    if kind == 2:
        return " ".join(rng.choices(ZH, k=2))
    return " ".join(rng.choices(EN, k=3)) + f" {rng.randint(0, 99999)}"


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=500)
    args = parser.parse_args()
    rng = random.Random(7)

    started = time.perf_counter()
    load_jieba()
    print(f"jieba load: {time.perf_counter() - started:.2f} s")

    docs = [(f"d{i}", "event" if i % 3 else "fact", make_doc(rng)) for i in range(args.docs)]
    with tempfile.TemporaryDirectory() as tmp:
        index = KeywordIndex(Path(tmp) / "kw.sqlite3")
        started = time.perf_counter()
        for at in range(0, len(docs), BATCH):
            index.add(docs[at : at + BATCH])  # type: ignore[arg-type]
        elapsed = time.perf_counter() - started
        print(f"indexed {index.count()} docs in {elapsed:.1f} s: {len(docs) / elapsed:,.0f} docs/s")

        queries = [make_query(rng) for _ in range(args.queries)]
        for query in queries[:20]:  # warm the page cache
            index.search(query, 20)
        latencies: list[float] = []
        hits = 0
        for query in queries:
            started = time.perf_counter()
            hits += len(index.search(query, 20))
            latencies.append((time.perf_counter() - started) * 1000)
        print(
            f"{len(queries)} queries (limit 20, avg {hits / len(queries):.1f} hits): "
            f"p50 {statistics.median(latencies):.2f} ms, p95 {percentile(latencies, 0.95):.2f} ms, "
            f"max {max(latencies):.2f} ms"
        )
        index.close()


if __name__ == "__main__":
    main()
