"""The PostgreSQL + pgvector memory backend (``memory.url: postgresql://...``).

Needs the ``postgres`` extra: ``pip install 'shiyi[postgres]'``.
"""
