"""The indexing toolkit memory and the knowledge base share: text terms, keyword search over
SQLite FTS5, exact vector search, embedders and their cache, SQLite file handling.

Nothing here knows about memories or documents; it imports only :mod:`shiyi.errors`,
:mod:`shiyi.llm` (retries for embedding endpoints) and libraries.
"""
