"""Long-term memory: the core at this root, one folder per job, the storage in a backend package.

- The core: :mod:`~shiyi.memory.models` (records), :mod:`~shiyi.memory.protocol` (the
  ``MemoryStore`` every backend implements), :mod:`~shiyi.memory.scopes` (who sees what),
  :mod:`~shiyi.memory.jobs` (the job queue), :mod:`~shiyi.memory.lock` (one owner per store),
  and under them :mod:`~shiyi.memory.text` (what every job reads from a text without a model).
- The facade: :mod:`~shiyi.memory.service` (the ``Memory`` object), :mod:`~shiyi.memory.backends`
  (which store it opens) and the owning process's background work (:mod:`~shiyi.memory.work`,
  :mod:`~shiyi.memory.settle`) compose the folders below.
- The jobs: :mod:`~shiyi.memory.recall` (a query, from reading it to the memories the model
  reads; its settings in :mod:`~shiyi.memory.recall.config`), :mod:`~shiyi.memory.intake` (the
  write path: :mod:`~shiyi.memory.intake.writer` queues, :mod:`~shiyi.memory.intake.worker`
  indexes), :mod:`~shiyi.memory.transfer` (import and export) and
  :mod:`~shiyi.memory.lifecycle` (extraction, facts, conflicts, consolidation, forgetting: the
  rules, on any backend).
- The backends, with the same file names for the same jobs: :mod:`~shiyi.memory.kuzu`
  (embedded) and :mod:`~shiyi.memory.postgres`; each one's ``lifecycle`` module holds the
  queries the lifecycle rules need from that store.  :mod:`~shiyi.memory.backends` picks one.
- On top, the one door every interface calls: :mod:`~shiyi.memory.operations` (the
  operations, their local adapter, and what the memory page reads).

``tests/test_architecture.py`` keeps the order between them.
"""
