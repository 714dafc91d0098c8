"""Long-term memory: the domain here, the storage in a backend package.

- The domain: :mod:`~shiyi.memory.models` (records), :mod:`~shiyi.memory.protocol` (the
  ``MemoryStore`` every backend implements), :mod:`~shiyi.memory.service` (the ``Memory``
  facade), the write path (:mod:`~shiyi.memory.writer` queues, :mod:`~shiyi.memory.worker`
  indexes), recall (:mod:`~shiyi.memory.recall.retriever` fuses and reranks what
  :mod:`~shiyi.memory.recall.paths` runs side by side) and :mod:`~shiyi.memory.lifecycle`
  (extraction, facts, conflicts, consolidation, forgetting: the rules, on any backend).
- The backends, with the same file names for the same jobs: :mod:`~shiyi.memory.kuzu`
  (embedded) and :mod:`~shiyi.memory.postgres`; each one's ``lifecycle`` module holds the
  queries the lifecycle rules need from that store.  :mod:`~shiyi.memory.backends` picks one.
"""
