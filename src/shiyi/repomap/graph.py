"""Rank files and definitions: a graph of "file A uses an identifier file B defines",
personalised PageRank over it, then each file's rank flows to the definitions it uses.

This follows Aider's repo map: an edge's weight grows with the square root of the number of
uses, distinctive identifiers (long snake_case or CamelCase) and identifiers the conversation
mentions weigh more, private (``_x``) and widely defined ones (``get``, ``run``) less.

Everything after collecting the (file, identifier) uses runs on numpy arrays: on the
standard library (1,800 files, ~1M edges) Python loops over edges cost half a second.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

import numpy as np
import numpy.typing as npt

from shiyi.repomap.model import FileTags, RankedDefinition

DAMPING = 0.85
MAX_ITERATIONS = 100
TOLERANCE = 1e-9
PERSONAL_SHARE = 0.85
"""Of the teleport mass, the share that goes to focus/mentioned files; the rest is spread
over all files so that parts of the repository unreachable from the focus stay ordered."""
MAX_DEFINERS = 20
"""An identifier defined in more files than this (``__init__``, ``get``) says nothing
about which file is meant; linking every user to every definer would also cost millions
of edges on a large tree."""
FOCUS_USE_BOOST = 50.0
"""Uses made by a focus file weigh this much more: what the focus needs is what matters."""
MENTION_BOOST = 10.0
BASELINE = 0.05
"""Share of a file's own rank given to each of its definitions, so unreferenced ones are
still ordered (by their file's importance) behind referenced ones."""

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Ranking:
    files: dict[str, float]
    """PageRank of every file (sums to 1)."""
    definitions: list[RankedDefinition]
    """The best definitions, best first (at most the ``limit`` asked for)."""


def identifier_weight(ident: str, definers: int, mentioned: Collection[str]) -> float:
    weight = 1.0
    if ident in mentioned:
        weight *= MENTION_BOOST
    lower = ident.lower()
    is_snake = "_" in ident.strip("_") and lower != lower.upper()  # has letters
    is_camel = lower != ident != ident.upper()  # both cases
    if (is_snake or is_camel) and len(ident) >= 8:
        weight *= 10
    if ident.startswith("_"):
        weight *= 0.1
    if definers > 5:
        weight *= 0.1
    return weight


@dataclass(frozen=True, slots=True)
class _Symbols:
    """Identifiers numbered, with the files defining each (as a flat CSR-style array)."""

    index: dict[str, int]
    definers: Ints
    """Defining file indices of identifier i: ``definers[start[i] : start[i] + count[i]]``."""
    start: Ints
    count: Ints


@dataclass(frozen=True, slots=True)
class _Edges:
    src: Ints
    dst: Ints
    weight: Floats
    ident: Ints


def rank(
    tags: Mapping[str, FileTags],
    focus: Collection[str] = (),
    mentioned: Collection[str] = (),
    limit: int | None = None,
) -> Ranking:
    """Rank ``tags`` (by file path) toward ``focus`` files and ``mentioned`` identifiers.

    Only the best ``limit`` definitions are returned (all when None).
    """
    files = sorted(tags)
    index = {rel: i for i, rel in enumerate(files)}
    symbols = _symbols(files, tags)
    mentions = set(mentioned)
    edges = _edges(files, tags, symbols, {index[f] for f in focus if f in index}, mentions)
    teleport = _personalisation(files, symbols, focus, mentions)
    out_weight = _sums(edges.src, edges.weight, len(files))
    share = edges.weight / out_weight[edges.src] if len(edges.src) else edges.weight
    file_rank = _pagerank(edges.src, edges.dst, share, out_weight, teleport)
    best = _best_definitions(
        files, tags, symbols, file_rank, edges, file_rank[edges.src] * share, mentions, limit
    )
    return Ranking({rel: float(file_rank[i]) for rel, i in index.items()}, best)


def _symbols(files: list[str], tags: Mapping[str, FileTags]) -> _Symbols:
    defined: dict[str, list[int]] = {}
    for i, rel in enumerate(files):
        for name in dict.fromkeys(d.name for d in tags[rel].definitions):
            defined.setdefault(name, []).append(i)
    index = {name: i for i, name in enumerate(defined)}
    count = np.fromiter((len(v) for v in defined.values()), np.int64, len(defined))
    start = np.zeros(len(defined), np.int64)
    if len(count):
        start[1:] = np.cumsum(count)[:-1]
    flat = np.fromiter(
        (f for v in defined.values() for f in v), np.int64, int(count.sum()) if len(count) else 0
    )
    return _Symbols(index, flat, start, count)


def _edges(
    files: list[str],
    tags: Mapping[str, FileTags],
    symbols: _Symbols,
    focus: set[int],
    mentioned: set[str],
) -> _Edges:
    """One edge per (user file, identifier, defining file), weighted as in Aider."""
    uses_src: list[int] = []
    uses_ident: list[int] = []
    uses_value: list[float] = []
    weights: dict[int, float] = {}
    for source, rel in enumerate(files):
        boost = FOCUS_USE_BOOST if source in focus else 1.0
        for name, count in tags[rel].references.items():
            ident = symbols.index.get(name)
            if ident is None:
                continue
            base = weights.get(ident)
            if base is None:
                definers = int(symbols.count[ident])
                base = (
                    0.0 if definers > MAX_DEFINERS else identifier_weight(name, definers, mentioned)
                )
                weights[ident] = base
            if base:
                uses_src.append(source)
                uses_ident.append(ident)
                uses_value.append(base * boost * math.sqrt(count))
    return _expand(symbols, np.asarray(uses_src, np.int64), np.asarray(uses_ident, np.int64),
                   np.asarray(uses_value, np.float64))  # fmt: skip


def _expand(symbols: _Symbols, src: Ints, ident: Ints, value: Floats) -> _Edges:
    """Repeat each use once per file defining its identifier; drop a file's self-uses."""
    lengths = symbols.count[ident]
    total = int(lengths.sum())
    first = np.cumsum(lengths) - lengths  # position of each use's first edge
    within = np.arange(total, dtype=np.int64) - np.repeat(first, lengths)
    dst = symbols.definers[np.repeat(symbols.start[ident], lengths) + within]
    src_all = np.repeat(src, lengths)
    keep = src_all != dst  # a file using its own names says nothing about the others
    return _Edges(
        src_all[keep],
        dst[keep],
        np.repeat(value, lengths)[keep],
        np.repeat(ident, lengths)[keep],
    )


def _personalisation(
    files: list[str], symbols: _Symbols, focus: Collection[str], mentioned: set[str]
) -> Floats:
    uniform = np.full(len(files), 1.0 / max(len(files), 1))
    personal = np.zeros(len(files))
    focus_set = set(focus)
    stems = {ident.lower() for ident in mentioned}
    for i, rel in enumerate(files):
        if rel in focus_set:
            personal[i] += 1.0
        if PurePosixPath(rel).stem.lower() in stems:  # "look at config" also means config.py
            personal[i] += 1.0
    for name in mentioned:  # the files defining what the conversation talks about
        ident = symbols.index.get(name)
        if ident is not None:
            start, count = int(symbols.start[ident]), int(symbols.count[ident])
            personal[symbols.definers[start : start + count]] += 1.0 / count
    total = personal.sum()
    if total == 0:
        return uniform
    blended: Floats = PERSONAL_SHARE * personal / total + (1 - PERSONAL_SHARE) * uniform
    return blended


def _sums(bins: Ints, weights: Floats, size: int) -> Floats:
    """Per-bin sums of ``weights`` (numpy's stubs type a weighted bincount as integers)."""
    return np.bincount(bins, weights=weights, minlength=size).astype(np.float64, copy=False)


def _pagerank(src: Ints, dst: Ints, share: Floats, out_weight: Floats, teleport: Floats) -> Floats:
    """Power iteration; a file with no outgoing edge hands its rank to the teleport vector."""
    n = len(teleport)
    dangling = out_weight == 0
    current = teleport.copy()
    for _ in range(MAX_ITERATIONS):
        flow = _sums(dst, current[src] * share, n)
        lost = current[dangling].sum()
        updated: Floats = (1 - DAMPING) * teleport + DAMPING * (flow + lost * teleport)
        if np.abs(updated - current).sum() < TOLERANCE:
            return updated
        current = updated
    return current


def _best_definitions(
    files: list[str],
    tags: Mapping[str, FileTags],
    symbols: _Symbols,
    file_rank: Floats,
    edges: _Edges,
    flow: Floats,
    mentioned: set[str],
    limit: int | None,
) -> list[RankedDefinition]:
    """Score every definition by the rank flowing to its (file, identifier) pair."""
    n_idents = max(len(symbols.index), 1)
    owners: list[int] = []
    keys: list[int] = []
    for i, rel in enumerate(files):
        for definition in tags[rel].definitions:
            owners.append(i)
            keys.append(i * n_idents + symbols.index[definition.name])
    owner = np.asarray(owners, np.int64)
    key = np.asarray(keys, np.int64)
    per_file = np.bincount(owner, minlength=len(files)).astype(np.float64)
    score = BASELINE * file_rank[owner] / np.maximum(per_file[owner], 1.0)
    if len(edges.dst):
        edge_keys, inverse = np.unique(edges.dst * n_idents + edges.ident, return_inverse=True)
        received = _sums(inverse, flow, len(edge_keys))
        slot = np.minimum(np.searchsorted(edge_keys, key), len(edge_keys) - 1)
        score += np.where(edge_keys[slot] == key, received[slot], 0.0)
    if mentioned:
        # A definition the conversation names is wanted whoever uses it: it gets its file's
        # whole rank (the file is personalised, so that rank is high) on top of its own.
        boosted = [symbols.index[m] for m in mentioned if m in symbols.index]
        named = np.isin(key % n_idents, boosted)
        score[named] = (score[named] + file_rank[owner[named]]) * MENTION_BOOST
    # Stable: ties keep file path and line order, so maps are reproducible.
    order = np.argsort(-score, kind="stable")[:limit]
    first = np.cumsum(per_file) - per_file  # index of each file's first definition
    best: list[RankedDefinition] = []
    for j in order.tolist():
        i = int(owner[j])
        definition = tags[files[i]].definitions[j - int(first[i])]
        best.append(RankedDefinition(float(score[j]), files[i], definition))
    return best
