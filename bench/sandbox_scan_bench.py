"""Cost of the bash sandbox's search for secret files (.env, shiyi.yaml) in the workspace,
paid at every sandboxed command: prints seconds per scan for generated trees and a real one.

    PYTHONPATH=src python bench/sandbox_scan_bench.py [extra workspace ...]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from shiyi.tools.builtins.sandbox import SCAN_MAX_ENTRIES, workspace_secrets


def tree(root: Path, dirs: int, files_per_dir: int) -> Path:
    for d in range(dirs):
        folder = root / f"pkg{d % 50}" / f"mod{d}"
        folder.mkdir(parents=True, exist_ok=True)
        for f in range(files_per_dir):
            (folder / f"f{f}.py").touch()
    (root / "pkg0" / ".env").write_text("KEY=x\n")
    return root


def timed(root: Path, repeats: int = 3) -> tuple[float, int]:
    best = float("inf")
    found = 0
    for _ in range(repeats):
        started = time.perf_counter()
        found = len(workspace_secrets(root))
        best = min(best, time.perf_counter() - started)
    return best, found


def main() -> None:
    print(f"scan limit: {SCAN_MAX_ENTRIES} entries")
    with tempfile.TemporaryDirectory() as scratch:
        for dirs, per in ((100, 10), (1000, 10), (5000, 20)):
            root = tree(Path(scratch) / f"t{dirs}x{per}", dirs, per)
            seconds, found = timed(root)
            print(f"{dirs * per + dirs:>7} entries: {seconds * 1000:8.1f} ms, {found} found")
    for extra in sys.argv[1:]:
        seconds, found = timed(Path(extra))
        print(f"{extra}: {seconds * 1000:8.1f} ms, {found} found")


if __name__ == "__main__":
    main()
