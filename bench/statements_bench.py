"""What memory believes after two plain statements, one after the other.

    python bench/statements_bench.py [--set probes|held-back|held-back-2|all] [--misses]
                                     [--json out.json]

Each probe of ``statements_data.py`` (everyday statements written for this bench: a value
that changed, two different facts, the same fact said again) is remembered in order as one
user's explicit statements (``Memory.remember_outcome``, no key) on a real embedded store
(Kuzu + SQLite) with the MiniLM embedder; then the active facts are compared with what should
be believed.  Beside it, two baselines over the same statements and the same embedder:

* append only: every statement stays active (no belief is ever revised);
* embedding dedup: the later statement is dropped as a repeat when it embeds at least
  ``duplicate_similarity`` alike to the earlier (what a store without slots does), else both
  stay active.

Reported per set (``PROBES``, whose misses rules were written for; ``HELD_BACK``, written at
the same time and run only after those rules were done, and whose misses the next rules were
written for; ``HELD_BACK_2``, written before those next rules): the share of probes believed right
per expectation (replace / both / confirm) and overall; with ``--misses`` each probe shiyi
gets wrong.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from statements_data import (
    CHANGES,
    ENDINGS,
    ENDINGS_HELD_BACK,
    ENDINGS_HELD_BACK_2,
    HELD_BACK,
    HELD_BACK_2,
    HELD_BACK_3,
    HELD_BACK_4,
    HELD_BACK_5,
    HELD_BACK_6,
    HELD_BACK_7,
    HELD_BACK_8,
    HELD_BACK_9,
    HELD_BACK_10,
    HELD_BACK_11,
    PROBES,
    RELATIVES,
    RELATIVES_HELD_BACK,
    ROLES,
    ROLES_HELD_BACK,
    Probe,
)

from shiyi.config import load_settings
from shiyi.memory.lifecycle.explicit import Statement
from shiyi.memory.service import Memory

Believed = frozenset[str]
KINDS = ("replace", "both", "confirm")
SETS = {
    "probes": PROBES,
    "held-back": HELD_BACK,
    "held-back-2": HELD_BACK_2,
    "held-back-3": HELD_BACK_3,
    "held-back-4": HELD_BACK_4,
    "endings": ENDINGS,
    "endings-held-back": ENDINGS_HELD_BACK,
    "endings-held-back-2": ENDINGS_HELD_BACK_2,
    "roles": ROLES,
    "roles-held-back": ROLES_HELD_BACK,
    "changes": CHANGES,
    "held-back-5": HELD_BACK_5,
    "held-back-6": HELD_BACK_6,
    "relatives": RELATIVES,
    "relatives-held-back": RELATIVES_HELD_BACK,
    "held-back-7": HELD_BACK_7,
    "held-back-8": HELD_BACK_8,
    "held-back-9": HELD_BACK_9,
    "held-back-10": HELD_BACK_10,
    "held-back-11": HELD_BACK_11,
}


def right(probe: Probe, active: Believed) -> bool:
    """Whether ``active`` (the active facts' texts after both statements) is what should be
    believed."""
    if probe.expect == "replace":
        return active == {probe.later}
    if probe.expect == "both":
        return active == {probe.earlier, probe.later}
    return len(active) == 1 and active <= {probe.earlier, probe.later}


def shiyi_beliefs(
    memory: Memory, probes: Sequence[Probe], name: str, timings: list[float]
) -> list[Believed]:
    """Each probe as its own user's two statements, in order; the active facts after."""
    beliefs: list[Believed] = []
    for number, probe in enumerate(probes):
        viewer = replace(memory.viewer, user_id=f"{name}-{number}")
        ids = []
        for text in (probe.earlier, probe.later):
            started = time.perf_counter()
            ids.append(memory.remember_outcome(Statement(text), viewer=viewer).fact.id)
            timings.append(time.perf_counter() - started)
        facts = memory.store.get_facts(list(dict.fromkeys(ids)))
        beliefs.append(frozenset(f.value for f in facts if f.status == "active"))
    return beliefs


def append_only(probe: Probe) -> Believed:
    return frozenset({probe.earlier, probe.later})


def embedding_dedup(
    embed: Callable[[list[str]], list[list[float]]], threshold: float
) -> Callable[[Probe], Believed]:
    def believe(probe: Probe) -> Believed:
        a, b = embed([probe.earlier, probe.later])
        norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
        cosine = sum(x * y for x, y in zip(a, b, strict=True)) / norms
        return frozenset({probe.earlier}) if cosine >= threshold else append_only(probe)

    return believe


def table(probes: Sequence[Probe], rows: dict[str, Sequence[Believed]]) -> list[str]:
    counts = {kind: sum(p.expect == kind for p in probes) for kind in KINDS}
    head = f"{'system':24}" + "".join(f"{f'{k} ({counts[k]})':>15}" for k in KINDS)
    lines = [head + f"{f'all ({len(probes)})':>15}"]
    for name, beliefs in rows.items():
        marks = [(p.expect, right(p, b)) for p, b in zip(probes, beliefs, strict=True)]
        cells = [sum(ok for k, ok in marks if k == kind) / counts[kind] for kind in KINDS]
        total = sum(ok for _, ok in marks) / len(probes)
        lines.append(f"{name:24}" + "".join(f"{c:>15.3f}" for c in [*cells, total]))
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--set", choices=[*SETS, "all"], default="all")
    parser.add_argument("--misses", action="store_true", help="list the probes shiyi misses")
    parser.add_argument("--json", help="write the per-probe results here")
    args = parser.parse_args(argv)
    chosen = SETS if args.set == "all" else {args.set: SETS[args.set]}
    results: dict[str, list[dict[str, object]]] = {}
    with tempfile.TemporaryDirectory(prefix="statements-bench-") as home:
        os.environ["SHIYI_HOME"] = home
        settings = load_settings()
        threshold = settings.memory.lifecycle.duplicate_similarity
        memory = Memory.open(settings, start_worker=False)
        try:
            if memory.embedder is None:
                raise SystemExit("the bench needs the embedding model (memory.embedding_model)")
            dedup = embedding_dedup(memory.embedder.embed, threshold)
            timings: list[float] = []
            for name, probes in chosen.items():
                ours = shiyi_beliefs(memory, probes, name, timings)
                rows = {
                    "shiyi": ours,
                    "append only": [append_only(p) for p in probes],
                    f"embedding dedup {threshold:g}": [dedup(p) for p in probes],
                }
                print(f"\n{name}: {len(probes)} probes")
                print("\n".join(table(probes, rows)))
                pairs = list(zip(probes, ours, strict=True))
                if args.misses:
                    for probe, believed in (pair for pair in pairs if not right(*pair)):
                        print(f"  miss [{probe.expect}] {probe.earlier!r} -> {probe.later!r}:")
                        print(f"       active {sorted(believed)}")
                results[name] = [
                    {"earlier": p.earlier, "later": p.later, "expect": p.expect,
                     "active": sorted(b), "right": right(p, b)}
                    for p, b in pairs
                ]  # fmt: skip
        finally:
            memory.close()
    first, rest = timings[0], timings[1:]
    print(
        f"\nremember: {len(timings)} statements, p50 {statistics.median(rest) * 1000:.1f} ms"
        f" (the first, loading the embedder: {first * 1000:.0f} ms)"
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(results, out, ensure_ascii=False, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
