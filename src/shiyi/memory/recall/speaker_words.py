"""The vector path reads a question also without the names of the people who speak in memory.

Every turn is embedded as ``(day) Speaker: text``
(:func:`~shiyi.memory.text.contextual.indexed_text`): the day places it in time, and the
speaker's name is in each of their turns alike, so it tells their turns from nobody's.  Yet a
question's name pulls its embedding towards the turns its speaker prefix dominates — the short
ones, "(8 May 2023) Caroline: Thanks!" — over the turns that answer.  Who the question is about
is the speaker boost's to weigh (:mod:`~shiyi.memory.recall.boosts`), which finds the name in
the speaker field and by nickname; the vector path embeds what the question asks about.

So the vector path embeds a question twice, as asked and without the words that name a
speaker of the asker's memory (the speaker field; with aliases on, a nickname, short form or
near-spelling of it, or what the chat calls them:
:func:`~shiyi.memory.text.people.named_speakers`), and searches with the sum of the two: the
question's content weighs twice, its speaker once.  "What has Melanie painted?" is also
embedded as "What has painted?"; a name that is no speaker's ("Paris", a friend only
mentioned) stays in both.  LoCoMo dev, the same stores and run, recall@5/10/20: hybrid
0.723 / 0.807 / 0.863 -> 0.728 / 0.836 / 0.880, semantic 0.411 / 0.502 / 0.624 -> 0.476 /
0.636 / 0.750, every conversation up (R@10 0.797 / 0.741 / 0.852 -> 0.828 / 0.806 / 0.860).
The names-free text alone gave hybrid 0.735 / 0.831 / 0.878 but lost what a name still
tells on small stores (two people saying near the same thing: the boost's margin is then
all that separates them, and a graph bridge could undo it); leaving out every capitalised
name (places too) gave semantic 0.478 / 0.630 / 0.724.

The speakers are learned per viewer from their newest turns and the candidates of their
searches; a name not yet known as a speaker's is embedded as asked.  A user's memory with
an assistant has no speaker names to leave out.
"""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial

from shiyi.memory.models import EventRecord
from shiyi.memory.recall.boosts import NOT_SPEAKERS
from shiyi.memory.recall.query_signals import QuerySignals
from shiyi.memory.scopes import Viewer
from shiyi.memory.text.people import called, named_speakers, nicknamed_speakers, said_as_word

NEWEST = 50
"""Newest turns a viewer's speakers are first read from: a chat's speakers all speak there."""
REREAD_SECONDS = 300.0
"""How long the newest turns' speakers stand before they are read again (a new speaker)."""
_KEPT_VIEWERS = 256
_NAME = re.compile(r"\b([^\W\d_]+)(?:'s|’s)?\b")
_BEFORE_MARK = re.compile(r" ([?.!,;:])")

Newest = Callable[[Viewer], Iterable[EventRecord]]


class SpeakerWords:
    """The speakers of each viewer's memory, and questions embedded without their names."""

    def __init__(self, newest: Newest) -> None:
        self._newest = newest
        self._speakers: OrderedDict[Viewer, _Speakers] = OrderedDict()
        self._lock = threading.Lock()

    def embedded(
        self, query: str, signals: QuerySignals, viewer: Viewer, *, aliases: bool = True
    ) -> tuple[str, ...]:
        """The texts whose embeddings, summed, the vector path searches with: ``query`` as
        asked and without the words that name one of ``viewer``'s speakers (``aliases``: by
        other names too, and by what the chat calls them); ``(query,)`` when it names none.

        A name that is only what the chat calls a speaker (``kayak_fan``, called "Rebecca";
        "Bex", Thomas's name for Rebecca) is left out of both: their turns are embedded under
        their speaker field, so the name is in the turns of the others who address them and
        in none of their own (LoCoMo dev with speaker fields ``user_1``/``user_2``, R@10:
        semantic 0.561 -> 0.644, hybrid 0.803 -> 0.816; named as their fields, or by
        nickname, unchanged)."""
        by_field, called_only = self._naming(signals, viewer, aliases)
        if not by_field and not called_only:
            return (query,)
        as_asked = _left_out(query, called_only) if called_only else query
        names_free = _left_out(query, by_field | called_only)
        return tuple(dict.fromkeys(text for text in (as_asked, names_free) if text)) or (query,)

    def searched(
        self, query: str, signals: QuerySignals, viewer: Viewer, *, aliases: bool = True
    ) -> str:
        """What the keyword path searches for: ``query`` without the names that are only what
        the chat calls a speaker, for the reason given in :meth:`embedded` (a turn's keyword
        text carries its speaker field too), and with the speaker field a nickname or short
        form names ("Tom": "thomas"), as a question naming them by it would match.

        Handles, keyword R@5 / R@10 / R@20: 0.530 / 0.612 / 0.687 -> 0.550 / 0.648 / 0.717
        (with names: 0.547 / 0.647 / 0.717).  Asked by nicknames, hybrid 0.741 / 0.837 /
        0.879 -> 0.742 / 0.839 / 0.879; and where two speakers said near the same words, the
        one a nickname names comes first (his field was all the keyword path could tell)."""
        by_field, called_only = self._naming(signals, viewer, aliases)
        roles, _, texts = self._known(viewer)
        nicknamed = _nicknamed(signals.lowercase - roles, roles, texts) if aliases else set()
        if not by_field and not called_only and not nicknamed:
            return query
        searched = (_left_out(query, called_only) or query) if called_only else query
        fields = sorted(_fields_named(by_field - roles, roles) | nicknamed)
        return " ".join([searched, *fields])

    def _naming(
        self, signals: QuerySignals, viewer: Viewer, aliases: bool
    ) -> tuple[set[str], set[str]]:
        """The question's names that name one of ``viewer``'s speakers by their speaker field
        (or a form of it), and those that are only what the chat calls one."""
        if not signals.people and not signals.lowercase:
            return set(), set()
        roles, calls, texts = self._known(viewer)
        by_field = {
            name
            for name in signals.people
            if name in roles or (aliases and bool(named_speakers([name], roles)))
        }
        called_only = {
            name
            for name in signals.people - by_field
            if aliases and (name in calls or bool(calls and named_speakers([name], calls)))
        }
        if signals.lowercase:
            lower_field, lower_called = _typed_lowercase(signals.lowercase, roles, calls, texts)
            by_field |= lower_field
            called_only |= lower_called if aliases else set()
        return by_field, called_only

    def called(self, viewer: Viewer) -> set[str]:
        """What ``viewer``'s chat calls its speakers by that is not a speaker field
        ("Caroline", when her turns are ``user_1``'s)."""
        roles, calls, _ = self._known(viewer)
        return calls - roles

    def seen(self, viewer: Viewer, events: Iterable[EventRecord]) -> None:
        """The speakers of ``events`` (a search's candidates) are ``viewer``'s too."""
        roles = {e.role for e in events if e.role not in NOT_SPEAKERS}
        if not roles:
            return
        with self._lock:
            known = self._speakers.get(viewer)
            if known is not None:
                known.roles.update(roles)

    def _known(self, viewer: Viewer) -> tuple[set[str], set[str], tuple[str, ...]]:
        """``viewer``'s speakers, the names their chat calls them by, and the newest turns'
        texts (whether the chat writes a word in small letters as a word)."""
        now = time.monotonic()
        with self._lock:
            known = self._speakers.get(viewer)
            if known is not None and now - known.read_at < REREAD_SECONDS:
                self._speakers.move_to_end(viewer)
                return set(known.roles), set(known.calls), known.texts
        newest = list(self._newest(viewer))
        roles = {e.role for e in newest if e.role not in NOT_SPEAKERS}
        calls = called([(e.role, e.content) for e in newest if e.role in roles], roles)
        called_names = {name for names in calls.values() for name in names}
        texts = tuple(e.content for e in newest if e.role in roles)
        with self._lock:
            if known is not None:
                roles |= known.roles
                called_names |= known.calls
            self._speakers[viewer] = _Speakers(now, roles, called_names, texts)
            self._speakers.move_to_end(viewer)
            while len(self._speakers) > _KEPT_VIEWERS:
                self._speakers.popitem(last=False)
        return set(roles), set(called_names), texts


@dataclass(slots=True)
class _Speakers:
    read_at: float
    roles: set[str]
    calls: set[str]
    texts: tuple[str, ...] = ()


def _typed_lowercase(
    words: frozenset[str], roles: set[str], calls: set[str], texts: tuple[str, ...]
) -> tuple[set[str], set[str]]:
    """The words of a question typed in small letters that name a speaker: their speaker
    field, or what the chat calls them; never a word the chat itself writes in small letters
    as a word ("the bill").  A nickname or short form counts only when the chat calls them
    by it: without capitals any word may be one ("tom" of Thomas, "art" of Arthur), and a
    nickname kept in the embedded question is what parts two speakers' near-identical turns
    when nothing else does."""
    said = partial(said_as_word, texts=texts)
    called_too = {w for w in words & calls if named_speakers([w], roles)}  # "mel", Melanie
    by_field = {w for w in (words & roles) | called_too if not said(w)}
    return by_field, {w for w in (words & calls) - by_field if not said(w)}


def _nicknamed(words: frozenset[str], roles: set[str], texts: tuple[str, ...]) -> set[str]:
    """The speaker fields that words typed in small letters name as a nickname or short form
    (the speaker boost's rule: never a word the chat writes in small letters itself)."""
    if not words or not roles:
        return set()
    return nicknamed_speakers(words, roles, partial(said_as_word, texts=texts))


def _fields_named(names: set[str], roles: set[str]) -> set[str]:
    """The speaker fields that ``names`` (nicknames, short forms) each name alone."""
    fields: set[str] = set()
    for name in names:
        found = named_speakers([name], roles)
        if len(found) == 1:
            fields |= found
    return fields


def _left_out(query: str, names: set[str]) -> str:
    """``query`` without the words ``names``; empty when nothing else would be left."""
    kept = _NAME.sub(lambda m: "" if m.group(1).lower() in names else m.group(0), query)
    kept = _BEFORE_MARK.sub(r"\1", " ".join(kept.split()))
    return kept if any(ch.isalnum() for ch in kept) else ""
