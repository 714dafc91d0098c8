"""Conversations whose people are named otherwise than their speaker fields, for
``recall_bench.py --speakers handles`` and ``--ask-by nicknames``.

Held-out chats name people differently from the speaker field: a nickname, a short form, a
user name.  Two rewrites of a LoCoMo-format conversation probe that without new data:

* ``handles``: every speaker field becomes ``user_1``, ``user_2``, ... (as a chat export of
  user names or ids); the turns and questions keep the people's names, so only what the chat
  says ("Thanks, Caroline!") tells who is who;
* ``nicknames``: in the questions, each speaker's name is asked as a diminutive of it from
  the ``nicknames`` package's table (one ending in -ie, -y or -i: Caroline -> Carrie), or
  else as its first three letters (Gina -> Gin); the turns keep the names;
* ``misspellings``: in the questions, each time a speaker's name is asked it carries one
  typing slip (``bench/slips.py``: a dropped, swapped, doubled or keyboard-neighbour letter,
  drawn anew each time: Caroline -> Carolnie, Melanie -> Melaine); the turns keep the names.
"""

from __future__ import annotations

import random
import re
from dataclasses import replace

from slips import slip

from shiyi.memory.text.contextual import speaker_name
from shiyi.memory.transfer.importers import ImportedConversation

DIMINUTIVE_ENDINGS = ("ie", "y", "i")


def handles(conversation: ImportedConversation) -> ImportedConversation:
    """``conversation`` with each speaker field replaced by ``user_<n>`` (first seen, 1)."""
    names = list(dict.fromkeys(event.role for event in conversation.events))
    handle = {name: f"user_{number}" for number, name in enumerate(names, start=1)}
    events = [replace(event, role=handle[event.role]) for event in conversation.events]
    return replace(conversation, events=events)


def nickname(name: str) -> str:
    """A diminutive of ``name`` (lower-case) the nickname table knows, else its first three
    letters, capitalised."""
    from nicknames import NickNamer

    known = sorted(NickNamer().nicknames_of(name))
    diminutives = [n for n in known if n.endswith(DIMINUTIVE_ENDINGS) and n != name]
    return speaker_name(diminutives[0] if diminutives else name[:3])


def by_nicknames(conversation: ImportedConversation) -> ImportedConversation:
    """``conversation`` with its questions naming each speaker by :func:`nickname`."""
    names = {event.role for event in conversation.events}
    asked = {speaker_name(name): nickname(name) for name in names}
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, asked)) + r")\b")
    qa = [replace(q, question=pattern.sub(lambda m: asked[m.group(1)], q.question))
          for q in conversation.qa]  # fmt: skip
    return replace(conversation, qa=qa)


def misspelled(name: str, rng: random.Random) -> str:
    """``name`` with one typing slip that leaves it another string (a name of three letters
    or fewer is kept: no inner letter to slip)."""
    if len(name) < 4:
        return name
    for _ in range(20):
        typo = slip(name, rng)
        if typo.lower() != name.lower():
            return typo
    return name


def by_misspellings(conversation: ImportedConversation, seed: int = 7) -> ImportedConversation:
    """``conversation`` with every speaker's name in its questions mistyped (:func:`misspelled`,
    a new slip each time, seeded by ``seed``)."""
    rng = random.Random(seed)
    names = {speaker_name(event.role) for event in conversation.events}
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    qa = [replace(q, question=pattern.sub(lambda m: misspelled(m.group(1), rng), q.question))
          for q in conversation.qa]  # fmt: skip
    return replace(conversation, qa=qa)
