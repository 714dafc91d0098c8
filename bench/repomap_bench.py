"""Repo map of the Python standard library: cold (empty cache) and warm timings.

    .venv/bin/python bench/repomap_bench.py [PATH] [--runs N]

Cold parses every file into an empty SQLite cache.  Warm runs use a new ``RepoMap`` (as a
new process would) on the filled cache, in three flavours:

* new request: tags come from the cache, the ranking and the fit are computed again (a
  different mention each run, so the finished-map cache cannot answer);
* same request: the finished map itself comes from the cache (files unchanged);
* CLI: ``shiyi repomap`` in a fresh process, which adds interpreter start-up and, when the
  map must be fitted again, loading the cl100k vocabulary (~1 s, shared with the agent).

Target: warm < 1 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from shiyi.llm.tokens import TokenCounter
from shiyi.repomap import RepoMap, RepoMapResult


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", default=sysconfig.get_paths()["stdlib"])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=1024)
    args = parser.parse_args()
    root = Path(args.path)
    with tempfile.TemporaryDirectory(prefix="repomap-bench-") as home:
        cache = Path(home) / "repomap.sqlite3"
        counter = TokenCounter()
        started = time.perf_counter()
        counter.count("load the vocabulary")
        print(f"cl100k vocabulary load: {time.perf_counter() - started:.2f} s (once per process)")

        cold = build(root, counter, cache, args.tokens, mentioned=[])
        s = cold.stats
        print(
            f"cold: {s.seconds:.2f} s - {s.files} source files ({s.parsed} parsed, "
            f"{len(s.skipped)} skipped, {s.unsupported} other files), {s.definitions} "
            f"definitions, map {cold.tokens}/{cold.max_tokens} tokens, "
            f"{len(cold.files_shown)} files shown"
        )
        new = [build(root, counter, cache, args.tokens, [f"bench_{i}"]) for i in range(args.runs)]
        assert all(r.stats.parsed == 0 and not r.stats.map_cache_hit for r in new)
        report("warm, new request (tags cached)", [r.stats.seconds for r in new])
        same = [build(root, counter, cache, args.tokens, []) for _ in range(args.runs)]
        assert all(r.stats.map_cache_hit for r in same)
        report("warm, same request (map cached)", [r.stats.seconds for r in same])
        cli(root, home, args.tokens, args.runs)
        print("target: warm < 1 s")
        print("\ntop of the map:")
        print("\n".join(cold.text.splitlines()[:12]))


def build(
    root: Path, counter: TokenCounter, cache: Path, tokens: int, mentioned: list[str]
) -> RepoMapResult:
    with RepoMap(root, count_tokens=counter.count, cache_path=cache) as mapper:
        return mapper.build(mentioned=mentioned, max_tokens=tokens)


def cli(root: Path, home: str, tokens: int, runs: int) -> None:
    exe = Path(sys.executable).with_name("shiyi")
    env = {**os.environ, "SHIYI_HOME": home}
    for label, extra in (("same request", []), ("new request", ["--mention", "cli_{}"])):
        timings = []
        for i in range(runs):
            command = [str(exe), "repomap", str(root), "--tokens", str(tokens)]
            command += [part.format(i) for part in extra]
            started = time.perf_counter()
            subprocess.run(command, env=env, check=True, capture_output=True)
            timings.append(time.perf_counter() - started)
        report(f"CLI process, {label}", timings)


def report(label: str, seconds: list[float]) -> None:
    print(
        f"{label}: median {statistics.median(seconds):.3f} s, min {min(seconds):.3f} s, "
        f"max {max(seconds):.3f} s ({len(seconds)} runs)"
    )


if __name__ == "__main__":
    main()
