"""Cold start of `shiyi --help` (target < 300 ms), median and p95 of repeated runs."""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

RUNS = 15


def main() -> None:
    beside_python = Path(sys.executable).with_name("shiyi")
    exe = str(beside_python) if beside_python.exists() else shutil.which("shiyi") or "shiyi"
    timings = []
    for _ in range(RUNS):
        started = time.perf_counter()
        subprocess.run([exe, "--help"], check=True, capture_output=True)
        timings.append((time.perf_counter() - started) * 1000)
    timings.sort()
    print(
        f"shiyi --help: median {statistics.median(timings):.0f} ms, "
        f"p95 {timings[int(RUNS * 0.95) - 1]:.0f} ms, min {timings[0]:.0f} ms ({RUNS} runs)"
    )
    print("target: < 300 ms")


if __name__ == "__main__":
    main()
