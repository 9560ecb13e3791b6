"""Tests for app/core/reader.py: fast and deep retrieval over real branch files and SQLite."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from app.core.config import Config
from app.core.engine import Candidate, CrossConflict, DeepAnswer
from app.core.errors import BudgetExceeded, InvalidInput, RetrievalFailed
from app.core.format import render
from app.core.index import MemoryIndex
from app.core.models import (
    BranchMemory,
    Category,
    EvolutionResult,
    ExtractionResult,
    MemoryItem,
)
from app.core.ranking import estimate_tokens
from app.core.reader import MemoryReader
from app.core.store import MemoryStore

PREF = Category.CODING_PREFERENCES
ARCH = Category.ARCHITECTURAL_DECISIONS
MEMORY_KEYS = {
    "branch",
    "project",
    "category",
    "title",
    "content",
    "confidence",
    "score",
    "id",
    "relevance",
}


def item(content: str, category: Category = PREF, **extra: object) -> MemoryItem:
    return MemoryItem.model_validate(
        {"category": category, "title": "", "content": content, **extra}
    )


def write(store: MemoryStore, branch: str, *items: MemoryItem) -> None:
    by_cat: dict[Category, list[MemoryItem]] = {c: [] for c in Category}
    for it in items:
        by_cat[it.category].append(it)
    store.write_text(branch, render(BranchMemory(branch_id=branch, items=by_cat)))


class FakeEngine:
    """Stands in for an engine; deep_retrieve answers with whatever the test sets."""

    name = "fake"

    def __init__(self) -> None:
        self.answer: DeepAnswer | None = None
        self.error: Exception | None = None
        self.seen: list[Candidate] = []

    def extract(self, conversation: str, *, source: str) -> ExtractionResult:
        raise NotImplementedError

    def evolve(
        self, current: BranchMemory | None, items: list[MemoryItem], *, branch_id: str
    ) -> EvolutionResult:
        raise NotImplementedError

    def consolidate(self, memory: BranchMemory) -> EvolutionResult:
        raise NotImplementedError

    def deep_retrieve(self, query: str, candidates: list[Candidate]) -> DeepAnswer:
        self.seen = candidates
        if self.error is not None:
            raise self.error
        if self.answer is not None:
            return self.answer
        return DeepAnswer(ranked=[(c.item.id, c.relevance) for c in candidates])


@pytest.fixture
def store(home: Path) -> MemoryStore:
    s = MemoryStore(home)
    s.ensure()
    return s


@pytest.fixture
def engine() -> FakeEngine:
    return FakeEngine()


@pytest.fixture
def index(store: MemoryStore) -> Iterator[MemoryIndex]:
    idx = MemoryIndex(store.index_path)
    yield idx
    idx.close()


def make_reader(
    store: MemoryStore, index: MemoryIndex, engine: FakeEngine, **config: Any
) -> MemoryReader:
    return MemoryReader(store, index, engine, Config(**config))


def ask(reader: MemoryReader, query: str, max_results: int = 5, **kwargs: Any) -> dict[str, Any]:
    return reader.retrieve(query, max_results, **kwargs)


def contents(reply: dict[str, Any]) -> list[str]:
    return [m["content"] for m in reply["memories"]]


def seed_async_dispute(store: MemoryStore) -> None:
    write(
        store,
        "spotter/feature/auth",
        item("Always use async/await", extracted=date(2024, 1, 19), sources=["thread-a1"]),
        item("Tokens are refreshed by the gateway", ARCH),
    )
    write(
        store,
        "spotter/feature/ui",
        item(
            "Prefer .then() chains over async/await",
            extracted=date(2024, 3, 2),
            sources=["thread-b7"],
        ),
    )
    write(
        store,
        "billing/main",
        item("Wrap async/await calls in a timeout helper", extracted=date(2024, 2, 1)),
        item("Invoices are immutable once sent", ARCH),
    )


# -- the three-branch example of seed 001 section 8.2 -------------------------------------
@pytest.mark.parametrize("use_fts5", [True, False], ids=["fts5", "scan"])
def test_async_pattern_ranks_items_from_three_branches_and_reports_the_conflict(
    store: MemoryStore, engine: FakeEngine, use_fts5: bool
) -> None:
    seed_async_dispute(store)
    index = MemoryIndex(store.index_path, use_fts5=use_fts5)
    reply = ask(make_reader(store, index, engine), "async pattern")
    index.close()

    assert set(reply) == {"memories", "conflicts", "totalTokens", "retrievalTime", "mode"}
    assert reply["mode"] == "fast"
    assert {m["branch"] for m in reply["memories"]} == {
        "spotter/feature/auth",
        "spotter/feature/ui",
        "billing/main",
    }
    for memory in reply["memories"]:
        assert set(memory) == MEMORY_KEYS
        assert memory["category"] == "coding_preferences"
        assert 0 < memory["score"] <= 1
    scores = [m["score"] for m in reply["memories"]]
    assert scores == sorted(scores, reverse=True)
    assert "Invoices" not in " ".join(contents(reply))

    [conflict] = reply["conflicts"]
    assert conflict["category"] == "coding_preferences"
    assert conflict["branches"] == ["spotter/feature/auth", "spotter/feature/ui"]
    by_content = {m["content"]: m["id"] for m in reply["memories"]}
    assert conflict["itemIds"] == [
        by_content["Always use async/await"],
        by_content["Prefer .then() chains over async/await"],
    ]
    assert "2024-03-02" in conflict["description"]
    assert reply["totalTokens"] > 0
    assert isinstance(reply["retrievalTime"], float)


# -- scoring ------------------------------------------------------------------------------
def test_score_is_weighted_relevance_confidence_and_frequency(
    store: MemoryStore, index: MemoryIndex, engine: FakeEngine
) -> None:
    write(
        store,
        "main",
        item("Deploys run from the release branch", confidence=0.6),
        item("Deploys need a changelog entry first", confidence=0.95),
    )
    reader = make_reader(store, index, engine)
    reply = ask(reader, "deploys")
    # Both match "deploys" equally well, so confidence decides.
    first, second = reply["memories"]
    assert first["content"] == "Deploys need a changelog entry first"
    assert first["relevance"] == second["relevance"]
    assert first["score"] == pytest.approx(0.6 * first["relevance"] + 0.3 * 0.95, abs=1e-4)
    assert second["score"] == pytest.approx(0.6 * second["relevance"] + 0.3 * 0.6, abs=1e-4)
    # Each item was returned once: the next scores include 0.1 * 1/100.
    again = ask(reader, "deploys")["memories"][0]
    assert again["score"] == pytest.approx(first["score"] + 0.001, abs=1e-4)


def test_better_match_beats_higher_confidence(
    store: MemoryStore, index: MemoryIndex, engine: FakeEngine
) -> None:
    write(
        store,
        "main",
        item(
            "Retry uploads with exponential backoff, retry uploads at most 3 times", confidence=0.75
        ),
        item("Uploads use presigned URLs", confidence=1.0),
    )
    reply = ask(make_reader(store, index, engine), "retry uploads backoff")
    assert contents(reply)[0].startswith("Retry uploads")


def test_often_returned_items_rise_in_later_queries(
    store: MemoryStore, index: MemoryIndex, engine: FakeEngine
) -> None:
    write(store, "a", item("Cache keys include the tenant id", title="Alpha cache"))
    write(store, "b", item("Cache keys include the tenant id", title="Bravo cache"))
    reader = make_reader(store, index, engine)
    before = ask(reader, "cache keys tenant")["memories"]
    assert [m["branch"] for m in before] == ["a", "b"]  # a tie, broken by branch name
    for _ in range(5):
        reply = ask(reader, "bravo", 1)  # a user keeps needing b's item
        assert [m["branch"] for m in reply["memories"]] == ["b"]
    after = ask(reader, "cache keys tenant")["memories"]
    assert [m["branch"] for m in after] == ["b", "a"]


def test_relevance_threshold_drops_weak_matches(
    store: MemoryStore, index: MemoryIndex, engine: FakeEngine
) -> None:
    write(
        store,
        "main",
        item("Postgres connection pool size is 20; the pool is shared by workers"),
        item("Background workers restart nightly"),
    )
    loose = ask(make_reader(store, index, engine), "postgres pool workers")
    strict = ask(
        make_reader(store, index, engine, relevance_threshold=0.8), "postgres pool workers"
    )
    assert len(loose["memories"]) == 2
    assert contents(strict) == [
        "Postgres connection pool size is 20; the pool is shared by workers"
    ]


def test_same_branch_then_same_project_then_elsewhere(
    store: MemoryStore, index: MemoryIndex, engine: FakeEngine
) -> None:
    for branch, title in (
        ("acme/web", "First rule"),
        ("spotter/web", "Second rule"),
        ("spotter/api", "Third rule"),
    ):
        write(store, branch, item("Feature flags default to off", title=title))
    reader = make_reader(store, index, engine)
    plain = ask(reader, "flags default")["memories"]
    assert len(plain) == 3
    assert len({m["score"] for m in plain}) == 1  # without a location: a tie
    local = ask(reader, "flags default", branch="spotter/api")["memories"]
    assert [m["branch"] for m in local] == ["spotter/api", "spotter/web", "acme/web"]
    assert local[0]["score"] > local[1]["score"] > local[2]["score"]
    by_project = ask(reader, "flags default", project="acme")["memories"]
    assert by_project[0]["branch"] == "acme/web"


def test_a_much_better_match_elsewhere_still_wins(
    store: MemoryStore, index: MemoryIndex, engine: FakeEngine
) -> None:
    write(store, "spotter/auth", item("Flags are read once at start-up", confidence=0.6))
    write(
        store,
        "acme/main",
        item("Feature flags: flags default to off, flags are typed", confidence=0.95),
    )
    local = ask(make_reader(store, index, engine), "feature flags default", branch="spotter/auth")[
        "memories"
    ]
    assert [m["branch"] for m in local] == ["acme/main", "spotter/auth"]


def test_token_budget_limits_what_is_returned(
    store: MemoryStore, index: MemoryIndex, engine: FakeEngine
) -> None:
    long_tail = " ".join(f"detail{i}" for i in range(40))
    write(
        store,
        "main",
        *[item(f"Logging rule {n}: {long_tail}", title=f"Rule {n}") for n in range(8)],
    )
    reader = make_reader(store, index, engine, retrieval_token_budget=400)
    reply = ask(reader, "logging rule", 8)
    assert 1 <= len(reply["memories"]) < 8
    assert reply["totalTokens"] <= 400
    roomy = ask(make_reader(store, index, engine), "logging rule", 8)
    assert len(roomy["memories"]) == 8
    assert roomy["totalTokens"] <= 2_000


def test_an_item_larger_than_the_budget_is_shortened_not_dropped(
    store: MemoryStore, index: MemoryIndex, engine: FakeEngine
) -> None:
    write(store, "main", item("Release checklist: " + "step " * 300))
    reply = ask(make_reader(store, index, engine, retrieval_token_budget=100), "release")
    [memory] = reply["memories"]
    assert memory["content"].startswith("Release checklist: step")
    assert memory["content"].endswith("…")
    assert reply["totalTokens"] <= 100


def test_conflicts_are_counted_first_in_the_budget(
    store: MemoryStore, index: MemoryIndex, engine: FakeEngine
) -> None:
    seed_async_dispute(store)
    write(
        store,
        "docs/main",
        *[
            item(
                f"Async/await handler number {n} logs the request id and the elapsed time "
                f"in milliseconds before returning",
                title=f"Handler {n}",
            )
            for n in range(4)
        ],
    )
    roomy = ask(make_reader(store, index, engine), "async/await", 10)
    assert len(roomy["conflicts"]) == 1
    assert len(roomy["memories"]) == 7
    conflict_tokens = estimate_tokens(
        f"**CONFLICT** in coding_preferences: {roomy['conflicts'][0]['description']}\n"
    )
    budget = conflict_tokens + 100
    tight = ask(make_reader(store, index, engine, retrieval_token_budget=budget), "async/await", 10)
    assert tight["conflicts"] == roomy["conflicts"]
    assert 1 <= len(tight["memories"]) < 7
    assert conflict_tokens < tight["totalTokens"] <= budget


# -- the index follows the files ------------------------------------------------------------
def test_hand_edits_and_deletions_show_in_the_next_retrieve(
    store: MemoryStore, index: MemoryIndex, engine: FakeEngine
) -> None:
    write(store, "main", item("Use pnpm for installs"))
    write(store, "other", item("Use pnpm workspaces for the monorepo"))
    reader = make_reader(store, index, engine)
    assert len(ask(reader, "pnpm")["memories"]) == 2

    path = store.branch_file("main")
    path.write_text(
        path.read_text().replace("Use pnpm for installs", "Use bun for installs"), encoding="utf-8"
    )
    assert contents(ask(reader, "pnpm")) == ["Use pnpm workspaces for the monorepo"]
    assert contents(ask(reader, "bun")) == ["Use bun for installs"]

    store.branch_file("other").unlink()
    assert ask(reader, "pnpm")["memories"] == []


def test_corrupt_index_file_is_rebuilt_transparently(
    store: MemoryStore, engine: FakeEngine
) -> None:
    write(store, "main", item("Use pnpm for installs"))
    store.index_path.write_bytes(os.urandom(4096))
    index = MemoryIndex(store.index_path)
    assert contents(ask(make_reader(store, index, engine), "pnpm")) == ["Use pnpm for installs"]
    index.close()


def test_index_damaged_while_in_use_is_rebuilt(
    store: MemoryStore, index: MemoryIndex, engine: FakeEngine
) -> None:
    write(store, "main", item("Use pnpm for installs"))
    reader = make_reader(store, index, engine)
    ask(reader, "pnpm")
    for suffix in ("-wal", "-shm"):
        Path(f"{store.index_path}{suffix}").unlink(missing_ok=True)
    store.index_path.unlink()
    store.index_path.write_bytes(b"garbage" * 1000)
    assert contents(ask(reader, "pnpm")) == ["Use pnpm for installs"]


# -- input ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("query", "max_results", "mode", "message"),
    [
        ("", 5, "fast", "non-empty"),
        ("   ", 5, "fast", "non-empty"),
        ("x", 0, "fast", "maxResults"),
        ("x", 101, "fast", "maxResults"),
        ("x", 5, "slow", "Mode"),
    ],
)
def test_bad_arguments_are_invalid_input(
    store: MemoryStore,
    index: MemoryIndex,
    engine: FakeEngine,
    query: str,
    max_results: int,
    mode: str,
    message: str,
) -> None:
    with pytest.raises(InvalidInput, match=message):
        ask(make_reader(store, index, engine), query, max_results, mode=mode)


@pytest.mark.parametrize("query", ["???", "c++ AND (", 'NEAR("x"', "--"])
def test_odd_queries_answer_without_error(
    store: MemoryStore, index: MemoryIndex, engine: FakeEngine, query: str
) -> None:
    seed_async_dispute(store)
    reply = ask(make_reader(store, index, engine), query)
    assert isinstance(reply["memories"], list)


def test_no_match_gives_an_empty_answer(
    store: MemoryStore, index: MemoryIndex, engine: FakeEngine
) -> None:
    seed_async_dispute(store)
    reply = ask(make_reader(store, index, engine), "kubernetes")
    assert (reply["memories"], reply["conflicts"], reply["totalTokens"]) == ([], [], 0)


# -- deep mode --------------------------------------------------------------------------------
def test_deep_mode_uses_the_engine_ranking_and_conflicts(
    store: MemoryStore, index: MemoryIndex, engine: FakeEngine
) -> None:
    seed_async_dispute(store)
    index.sync(store)
    ids = {h.content: h.id for h in index.items()}
    timeout_id = ids["Wrap async/await calls in a timeout helper"]
    always_id = ids["Always use async/await"]
    engine.answer = DeepAnswer(
        ranked=[(timeout_id, 0.95), (always_id, 0.4), ("made-up-id", 1.0)],
        conflicts=[
            CrossConflict(
                category=PREF,
                description="Engine: timeouts vs none",
                item_ids=[timeout_id, always_id],
                branches=["billing/main", "spotter/feature/auth"],
            )
        ],
        path="fake",
    )
    reply = ask(make_reader(store, index, engine), "async pattern", mode="deep")
    assert reply["mode"] == "deep"
    assert {c.item.id for c in engine.seen} >= {timeout_id, always_id}
    assert [m["id"] for m in reply["memories"]] == [timeout_id, always_id]
    assert reply["memories"][0]["relevance"] == 0.95
    assert [c["description"] for c in reply["conflicts"]] == ["Engine: timeouts vs none"]


def test_deep_mode_with_a_plain_engine_equals_fast_mode_plus_conflicts(
    store: MemoryStore, index: MemoryIndex, engine: FakeEngine
) -> None:
    seed_async_dispute(store)
    reader = make_reader(store, index, engine)
    fast = ask(reader, "async pattern")
    deep = ask(reader, "async pattern", mode="deep")
    assert [m["id"] for m in deep["memories"]] == [m["id"] for m in fast["memories"]]
    assert deep["conflicts"] == fast["conflicts"]
    assert len(deep["conflicts"]) == 1


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (BudgetExceeded("Daily token budget used up"), "Daily token budget used up"),
        (TimeoutError("read timed out"), "read timed out"),
    ],
)
def test_engine_failure_is_a_retrieval_failure(
    store: MemoryStore, index: MemoryIndex, engine: FakeEngine, error: Exception, message: str
) -> None:
    seed_async_dispute(store)
    engine.error = error
    with pytest.raises(RetrievalFailed, match=f"fake engine failed: {message}"):
        ask(make_reader(store, index, engine), "async", mode="deep")


def test_damaged_pages_behind_a_good_header_are_rebuilt(
    store: MemoryStore, engine: FakeEngine
) -> None:
    for n in range(20):
        write(store, f"b{n}", *[item(f"Use pnpm {n}-{k} for workspace {k}") for k in range(20)])
    MemoryIndex(store.index_path).close()
    index = MemoryIndex(store.index_path)
    index.sync(store)
    index.close()
    data = bytearray(store.index_path.read_bytes())
    page = 4096
    for offset in range(page, len(data), page):  # keep page 1 (header and schema)
        data[offset + 8 : offset + page] = bytes((offset + n) % 251 for n in range(page - 8))
    store.index_path.write_bytes(bytes(data))
    index = MemoryIndex(store.index_path)
    assert index.pending_rebuild == "corrupt"
    reply = ask(make_reader(store, index, engine), "pnpm", 3)
    assert len(reply["memories"]) == 3
    assert index.health()["integrity"] == "ok"
    index.close()


def test_deep_mode_offline_ranks_the_same_items_and_finds_the_conflict(
    store: MemoryStore, index: MemoryIndex
) -> None:
    from app.engines.offline import OfflineEngine

    seed_async_dispute(store)
    config = Config()
    reader = MemoryReader(store, index, OfflineEngine(config), config)
    fast = reader.retrieve("async pattern")
    deep = reader.retrieve("async pattern", mode="deep")
    assert deep["mode"] == "deep"
    assert {m["id"] for m in deep["memories"]} == {m["id"] for m in fast["memories"]}
    assert [c["itemIds"] for c in deep["conflicts"]] == [c["itemIds"] for c in fast["conflicts"]]
    assert len(deep["conflicts"]) == 1
