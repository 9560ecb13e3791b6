"""MemoryReader: the read path, from a question to ranked memories within a token budget.

Fast mode (seed 001 section 4): sync the index with the files (so a hand edit counts at
once), take a pool of FTS candidates, score each as
`0.6 relevance + 0.3 confidence + 0.1 min(accesses / 100, 1)` (weights from the config,
normalised to sum 1; no time decay: facts hold until superseded), drop items below the
relevance threshold, prefer nearby items when a branch or project is given, find
cross-branch conflicts among the candidates, and pack conflicts first, then memories, into
the token budget. Deep mode hands a larger pool to the engine's `deep_retrieve` and merges
its ranking and conflicts. Returned items are noted in the index's access log (a side file:
reads never write the index), which lifts them a little once the index folds it in.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from app.core.config import Config
from app.core.conflicts import find_conflicts
from app.core.engine import Candidate, CrossConflict, DeepAnswer, Engine
from app.core.errors import InvalidInput, PuffinError, RetrievalFailed, StorageError
from app.core.index import (
    BranchSource,
    CorruptIndexError,
    IndexedItem,
    MemoryIndex,
    note_access,
    query_terms,
)
from app.core.paths import project_of
from app.core.ranking import (
    CONFLICT_POOL,
    DEEP_POOL,
    FAST_POOL,
    MAX_RESULTS,
    NOTHING,
    Ranked,
    locality,
    pack,
    score,
)

if TYPE_CHECKING:
    from app.core.vectors import VectorStore

log = logging.getLogger(__name__)

Mode = Literal["fast", "deep"]
# Hybrid retrieval: weight of the lexical part (term coverage x bm25 ratio) added to the
# absolute cosine.
LEX_WEIGHT = 0.2
WHOLE_QUESTION_TERMS = 2
# Item vectors a query computes itself (about 15 ms each): a query never waits for more; a
# memory with more missing vectors is searched lexically until a scan or `remember` has
# computed them. Queries write nothing otherwise.
QUERY_BACKFILL = 0


@dataclass(frozen=True, slots=True)
class _Scored:
    hit: IndexedItem
    score: float


class MemoryReader:
    """Answers `ops.RETRIEVE` from the index and, in deep mode, the engine."""

    def __init__(
        self,
        store: BranchSource,
        index: MemoryIndex,
        engine: Engine,
        config: Config,
        *,
        semantic: bool = False,
    ) -> None:
        """Keep the collaborators; nothing is read until the first retrieve.

        `semantic=True` fuses embedding similarity into fast mode when the model package
        is installed (the app turns it on from `config.semantic_search`); without it, or
        without the model, fast mode is exactly lexical.
        """
        self.semantic = semantic
        self.store = store
        self.index = index
        self.engine = engine
        self.config = config
        self._vectors: VectorStore | None = None
        self._position_cache: tuple[list[IndexedItem], dict[str, int]] | None = None
        self._matrix: tuple[object, list[IndexedItem], Any] | None = None

    def retrieve(
        self,
        query: str,
        max_results: int = 5,
        *,
        branch: str | None = None,
        project: str | None = None,
        mode: Mode = "fast",
    ) -> dict[str, Any]:
        """Ranked memories for `query`: memories, conflicts, totalTokens, retrievalTime, mode.

        `branch` / `project` say where the question comes from; nearer items rank higher
        but others are not excluded. Raises InvalidInput for bad arguments and
        RetrievalFailed when the index or the engine cannot answer.
        """
        start = time.perf_counter()
        text = _check(query, max_results, mode)
        project = project or None
        if project is None and branch is not None:
            project = project_of(branch) or None
        pool = max(DEEP_POOL if mode == "deep" else FAST_POOL, max_results * 4)
        hits = self._candidates(text, pool)
        semantic = False
        if mode == "fast" and self.semantic:
            fused = self._semantic(text, hits, pool)
            if fused is not None:
                hits, semantic = fused, True
        engine_conflicts: list[CrossConflict] = []
        if mode == "deep" and hits:
            hits, engine_conflicts = self._deep(text, hits)

        threshold = self.config.min_relevance if semantic else self.config.relevance_threshold
        scored = sorted(
            (_Scored(h, self._score(h, branch, project)) for h in hits if h.relevance >= threshold),
            key=lambda s: (-s.score, -s.hit.relevance, s.hit.branch, s.hit.id),
        )
        # Conflicts are looked for among the best candidates only: pairs grow with the
        # square of the pool, and a dispute between two items ranked far down says little.
        near = scored[: max(CONFLICT_POOL, 2 * max_results)]
        conflicts = _merge_conflicts(
            engine_conflicts,
            find_conflicts([(s.hit.branch, s.hit.memory_item()) for s in near]),
            scored,
        )
        packed_conflicts, memories, used = pack(
            [
                {
                    "category": c.category.value,
                    "description": c.description,
                    "itemIds": list(c.item_ids),
                    "branches": list(c.branches),
                }
                for c in conflicts
            ],
            [
                Ranked(
                    s.hit.id,
                    s.hit.branch,
                    s.hit.project,
                    s.hit.category.value,
                    s.hit.title,
                    s.hit.content,
                    s.hit.confidence,
                    s.hit.relevance,
                    s.score,
                )
                for s in scored
            ],
            max_results,
            self.config.retrieval_token_budget,
        )
        if memories:
            # Reads never write the index: the uses go to the side log it folds in later.
            note_access(self.index.path, (m["id"] for m in memories))
        return {
            "memories": memories,
            "conflicts": packed_conflicts,
            "totalTokens": used,
            "retrievalTime": round((time.perf_counter() - start) * 1000, 3),
            "mode": mode,
            # Added keys only where they say something, so existing readers see no change.
            **({"semantic": True} if semantic else {}),
            **(NOTHING if not memories and not packed_conflicts else {}),
        }

    def backfill_vectors(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Compute every missing item vector (after a scan, off the GUI thread); 0 if off.

        Returns how many items have a vector. Queries only ever compute a small share
        (`QUERY_BACKFILL`), so the app calls this once a scan has written new items.
        """
        from app.core import embeddings

        if not self.semantic or not embeddings.available():
            return 0
        if self._vectors is None:
            from app.core.vectors import VectorStore

            self._vectors = VectorStore(self.index.path.parent / "vectors.sqlite")
        try:
            self.index.sync(self.store)
            items = self.index.items()
            matrix = self._vectors.ensure([(h.id, h.text or h.content) for h in items], progress)
        except (OSError, sqlite3.Error, PuffinError):
            log.warning("vector backfill failed", exc_info=True)
            return 0
        self._matrix = None
        return 0 if matrix is None else len(items)

    # -- steps ---------------------------------------------------------------------------
    def _semantic(
        self, text: str, lexical: list[IndexedItem], pool: int
    ) -> list[IndexedItem] | None:
        """Lexical hits fused with the nearest items by embedding, with absolute relevance.

        Relevance becomes `cosine + LEX_WEIGHT * coverage * bm25-ratio`, where coverage is
        the share of the query's terms the item holds: both parts are absolute, so a
        question sharing one word of eight with an item scores low however it ranks. None
        when no model is installed (fast mode then stays exactly lexical).
        """
        from app.core import embeddings

        if not embeddings.available():
            return None
        if self._vectors is None:
            from app.core.vectors import VectorStore

            self._vectors = VectorStore(self.index.path.parent / "vectors.sqlite")
        try:
            # Branch-file signatures change with every write, so they key the cached
            # matrix: an unchanged memory costs no listing and no hashing per query.
            key = tuple(sorted(self.store.signatures().items()))
            if not key:
                return None  # empty memory: nothing to compare, keep the model unloaded
            if self._matrix is None or self._matrix[0] != key:
                items = self.index.items()
                matrix = self._vectors.ensure(
                    [(h.id, h.text or h.content) for h in items], limit=QUERY_BACKFILL
                )
                if matrix is None or self._vectors.missing:
                    # Items without a vector would score as irrelevant: until the backfill
                    # (scan, remember) has reached them, this query stays lexical.
                    return None
                self._matrix = (key, items, matrix)
            _, items, matrix = self._matrix
            query = embeddings.embed([text])
        except (OSError, sqlite3.Error):
            log.warning("semantic search unavailable", exc_info=True)
            return None
        if query is None:
            return None
        cosine = matrix @ query[0]
        covered = {h.id: _coverage(text, h.text) for h in lexical}
        lex = {h.id: h.relevance * covered[h.id] for h in lexical}
        # An item holding every term of a question of two or more terms answers it, however
        # little a long item's embedding resembles the short question ("Local Storage").
        whole = (
            {i for i, share in covered.items() if share == 1.0}
            if len(query_terms(text)) >= WHOLE_QUESTION_TERMS
            else set()
        )
        top = cosine.argsort()[::-1][:pool].tolist()
        positions = self._positions(items)
        chosen = dict.fromkeys([*top, *(positions[i] for i in lex if i in positions)])
        floor = self.config.min_relevance
        fused = [
            replace(
                items[i],
                relevance=max(
                    float(cosine[i]) + LEX_WEIGHT * lex.get(items[i].id, 0.0),
                    floor if items[i].id in whole else 0.0,
                ),
            )
            for i in chosen
        ]
        fused.sort(key=lambda h: -h.relevance)
        return fused[:pool]

    def _positions(self, items: list[IndexedItem]) -> dict[str, int]:
        """Row of each item id in the cached matrix (built once per matrix, not per query)."""
        cached = self._position_cache
        if cached is None or cached[0] is not items:
            cached = (items, {h.id: i for i, h in enumerate(items)})
            self._position_cache = cached
        return cached[1]

    def _candidates(self, text: str, pool: int) -> list[IndexedItem]:
        try:
            report = self.index.sync(self.store)
            if report["failed"]:
                log.warning("branch files left out of the index: %s", report["failed"])
            try:
                return self.index.search(text, limit=pool)
            except CorruptIndexError:
                # Damage found mid-search: the index reset itself; rebuild and ask again.
                self.index.sync(self.store)
                return self.index.search(text, limit=pool)
        except StorageError as exc:
            raise RetrievalFailed(
                f"The search index could not be used: {exc.message}",
                context={"cause": exc.code},
            ) from exc

    def _deep(
        self, text: str, hits: list[IndexedItem]
    ) -> tuple[list[IndexedItem], list[CrossConflict]]:
        candidates = [
            Candidate(
                branch=h.branch, project=h.project, item=h.memory_item(), relevance=h.relevance
            )
            for h in hits
        ]
        name = self.engine.name
        try:
            answer = self.engine.deep_retrieve(text, candidates)
        except PuffinError as exc:
            raise RetrievalFailed(
                f"Deep retrieval with the {name} engine failed: {exc.message}",
                context={"cause": exc.code},
            ) from exc
        except Exception as exc:
            raise RetrievalFailed(
                f"Deep retrieval with the {name} engine failed: {exc or type(exc).__name__}"
            ) from exc
        if not isinstance(answer, DeepAnswer):
            raise RetrievalFailed(
                f"Deep retrieval with the {name} engine returned "
                f"{type(answer).__name__}, not a ranking."
            )
        known = {h.id for h in hits}
        ranked: dict[str, float] = {}
        for item_id, relevance in answer.ranked:
            if item_id in known and item_id not in ranked:
                ranked[item_id] = max(0.0, min(1.0, float(relevance)))
        # An engine that ranked nothing we know (or nothing at all) leaves the FTS order.
        if ranked:
            hits = [replace(h, relevance=ranked[h.id]) for h in hits if h.id in ranked]
        return hits, answer.conflicts

    def _score(self, hit: IndexedItem, branch: str | None, project: str | None) -> float:
        cfg = self.config
        weights = (cfg.relevance_weight, cfg.confidence_weight, cfg.frequency_weight)
        near = locality(hit.branch, hit.project, branch, project)
        return score(hit.relevance, hit.confidence, hit.access_count, weights, near)


# -- helpers -----------------------------------------------------------------------------
def _check(query: object, max_results: object, mode: object) -> str:
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("Query must be a non-empty text.")
    if (
        not isinstance(max_results, int)
        or isinstance(max_results, bool)
        or not 1 <= max_results <= MAX_RESULTS
    ):
        raise InvalidInput(f"maxResults must be a whole number from 1 to {MAX_RESULTS}.")
    if mode not in ("fast", "deep"):
        raise InvalidInput(f"Mode must be 'fast' or 'deep', not {mode!r}.")
    return query.strip()


def _coverage(query: str, text: str) -> float:
    terms = {t.casefold() for t in query_terms(query)}
    if not terms:
        return 0.0
    words = {w.strip(".,;:!?()[]{}\"'`").casefold() for w in text.split()}
    return len(terms & words) / len(terms)


def _merge_conflicts(
    engine: list[CrossConflict], detected: list[CrossConflict], scored: list[_Scored]
) -> list[CrossConflict]:
    """Engine and rule conflicts, deduplicated, most relevant (best item score) first.

    Engine conflicts naming fewer than two of the candidates are dropped: the reply may
    only point at items it can show.
    """
    best: dict[str, float] = {}
    for entry in scored:
        best.setdefault(entry.hit.id, entry.score)
    merged: list[CrossConflict] = []
    seen: set[frozenset[str]] = set()
    for conflict in [*engine, *detected]:
        ids = [i for i in conflict.item_ids if i in best]
        key = frozenset(ids)
        if len(ids) < 2 or key in seen:
            continue
        seen.add(key)
        merged.append(
            conflict if ids == conflict.item_ids else conflict.model_copy(update={"item_ids": ids})
        )
    merged.sort(key=lambda c: -max(best[i] for i in c.item_ids))
    return merged
