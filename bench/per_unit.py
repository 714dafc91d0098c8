"""Recall@10 per unit (a conversation, a persona) for every system of a bench run.

A mechanism fitted to one unit gains there and loses on the others; one that generalises
gains on each.  The benches print this table under their totals so that shows."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping
from typing import TypeVar

T = TypeVar("T")


def print_per_unit(
    rows: Mapping[str, T], unit: str, of: Callable[[T], Mapping[str, list[float]]]
) -> None:
    """One line per system, one column per ``unit`` found in any row (``of``: a row's
    recall@10 values by unit)."""
    units = sorted({name for row in rows.values() for name in of(row)})
    if not units:
        return
    width = max(40, *(len(name) + 2 for name in rows))
    print(f"\nrecall@10 per {unit}")
    print(f"{'system':<{width}}" + "".join(f"  {name[:16]:>16}" for name in units))
    for name, row in rows.items():
        found = of(row)
        cells = (f"{statistics.mean(found[u]):.3f}" if found.get(u) else "-" for u in units)
        print(f"{name:<{width}}" + "".join(f"  {cell:>16}" for cell in cells))
