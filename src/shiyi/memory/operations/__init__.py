"""Memory's one door: the operations every interface calls, and what they answer with.

:mod:`~shiyi.memory.operations.interface` is the :class:`MemoryOperations` protocol (add,
search, get, list, update, delete, history, forget, import, export, jobs, health);
:mod:`~shiyi.memory.operations.local` is its adapter over a :class:`~shiyi.memory.service.Memory`
in this process (the remote one, over the HTTP client, is :mod:`shiyi.client.memory_ops`).
Around it: :mod:`~shiyi.memory.operations.wire` (records as wire models),
:mod:`~shiyi.memory.operations.edits` (a fact patched by hand, a forget cut to what the caller
may write), and what the memory page reads (:mod:`~shiyi.memory.operations.views`,
:mod:`~shiyi.memory.operations.fact_views`).  This folder sits above every other one in memory/:
it composes the facade (:mod:`~shiyi.memory.service`) and the jobs below it.
"""

from shiyi.memory.operations.interface import ForgetBy, MemoryOperations, SearchMode

__all__ = ["ForgetBy", "MemoryOperations", "SearchMode"]
