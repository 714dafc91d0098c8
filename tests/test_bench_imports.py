"""The benchmarks are scripts no test runs; their imports of shiyi must still resolve (a
module that moved once left ``bench/repomap_bench.py`` importing a path that was gone)."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


SIBLINGS = {path.stem for path in BENCH.glob("*.py")}
"""Bench scripts run as ``python bench/x.py``, so they import each other by bare name."""


def shiyi_imports(path: Path) -> list[tuple[str, str | None]]:
    """``(module, name)`` for every import of shiyi or of a sibling script (as ``bench.x``)."""
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names if alias.name.startswith("shiyi")]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("shiyi"):
            found += [(str(node.module), alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module in SIBLINGS:
            found += [(f"bench.{node.module}", alias.name) for alias in node.names]
    return found


@pytest.mark.parametrize("script", sorted(BENCH.glob("*.py")), ids=lambda p: p.name)
def test_every_shiyi_name_a_benchmark_imports_exists(
    script: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(BENCH))  # as when the script runs
    for module, name in shiyi_imports(script):
        imported = importlib.import_module(module)
        if name is not None and not hasattr(imported, name):
            importlib.import_module(f"{module}.{name}")  # a submodule, or ImportError


DATA_TOOLS = {"locomo_gen"}
"""Runnable, but measures nothing: it writes the SYNTHETIC data set to a file."""


def runs_as_a_script(path: Path) -> bool:
    """Whether ``path`` has an ``if __name__ == "__main__":`` block."""
    tests = [
        n.test for n in ast.parse(path.read_text(encoding="utf-8")).body if isinstance(n, ast.If)
    ]
    return any(
        isinstance(t, ast.Compare) and isinstance(t.left, ast.Name) and t.left.id == "__name__"
        for t in tests
    )


@pytest.mark.parametrize("path", sorted(BENCH.glob("*.py")), ids=lambda p: p.name)
def test_benchmarks_end_in_bench_and_their_helpers_do_not(path: Path) -> None:
    """One pattern: ``python bench/<topic>_bench.py`` is what you run; every other file is a
    benchmark's data, metrics or model helper (docs/benchmarks.md)."""
    if path.stem.endswith("_bench"):
        assert runs_as_a_script(path), f"{path.name} runs nothing: rename it (no _bench)"
    else:
        assert path.stem in DATA_TOOLS or not runs_as_a_script(path), (
            f"{path.name} is run as a benchmark: rename it <topic>_bench.py"
        )
