"""Adaptive prefetch by intent (seed 001 section 3.3): does a run's memory hint hold the
memory its message needs?

    python bench/intent_bench.py [--rounds 3] [--tree before=/path/to/main/checkout ...]

Five topics; for each, planted memories of every kind the intents want (a semantic fact,
a procedure, a preference, a shared convention and the reviewer agent's own checklist, a
past bug with its fix, an agreement from an earlier session) and distractor turns that
repeat the topic's words and the messages' cue words.  Then, per intent and topic, an
English and a Chinese message is sent to a fresh session of the agent (the scripted model
answers; the follow-up is sent after a first turn on the topic), and the hint in the model's
request is checked for the planted right memory.

Each tree runs in its own process with its ``src`` first on the path (``--tree``; the first,
unnamed, is this checkout), so two versions are compared on the same data in one run.
Prints, per intent, the share of turns whose hint holds the right memory, and the median
milliseconds per turn (the whole ``send``), medians over the rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
INTENTS = ("new_task", "follow_up", "bug_fix", "preference", "cross_agent")

CHILD = r"""
import asyncio, json, sys, tempfile, time
from pathlib import Path

from shiyi.app import App
from shiyi.config import load_settings
from shiyi.llm.scripted import ScriptedModel, reply
from shiyi.memory.models import EventRecord
from shiyi.memory.scopes import Viewer

TOPICS = [
    # topic, store, steps, style, ticket, checklist, error, fix, thing, agreed
    ("billing ledger", "PostgreSQL-16", "make-release", "tabs-only", "TCK-101",
     "diff-first", "KeyError", "defaulting-invoice", "invoices table", "created-index"),
    ("search cluster", "OpenSearch-2", "helm-upgrade", "black-88", "TCK-202",
     "bench-first", "TimeoutError", "raising-timeout", "shard layout", "six-shards"),
    ("mobile app", "SQLite-WAL", "fastlane-beta", "two-spaces", "TCK-303", "screenshots-first",
     "NullPointerException", "guarding-null", "login screen", "biometric-login"),
    ("data pipeline", "Parquet-files", "airflow-trigger", "snake-case", "TCK-404",
     "schema-first", "MemoryError", "chunking-rows", "nightly batch", "two-am-batch"),
    ("auth gateway", "Redis-7", "blue-green", "no-semicolons", "TCK-505",
     "threat-model-first", "PermissionError", "fixing-chmod", "token lifetime", "fifteen-minutes"),
]


def plant(memory, base):
    events, n = [], 0
    def event(text):
        nonlocal n
        n += 1
        events.append(EventRecord(f"b{n}", "old", f"r{n}", base + n * 60, "user", text,
                                  "user_message", iteration=n))
    reviewer = Viewer("default", "reviewer", "default")
    for (t, store, steps, style, ticket, check, err, fix, thing, agreed) in TOPICS:
        memory.remember(f"The {t} keeps its data in {store}", kind="semantic")
        memory.remember(f"To deploy the {t}: {steps}, then verify", kind="procedural")
        memory.remember(f"For {t} code the user prefers {style}", kind="preference")
        memory.remember(f"{t} changes need sign-off, ticket {ticket}", kind="convention",
                        scope="workspace")
        memory.remember(f"Reviewer checklist for the {t}: {check}", kind="procedural",
                        scope="agent", viewer=reviewer)
        memory.remember(f"The {t} might move elsewhere", kind="semantic", confidence=0.6)
        event(f"the {t} crashed with {err}; fixed it by {fix}")
        event(f"we agreed the {thing} of the {t} gets {agreed}")
        # distractors: the topic's words and the messages' cue words, repeated
        event(f"{t} {t}: the {t} standup moved, implement the {t} slides, {t} again")
        event(f"the {t} dashboard: I like the {t} colours, {t} {t} format")
        event(f"someone wrote about the {t} error page and the {t} {t} fails wiki")
        event(f"the {t} {thing} meeting: ask reviewer later about the {t} change notes")
        event(f"{t} 的 {t} 周会改到周五，{t} 代码评审再说")
    memory.import_events(events)
    assert memory.worker.drain(timeout=600), "the memory worker did not finish"


def turns():
    for (t, store, steps, style, ticket, check, err, fix, thing, agreed) in TOPICS:
        yield "new_task", "", f"Implement a backup job for the {t} data", (store, steps)
        yield "new_task", "", f"给 {t} 的 data 实现一个备份任务", (store, steps)
        before = f"Let's look at the {thing} of the {t}"
        yield "follow_up", before, "and what did we agree on that?", (agreed,)
        yield "follow_up", before, f"那 {thing} 我们之前怎么定的？", (agreed,)
        yield "bug_fix", "", f"The {t} fails with {err} again", (fix,)
        yield "bug_fix", "", f"{t} 又报错了：{err}", (fix,)
        yield "preference", "", f"Format the new {t} code the way I like", (style,)
        yield "preference", "", f"按我喜欢的方式写 {t} 的代码", (style,)
        yield "cross_agent", "", f"Ask reviewer to check my {t} change", (ticket, check)
        yield "cross_agent", "", f"让 reviewer 检查一下 {t} 的改动", (ticket, check)


def hint(request):
    for message in reversed(request.messages):
        if message.role == "user" and "Possibly relevant memories" in message.content:
            return message.content.split("Possibly relevant memories", 1)[1]
    return ""


async def main():
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        settings = load_settings(cwd=root, workspace=root, home=root / "home")
        settings.memory.lifecycle.workspace_writers = ["shiyi", "reviewer"]
        settings.memory.lifecycle.extraction = False
        model = ScriptedModel([reply("ok")] * 200)
        with App.open(settings, model=model, start_worker=False) as app:
            plant(app.memory, time.time() - 86400 * 30)
            results = {}
            for intent, before, message, wanted in turns():
                agent = app.agent()
                if before:
                    async for _ in agent.send(before):
                        pass
                started = time.perf_counter()
                async for _ in agent.send(message):
                    pass
                took = (time.perf_counter() - started) * 1000
                found = any(w in hint(model.requests[-1]) for w in wanted)
                results.setdefault(intent, []).append([found, took])
    print("RESULT " + json.dumps(results))

asyncio.run(main())
"""


def run_tree(tree: Path | None) -> dict[str, list[list[float]]]:
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = str(tree / "src")
    done = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=False
    )
    line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT ")), None)
    if line is None:
        raise SystemExit(f"the bench child failed:\n{done.stderr[-3000:]}")
    result: dict[str, list[list[float]]] = json.loads(line.removeprefix("RESULT "))
    return result


def cell(shares: list[float], times: list[float]) -> str:
    return f"{statistics.median(shares):>10.0%} {statistics.median(times):>8.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=DIR")
    args = parser.parse_args()
    trees: dict[str, Path | None] = {"this": None}
    for spec in args.tree:
        name, _, directory = spec.partition("=")
        trees[name] = Path(directory).resolve()
    shares: dict[str, dict[str, list[float]]] = {name: {} for name in trees}
    times: dict[str, dict[str, list[float]]] = {name: {} for name in trees}
    for _ in range(args.rounds):
        for name, tree in trees.items():
            for intent, rows in run_tree(tree).items():
                hits = [found for found, _ in rows]
                shares[name].setdefault(intent, []).append(sum(hits) / len(hits))
                times[name].setdefault(intent, []).extend(took for _, took in rows)
    print(f"hint holds the right memory (median of {args.rounds} rounds; ms per turn)")
    print(f"{'intent':<12}" + "".join(f"{name:>22}" for name in trees))
    for intent in INTENTS:
        cells = [cell(shares[n][intent], times[n][intent]) for n in trees]
        print(f"{intent:<12}" + "".join(f"{c:>22}" for c in cells))
    for name in trees:
        everything = [s for intent in INTENTS for s in shares[name][intent]]
        print(f"{name}: all intents {statistics.mean(everything):.0%}")


if __name__ == "__main__":
    main()
