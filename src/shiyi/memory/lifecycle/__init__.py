"""The memory lifecycle's rules, on any backend: LLM extraction, entity resolution, conflicts,
tiers, consolidation, shared scopes, forgetting and health (seed 000 extraction pipeline, seed
001 sections 1-2).  The store-specific queries they need are in each backend's ``lifecycle``
module."""
