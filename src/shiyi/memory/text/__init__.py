"""What every job reads from a text without a model, cheap enough to run on every message.

:mod:`~shiyi.memory.text.entities` (names, places, code identifiers, paths, URLs, tags),
:mod:`~shiyi.memory.text.topics` (what an English turn is about, as graph entities),
:mod:`~shiyi.memory.text.echoes` (turns that only repeat what memory showed the model) and
:mod:`~shiyi.memory.text.contextual` (what an event is indexed as: its text in context).
They read only the records (:mod:`~shiyi.memory.models`); recall, the write path, the lifecycle
and both backends read them.
"""
