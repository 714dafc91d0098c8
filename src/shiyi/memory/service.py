"""The memory facade the agent, tools and CLI use: one object per owning process."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

from shiyi.config.settings import MemorySettings, Settings
from shiyi.errors import ConfigError, ShiyiError
from shiyi.llm.types import Message
from shiyi.memory.embedded import EmbeddedStore
from shiyi.memory.fusion import RerankWeights
from shiyi.memory.jobs import JobQueue
from shiyi.memory.models import Anchor, EventRecord, FactKind, FactRecord, MemoryHit
from shiyi.memory.present import format_hits
from shiyi.memory.protocol import Embedder, MemoryStore
from shiyi.memory.retriever import Mode, Retriever
from shiyi.memory.worker import EMBED, MemoryWorker
from shiyi.memory.writer import MemoryWriter

REINDEX_CHUNK = 5000


def build_embedder(settings: MemorySettings, cache_path: Path) -> Embedder | None:
    """The configured embedder behind a content-hash cache (nothing is embedded twice)."""
    from shiyi.memory.embeddings import CachedEmbedder, EmbeddingCache

    inner: Embedder
    if settings.embedder == "none":
        return None
    if settings.embedder == "openai_compat":
        from shiyi.memory.embeddings import OpenAIEmbedder

        if not settings.embed_base_url:
            raise ConfigError(
                "memory.embed_base_url is required when memory.embedder is openai_compat."
            )
        key = settings.embed_api_key.get_secret_value() if settings.embed_api_key else None
        inner = OpenAIEmbedder(
            base_url=settings.embed_base_url,
            api_key=key,
            model=settings.embed_model,
            dimension=settings.embed_dimension,
        )
    else:
        from shiyi.memory.embeddings import MiniLMEmbedder

        inner = MiniLMEmbedder()
    return CachedEmbedder(inner, EmbeddingCache(cache_path))


class Memory:
    def __init__(
        self,
        store: MemoryStore,
        jobs: JobQueue,
        embedder: Embedder | None,
        settings: MemorySettings,
    ) -> None:
        self.store = store
        self.jobs = jobs
        self.embedder = embedder
        self.settings = settings
        self.worker = MemoryWorker(store, jobs, embedder, batch=settings.embed_batch)
        self.writer = MemoryWriter(
            jobs, self.worker.wake, user_id=settings.user_id, agent_id=settings.agent_id
        )
        self.retriever = Retriever(
            store,
            embedder,
            RerankWeights(
                rrf_k=settings.rrf_k, recency_half_life_days=settings.recency_half_life_days
            ),
            candidates=settings.candidates,
        )

    @classmethod
    def open(
        cls, settings: Settings, *, start_worker: bool = True, switch_model: bool = False
    ) -> Memory:
        """Open the data dir's store (waiting for another owner up to ``lock_timeout``).

        ``switch_model`` (for ``shiyi memory reindex``) accepts a store embedded with another
        model and drops its vectors so they can be rebuilt with the configured one.
        """
        config = settings.memory
        directory = settings.memory_dir
        store = EmbeddedStore(
            directory,
            dimension=config.embed_dimension,
            embedding_model=config.embed_model,
            lock_timeout=config.lock_timeout,
            check_model=not switch_model,
        )
        if switch_model:
            store.graph.reset_vectors(config.embed_dimension, config.embed_model)
        try:
            jobs = JobQueue(store.sqlite_path)
            jobs.recover()  # we own the store: anything 'running' was cut off by a crash
            memory = cls(store, jobs, build_embedder(config, store.sqlite_path), config)
        except BaseException:
            store.close()
            raise
        if start_worker:
            memory.worker.start()
        return memory

    # --- writing -----------------------------------------------------------------------

    def record_message(
        self,
        message: Message,
        *,
        message_id: int,
        session_id: str,
        run_id: str,
        iteration: int,
        ts: float | None = None,
    ) -> None:
        """Reply path: queue the message's segments (no graph write, no embedding here)."""
        self.writer.record(
            message,
            message_id=message_id,
            session_id=session_id,
            run_id=run_id,
            iteration=iteration,
            ts=ts,
        )

    def import_events(self, events: Sequence[EventRecord]) -> None:
        for start in range(0, len(events), 500):
            self.writer.record_events(list(events[start : start + 500]))

    def remember(
        self,
        text: str,
        *,
        kind: FactKind = "semantic",
        key: str = "",
        confidence: float = 1.0,
        source_events: Sequence[str] = (),
    ) -> FactRecord:
        """Store an explicit memory (the user asked to remember it: long term)."""
        now = time.time()
        fact = FactRecord(
            id=f"fact_{uuid.uuid4().hex[:12]}",
            key=key,
            value=text,
            kind=kind,
            confidence=confidence,
            tier="long",
            created_at=now,
            updated_at=now,
            valid_from=now,
            user_id=self.settings.user_id,
            agent_id=self.settings.agent_id,
            source_events=list(source_events),
        )
        self.store.upsert_facts([fact])
        if self.embedder is not None:
            self.jobs.enqueue(EMBED, {"node": "fact", "ids": [fact.id]})
            self.worker.wake()
        return fact

    def forget(self, ids: Sequence[str]) -> int:
        return self.store.delete(ids)

    # --- reading -----------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        mode: Mode = "hybrid",
        kinds: Sequence[str] | None = None,
        limit: int = 5,
    ) -> list[MemoryHit]:
        return self.retriever.search(query, mode=mode, kinds=kinds, limit=limit)

    def query_text(
        self,
        query: str,
        *,
        mode: Mode = "hybrid",
        kinds: Sequence[str] | None = None,
        limit: int = 5,
    ) -> str:
        return format_hits(self.search(query, mode=mode, kinds=kinds, limit=limit))

    def prefetch(self, message: str) -> list[MemoryHit]:
        """1-2 keyword matches for the context builder: cheap (no embedding), a hint only."""
        if self.settings.prefetch_limit == 0 or not message.strip():
            return []
        return self.retriever.search(
            message, mode="keyword", limit=self.settings.prefetch_limit, touch=False
        )

    def expand(self, anchor_key: str, window: int = 3) -> list[EventRecord]:
        return self.store.expand(parse_anchor(anchor_key), window)

    def reindex(self, progress: Callable[[int], None] | None = None) -> int:
        """Embed every event that has no vector yet (after a crash, import or model change).

        Works in chunks large enough for the store's bulk path (index rebuilt once a chunk).
        """
        if self.embedder is None:
            raise ConfigError("memory.embedder is 'none': there is nothing to embed with.")
        done = 0
        while batch := self.store.events_missing_embeddings(REINDEX_CHUNK):
            vectors = self.embedder.embed([e.content for e in batch])
            pairs = [(e.id, v) for e, v in zip(batch, vectors, strict=True)]
            self.store.set_embeddings("event", pairs)
            done += len(batch)
            if progress is not None:
                progress(done)
        return done

    def stats(self) -> dict[str, int]:
        counts = self.store.counts()
        counts["pending_jobs"] = self.jobs.pending_count()
        return counts

    def close(self) -> None:
        self.worker.stop()
        self.worker.flush_graph()
        self.jobs.close()
        self.store.close()


def parse_anchor(key: str) -> Anchor:
    """``run_id:iteration:segment`` (as shown to the model) back into an :class:`Anchor`."""
    run_id, _, rest = key.rpartition(":")
    run_id, _, iteration = run_id.rpartition(":")
    try:
        return Anchor("", run_id, int(iteration), int(rest), "response", 0.0)
    except ValueError:
        raise ShiyiError(
            f"{key!r} is not an anchor; anchors look like run_abc123:2:0 (run:iteration:segment)"
        ) from None
