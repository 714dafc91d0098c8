"""Cold start of `shiyi --help` (target < 300 ms), median and p95 of repeated runs."""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import time

RUNS = 15


def main() -> None:
    exe = shutil.which("shiyi") or str(__import__("pathlib").Path(sys.executable).with_name("shiyi"))
    timings = []
    for _ in range(RUNS):
        started = time.perf_counter()
        subprocess.run([exe, "--help"], check=True, capture_output=True)
        timings.append((time.perf_counter() - started) * 1000)
    timings.sort()
    print(f"shiyi --help: median {statistics.median(timings):.0f} ms, "
          f"p95 {timings[int(RUNS * 0.95) - 1]:.0f} ms, min {timings[0]:.0f} ms ({RUNS} runs)")
    print("target: < 300 ms")


if __name__ == "__main__":
    main()
