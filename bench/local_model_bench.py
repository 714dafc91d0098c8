"""The embedded SmolLM2 on two runtimes side by side: install, load, prompt and decode speed.

    python bench/local_model_bench.py                                   # the code on the path
    python bench/local_model_bench.py --tree source=/path/to/old/checkout --install

``--tree NAME=DIR`` runs that checkout's ``src`` (e.g. b443fb2, whose embedded model is the
from-source llama-cpp-python build) as well as the code on the path (``xllamacpp``, llama.cpp's
prebuilt server engine).  Each round runs every tree once in a fresh child process, in
turn, so a busy moment of this noisy 2-core machine hits all of them; the table gives the
median over rounds.  Both run the model as shiyi does: the Q4_1 weights from their Q8_0 copy
(made before the clock starts, as on every run after the first), no prompt cache.

* prompt tokens/s: a ~1,300-token prompt that shares nothing with the KV cache, timed to its
  first token (prompt evaluation plus one sample);
* first token, warm: a new user turn after a cached system prompt (a conversation's case);
* decode tokens/s: the rate between the first and the last of 128 streamed tokens;
* load: import the runtime, map the weights, start the engine;
* ``--install``: a fresh ``pip install xllamacpp`` into a new venv with an empty pip cache.
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

# None of these imports a runtime: the child process imports its tree's on first use.
from shiyi.config.settings import ModelSettings
from shiyi.llm.local.model import LocalModel
from shiyi.llm.types import Message, TextChunk, UsageChunk

XLLAMACPP = "xllamacpp==2026.10.11549"
REPEATS = 3
LONG_TEXT = " ".join(
    f"Note {line}: the build compiles one CPU backend per feature level." for line in range(96)
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


def child(cache_dir: str) -> None:
    """Measure the runtime this interpreter's shiyi uses; print one JSON line."""
    LocalModel(ModelSettings(), cache_dir=Path(cache_dir)).load()  # the Q8_0 copy, unclocked
    started = time.perf_counter()
    settings = ModelSettings(temperature=0.0, prompt_cache=False)
    model = LocalModel(settings, cache_dir=Path(cache_dir))
    model.load()
    load_s = time.perf_counter() - started
    runtime = "llama-cpp-python" if "llama_cpp" in sys.modules else "xllamacpp"
    print(json.dumps(asdict(asyncio.run(_measure(model, runtime, load_s)))))


def run_child(tree: Path | None, cache_dir: str) -> Result:
    env = dict(os.environ)
    if tree is not None:  # that checkout's shiyi ahead of the one on the path
        env["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(tree / "src"), env.get("PYTHONPATH")])
        )
    command = [sys.executable, __file__, "--child", "--cache-dir", cache_dir]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(
            f"the run of {tree or 'the code on the path'} failed:\n{done.stderr[-2000:]}"
        )
    return Result(**json.loads(done.stdout.strip().splitlines()[-1]))


def install_seconds() -> float:
    """A fresh venv's ``pip install xllamacpp`` with an empty pip cache (from the index)."""
    with tempfile.TemporaryDirectory() as scratch:
        venv, cache = Path(scratch) / "venv", Path(scratch) / "pip-cache"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        env = dict(os.environ, PIP_CACHE_DIR=str(cache))
        started = time.perf_counter()
        subprocess.run(
            [str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", XLLAMACPP],
            check=True, env=env,
        )  # fmt: skip
        return time.perf_counter() - started


def table(results: dict[str, list[Result]]) -> None:
    def median(name: str, field: str) -> float:
        return statistics.median(getattr(result, field) for result in results[name])

    names = list(results)
    first = names[0]
    print(f"{'':26}" + "".join(f"{name:>16}" for name in names))
    print(f"{'runtime':26}" + "".join(f"{results[n][0].variant:>18}" for n in names))
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
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=DIR")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--install", action="store_true", help="time pip install xllamacpp")
    parser.add_argument("--cache-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.cache_dir)
        return
    trees: dict[str, Path | None] = {"xllamacpp": None}
    trees |= {name: Path(folder) for name, folder in (t.split("=", 1) for t in args.tree)}
    print(f"threads: {os.cpu_count()}, rounds: {args.rounds}, runs: {', '.join(trees)}")
    results: dict[str, list[Result]] = {name: [] for name in trees}
    with tempfile.TemporaryDirectory() as scratch:
        for round_number in range(1, args.rounds + 1):
            for name, tree in trees.items():
                cache_dir = str(Path(scratch) / name)
                results[name].append(run_child(tree, cache_dir))
                print(f"  round {round_number}/{args.rounds}: {name} done", flush=True)
    table(results)
    if args.install:
        print(f"pip install {XLLAMACPP}, empty cache, new venv: {install_seconds():.1f} s")


if __name__ == "__main__":
    main()
