"""``RepoMap``: walk a repository, tag its files (cached), rank, fit to a token budget."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict, cast

from shiyi.errors import RepoMapError
from shiyi.repomap.cache import FORMAT_VERSION, CachedTags, TagCache, tags_version
from shiyi.repomap.files import walk_sources
from shiyi.repomap.model import FileTags, RepoMapResult, RepoMapStats, SkippedFile, SourceFile
from shiyi.repomap.render import TokenCount, fit
from shiyi.repomap.tags import extract_tags

DEFAULT_MAX_TOKENS = 1024
MAX_FILE_BYTES = 1_000_000
"""Larger source files are generated or minified code: slow to parse, useless in a map."""
_SNIFF_BYTES = 8192


@dataclass(frozen=True, slots=True)
class _Tagged:
    tags: dict[str, FileTags]
    parsed: int
    hits: int
    skipped: list[SkippedFile]


class RepoMap:
    """A ranked outline of a repository's code that fits a token budget.

    ``count_tokens`` is injected (the agent passes its ``TokenCounter.count``) because the
    repo map sits below the context layer that owns token counting.  ``cache_path`` is the
    SQLite cache; None keeps the cache in memory for this object's builds only.
    """

    def __init__(
        self,
        root: Path,
        *,
        count_tokens: TokenCount,
        cache_path: Path | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        exclude: Sequence[str] = (),
    ) -> None:
        root = root.expanduser()
        if not root.is_dir():
            what = "does not exist" if not root.exists() else "is not a directory"
            raise RepoMapError(f"{root} {what}; the repo map needs a repository folder.")
        self.root = root.resolve()
        self.count_tokens = count_tokens
        self.max_tokens = _check_budget(max_tokens)
        self.exclude = tuple(exclude)
        self._cache = TagCache(cache_path)

    def close(self) -> None:
        self._cache.close()

    def __enter__(self) -> RepoMap:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def build(
        self,
        *,
        focus_files: Iterable[str | Path] = (),
        mentioned: Iterable[str] = (),
        max_tokens: int | None = None,
    ) -> RepoMapResult:
        """The map, ranked toward ``focus_files`` and ``mentioned`` identifiers."""
        started = time.perf_counter()
        budget = _check_budget(max_tokens if max_tokens is not None else self.max_tokens)
        walk = walk_sources(self.root, self.exclude)
        known = {f.rel for f in walk.files}
        focus = sorted({self._relative(f) for f in focus_files})
        unmatched = tuple(f for f in focus if f not in known)
        mentions = sorted({m.strip() for m in mentioned if m.strip()})
        key = self._map_key(walk.files, focus, mentions, budget)
        cached = self._cache.get_map(key)
        if cached is not None:
            return _from_cached(cached, len(walk.files), walk.unsupported, unmatched, started)
        # Imported here: numpy costs a CLI process ~0.15 s, and a cached map needs none of it.
        from shiyi.repomap.graph import rank

        tagged = self._tag(walk.files)
        ranking = rank(tagged.tags, focus, mentions, limit=budget)
        fitted = fit(ranking.definitions, tagged.tags, budget, self.count_tokens)
        stats = RepoMapStats(
            files=len(walk.files),
            parsed=tagged.parsed,
            cache_hits=tagged.hits,
            unsupported=walk.unsupported,
            definitions=sum(len(t.definitions) for t in tagged.tags.values()),
            skipped=tuple(tagged.skipped),
            seconds=time.perf_counter() - started,
        )
        result = RepoMapResult(fitted.text, fitted.tokens, budget, fitted.files, stats, unmatched)
        self._cache.put_map(key, _to_cached(result))
        return result

    # --- steps -----------------------------------------------------------------------------

    def _relative(self, path: str | Path) -> str:
        """A focus file as a root-relative POSIX path; it must exist under the root."""
        raw = Path(path).expanduser()
        absolute = raw if raw.is_absolute() else self.root / raw
        resolved = Path(os.path.normpath(absolute))
        if not resolved.is_relative_to(self.root):
            raise RepoMapError(f"focus file {str(path)!r} is outside the repository {self.root}.")
        if not resolved.is_file():
            raise RepoMapError(
                f"focus file {str(path)!r} does not exist under {self.root}; give a path "
                "relative to the repository root."
            )
        return resolved.relative_to(self.root).as_posix()

    def _map_key(
        self, files: Sequence[SourceFile], focus: list[str], mentions: list[str], budget: int
    ) -> str:
        digest = hashlib.sha256()
        request = [FORMAT_VERSION, tags_version(), str(self.root), focus, mentions, budget]
        request.append(getattr(self.count_tokens, "__qualname__", repr(self.count_tokens)))
        digest.update(json.dumps(request).encode())
        for f in files:
            digest.update(f"{f.rel}\0{f.mtime_ns}\0{f.size}\n".encode())
        return digest.hexdigest()

    def _tag(self, files: Sequence[SourceFile]) -> _Tagged:
        """Tags of every file: from the cache when mtime and size match, else parsed."""
        cached = self._cache.load(self.root)
        tags: dict[str, FileTags] = {}
        fresh: list[tuple[SourceFile, FileTags]] = []
        skipped: list[SkippedFile] = []
        hits = 0
        for file in files:
            entry: CachedTags | None = cached.pop(file.path, None)
            if entry is not None and entry.fresh_for(file):
                tags[file.rel] = entry.tags
                hits += 1
                continue
            parsed = _parse(file)
            if isinstance(parsed, SkippedFile):
                skipped.append(parsed)
                continue
            tags[file.rel] = parsed
            fresh.append((file, parsed))
        self._cache.store(fresh)
        # What is left was cached but not walked: drop the deleted files (an excluded or
        # ignored one stays cached for a later map that includes it).
        self._cache.forget(p for p in cached if not os.path.exists(p))
        return _Tagged(tags, len(fresh), hits, skipped)


def _parse(file: SourceFile) -> FileTags | SkippedFile:
    if file.size > MAX_FILE_BYTES:
        return SkippedFile(file.rel, f"too large ({file.size} bytes > {MAX_FILE_BYTES})")
    try:
        with open(file.path, "rb") as fh:
            source = fh.read()
    except OSError as exc:
        return SkippedFile(file.rel, f"unreadable ({exc.strerror or exc})")
    if b"\0" in source[:_SNIFF_BYTES]:
        return SkippedFile(file.rel, "binary content")
    try:
        return extract_tags(source, file.language)
    except RepoMapError:
        raise  # a missing grammar is an install problem, not this file's
    except Exception as exc:  # a parser bug on one odd file must not cost the whole map
        return SkippedFile(file.rel, f"parse failed ({type(exc).__name__}: {exc})")


def _check_budget(max_tokens: int) -> int:
    if max_tokens < 1:
        raise RepoMapError(f"the token budget must be 1 or more (got {max_tokens}).")
    return max_tokens


class _CachedMap(TypedDict):
    text: str
    tokens: int
    max_tokens: int
    files_shown: list[str]
    definitions: int
    skipped: list[tuple[str, str]]


def _to_cached(result: RepoMapResult) -> str:
    value: _CachedMap = {
        "text": result.text,
        "tokens": result.tokens,
        "max_tokens": result.max_tokens,
        "files_shown": list(result.files_shown),
        "definitions": result.stats.definitions,
        "skipped": [(s.rel, s.reason) for s in result.stats.skipped],
    }
    return json.dumps(value)


def _from_cached(
    text: str, files: int, unsupported: int, unmatched: tuple[str, ...], started: float
) -> RepoMapResult:
    cached = cast(_CachedMap, json.loads(text))
    stats = RepoMapStats(
        files=files,
        parsed=0,
        cache_hits=0,
        unsupported=unsupported,
        definitions=cached["definitions"],
        skipped=tuple(SkippedFile(rel, reason) for rel, reason in cached["skipped"]),
        map_cache_hit=True,
        seconds=time.perf_counter() - started,
    )
    return RepoMapResult(
        text=cached["text"],
        tokens=cached["tokens"],
        max_tokens=cached["max_tokens"],
        files_shown=tuple(cached["files_shown"]),
        stats=stats,
        unmatched_focus=unmatched,
    )
