"""Which entities a name or alias stands for, kept in memory for the embedded store.

Every recall's graph path looks the question's names and terms up among entity names *and
aliases*.  Kuzu cannot index a list column, so that lookup scanned the whole Entity table
twice per query (once for the question's terms, once more to resolve the seeds): 2.8 ms per
scan at 1,339 entities, growing with every entity.  This map answers from memory; Kuzu stays
the durable copy: the map is loaded from it on first use and kept in step by the graph's
entity writes (the process that owns the store is the only writer, as for the vector cache).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence

Loader = Callable[[], Iterable[tuple[str, Sequence[str]]]]
"""Every entity as (name, aliases)."""


class EntityNames:
    def __init__(self, loader: Loader) -> None:
        self._loader = loader
        self._lock = threading.Lock()
        self._names: dict[str, set[str]] | None = None  # name or alias -> entity names
        self._aliases: dict[str, tuple[str, ...]] = {}  # entity name -> its aliases

    def resolve(self, wanted: Iterable[str]) -> list[str]:
        """Names of the entities called, or also known as, any of ``wanted``; sorted."""
        with self._lock:
            names = self._loaded()
            return sorted({name for key in wanted for name in names.get(key, ())})

    def stored(self, entities: Iterable[tuple[str, Sequence[str]]]) -> None:
        """Entities just written, with their full alias lists (replacing the old ones)."""
        with self._lock:
            if self._names is None:
                return  # not loaded yet: the loader will read them
            for name, aliases in entities:
                self._drop(name)
                self._add(name, aliases)

    def deleted(self, names: Iterable[str]) -> None:
        with self._lock:
            if self._names is not None:
                for name in names:
                    self._drop(name)

    def _loaded(self) -> dict[str, set[str]]:
        if self._names is None:
            self._names, self._aliases = {}, {}
            for name, aliases in self._loader():
                self._add(name, aliases)
        return self._names

    def _add(self, name: str, aliases: Sequence[str]) -> None:
        assert self._names is not None
        self._aliases[name] = tuple(aliases)
        for key in (name, *aliases):
            self._names.setdefault(key, set()).add(name)

    def _drop(self, name: str) -> None:
        assert self._names is not None
        for key in (name, *self._aliases.pop(name, ())):
            holders = self._names.get(key)
            if holders is not None:
                holders.discard(name)
                if not holders:
                    del self._names[key]
