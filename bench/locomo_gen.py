"""Write a SYNTHETIC LoCoMo-format dataset (or the JSONL import format) for memory benchmarks.

    python bench/locomo_gen.py --conversations 10 --sessions 6 --turns 20 --seed 7 -o out.json
    python bench/locomo_gen.py --jsonl -o out.jsonl

The generator lives in ``bench/synthetic.py``; the output is deterministic per seed.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from synthetic import generate, to_jsonl_records


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--sessions", type=int, default=6)
    parser.add_argument("--turns", type=int, default=20, help="turns per session")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--jsonl", action="store_true", help="write JSONL import lines (no QA)")
    parser.add_argument("-o", "--output", type=Path, required=True)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = _parse_args(argv)
    samples = generate(args.conversations, args.sessions, args.turns, args.seed)
    if args.jsonl:
        lines = (json.dumps(r, ensure_ascii=False) for r in to_jsonl_records(samples))
        args.output.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    else:
        args.output.write_text(json.dumps(samples, ensure_ascii=False, indent=1), encoding="utf-8")
    categories = Counter(item["category"] for sample in samples for item in sample["qa"])
    summary = ", ".join(f"cat{c}={n}" for c, n in sorted(categories.items()))
    print(f"wrote {len(samples)} conversations to {args.output} ({summary})")


if __name__ == "__main__":
    main()
