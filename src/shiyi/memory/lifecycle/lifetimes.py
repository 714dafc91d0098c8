"""Lifetimes as designed: long-term kinds do not expire (a one-time migration for stores
written while they did).

Before, every extracted semantic, convention and procedural fact expired after 30 days and
every episodic one after 14 (the defaults of ``memory.lifecycle.ttl_days``), although the
design keeps long-term memory until it is superseded or forgotten.  On open, a store that
still holds such facts gets them back as long-term facts, once (recorded in the store's
meta as :data:`META_KEY`).

Which expiries were the old default and not a choice: a fact's ``expires_at`` was set once,
at creation, to ``created_at + ttl_days * 86400`` (confirmation and retrieval never move
it; promotion clears it).  So a live short-term fact of a kind that is long-term now whose
lifetime is *exactly* the old default for its kind (within a second) got it by default; any
other lifetime came from a configured ``ttl_days`` and is kept.  A user who had configured
exactly the old default value cannot be told apart; the current settings decide for them:
kinds that still have a TTL configured are left alone.  Facts that already expired stay
expired (a newer version of their slot may have taken their place since).
"""

from __future__ import annotations

import logging

from shiyi.config.settings import OLD_DEFAULT_TTL_DAYS, LifecycleSettings
from shiyi.memory.models import FactRecord
from shiyi.memory.protocol import MemoryStore

log = logging.getLogger(__name__)

META_KEY = "lifecycle.long_term_lifetimes"
BATCH = 500
_TOLERANCE = 1.0
"""Seconds: float rounding of ``now + days * 86400`` stays far below this."""


def long_term_kinds(settings: LifecycleSettings) -> set[str]:
    """Kinds that had a default lifetime and have none now."""
    return {k for k in OLD_DEFAULT_TTL_DAYS if settings.ttl_days.get(k) is None}


def had_default_lifetime(fact: FactRecord, kinds: set[str]) -> bool:
    if fact.kind not in kinds or fact.tier != "short" or fact.expires_at is None:
        return False
    lifetime = fact.expires_at - fact.created_at
    return abs(lifetime - OLD_DEFAULT_TTL_DAYS[fact.kind] * 86400.0) <= _TOLERANCE


def clear_default_lifetimes(store: MemoryStore, settings: LifecycleSettings) -> list[str]:
    """Make live long-term-kind facts that expire only by the old default long-term; runs
    once per store.  Returns the ids changed."""
    if store.get_meta(META_KEY):
        return []
    kinds = long_term_kinds(settings)
    changed: list[str] = []
    if kinds:
        ids = store.facts_by_status(["active", "pending"], 1 << 62)
        for start in range(0, len(ids), BATCH):
            facts = store.get_facts(ids[start : start + BATCH])
            due = [f for f in facts if had_default_lifetime(f, kinds)]
            for fact in due:
                fact.tier, fact.expires_at = "long", None
            if due:
                store.upsert_facts(due)
                changed += [f.id for f in due]
    store.set_meta(META_KEY, "1")
    if changed:
        log.info("memory: %d long-term facts no longer expire (old default TTL)", len(changed))
    return changed
