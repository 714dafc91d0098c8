"""Context builder benchmark: a generated 300-turn session with tool outputs and file reads.

Prints tokens sent per turn with the builder versus the naive full history (target: at turn
300 at most 20% of naive, under the budget at every turn), builder time per turn (p50/p95,
summarisation excluded: it runs after the reply) and whether facts stated early are still
reachable at the end, through the summaries/digest in context or through ``query_memory``.
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from shiyi.config import load_settings
from shiyi.config.settings import ContextSettings
from shiyi.context.builder import ContextBuilder, ContextParts
from shiyi.context.compression import block_key
from shiyi.context.focused_files import FocusedFiles
from shiyi.context.summaries import Summarizer, SummaryStore
from shiyi.llm.types import Message, ToolCall
from shiyi.memory.service import Memory
from shiyi.tools.base import ToolContext
from shiyi.tools.builtins import default_registry

TURNS = 300
WINDOW = 32_768
FACTS = {
    2: ("Remember: the staging deploy token is named ZEPHYR-42.", "ZEPHYR-42"),
    5: ("We decided to use PostgreSQL 16 for the billing service.", "PostgreSQL 16"),
    9: ("我的测试账号是 user1337，密码找运维要。", "user1337"),
}


def make_workspace(root: Path, rng: random.Random) -> list[str]:
    names = []
    for i in range(12):
        lines = [f"def handler_{i}_{j}(request):  # {rng.random():.6f}" for j in range(60)]
        (root / f"module_{i}.py").write_text("\n".join(lines) + "\n")
        names.append(f"module_{i}.py")
    return names


async def main() -> None:
    rng = random.Random(5)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = make_workspace(root, rng)
        settings = load_settings(workspace=root, home=root / "home")
        registry = default_registry(settings.tools)
        ctx = ToolContext.for_dir(root, settings.tools)
        store = SummaryStore(root / "summaries.sqlite3")
        builder = ContextBuilder(ContextSettings(), WINDOW, summaries=store)
        summarizer = Summarizer(None, store)  # extractive: the bench measures the builder
        focused = FocusedFiles(ContextSettings().focused_files_max_chars)
        memory = Memory.open(settings, start_worker=False)
        parts = ContextParts(persona="You are shiyi.", workspace=root, tools=registry.specs())
        history: list[Message] = []
        naive, sent, times, over = [], [], [], 0
        for turn in range(TURNS):
            user = FACTS.get(turn, (f"Turn {turn}: please look at the next module.", ""))[0]
            history.append(Message("user", user))
            name = rng.choice(["read_file", "read_file", "grep", "bash"])
            args: dict[str, object] = {
                "read_file": {"path": rng.choice(files)},
                "grep": {"pattern": f"handler_{rng.randrange(12)}_"},
                "bash": {"command": "ls -la"},
            }[name]
            call = ToolCall(f"c{turn}", name, json.dumps(args))
            history.append(Message("assistant", "Checking.", (call,)))
            outcome = await registry.execute(call, ctx)
            history.append(Message("tool", outcome.content, tool_call_id=call.id, name=name))
            focused.observe(
                name, outcome.arguments, outcome.content, outcome.ok, root, call_id=call.id
            )
            history.append(Message("assistant", f"Turn {turn}: module reviewed, nothing urgent."))
            for offset, message in enumerate(history[-4:]):
                memory.record_message(message, message_id=turn * 4 + offset, session_id="bench",
                                      run_id=f"r{turn}", iteration=1)  # fmt: skip
            full = [Message("system", "You are shiyi."), *history]
            naive.append(builder.counter.count_messages(full))
            started = time.perf_counter()
            turn_parts = ContextParts(
                persona=parts.persona, workspace=root, tools=parts.tools, working=[focused.render()]
            )
            built = builder.build(turn_parts, history, focused.history_content)
            times.append((time.perf_counter() - started) * 1000)
            sent.append(built.total_tokens)
            if built.total_tokens > WINDOW - builder.budget.reply_reserve:
                over += 1
            if built.pending_blocks:
                await summarizer.summarize_blocks(built.pending_blocks)
            if built.digest_source:
                digest = await summarizer.digest(built.digest_source)
                store.put("digest:" + block_key(built.digest_source), digest, "extractive")
        memory.worker.drain(timeout=600)
        final_text = "\n".join(m.content for m in built.messages)
        for at in (1, 50, 100, 200, 300):
            print(f"turn {at:>3}: builder {sent[at - 1]:>6} tokens, naive {naive[at - 1]:>7}"
                  f" ({sent[at - 1] / naive[at - 1]:.1%})")  # fmt: skip
        print(
            f"turns over budget: {over} of {TURNS} (budget {WINDOW - builder.budget.reply_reserve})"
        )
        print(f"at turn {TURNS}: {sent[-1] / naive[-1]:.1%} of naive (target <= 20%)")
        ordered = sorted(times)
        print(f"builder time per turn: p50 {statistics.median(ordered):.1f} ms, "
              f"p95 {ordered[int(len(ordered) * 0.95)]:.1f} ms (target p95 < 20 ms)")  # fmt: skip
        for turn, (_, token) in FACTS.items():
            in_context = token in final_text
            hits = memory.search(token, mode="hybrid", limit=5)
            recalled = any(token in h.text for h in hits)
            print(f"fact from turn {turn} ({token}): in final context {in_context}, "
                  f"query_memory finds it {recalled}")  # fmt: skip
        memory.close()
        store.close()


if __name__ == "__main__":
    asyncio.run(main())
