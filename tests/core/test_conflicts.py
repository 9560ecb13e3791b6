"""Tests for app/core/conflicts.py: contradictions across branches, found at retrieval time."""

from __future__ import annotations

from datetime import date

from app.core.conflicts import find_conflicts
from app.core.models import Category, MemoryItem

PREF = Category.CODING_PREFERENCES


def item(content: str, day: date, source: str, category: Category = PREF) -> MemoryItem:
    return MemoryItem(category=category, title="", content=content, sources=[source], extracted=day)


ASYNC = item("Prefer async/await over .then() chains", date(2024, 1, 19), "thread-a1")
THEN = item("Prefer .then() chains to async/await", date(2024, 3, 2), "thread-b7")
TABS = item("Use tabs, not spaces", date(2024, 2, 1), "thread-a2")


def test_contradiction_between_two_branches_is_reported_with_branches_and_dates() -> None:
    conflicts = find_conflicts([("main", ASYNC), ("feature/ui", THEN), ("main", TABS)])
    assert len(conflicts) == 1
    found = conflicts[0]
    assert found.branches == ["main", "feature/ui"]
    assert found.item_ids == [ASYNC.id, THEN.id]
    assert found.category is PREF
    for text in (
        "main",
        "feature/ui",
        "2024-01-19",
        "2024-03-02",
        "thread-a1",
        "thread-b7",
        "async/await over .then() chains",
    ):
        assert text in found.description
    assert 'newest statement is from "feature/ui"' in found.description


def test_same_branch_contradictions_are_left_to_evolution() -> None:
    assert find_conflicts([("main", ASYNC), ("main", THEN)]) == []


def test_agreeing_or_unrelated_items_give_no_conflict() -> None:
    also_async = item("Always use async/await", date(2024, 4, 1), "thread-c1")
    entries = [("main", ASYNC), ("other", also_async), ("other", TABS)]
    assert find_conflicts(entries) == []


def test_repeated_entries_count_once() -> None:
    conflicts = find_conflicts([("main", ASYNC), ("main", ASYNC), ("dev", THEN), ("dev", THEN)])
    assert len(conflicts) == 1
    assert conflicts[0].item_ids == [ASYNC.id, THEN.id]


def test_one_item_disputed_by_two_branches_forms_one_group() -> None:
    never = item("Never use async/await", date(2024, 5, 1), "thread-d1")
    conflicts = find_conflicts([("main", ASYNC), ("ui", THEN), ("legacy", never)])
    assert len(conflicts) == 1
    assert set(conflicts[0].branches) == {"main", "ui", "legacy"}
    assert conflicts[0].branches[0] == "main"  # oldest statement first
    assert len(conflicts[0].item_ids) == 3


def test_separate_disputes_are_separate_conflicts_ordered_by_age() -> None:
    spaces = item("Use spaces, not tabs", date(2024, 6, 1), "thread-e1")
    conflicts = find_conflicts([("main", TABS), ("ui", THEN), ("main", ASYNC), ("ops", spaces)])
    assert [c.item_ids for c in conflicts] == [[ASYNC.id, THEN.id], [TABS.id, spaces.id]]


def test_fewer_than_two_entries() -> None:
    assert find_conflicts([]) == []
    assert find_conflicts([("main", ASYNC)]) == []


def test_fifty_candidates_with_one_dispute() -> None:
    entries = [
        (
            f"branch-{i % 5}",
            item(f"Use library{i} for feature{i % 7}", date(2024, 1, 1 + i % 28), f"t{i}"),
        )
        for i in range(48)
    ]
    entries += [("main", ASYNC), ("ui", THEN)]
    conflicts = find_conflicts(entries)
    assert [c.item_ids for c in conflicts] == [[ASYNC.id, THEN.id]]
