"""Run-loop overhead per iteration, excluding model time.

A scripted model drives one run of 1000 iterations, each calling a trivial tool; the time
spent inside the model's stream is measured and subtracted, leaving the loop's own work
(context assembly, event creation, tool dispatch, SQLite writes).  Target: p95 < 5 ms.
"""

from __future__ import annotations

import asyncio
import itertools
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from shiyi.agent import Agent
from shiyi.config import load_settings
from shiyi.context.summaries import SummaryStore
from shiyi.llm.scripted import ScriptedModel, call, reply
from shiyi.llm.types import Message, StreamChunk, ToolSpec
from shiyi.sessions.log import SessionLog
from shiyi.tools import ToolRegistry, tool

ITERATIONS = int(__import__("os").environ.get("BENCH_ITERATIONS", "1000"))


@tool(read_only=True)
def noop(n: int) -> str:
    """Return n.

    Args:
        n: Any number.
    """
    return str(n)


class TimedModel:
    """Wraps the scripted model and records how long each stream took."""

    def __init__(self, inner: ScriptedModel) -> None:
        self.inner = inner
        self.model_seconds: list[float] = []

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    async def stream(
        self, messages: Sequence[Message], **kwargs: Any
    ) -> AsyncIterator[StreamChunk]:
        started = time.perf_counter()
        async for chunk in self.inner.stream(messages, **kwargs):
            yield chunk
        self.model_seconds.append(time.perf_counter() - started)

    def _unused(self, tools: Sequence[ToolSpec]) -> None: ...


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        settings = load_settings(workspace=root, home=root / "home")
        settings.agent.max_iterations = ITERATIONS + 1
        script = [reply("step", call("noop", n=i)) for i in range(ITERATIONS)] + [reply("done")]
        model = TimedModel(ScriptedModel(script, chunk_size=16))
        session_log = SessionLog(settings.sessions_db)
        summaries = SummaryStore(settings.data_dir / "summaries.sqlite3")
        agent = Agent(
            model,  # type: ignore[arg-type]
            settings=settings,
            tools=ToolRegistry([noop]),
            session_log=session_log,
            summaries=summaries,
        )
        marks: list[float] = []
        last_status = ""
        async for event in agent.send("benchmark"):
            if event.type == "usage":
                marks.append(time.perf_counter())
            if event.type == "run_end":
                last_status = event.status
        per_iter = [b - a for a, b in itertools.pairwise(marks)]
        loop_only = [
            max(0.0, span - model)
            for span, model in zip(per_iter, model.model_seconds[1:], strict=False)
        ]
        loop_only.sort()
        p50 = statistics.median(loop_only) * 1000
        p95 = loop_only[int(len(loop_only) * 0.95)] * 1000
        print(f"run status: {last_status}, iterations: {len(marks)}")
        print(f"loop overhead per iteration (excl. model): p50 {p50:.3f} ms, p95 {p95:.3f} ms")
        model_ms = statistics.median(model.model_seconds) * 1000
        print(f"model (scripted) time per call: {model_ms:.3f} ms")
        print("target: p95 < 5 ms")
        session_log.close()
        summaries.close()


if __name__ == "__main__":
    asyncio.run(main())
