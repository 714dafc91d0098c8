"""The embedded SmolLM2 model on this machine: load time, first-token latency, tokens/s.

First-token latency is measured twice: "cold", where each run's prompt differs from its
first token on (so llama.cpp evaluates the whole prompt), and "warm", where only the user
turn is new and the KV cache already holds the system prompt (as in a conversation).
Decode speed is the rate between the first and the last streamed token.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from dataclasses import dataclass

from shiyi.config.settings import ModelSettings
from shiyi.llm.local import LocalModel, default_gguf_path
from shiyi.llm.types import Message, TextChunk, UsageChunk

RUNS = 5
PROMPT = "Write a 2000-word essay about the history of Rome."
DECODE_TOKENS = 128


@dataclass(frozen=True, slots=True)
class Run:
    first_token: float
    decode_rate: float
    prompt_tokens: int
    completion_tokens: int


async def timed_reply(model: LocalModel, messages: list[Message], max_tokens: int) -> Run:
    started = time.perf_counter()
    first = last = 0.0
    prompt_tokens = completion_tokens = 0
    async for chunk in model.stream(messages, max_tokens=max_tokens):
        if isinstance(chunk, TextChunk):
            last = time.perf_counter()
            first = first or last
        elif isinstance(chunk, UsageChunk):
            prompt_tokens = chunk.usage.prompt_tokens
            completion_tokens = chunk.usage.completion_tokens
    # The first token's time is prompt evaluation, so the rate counts the ones after it.
    rate = (completion_tokens - 1) / (last - first) if last > first else 0.0
    return Run(first - started, rate, prompt_tokens, completion_tokens)


def cold_messages(run: int) -> list[Message]:
    # A different system prompt from its first token on defeats llama.cpp's prefix cache.
    return [
        Message("system", f"Session {run}. You are a helpful assistant."),
        Message("user", PROMPT),
    ]


def warm_messages(run: int) -> list[Message]:
    # Same system prompt every time: only the new user turn is evaluated, as in a chat.
    return [*cold_messages(RUNS)[:1], Message("user", f"{PROMPT} Draft {run}.")]


async def measure(model: LocalModel) -> None:
    await timed_reply(model, cold_messages(-1), 4)  # warm-up: page in weights, init threads
    cold = [await timed_reply(model, cold_messages(run), 1) for run in range(RUNS)]
    warm = [await timed_reply(model, warm_messages(run), 1) for run in range(RUNS)]
    decode = [await timed_reply(model, cold_messages(run), DECODE_TOKENS) for run in range(3)]

    def ms(values: list[float]) -> str:
        return f"median {statistics.median(values) * 1000:.0f} ms (min {min(values) * 1000:.0f})"

    print(f"prompt:               {cold[0].prompt_tokens} tokens")
    print(f"first token, cold:    {ms([r.first_token for r in cold])}  ({RUNS} runs)")
    print(f"first token, warm:    {ms([r.first_token for r in warm])}  (system prompt cached)")
    rates = [r.decode_rate for r in decode]
    tokens = [r.completion_tokens for r in decode]
    print(
        f"decode speed:         median {statistics.median(rates):.1f} tokens/s "
        f"(min {min(rates):.1f}, max {max(rates):.1f}; {tokens} tokens per run)"
    )


def main() -> None:
    threads = os.cpu_count() or 1
    print(f"model: {default_gguf_path().name}, threads: {threads}")
    started = time.perf_counter()
    import llama_cpp  # noqa: F401  (timed on its own: the shared library is large)

    imported = time.perf_counter()
    model = LocalModel(ModelSettings(temperature=0.0))
    model.load()
    loaded = time.perf_counter()
    print(f"import llama_cpp:     {(imported - started) * 1000:.0f} ms")
    print(f"load weights:         {(loaded - imported) * 1000:.0f} ms (n_ctx 8192)")
    asyncio.run(measure(model))


if __name__ == "__main__":
    main()
