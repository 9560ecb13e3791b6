"""Tests for app/engines/offline/__init__.py: the OfflineEngine behind the Engine protocol."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from app.core.config import Config
from app.core.engine import Candidate, Engine
from app.core.models import BranchMemory, Category, ExtractionResult, MemoryItem
from app.engines.offline import OfflineEngine, query_overlap

PREF = Category.CODING_PREFERENCES
NOW = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)


def item(
    content: str,
    *,
    confidence: float = 0.8,
    day: date = date(2024, 1, 10),
    source: str = "thread-1",
    tags: list[str] | None = None,
) -> MemoryItem:
    return MemoryItem(
        category=PREF,
        title="",
        content=content,
        confidence=confidence,
        extracted=day,
        sources=[source],
        tags=tags or [],
    )


@pytest.fixture
def engine() -> OfflineEngine:
    return OfflineEngine(Config(section_cap=2), now=NOW)


def test_offline_engine_is_an_engine(engine: OfflineEngine) -> None:
    assert isinstance(engine, Engine)
    assert engine.name == "offline"


def test_evolve_and_consolidate_use_the_engine_settings(engine: OfflineEngine) -> None:
    items = [item(f"Use tool{i} for job{i}", confidence=0.5 + i / 10) for i in range(3)]
    evolved = engine.evolve(None, items, branch_id="main")
    assert evolved.path == "offline"
    assert evolved.memory.last_updated == NOW
    assert len(evolved.memory.items[PREF]) == 3
    consolidated = engine.consolidate(evolved.memory)
    assert len(consolidated.memory.items[PREF]) == 2  # section_cap=2
    assert consolidated.notes == [items[0].id]


def test_deep_retrieve_ranks_by_relevance_and_query_overlap(engine: OfflineEngine) -> None:
    on_topic = item("Use httpx with explicit timeouts for every HTTP call")
    off_topic = item("Name branches feature/<topic>")
    partly = item("Retry HTTP calls with exponential backoff")
    candidates = [
        Candidate(branch="main", item=off_topic, relevance=0.5),
        Candidate(branch="main", item=partly, relevance=0.5),
        Candidate(branch="main", item=on_topic, relevance=0.5),
    ]
    answer = engine.deep_retrieve("httpx timeouts for HTTP calls", candidates)
    assert answer.path == "offline"
    assert [item_id for item_id, _ in answer.ranked] == [on_topic.id, partly.id, off_topic.id]
    scores = [score for _, score in answer.ranked]
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert answer.conflicts == []


def test_deep_retrieve_keeps_the_callers_order_when_overlap_ties(engine: OfflineEngine) -> None:
    a, b = item("Use ruff for linting"), item("Use mypy strict mode")
    answer = engine.deep_retrieve(
        "deployment",
        [
            Candidate(branch="x", item=a, relevance=0.2),
            Candidate(branch="x", item=b, relevance=0.9),
        ],
    )
    assert [i for i, _ in answer.ranked] == [b.id, a.id]


def test_deep_retrieve_counts_a_repeated_item_once(engine: OfflineEngine) -> None:
    a = item("Use ruff for linting")
    answer = engine.deep_retrieve(
        "ruff",
        [
            Candidate(branch="x", item=a, relevance=0.1),
            Candidate(branch="y", item=a, relevance=0.7),
        ],
    )
    assert len(answer.ranked) == 1
    assert answer.ranked[0][1] == pytest.approx(0.6 * 0.7 + 0.4 * 1.0)


def test_deep_retrieve_reports_cross_branch_conflicts(engine: OfflineEngine) -> None:
    mine = item("Prefer async/await over .then() chains", day=date(2024, 1, 2))
    theirs = item("Prefer .then() chains to async/await", day=date(2024, 2, 3), source="t9")
    answer = engine.deep_retrieve(
        "async style",
        [
            Candidate(branch="main", item=mine, relevance=0.8),
            Candidate(branch="legacy", item=theirs, relevance=0.7),
        ],
    )
    [conflict] = answer.conflicts
    assert conflict.branches == ["main", "legacy"]
    assert set(conflict.item_ids) == {mine.id, theirs.id}


def test_query_overlap_counts_tags_and_ignores_stop_words() -> None:
    tagged = item("Prefer small modules", tags=["architecture"])
    assert query_overlap("architecture", tagged) == 1.0
    assert query_overlap("what is the", tagged) == 0.0
    assert query_overlap("small widgets", tagged) == 0.5


def test_extract_goes_through_the_offline_extractor(engine: OfflineEngine) -> None:
    pytest.importorskip("app.engines.offline.extract")
    conversation = (
        "User: From now on, always use httpx instead of requests for HTTP calls in this repo.\n"
        "Assistant: Understood, I'll use httpx everywhere."
    )
    result = engine.extract(conversation, source="thread-42")
    assert isinstance(result, ExtractionResult)
    for found in result.items:
        assert "thread-42" in found.sources


def test_evolve_accepts_an_existing_branch(engine: OfflineEngine) -> None:
    current = BranchMemory(branch_id="main")
    result = engine.evolve(current, [item("Use ruff")], branch_id="main")
    assert result.stats["added"] == 1
