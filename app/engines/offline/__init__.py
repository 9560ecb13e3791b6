"""The offline engine: rules instead of an LLM, no network, same `Engine` protocol.

`OfflineEngine` owns the wiring of the deterministic pieces: extraction by rules
(`app/engines/offline/extract.py`), evolution and consolidation (`evolve.py`), and a deep
retrieval that re-ranks candidates by token overlap with the query and reports cross-branch
conflicts (`app/core/conflicts.py`). It is the fallback whenever Claude is unavailable, over
budget or refused by the guard, and the merger the core uses for consolidation. Everything it
does is pure computation on models; it never reads or writes files.
"""

from __future__ import annotations

from datetime import datetime

from app.core.config import Config
from app.core.conflicts import find_conflicts
from app.core.engine import Candidate, DeepAnswer
from app.core.models import BranchMemory, EvolutionResult, ExtractionResult, MemoryItem
from app.core.similarity import item_tokens, tokens
from app.engines.offline.evolve import consolidate, evolve

__all__ = ["OfflineEngine", "query_overlap"]

# Deep ranking blends the caller's relevance (FTS5 bm25, already normalised) with how much of
# the query the item covers; the caller's score leads because it knows phrase and rarity.
GIVEN_WEIGHT = 0.6
OVERLAP_WEIGHT = 0.4


def query_overlap(query: str, item: MemoryItem) -> float:
    """Share of the query's content words found in the item (0 for a query of stop words)."""
    wanted = tokens(query)
    if not wanted:
        return 0.0
    found = wanted & (item_tokens(item) | tokens(" ".join(item.tags)))
    return len(found) / len(wanted)


class OfflineEngine:
    """Rule-based `Engine` (see module docstring); `now` is injectable for tests."""

    name = "offline"

    def __init__(self, config: Config, *, now: datetime | None = None) -> None:
        """Keep the settings (duplicate threshold, section cap) for every call."""
        self.config = config
        self._now = now

    def extract(self, conversation: str, *, source: str) -> ExtractionResult:
        """Rule-based extraction of solution-wide knowledge from one conversation."""
        # Imported here so the engine (and everything that builds it) loads without paying
        # for the extractor's rule tables until a conversation is actually processed.
        from app.engines.offline.extract import extract

        today = self._now.date() if self._now is not None else None
        return extract(conversation, source=source, today=today)

    def evolve(
        self, current: BranchMemory | None, items: list[MemoryItem], *, branch_id: str
    ) -> EvolutionResult:
        """Deterministic integration: reinforce duplicates, resolve contradictions, add."""
        return evolve(current, items, branch_id=branch_id, config=self.config, now=self._now)

    def consolidate(self, memory: BranchMemory) -> EvolutionResult:
        """Weekly consolidation: merge near-duplicates, cap sections, refresh the summary."""
        return consolidate(memory, config=self.config, now=self._now)

    def deep_retrieve(self, query: str, candidates: list[Candidate]) -> DeepAnswer:
        """Re-rank candidates by given relevance plus query overlap; report conflicts.

        A candidate listed twice (same item id) counts once, with its best score. Ties are
        broken by confidence, then id, so the order is stable.
        """
        best: dict[str, tuple[float, float]] = {}
        for candidate in candidates:
            given = min(max(candidate.relevance, 0.0), 1.0)
            score = GIVEN_WEIGHT * given + OVERLAP_WEIGHT * query_overlap(query, candidate.item)
            item_id = candidate.item.id
            previous = best.get(item_id)
            if previous is None or score > previous[0]:
                best[item_id] = (round(score, 4), candidate.item.confidence)
        ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], -kv[1][1], kv[0]))
        conflicts = find_conflicts([(c.branch, c.item) for c in candidates])
        return DeepAnswer(
            ranked=[(item_id, score) for item_id, (score, _conf) in ranked],
            conflicts=conflicts,
            path="offline",
        )
