"""Transfer: memory in and out of a store, in bulk.

:mod:`~shiyi.memory.transfer.importers` reads conversations from outside shiyi (a JSONL
transcript, LoCoMo, the ChatGPT and Claude exports of :mod:`~shiyi.memory.transfer.import_formats`)
and :mod:`~shiyi.memory.transfer.import_claims` gives their ids a home;
:mod:`~shiyi.memory.transfer.export` writes what a viewer may see as JSON lines;
:mod:`~shiyi.memory.transfer.kuzu_to_postgres` copies an embedded store into PostgreSQL.
Imports go through the write path (:mod:`~shiyi.memory.intake`), the one room transfer builds
on; the copy to PostgreSQL is the one place that opens both backends.
"""
