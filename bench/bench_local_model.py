"""llama.cpp builds side by side on the embedded SmolLM2: prompt and decode speed, first token.

    python bench/bench_local_model.py                                  # the installed build
    python bench/bench_local_model.py --build base=DIR --build dl=DIR  # builds side by side
    python bench/bench_local_model.py ... --convert   # also each build on the Q8_0 copy

A build is a folder made by ``pip install --no-deps --target DIR llama_cpp_python-*.whl``.
Each round runs every build once in a fresh child process, in turn, so a busy moment of this
noisy 2-core machine hits all of them; the table gives the median over rounds.

* prompt tokens/s: a ~1,100-token prompt that shares nothing with the KV cache, timed to its
  first token (prompt evaluation plus one sample);
* first token, warm: a new user turn after a cached system prompt (a conversation's case);
* decode tokens/s: the rate between the first and the last of 128 streamed tokens;
* load: import llama_cpp, pick the CPU variant, map the weights.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from shiyi.llm.llama_backends import load_cpu_backend

# None of these imports llama_cpp: a child process imports the build on its PYTHONPATH.
from shiyi.config.settings import ModelSettings
from shiyi.llm.local import LocalModel
from shiyi.llm.types import Message, TextChunk, UsageChunk

REPEATS = 3
LONG_TEXT = " ".join(
    f"Note {line}: the build compiles one CPU backend per feature level." for line in range(80)
)
ESSAY = "Write a 2000-word essay about the history of Rome."
DECODE_TOKENS = 128


@dataclass(frozen=True, slots=True)
class Result:
    variant: str
    load_s: float
    prompt_tokens: int
    prompt_rate: float
    warm_first_ms: float
    decode_rate: float


async def _timed(
    model: LocalModel, chat: list[Message], max_tokens: int
) -> tuple[float, float, int, int]:
    """(first token s, decode tokens/s, prompt tokens, completion tokens) of one reply."""
    started = time.perf_counter()
    first = last = 0.0
    prompt = completion = 0
    async for chunk in model.stream(chat, max_tokens=max_tokens):
        if isinstance(chunk, TextChunk):
            last = time.perf_counter()
            first = first or last
        elif isinstance(chunk, UsageChunk):
            prompt, completion = chunk.usage.prompt_tokens, chunk.usage.completion_tokens
    rate = (completion - 1) / (last - first) if last > first else 0.0
    return first - started, rate, prompt, completion


async def _measure(model: LocalModel, variant: str, load_s: float) -> Result:
    def cold(tag: int) -> list[Message]:
        # A different first token every time: nothing of the prompt is in the KV cache.
        return [Message("system", f"Session {tag}. {LONG_TEXT}"), Message("user", ESSAY)]

    def warm(tag: int) -> list[Message]:
        return [Message("system", f"Session 0. {LONG_TEXT}"), Message("user", f"{ESSAY} {tag}")]

    await _timed(model, cold(-1), 2)  # page the weights in, start the threads
    colds = [await _timed(model, cold(tag), 1) for tag in range(1, REPEATS + 1)]
    await _timed(model, warm(0), 1)
    warms = [await _timed(model, warm(tag), 1) for tag in range(1, REPEATS + 1)]
    decodes = [await _timed(model, cold(tag + 10), DECODE_TOKENS) for tag in range(REPEATS)]
    prompt_tokens = colds[0][2]
    return Result(
        variant=variant,
        load_s=load_s,
        prompt_tokens=prompt_tokens,
        prompt_rate=statistics.median(prompt_tokens / first for first, *_ in colds),
        warm_first_ms=statistics.median(first for first, *_ in warms) * 1000,
        decode_rate=statistics.median(rate for _, rate, *_ in decodes),
    )


def child(cache_dir: str | None) -> None:
    """Measure the llama_cpp this interpreter imports; print one JSON line.

    With ``cache_dir`` the model runs as shiyi runs it: the Q4_1 weights converted to Q8_0
    (converted before the clock starts, as on every run after the first)."""
    if cache_dir:
        LocalModel(ModelSettings(), cache_dir=Path(cache_dir)).load()
    started = time.perf_counter()
    path = Path(cache_dir) if cache_dir else None
    model = LocalModel(ModelSettings(temperature=0.0, prompt_cache=False), cache_dir=path)
    model.load()
    load_s = time.perf_counter() - started
    result = asyncio.run(_measure(model, load_cpu_backend(), load_s))
    print(json.dumps(asdict(result)))


def run_child(folder: Path | None, cache_dir: str | None) -> Result:
    env = dict(os.environ)
    if folder is not None:  # this build's llama_cpp ahead of the installed one
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(folder), env.get("PYTHONPATH")]))
    command = [sys.executable, __file__, "--child", *(["--cache-dir", cache_dir] * bool(cache_dir))]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"the build in {folder or 'the venv'} failed:\n{done.stderr[-2000:]}")
    return Result(**json.loads(done.stdout.strip().splitlines()[-1]))


def table(results: dict[str, list[Result]]) -> None:
    def median(name: str, field: str) -> float:
        return statistics.median(getattr(result, field) for result in results[name])

    names = list(results)
    first = names[0]
    print(f"{'':26}" + "".join(f"{name:>16}" for name in names))
    print(f"{'CPU variant':26}" + "".join(f"{results[n][0].variant:>16}" for n in names))
    rows = [
        ("prompt tokens/s", "prompt_rate", "{:.0f}"),
        ("decode tokens/s", "decode_rate", "{:.1f}"),
        ("first token, warm (ms)", "warm_first_ms", "{:.0f}"),
        ("load (s)", "load_s", "{:.2f}"),
    ]
    for label, field, fmt in rows:
        cells = [fmt.format(median(name, field)) for name in names]
        print(f"{label:26}" + "".join(f"{cell:>16}" for cell in cells))
    for label, field, _ in rows[:2]:
        for name in names[1:]:
            ratio = median(name, field) / median(first, field)
            print(f"{label} {name}/{first}: {ratio:.2f}x")
    rounds = len(results[first])
    print(f"(prompt: {results[first][0].prompt_tokens} tokens; medians of {rounds} rounds)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--build", action="append", default=[], metavar="NAME=DIR")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--convert", action="store_true", help="also run each on Q8_0")
    parser.add_argument("--cache-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.cache_dir)
        return
    folders: dict[str, Path | None] = {"installed": None}
    if args.build:
        folders = {name: Path(folder) for name, folder in (b.split("=", 1) for b in args.build)}
    with tempfile.TemporaryDirectory() as scratch:
        runs = {name: (folder, None) for name, folder in folders.items()}
        if args.convert:
            runs |= {f"{name}+Q8_0": (folder, scratch) for name, folder in folders.items()}
        print(f"threads: {os.cpu_count()}, rounds: {args.rounds}, runs: {', '.join(runs)}")
        results: dict[str, list[Result]] = {name: [] for name in runs}
        for round_number in range(1, args.rounds + 1):
            for name, (folder, cache_dir) in runs.items():
                results[name].append(run_child(folder, cache_dir))
                print(f"  round {round_number}/{args.rounds}: {name} done", flush=True)
    table(results)


if __name__ == "__main__":
    main()
