"""Recall: what a memory query runs, from reading the query to the memories the model reads.

:mod:`~shiyi.memory.recall.config` gathers what a recall runs with (the mode table,
:class:`~shiyi.memory.recall.config.RerankWeights`, :class:`~shiyi.memory.recall.config.Boosts`).
:mod:`~shiyi.memory.recall.retriever` reads the query (:mod:`~shiyi.memory.recall.query_signals`
with the times of :mod:`~shiyi.memory.recall.english_time` and
:mod:`~shiyi.memory.recall.chinese_time`, :mod:`~shiyi.memory.recall.intent`), runs the paths
side by side
(:mod:`~shiyi.memory.recall.paths`), fuses and reranks them (:mod:`~shiyi.memory.recall.scoring`)
and adjusts the fused scores (:mod:`~shiyi.memory.recall.boosts`).  Around it:
:mod:`~shiyi.memory.recall.prefetch` (what a run starts with),
:mod:`~shiyi.memory.recall.result_cache` and :mod:`~shiyi.memory.recall.present` (memories as
the model reads them).  Recall imports only memory's core, never the write path or a backend.
"""
