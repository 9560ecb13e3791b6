"""The guard's shortcut for items that are the old file's own objects changes no verdict.

`check_evolution` skips comparing an item with the old file when it is the very same object
(speed issue 11); these tests give it the same rewrites once sharing objects with the old
memory and once as deep copies, and expect the same problems.
"""

from __future__ import annotations

from datetime import UTC, datetime

from app.core.config import Config
from app.core.guard import check_evolution
from app.core.models import BranchMemory, Category, MemoryItem
from app.engines.offline.evolve import evolve

NOW = datetime(2026, 3, 1, tzinfo=UTC)


def _item(cat: Category, title: str, content: str, **extra: object) -> MemoryItem:
    return MemoryItem.model_validate(
        {"category": cat, "title": title, "content": content, "sources": ["t1"], **extra}
    )


def _old() -> BranchMemory:
    items = {
        Category.CODING_PREFERENCES: [
            _item(Category.CODING_PREFERENCES, "Paths", "Use pathlib instead of os.path."),
            _item(Category.CODING_PREFERENCES, "Mine", "Tabs in Makefiles.", sources=["user"]),
            _item(Category.CODING_PREFERENCES, "Async", "Prefer async/await over callbacks."),
        ],
        Category.BUG_PATTERNS: [
            _item(Category.BUG_PATTERNS, "Race", "Lock the cache before refresh.", fix="Mutex")
        ],
    }
    return BranchMemory(branch_id="g", summary="S.", items=items)


def _rewrites(old: BranchMemory) -> list[tuple[BranchMemory, list[MemoryItem]]]:
    new_items = [
        _item(Category.CODING_PREFERENCES, "Never pathlib", "Never use pathlib, use os.path."),
        _item(Category.PROJECT_CONVENTIONS, "Branches", "Name branches feature/<ticket>."),
    ]
    evolved = evolve(old, new_items, branch_id="g", config=Config(), now=NOW).memory
    prefs = list(old.items[Category.CODING_PREFERENCES])
    out = [(evolved, new_items)]
    changed = [
        prefs[0].model_copy(update={"content": "Never use pathlib.", "confidence": 0.1}),
        prefs[1].model_copy(update={"content": "Spaces in Makefiles."}),
        _item(Category.CODING_PREFERENCES, "Made up", "Ship on Fridays.", sources=["user"]),
        prefs[2].model_copy(update={"sources": ["t1", "t9"]}),
    ]
    for extra in changed:
        kept = [p for p in prefs if p.id != extra.id]
        memory = old.model_copy(
            update={"items": {**old.items, Category.CODING_PREFERENCES: [*kept, extra]}}
        )
        out.append((memory, []))
    dropped = old.model_copy(update={"items": {**old.items, Category.BUG_PATTERNS: []}})
    out.append((dropped, []))
    return out


def test_shared_and_copied_rewrites_get_the_same_verdicts() -> None:
    old = _old()
    for new, items in _rewrites(old):
        shared = check_evolution(old, new, items)
        copied = check_evolution(old, new.model_copy(deep=True), items)
        both_copied = check_evolution(old.model_copy(deep=True), new.model_copy(deep=True), items)
        assert shared == copied == both_copied
    # The rewrites do trip the guard (made-up user item, invented source, flipped item...).
    verdicts = [check_evolution(old, new, items) for new, items in _rewrites(old)]
    assert sum(1 for v in verdicts if v) >= 4
