"""Cache hit rates and time saved in a realistic session, before and after the result cache.

    python bench/cache_bench.py [--turns 40] [--events 400] [--seed 7] [--after-first]

One store of ``--events`` remembered turns (the real local embedder), then a session of
``--turns`` turns, each: the agent asks ``query_memory`` one to three questions (people come
back to the same topics, so questions repeat), the context builder builds the request (the
system prompt), the background summariser fills the summary cache for the grown history,
and every fourth turn the user says something to remember (a write, which must empty the
result cache).  The same session runs twice on copies of the store: *before* (the result
cache off, ``memory.result_cache_seconds: 0``) and *after* (on).  Printed: each cache's
hits, misses and rate (the counters ``shiyi memory health`` shows), the query_memory time
of each run, and the time each cache saved (hits x (miss cost - hit cost), measured here).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from shiyi.config import Settings, load_settings
from shiyi.config.settings import ContextSettings
from shiyi.context.builder import ContextBuilder, ContextParts, system_text
from shiyi.context.compression import blocks_to_summarise, extractive_summary
from shiyi.context.summaries import Summarizer, SummaryStore
from shiyi.index.cache_stats import reset as reset_counters
from shiyi.index.cache_stats import snapshot
from shiyi.llm.types import Message, ToolSpec
from shiyi.memory.models import EventRecord
from shiyi.memory.service import Memory

TOPICS = [
    ("deploy", "We deploy the billing service with the blue-green pipeline on Fridays."),
    ("vpn", "The VPN config lives in ops/vpn.conf and needs the hardware key."),
    ("tea", "I prefer oolong tea in the afternoon, never after six."),
    ("review", "Code review needs two approvals for anything touching payments."),
    ("laptop", "My work laptop is a ThinkPad X1 with 32 GB of memory."),
    ("standup", "Standup moved to 9:45 because of the Berlin team."),
    ("backup", "Backups of the Postgres cluster run nightly at 02:00 UTC."),
    ("travel", "I fly to Lisbon for the offsite on the 14th."),
]
QUESTIONS = {
    "deploy": ["how do we deploy billing", "when do deploys happen"],
    "vpn": ["where is the vpn config", "what does the vpn need"],
    "tea": ["what tea do I like", "tea preference"],
    "review": ["how many approvals for payments code", "code review rules"],
    "laptop": ["which laptop do I have", "laptop memory"],
    "standup": ["when is standup", "why did standup move"],
    "backup": ["when do postgres backups run", "backup schedule"],
    "travel": ["when do I fly to Lisbon", "offsite travel"],
}
TOOLS = [ToolSpec(n, f"{n} tool", {"type": "object", "properties": {}})
         for n in ("read_file", "grep", "bash", "query_memory", "remember")]  # fmt: skip


def events(count: int, rng: random.Random) -> list[EventRecord]:
    start = time.time() - count * 600
    out = []
    for i in range(count):
        topic, text = TOPICS[i % len(TOPICS)] if i % 5 == 0 else ("chat", f"filler {i}")
        content = text if topic != "chat" else f"Small talk {i}: {rng.choice(TOPICS)[0]} later."
        out.append(EventRecord(
            id=f"e{i}", session_id=f"s{i // 40}", run_id=f"r{i // 4}", ts=start + i * 600,
            role="user" if i % 2 == 0 else "assistant", content=content,
            segment_type="user_message" if i % 2 == 0 else "response", iteration=i % 4,
        ))  # fmt: skip
    return out


def settings_for(root: Path, result_cache: bool) -> Settings:
    settings = load_settings(cwd=root, workspace=root)
    settings.home = root / "home"
    settings.memory.result_cache_seconds = 300.0 if result_cache else 0.0
    return settings


def session_plan(turns: int, rng: random.Random) -> list[list[str]]:
    """The questions of each turn: a turn stays on the last topic or two more often than not."""
    plan, recent = [], [rng.choice(list(QUESTIONS))]
    for _ in range(turns):
        asked = []
        for _ in range(rng.randint(1, 3)):
            topic = rng.choice(recent) if rng.random() < 0.7 else rng.choice(list(QUESTIONS))
            recent = [*recent, topic][-2:]
            asked.append(rng.choice(QUESTIONS[topic]))
        plan.append(asked)
    return plan


def run(root: Path, plan: list[list[str]], result_cache: bool) -> dict[str, object]:
    memory = Memory.open(settings_for(root, result_cache))
    summaries = SummaryStore(root / "bench-summaries.sqlite3")
    builder = ContextBuilder(ContextSettings(), 32_768, summaries=summaries)
    summarizer = Summarizer(None, summaries)
    reset_counters()
    history: list[Message] = []
    search_times: list[float] = []
    try:
        for number, asked in enumerate(plan):
            history.append(Message("user", f"turn {number}: {' and '.join(asked)}?"))
            for question in asked:
                began = time.perf_counter()
                memory.query_text(question, limit=5)
                search_times.append(time.perf_counter() - began)
            parts = ContextParts(persona="You are shiyi.", workspace=root, tools=TOOLS)
            builder.build(parts, history)
            history.append(Message("assistant", f"Here is what I found for turn {number}. " * 8))
            blocks = blocks_to_summarise(history, 4, 2)
            asyncio.run(summarizer.summarize_blocks(blocks))
            if number % 4 == 3:  # the user tells something new: a write between turns
                memory.remember(f"Note from turn {number}: the {asked[0]} answer changed.")
        rates = snapshot()
        memory.worker.drain(timeout=60)
        saved = saved_seconds(memory, rates, plan)
    finally:
        summaries.close()
        memory.close()
    return {"rates": rates, "search": search_times, "saved": saved}


def saved_seconds(memory: Memory, rates: list[object], plan: list[list[str]]) -> dict[str, float]:
    """Hits x (what a miss costs - what a hit costs), each cost measured on this store."""
    question = plan[0][0]
    costs: dict[str, tuple[float, float]] = {}
    embedder = memory.embedder
    inner = getattr(embedder, "inner", None)
    if embedder is not None and inner is not None:
        costs["embeddings"] = (timed(lambda: inner.embed([question])),
                               timed(lambda: embedder.embed([question])))  # fmt: skip
    memory.results.bump()
    costs["retrieval results"] = (
        timed(lambda: (memory.results.bump(), memory.search(question))),
        timed(lambda: memory.search(question)) if memory.settings.result_cache_seconds else 0.0,
    )
    parts = ContextParts(persona="You are shiyi.", workspace=Path("/ws"), tools=TOOLS)
    builder = ContextBuilder(ContextSettings(), 32_768)
    builder.system_message(parts)
    costs["system prompt"] = (timed(lambda: system_text(parts)),
                              timed(lambda: builder.system_message(parts)))  # fmt: skip
    # A summary hit spares writing the summary: extractive here (a fast model: a model call).
    block = [Message("user", "What about the deploy? " * 40), Message("assistant", "Yes. " * 80)]
    costs["summaries"] = (timed(lambda: extractive_summary(block, 600)), 0.0)
    out = {}
    for rate in rates:
        miss, hit = costs.get(rate.name, (0.0, 0.0))  # type: ignore[attr-defined]
        out[rate.name] = rate.hits * max(0.0, miss - hit)  # type: ignore[attr-defined]
    return out


def timed(action: object, repeat: int = 15) -> float:
    samples = []
    for _ in range(repeat):
        began = time.perf_counter()
        action()  # type: ignore[operator]
        samples.append(time.perf_counter() - began)
    return statistics.median(samples)


def report(name: str, result: dict[str, object]) -> None:
    search = result["search"]
    assert isinstance(search, list)
    print(f"\n{name}: {len(search)} query_memory calls, total {sum(search):.2f} s, "
          f"p50 {1000 * statistics.median(search):.1f} ms, "
          f"p95 {1000 * sorted(search)[int(0.95 * len(search))]:.1f} ms")  # fmt: skip
    saved = result["saved"]
    assert isinstance(saved, dict)
    for rate in result["rates"]:  # type: ignore[attr-defined]
        shown = "-" if rate.rate is None else f"{100 * rate.rate:5.1f} %"
        print(f"  {rate.name:<18} hits {rate.hits:>4}  misses {rate.misses:>4}  rate {shown:>7}"
              f"  saved {1000 * saved.get(rate.name, 0.0):9.2f} ms")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--events", type=int, default=400)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--after-first",
        action="store_true",
        help="run the result-cache session first (the first one pays for loading the model)",
    )
    args = parser.parse_args()
    rng = random.Random(args.seed)
    plan = session_plan(args.turns, rng)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        base.mkdir()
        memory = Memory.open(settings_for(base, True))
        memory.import_events(events(args.events, rng))
        assert memory.worker.drain(timeout=600)
        memory.close()
        print(f"store: {args.events} turns; session: {args.turns} turns, "
              f"{sum(map(len, plan))} questions, a write every 4th turn")  # fmt: skip
        results = {}
        runs = [("before (no result cache)", False), ("after (result cache)", True)]
        for name, on in runs[::-1] if args.after_first else runs:
            root = Path(tmp) / name.split()[0]
            shutil.copytree(base, root)
            results[name] = run(root, plan, on)
            report(name, results[name])


if __name__ == "__main__":
    main()
