"""A mem0-shaped memory API over shiyi's memory: code written for mem0 runs with its import
changed to ``from shiyi.compat.mem0 import Memory``.

    from shiyi.compat.mem0 import Memory

    m = Memory()                                   # embedded Kuzu + SQLite in shiyi's data dir
    m.add([{"role": "user", "content": "I'm a vegetarian"}], user_id="alice")
    m.search("what do I eat?", user_id="alice", limit=5)["results"]

How mem0's ideas map onto shiyi's:

* **Owners.**  ``user_id`` is a shiyi user: what one user id stores, another never sees, and
  shiyi's own agent working for that user remembers it too.  Without a ``user_id`` the
  memories belong to the ``agent_id`` (else the ``run_id``) alone.  ``agent_id``, ``run_id``
  and ``filters`` (equality, or ``{"in": [...]}``, on those ids and metadata keys) narrow
  searches and listings further.
* **Memories.**  Every message added is kept as said (a turn of the conversation, with its
  time and speaker: what shiyi's recall finds evidence in), and with ``infer=True`` the facts
  shiyi's extraction derives from it (with ``models.fast`` configured).  Search, ``get_all``,
  ``update`` and ``delete`` work on both.
* **Synchronous.**  ``add`` returns once its memories are stored, embedded and extracted.
* **Storage.**  Embedded by default; PostgreSQL with ``{"vector_store": {"provider":
  "pgvector", "config": {"connection_string": "postgresql://..."}}}`` (or shiyi's own
  ``memory.store``).  mem0's metadata and history live in a small SQLite ledger beside it.
"""

from shiyi.compat.mem0.aio import AsyncMemory
from shiyi.compat.mem0.memory import Memory

__all__ = ["AsyncMemory", "Memory"]
