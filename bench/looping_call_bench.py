"""A looping ``remember`` call on the embedded model: how soon the agent can stop it.

    python bench/looping_call_bench.py [--rounds 8] [--max-tokens 1024]

SmolLM2-135M, asked "Remember that my sister Ana lives in Porto." with the ``remember`` call
forced (as shiyi forces a tool call when a message asks to remember), often writes one
sentence over and over inside the call until its token cap.  The agent stops such a call at
the third repeat (``LoopingWrites`` in ``agent/echo.py``), but only once it sees the call's
arguments.  Two ways of handing the call over, each round in turn:

* **streamed**: the embedded runtime's router passes the arguments on as they are generated
  (as OpenAI-compatible servers stream them), so the guard can stop the generation there;
* **buffered**: the router holds the call until the model has finished it (shiyi before
  this change), so the guard sees it only at the end.

The model samples (the agent's temperature for tool turns), so a round may or may not loop;
the table gives, per mode, how many rounds looped and the median seconds to the moment the
agent had the call (stopped or whole), over the looping rounds and over all of them.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from dataclasses import dataclass
from typing import Any

from shiyi.agent.echo import LoopingWrites
from shiyi.config.settings import ModelSettings
from shiyi.llm.assemble import ReplyAssembler
from shiyi.llm.local import grammar
from shiyi.llm.local.model import LocalModel
from shiyi.llm.types import Message, StreamChunk, ToolCallDelta, ToolSpec
from shiyi.tools.builtins.memory import memory_tools

ASK = "Remember that my sister Ana lives in Porto."
MODES = ("streamed", "buffered")


@dataclass
class Round:
    mode: str
    looped: bool
    seconds: float
    said: str
    """The start of the call's arguments as the agent had them."""


def remember_spec() -> ToolSpec:
    """The real ``remember`` tool's spec (the memory it closes over is never called)."""
    tools = memory_tools(None)  # type: ignore[arg-type]
    return next(t.spec for t in tools if t.spec.name == "remember")


def _buffered(self: grammar.ReplyRouter) -> list[StreamChunk]:
    return []  # hold the whole call until finish(), as the router did before


async def one_round(model: LocalModel, spec: ToolSpec, mode: str, max_tokens: int) -> Round:
    streamed = grammar.ReplyRouter._streamed_arguments
    if mode == "buffered":
        grammar.ReplyRouter._streamed_arguments = _buffered  # type: ignore[method-assign]
    looping = LoopingWrites()
    assembler = ReplyAssembler()
    started = time.perf_counter()
    try:
        stream: Any = model.stream(
            [Message("user", ASK)], tools=[spec], tool_choice="remember", max_tokens=max_tokens
        )
        async for chunk in stream:
            assembler.add(chunk)
            if isinstance(chunk, ToolCallDelta) and looping.add(chunk):
                break  # as the agent's loop does
        await stream.aclose()
    finally:
        grammar.ReplyRouter._streamed_arguments = streamed  # type: ignore[method-assign]
    seconds = time.perf_counter() - started
    calls = assembler.message().tool_calls
    said = calls[0].arguments if calls else assembler.message().content
    return Round(mode, bool(looping.said), seconds, " ".join(said.split())[:60])


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=1024)
    args = parser.parse_args()
    model = LocalModel(ModelSettings(provider="local"))
    await asyncio.to_thread(model.load)
    spec = remember_spec()
    rounds: list[Round] = []
    for number in range(args.rounds):
        for mode in MODES if number % 2 == 0 else tuple(reversed(MODES)):
            done = await one_round(model, spec, mode, args.max_tokens)
            rounds.append(done)
            print(
                f"  round {number + 1}/{args.rounds} {mode:8} looped={done.looped!s:5} "
                f"{done.seconds:5.1f} s  {done.said}",
                flush=True,
            )
    print(f"\n{'mode':9} {'looped':>8} {'median s (looping)':>19} {'median s (all)':>15}")
    for mode in MODES:
        mine = [r for r in rounds if r.mode == mode]
        loops = [r.seconds for r in mine if r.looped]
        looped = f"{len(loops)}/{len(mine)}"
        median_loops = f"{statistics.median(loops):.1f}" if loops else "-"
        print(
            f"{mode:9} {looped:>8} {median_loops:>19} "
            f"{statistics.median(r.seconds for r in mine):>15.1f}"
        )
    await asyncio.sleep(2)  # let the engine's thread see the last stop before exit


if __name__ == "__main__":
    asyncio.run(main())
