"""How sure a difference in recall is: hybrid against every other system on the same queries.

A dev set of ~390 questions moves R@10 by 0.003 a question, and a mechanism kept for a gain
of 0.005 may be two questions' luck that a held-out set does not repeat.  So the benches
print, under their totals, each system's difference from hybrid with a 95% interval from a
paired bootstrap (the same resampled questions for both systems, 2,000 rounds, seeded), and
on how many questions hybrid found more of the evidence and on how many less.  An interval
that holds 0 says the dev set cannot tell the two apart.  It measures the luck of which
questions were asked, not of which conversations: questions of one conversation are not
independent, so the real uncertainty is wider still.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

ROUNDS = 2000
LEVEL = 0.95


@dataclass(frozen=True)
class Paired:
    """``first`` minus ``second`` over the same questions."""

    mean: float
    low: float
    high: float
    better: int
    """Questions where ``first`` recalled more of the evidence."""
    worse: int

    @property
    def certain(self) -> bool:
        """The interval leaves 0 out."""
        return self.low > 0 or self.high < 0


def paired(
    first: Sequence[float], second: Sequence[float], rounds: int = ROUNDS, seed: int = 0
) -> Paired:
    """The mean difference with a percentile bootstrap interval at :data:`LEVEL`."""
    if len(first) != len(second):
        raise ValueError(
            f"paired recall needs the same questions: {len(first)} against {len(second)}"
        )
    if not first:
        raise ValueError("paired recall needs at least one question")
    diff = np.asarray(first, dtype=np.float64) - np.asarray(second, dtype=np.float64)
    picks = np.random.default_rng(seed).integers(0, len(diff), size=(rounds, len(diff)))
    means = diff[picks].mean(axis=1)
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return Paired(
        float(diff.mean()), float(low), float(high), int((diff > 0).sum()), int((diff < 0).sum())
    )


def print_paired(reference: str, rows: Mapping[str, Sequence[float]], k: int = 10) -> None:
    """One line per system: ``reference``'s R@k minus the system's, its interval, and the
    questions each side won."""
    ours = rows[reference]
    others = {name: values for name, values in rows.items() if name != reference}
    if not others:
        return
    width = max(40, *(len(name) + 2 for name in others))
    print(f"\n{reference} against each system, R@{k} on the same questions")
    print(f"{'system':<{width}}  {'difference':>10}  {'95% interval':>17}  hybrid ahead / behind")
    for name, values in others.items():
        found = paired(ours, values)
        span = f"[{found.low:+.3f}, {found.high:+.3f}]"
        mark = "" if found.certain else "  (cannot tell)"
        if not found.better and not found.worse:
            mark = "  (the same on every question)"
        line = f"{name:<{width}}  {found.mean:+10.3f}  {span:>17}  {found.better:>5} / "
        print(f"{line}{found.worse:<5}{mark}".rstrip())


def print_above_best_single(
    hybrid: Mapping[int, float], singles: Mapping[str, Mapping[int, float]]
) -> bool:
    """Issue 33's bar, hybrid at or above its best single path at every k, with the figures
    (mean recall per k, of hybrid and of each single path); returns the verdict."""
    best = {k: max(single[k] for single in singles.values()) for k in hybrid}
    verdict = all(hybrid[k] >= best[k] for k in hybrid)
    figures = ", ".join(f"R@{k} {hybrid[k]:.3f} vs {best[k]:.3f}" for k in hybrid)
    print(f"\nhybrid >= best single path at every k: {'yes' if verdict else 'NO'} ({figures})")
    return verdict
