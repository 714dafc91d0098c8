"""What a stored message's vector is: its own text's embedding, and for a short message
also the message it follows.

People chat in short messages that lean on the one before: "83. tough lady but still"
answers "how old is she?", "she's an architect" says whose job only after "how's Wera?".
Embedded alone, such a message is close to nothing a question asks.  So a message of fewer
than :data:`SHORT_WORDS` words is embedded twice, alone and after the end of the message
before it in its run (:data:`LEAD_WORDS` words of it, so a long reply before it does not
drown it), and its vector is the direction of the two embeddings' sum.  The keyword index
still reads the message alone: its words are its own.

Measured with the hybrid retriever (R@10 of evidence turns or sessions, MiniLM, each set in
one run without and with): people chats ``bench/data/blind-chats-2`` in texting style
0.636 -> 0.661, the same set's long-message chat (unread) 0.753 -> 0.753, ``blind-chats``
0.670 -> 0.702, LoCoMo dev 0.834 -> 0.836; user-assistant sets RealMem dev 0.730 -> 0.730,
``assistant-chats-2`` 0.722 -> 0.722, ``assistant-chats`` 0.910 -> 0.891 (one query).
Leads of 10 to 40 words or the whole message did alike (10 embed the least); a window with
the message after as well did no better, and would change a vector when a later message
arrives.  Numbers and the curve: ``docs/recall.md``.

A message that opens its run (the live agent's every request is a run; an import's run is a
day) leans on the session's last message before it when it came within :data:`REPLY_GAP`: a
user's "83. tough lady but still" answers the assistant's "How old is she?" of the run
before, while the next morning's new request leans on nothing.  Imported chats, whose runs
are days apart, do not change.

A vector holding a neighbour's words must not outlive them: forgetting a message embeds the
message after it again (:mod:`shiyi.memory.lifecycle.forget`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from shiyi.index.types import Embedder
from shiyi.memory.models import EventRecord
from shiyi.memory.protocol import MemoryStore
from shiyi.memory.text.contextual import indexed_text

SHORT_WORDS = 30
"""A message shorter than this leans on the one before it."""
LEAD_WORDS = 10
"""How much of the message before is embedded with it: its end, which it answers."""
MESSAGE_TYPES = frozenset({"imported", "user_message", "response"})
"""What leads into a message and is led into: messages, not tool traffic or reasoning."""
REPLY_GAP = 60 * 60.0
"""A message opening its run answers the session's message before it if sent within this
(seconds): a reply typed at once, not tomorrow's new request."""
_WINDOW = 50
"""Messages read per store call when looking for the first message after a forgotten one."""


def is_short(event: EventRecord) -> bool:
    return event.segment_type in MESSAGE_TYPES and len(event.content.split()) < SHORT_WORDS


def lead_in_text(before: EventRecord, event: EventRecord) -> str:
    """What a short message is embedded as the second time: the end of ``before``, then it."""
    words = indexed_text(before).split()
    lead = " ".join(words[-LEAD_WORDS:])
    return f"{'… ' if len(words) > LEAD_WORDS else ''}{lead}\n{indexed_text(event)}"


def messages_before(
    store: MemoryStore, events: Sequence[EventRecord], *, stored: bool = True
) -> dict[str, EventRecord]:
    """The message each short message of ``events`` follows: in its run (among ``events``
    and, with ``stored``, the stored turns just before them), or, for a message that opens
    its run, the session's message before it within :data:`REPLY_GAP` (among ``events``,
    then with ``stored`` in the store)."""
    short = [e for e in events if is_short(e)]
    runs: dict[str, list[EventRecord]] = {}
    for event in events:
        runs.setdefault(event.run_id, []).append(event)
    found = {e.id: b for e in short if (b := _before(e, runs[e.run_id])) is not None}
    # a message whose predecessor is not among ``events`` (the first of an import batch, a
    # new turn) finds it among the stored turns just before it
    missing = [e for e in short if e.id not in found] if stored else []
    if missing:
        for event in store.turns_around([(e.run_id, e.iteration) for e in missing], 1):
            runs.setdefault(event.run_id, []).append(event)
        found |= {e.id: b for e in missing if (b := _before(e, runs[e.run_id])) is not None}
    openers = [e for e in short if e.id not in found and _opens(e, runs[e.run_id])]
    found |= _replies_to(store, openers, events, stored=stored)
    return found


def _opens(event: EventRecord, run: Iterable[EventRecord]) -> bool:
    """Whether nothing of its run (as far as known) came before ``event``."""
    return not any((e.iteration, e.segment) < (event.iteration, event.segment) for e in run)


def _replies_to(
    store: MemoryStore,
    openers: Sequence[EventRecord],
    events: Sequence[EventRecord],
    *,
    stored: bool,
) -> dict[str, EventRecord]:
    """For each message opening its run, the session's message before it, if recent."""
    found: dict[str, EventRecord] = {}
    for event in openers:
        earlier = [e for e in events if _may_lead(e, event)]
        if stored:
            window = store.session_window(event.session_id, event.ts, sorted(MESSAGE_TYPES), 8)
            earlier += [e for e in window if _may_lead(e, event)]
        if earlier:
            found[event.id] = max(earlier, key=lambda e: (e.ts, e.iteration, e.segment))
    return found


def _may_lead(before: EventRecord, event: EventRecord) -> bool:
    """Whether ``before`` is a message of an earlier run of ``event``'s session and owner,
    sent at most :data:`REPLY_GAP` before it."""
    return (
        before.session_id == event.session_id
        and before.run_id != event.run_id
        and (before.user_id, before.agent_id) == (event.user_id, event.agent_id)
        and before.segment_type in MESSAGE_TYPES
        and not before.derived
        and 0 < event.ts - before.ts <= REPLY_GAP
    )


def _before(event: EventRecord, run: Iterable[EventRecord]) -> EventRecord | None:
    earlier = [
        e
        for e in run
        if e.segment_type in MESSAGE_TYPES
        and not e.derived
        and e.iteration >= event.iteration - 1
        and (e.iteration, e.segment) < (event.iteration, event.segment)
    ]
    return max(earlier, key=lambda e: (e.iteration, e.segment), default=None)


def event_vectors(
    embedder: Embedder, events: Sequence[EventRecord], before: Mapping[str, EventRecord]
) -> list[list[float]]:
    """One unit vector per event: its text's embedding, or for a short message with a
    message ``before`` it, the direction of that and its lead-in's embedding summed."""
    texts = [indexed_text(e) for e in events]
    leads = [(i, lead_in_text(before[e.id], e)) for i, e in enumerate(events) if e.id in before]
    vectors = embedder.embed([*texts, *(text for _, text in leads)])
    own, extra = vectors[: len(texts)], vectors[len(texts) :]
    out = [list(v) for v in own]
    for (index, _), lead in zip(leads, extra, strict=True):
        out[index] = _unit([a + b for a, b in zip(own[index], lead, strict=True)])
    return out


def lead_in_texts(events: Sequence[EventRecord], before: Mapping[str, EventRecord]) -> list[str]:
    """The lead-in texts ``event_vectors`` embeds for ``events`` (what an embedding cache
    holds of them, beside their own indexed texts)."""
    return [lead_in_text(before[e.id], e) for e in events if e.id in before]


def _unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm else vector


def followers(store: MemoryStore, events: Sequence[EventRecord]) -> list[EventRecord]:
    """The stored short messages that lead in with one of ``events``: their vectors hold
    its words, so forgetting it embeds them again."""
    gone = {e.id for e in events}
    around = store.turns_around(list(dict.fromkeys((e.run_id, e.iteration) for e in events)), 1)
    after = [e for e in around if e.id not in gone and not e.derived and is_short(e)]
    runs: dict[str, list[EventRecord]] = {}
    for event in [*events, *around]:
        runs.setdefault(event.run_id, []).append(event)
    ends = [e for e in events if e.segment_type in MESSAGE_TYPES and _ends(e, runs[e.run_id])]
    after += [e for e in _first_after(store, ends) if e.id not in gone and is_short(e)]
    before = messages_before(store, list({e.id: e for e in after}.values()))
    return [e for e in {e.id: e for e in after}.values() if before.get(e.id, e).id in gone]


def _ends(event: EventRecord, run: Iterable[EventRecord]) -> bool:
    """Whether nothing of its run (as far as known) came after ``event``."""
    return not any((e.iteration, e.segment) > (event.iteration, event.segment) for e in run)


def _first_after(store: MemoryStore, events: Sequence[EventRecord]) -> list[EventRecord]:
    """The session's first message after each of ``events`` in a later run within
    :data:`REPLY_GAP`: the one that may lead in with it."""
    found: list[EventRecord] = []
    for event in events:
        until, later = event.ts + REPLY_GAP, list[EventRecord]()
        while True:  # newest first from the window's end, back to the event
            window = store.session_window(event.session_id, until, sorted(MESSAGE_TYPES), _WINDOW)
            later += [e for e in window if e.ts > event.ts and e.run_id != event.run_id]
            oldest = min((e.ts for e in window), default=event.ts)
            if len(window) < _WINDOW or oldest <= event.ts or oldest >= until:
                break
            until = oldest
        if later:
            found.append(min(later, key=lambda e: (e.ts, e.iteration, e.segment)))
    return found
