"""Intake: the write path, from a logged message to indexed memory.

:mod:`~shiyi.memory.intake.writer` queues what was said on the reply path (durably, no model),
:mod:`~shiyi.memory.intake.segments` cuts messages into anchored events,
:mod:`~shiyi.memory.intake.worker` turns queued jobs into graph nodes, entity links and vectors,
:mod:`~shiyi.memory.intake.reconcile` catches up with the session log on start, and
:mod:`~shiyi.memory.intake.log_check` tells whether memory holds what the log says was said.
Intake imports only memory's core, never recall or a backend.
"""
