"""The embedded memory backend: Kuzu (graph + vectors) and SQLite (keywords, record mirrors,
the job queue) in one data directory, owned by one process.

Its files do the jobs of :mod:`shiyi.memory.postgres`'s files of the same name: ``store``
(the ``MemoryStore``), ``schema`` (tables and migrations), ``graph`` (the graph recall path),
``reads`` (records by id, recency, anchors, vectors and counts), ``writes`` (write steps),
``lifecycle`` (lifecycle reads) and ``jobs`` (the job queue).  ``connection`` holds the Kuzu
database, its write connection and readers, and its writes (``KuzuGraph``, which reads through
``reads``' ``GraphReads``); ``queries`` its Cypher text and rows.
"""
