"""The embedded default's first reply in a fresh process, with and without the prompt cache.

    python bench/first_reply_bench.py [--rounds 3] [--tree NAME=DIR ...]

Each sample is a new Python process that opens the app as ``shiyi run`` does (default
settings: SmolLM2-135M, compact tools, memory on), sends "Say hello in one short sentence."
and then a second message.  Timed from the process's spawn to the first streamed text of
each reply, so imports and loading the weights count.  Every round uses a new data
directory for four processes in a row:

* first run:       nothing there yet (the weights are converted, the tool section saved);
* (a second run, not reported: it learns how far the prompts agree and saves that);
* no prompt cache: ``models.main.prompt_cache: false``, everything else as before;
* prompt cache:    the stable prefix (tools, persona, workspace) loaded from disk.

``--tree before=/path/to/old/checkout`` runs the same rounds with that tree's ``src`` first on
the path as well (alternating with the installed code), to compare two versions side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIRST = "Say hello in one short sentence."
SECOND = "And now say goodbye."

CHILD = """
import asyncio, json, sys
from shiyi.app import App
from shiyi.config.loader import load_settings

async def main():
    settings = load_settings()
    with App.open(settings) as app:
        agent = app.agent()
        for message in sys.argv[1:]:
            tokens, shown = 0, False
            async for event in agent.send(message):
                if event.type == "text_delta" and not shown:
                    print("TEXT", flush=True)
                    shown = True
                elif event.type == "usage":
                    tokens = tokens or event.prompt_tokens
            print("DONE " + json.dumps({"prompt_tokens": tokens}), flush=True)

asyncio.run(main())
"""


def sample(home: Path, workspace: Path, cache: bool, tree: Path | None) -> tuple[float, float, int]:
    """(s to the first text, s to the second reply's first text, first prompt tokens)."""
    env = dict(os.environ, SHIYI_HOME=str(home))
    if tree is not None:
        env["PYTHONPATH"] = str(tree / "src")
    env["SHIYI_MODELS__MAIN__PROMPT_CACHE"] = "true" if cache else "false"
    started = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, FIRST, SECOND],
        cwd=workspace,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    marks: list[float] = []
    tokens = 0
    reply_started = started
    for line in child.stdout:
        if line.startswith("TEXT"):
            marks.append(time.perf_counter() - reply_started)
        elif line.startswith("DONE"):
            tokens = tokens or json.loads(line[5:])["prompt_tokens"]
            reply_started = time.perf_counter()
    if child.wait() or len(marks) != 2:
        errors = child.stderr.read() if child.stderr else ""
        raise SystemExit(f"the child failed:\n{errors[-3000:]}")
    return marks[0], marks[1], tokens


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=DIR")
    args = parser.parse_args()
    trees: dict[str, Path | None] = {"": None}
    for spec in args.tree:
        name, _, directory = spec.partition("=")
        trees[f"{name}: "] = Path(directory).resolve()
    cases: dict[str, list[tuple[float, float, int]]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        workspace = root / "workspace"
        workspace.mkdir()
        for round_number in range(1, args.rounds + 1):
            for label, tree in trees.items():
                home = root / f"home{round_number}{label.strip(': ')}"
                runs = cases.setdefault(f"{label}first run", [])
                runs.append(sample(home, workspace, True, tree))
                sample(home, workspace, True, tree)
                runs = cases.setdefault(f"{label}no prompt cache", [])
                runs.append(sample(home, workspace, False, tree))
                runs = cases.setdefault(f"{label}prompt cache", [])
                runs.append(sample(home, workspace, True, tree))
            print(f"  round {round_number}/{args.rounds} done", flush=True)
    width = max(len(name) for name in cases) + 2
    header = f"{'first reply: first text':>26}{'second reply: first text':>27}{'prompt':>9}"
    print(f"{'':{width}}{header}")
    for name, samples in cases.items():
        first = [s[0] for s in samples]
        second = [s[1] for s in samples]
        print(
            f"{name:{width}}{statistics.median(first):>16.2f} s"
            f" (min {min(first):.2f}){statistics.median(second):>16.2f} s"
            f" (min {min(second):.2f}){samples[0][2]:>6}"
        )
    print(f"(medians of {args.rounds} rounds; from process spawn, imports and loading included)")


if __name__ == "__main__":
    main()
