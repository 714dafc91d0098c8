"""Entity extraction and tokenising time against input length, before and after issue 29.

    python bench/regex_linear_bench.py [--before 85e4de7] [--sizes 2000,4000,8000,16000]

"Before" is ``memory/entities.py`` and ``index/text.py`` as of the given commit (read with
``git show`` and loaded beside this checkout's modules); "after" is this checkout.  Each
input is one hostile shape (a base64 blob, runs of "a_", "-", "a.", "@a", "/"...) at each
size; a linear implementation's time grows like the size, a quadratic one's like its square.
Before-runs over ``--limit`` seconds stop that shape's larger sizes (printed as "-").
"""

from __future__ import annotations

import argparse
import base64
import random
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE / "src"))

from shiyi.index import text as text_now  # noqa: E402
from shiyi.memory.text import entities as entities_now  # noqa: E402


def old_module(commit: str, paths: tuple[str, ...], name: str) -> types.ModuleType:
    """The module at the first of ``paths`` that exists at ``commit`` (files move over time)."""
    for path in paths:
        shown = subprocess.run(
            ["git", "-C", str(HERE), "show", f"{commit}:{path}"], capture_output=True, text=True
        )
        if shown.returncode == 0:
            source = shown.stdout
            break
    else:
        raise SystemExit(f"none of {paths} exists at {commit}")
    module = types.ModuleType(name)
    exec(compile(source, f"{commit}:{path}", "exec"), module.__dict__)
    return module


def shapes(size: int) -> dict[str, str]:
    blob = base64.b64encode(random.Random(29).randbytes(size)).decode()[:size]
    units = {"a_": "a_", "-": "-", "a.": "a.", "@a": "@a", "/": "/", "-/": "-/", "A.": "A."}
    out = {name: (unit * (size // len(unit) + 1))[:size] for name, unit in units.items()}
    out["base64"] = blob
    out["prose"] = ("Alice met Bob in Paris about src/app.py and kuzu. " * size)[:size]
    return out


def timed(run: Callable[[str], object], text: str) -> float:
    began = time.perf_counter()
    run(text)
    return time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default="85e4de7")
    parser.add_argument("--sizes", default="2000,4000,8000,16000")
    parser.add_argument("--limit", type=float, default=20.0)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    text_old = old_module(args.before, ("src/shiyi/index/text.py",), "text_old")
    entities_old = old_module(
        args.before,
        ("src/shiyi/memory/text/entities.py", "src/shiyi/memory/entities.py"),
        "entities_old",
    )
    entities_now.extract_entities("warm up jieba 你好")
    runs = {
        "entities": (entities_old.extract_entities, entities_now.extract_entities),
        "tokenize": (text_old.tokenize, text_now.tokenize),
    }
    header = "  ".join(f"{n:>9}" for n in sizes)
    for what, (before, after) in runs.items():
        print(f"\n{what}: seconds per input ({args.before} -> this checkout)")
        print(f"{'shape':<8} {'':>6}  {header}")
        for shape in shapes(1):
            cells: dict[str, list[str]] = {"before": [], "after": []}
            for label, run in (("before", before), ("after", after)):
                over = False
                for size in sizes:
                    if over:
                        cells[label].append(f"{'-':>9}")
                        continue
                    took = timed(run, shapes(size)[shape])
                    over = took > args.limit
                    cells[label].append(f"{took:>9.3f}")
            for label in ("before", "after"):
                print(f"{shape:<8} {label:>6}  {'  '.join(cells[label])}")


if __name__ == "__main__":
    main()
