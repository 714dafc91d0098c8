"""The memory lifecycle: LLM extraction, entity resolution, conflicts, tiers, consolidation,
shared scopes, forgetting and health (seed 000 extraction pipeline, seed 001 sections 1-2)."""
