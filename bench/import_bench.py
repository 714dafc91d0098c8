"""Import throughput end to end: `shiyi memory import` as a user runs it, old vs new.

    python bench/import_bench.py [--runs 3] [--old-src /tmp/old/src] [--realmem PERSONA]

Each run imports the same file into an empty store with the real CLI (a subprocess: start,
read, queue, ingest, link, embed, close) under each configuration in turn, alternating, so
a busy machine slows all of them alike; the figure is turns / wall-clock seconds, median of
the runs.  Configurations: ``old`` (the sources at ``--old-src``, e.g. a worktree of the
previous commit, float MiniLM), ``float`` and ``int8`` (``memory.embed_model:
all-MiniLM-L6-v2-int8``), ``ffn`` and ``nodown`` (the partly quantized graphs,
``all-MiniLM-L6-v2-int8-ffn`` and ``-int8-nodown``) of this tree.  The ONNX graph cache
stays warm between runs (as on a user's second import); the store and its embedding cache
are new each run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
DATA = HERE.parent / "shared" / "data"


def realmem_jsonl(persona: str, target: Path) -> Path:
    """One RealMem persona as `shiyi memory import` JSONL (one session per dialogue)."""
    sys.path.insert(0, str(HERE / "bench"))
    from realmem_bench import load_persona

    path = next((DATA / "realmem-dev").glob(f"{persona}_dialogues_*.json"))
    _, sessions = load_persona(path)
    with target.open("w", encoding="utf-8") as out:
        for session in sessions:
            for event in session.events:
                line = {"speaker": event.role, "text": event.content, "timestamp": event.ts}
                out.write(json.dumps({**line, "session": persona}) + "\n")
    return target


def run_import(src: Path, home: Path, dataset: Path, model: str) -> tuple[int, float]:
    """Turns imported and wall-clock seconds of one `shiyi memory import` into a new store."""
    shutil.rmtree(home / "memory", ignore_errors=True)
    workspace = home / "ws"
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "shiyi.yaml").write_text(
        f"memory:\n  embed_model: {model}\n  lifecycle:\n    extraction: false\n"
    )
    env = {**os.environ, "SHIYI_HOME": str(home), "PYTHONPATH": str(src)}
    env["XDG_CONFIG_HOME"] = str(home / "config")
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "shiyi", "memory", "import", str(dataset)],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    took = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(f"import failed ({src}, {model}):\n{done.stderr[-2000:]}")
    turns = int(done.stdout.split("imported ")[1].split()[0])
    return turns, took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--old-src", help="sources of the previous version (omit: new only)")
    parser.add_argument("--realmem", default="Kenta_Tanaka", help="persona ('' to skip)")
    parser.add_argument(
        "--configs", default="float,int8,ffn,nodown", help="of this tree, comma-separated"
    )
    args = parser.parse_args()
    configs = {
        name: (HERE / "src", model)
        for name, model in (
            ("float", "all-MiniLM-L6-v2"),
            ("int8", "all-MiniLM-L6-v2-int8"),
            ("ffn", "all-MiniLM-L6-v2-int8-ffn"),
            ("nodown", "all-MiniLM-L6-v2-int8-nodown"),
        )
        if name in args.configs.split(",")
    }
    if args.old_src:
        configs = {"old": (Path(args.old_src), "all-MiniLM-L6-v2"), **configs}
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        datasets = {"LoCoMo dev": DATA / "locomo-dev.json"}
        if args.realmem:
            datasets[f"RealMem {args.realmem}"] = realmem_jsonl(
                args.realmem, Path(tmp) / f"{args.realmem}.jsonl"
            )
        for name, dataset in datasets.items():
            rates: dict[str, list[float]] = {c: [] for c in configs}
            for run in range(args.runs):
                for config, (src, model) in configs.items():
                    turns, took = run_import(src, Path(tmp) / config, dataset, model)
                    rates[config].append(turns / took)
                    print(f"{name} run {run + 1} {config}: {turns} turns in {took:.1f} s "
                          f"({turns / took:.0f} turns/s)", flush=True)  # fmt: skip
            medians = {c: statistics.median(r) for c, r in rates.items()}
            base = medians.get("old", medians["float"])
            print(f"\n{name}: median turns/s over {args.runs} runs (ratio to the first)")
            for config, median in medians.items():
                print(f"  {config:<6} {median:7.1f}  x{median / base:.2f}")
            print(flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
