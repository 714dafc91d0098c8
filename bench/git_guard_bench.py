"""Cost the bash tool adds to every command to guard git's config and hooks
(:mod:`shiyi.tools.builtins.git_guard`): the walk for ``.git`` entries before the command
(in the sandbox the same walk also finds the secret files, which it made before), the
snapshot of the guarded files, and after the command the walk again and the comparison.

    PYTHONPATH=src python bench/git_guard_bench.py [workspace ...]   (default: this repo)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from shiyi.tools.builtins import git_guard
from shiyi.tools.builtins.sandbox import scan_workspace


def per_command(root: Path, repeats: int = 200) -> tuple[float, float, int]:
    """Best-of-``repeats`` milliseconds: everything the guard adds without a sandbox, what
    it adds in one (the first walk is shared with the secret search); guarded paths."""
    best_all = best_sandboxed = float("inf")
    guarded = 0
    for _ in range(repeats):
        started = time.perf_counter()
        scan = scan_workspace(root)
        walked = time.perf_counter()
        snapshot = git_guard.take(root, scan.git)
        assert snapshot is not None
        restored = git_guard.restore(root, snapshot, scan_workspace(root).git)
        ended = time.perf_counter()
        assert not restored.paths
        guarded = len(snapshot.states)
        best_all = min(best_all, ended - started)
        best_sandboxed = min(best_sandboxed, ended - walked)
    return best_all * 1000, best_sandboxed * 1000, guarded


def main() -> None:
    roots = [Path(p) for p in sys.argv[1:]] or [Path(__file__).resolve().parents[1]]
    for root in roots:
        unsandboxed, sandboxed, guarded = per_command(root.resolve())
        print(
            f"{root}: {guarded} guarded paths; {unsandboxed:.2f} ms per command without a "
            f"sandbox, {sandboxed:.2f} ms with one"
        )


if __name__ == "__main__":
    main()
