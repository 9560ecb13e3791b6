"""The evolve lookups (speed issue 11) find exactly what a scan of every item finds.

`_Work` keeps a token -> items lookup for duplicates, the stance-subject lookup for
contradictions and the lowered text of items for `replaces:` / `disputes:`, and reuses them
from one evolve to the next. These tests hold them against plain scans on real extractions.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from app.core.config import Config
from app.core.format import render
from app.core.models import BranchMemory, Category, MemoryItem
from app.core.similarity import item_similarity, item_tokens
from app.engines.offline.evolve import (
    _FROM_NOW_ON,
    _LOOKUPS,
    _LOWERED,
    _NOT_A_VALUE,
    _REPLACEABLE,
    _RULE_VERBS,
    _SET_ASIDE,
    _could_match,
    _Work,
    evolve,
)
from app.engines.offline.extract import extract

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
START = datetime(2026, 3, 1, tzinfo=UTC)


def _extractions() -> list[list[MemoryItem]]:
    paths = sorted(FIXTURES.glob("extraction/*.txt")) + sorted(FIXTURES.glob("dialogue/*/*.txt"))
    return [
        list(extract(p.read_text(encoding="utf-8"), source=p.stem, today=date(2026, 3, 1)).items)
        for p in paths
    ]


@pytest.fixture(scope="module")
def extractions() -> list[list[MemoryItem]]:
    return _extractions()


def _scan_duplicate(work: _Work, new: MemoryItem) -> tuple[int, MemoryItem] | None:
    """`duplicate_of` as a scan of the whole section (the code before the lookup)."""
    best: tuple[float, int, MemoryItem] | None = None
    new_tokens = item_tokens(new)
    for index, old in enumerate(work.sections[new.category]):
        if old.id != new.id and not _could_match(new_tokens, item_tokens(old), work.threshold):
            continue
        score = 1.0 if old.id == new.id else item_similarity(new, old, floor=work.threshold)
        if score >= work.threshold and (best is None or score > best[0]):
            best = (score, index, old)
    return None if best is None else (best[1], best[2])


def _scan_replaced(work: _Work, new: MemoryItem) -> list[MemoryItem]:
    names = [t[len("replaces:") :] for t in new.tags if t.startswith("replaces:")]
    # `replaces:unnamed` names nothing a rule could hold
    real = [n for n in names if n != "unnamed"]
    found = _scan_named(work, new, real, strict=False) if real else []
    if names and not found and "any" not in names and _FROM_NOW_ON.search(new.content):
        # a change of course naming nothing known
        found = _scan_named(work, new, ["earlier"], strict=True)
    return found


def _scan_named(
    work: _Work, new: MemoryItem, names: list[str], *, strict: bool
) -> list[MemoryItem]:
    found = []
    named = [n for n in names if n not in ("any", "earlier")]
    # a note goes only when a statement names what it describes as replaced
    categories = (*_REPLACEABLE, Category.IMPLEMENTATION_NOTES) if named else _REPLACEABLE
    for category in categories:
        for item in work.sections[category]:
            if item.id == new.id:
                continue
            text = item.text.lower()
            for name in named if category is Category.IMPLEMENTATION_NOTES else names:
                if name == "earlier" and set(item.sources) & set(new.sources):
                    hit = False  # "from now on" restates its own thread
                elif name in ("any", "earlier"):
                    shared = (item_tokens(item) & item_tokens(new)) - _RULE_VERBS
                    hit = len(shared) >= (3 if strict else 2) or (
                        not strict
                        and item.category is new.category
                        and not set(item.sources) & set(new.sources)
                        and any(len(t) >= 5 for t in shared)
                    )
                else:
                    # a whole word, or the head of an identifier ("rollbar_access_token")
                    hit = (
                        re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None
                        or re.search(rf"(?<![\w-]){re.escape(name)}_\w", text) is not None
                    )
                if hit:
                    found.append(item)
                    break
    if len(found) > 1 and not named and "any" in names:
        # a correction naming nothing takes back the rules closest to it (ties all go)
        shared = [len((item_tokens(i) & item_tokens(new)) - _RULE_VERBS) for i in found]
        found = [i for i, n in zip(found, shared, strict=True) if n == max(shared)]
    aside = _SET_ASIDE.search(new.content)
    if not named and aside is not None and aside.group(1).lower() not in _NOT_A_VALUE:
        # "…, not sqlite": only the rules that said what the correction sets aside
        word = aside.group(1).lower()
        found = [
            i for i in found if re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", i.text.lower())
        ]
    return found


def _scan_disputed(work: _Work, new: MemoryItem) -> list[MemoryItem]:
    names = [t[len("disputes:") :] for t in new.tags if t.startswith("disputes:")]
    found = []
    for category in _REPLACEABLE:
        for item in work.sections[category]:
            words = re.findall(r"[\w.+#-]+", item.text.lower())
            if item.id != new.id and any(w.startswith(n) for n in names for w in words):
                found.append(item)
    return found


def _branch(extractions: list[list[MemoryItem]]) -> BranchMemory:
    memory: BranchMemory | None = None
    for day, items in enumerate(extractions[::2]):
        if items:
            memory = evolve(
                memory, items, branch_id="b", config=Config(), now=START + timedelta(days=day)
            ).memory
    assert memory is not None
    return memory


@pytest.mark.parametrize("threshold", [0.9, 0.8, 0.6, 0.5, 0.31, 0.3, 0.2])
def test_lookups_find_what_a_scan_finds(
    extractions: list[list[MemoryItem]], threshold: float
) -> None:
    memory = _branch(extractions)
    work = _Work(
        sections={c: list(memory.items[c]) for c in Category},
        contradictions=list(memory.contradictions),
        threshold=threshold,
    )
    probes = [i for items in extractions for i in items] + memory.all_items()
    tagged = [
        i.model_copy(update={"tags": [*i.tags, f"replaces:{w}", f"disputes:{w[:3]}"]})
        for i in probes[::7]
        for w in sorted(item_tokens(i))[:1]
    ]
    tagged += [i.model_copy(update={"tags": ["replaces:any"]}) for i in probes[::11]]
    found_duplicates = 0
    for new in [*probes, *tagged]:
        expected = _scan_duplicate(work, new)
        assert work.duplicate_of(new) == expected
        found_duplicates += expected is not None
        assert work.replaced_by(new) == _scan_replaced(work, new)
        assert work.disputed_by(new) == _scan_disputed(work, new)
    assert found_duplicates


def test_evolving_with_kept_lookups_is_evolving_from_scratch(
    extractions: list[list[MemoryItem]],
) -> None:
    def chain(fresh: bool) -> list[str]:
        _LOOKUPS.clear()
        memory: BranchMemory | None = None
        texts = []
        for day, items in enumerate(extractions):
            if not items:
                continue
            if fresh:
                _LOOKUPS.clear()
                _LOWERED.clear()
            result = evolve(
                memory, items, branch_id="b", config=Config(), now=START + timedelta(days=day)
            )
            texts.append(render(result.memory) + repr(result.notes) + repr(result.stats))
            memory = result.memory
        return texts

    kept = chain(fresh=False)
    assert _LOOKUPS  # the chain did keep and reuse lookups
    assert kept == chain(fresh=True)


def test_a_branch_read_cold_gets_the_lookups_item_by_item_indexing_gives(
    extractions: list[list[MemoryItem]],
) -> None:
    """`_built` gathers a whole branch at once; `_Work._index` adds one item at a time."""
    items = [item for found in extractions for item in found]
    sections: dict[Category, list[MemoryItem]] = {c: [] for c in Category}
    for item in items:
        sections[item.category].append(item)
    _LOOKUPS.clear()
    cold = _Work(sections, [], 0.8).look
    one_by_one = _Work({c: [] for c in Category}, [], 0.8)
    for category in Category:
        for item in sections[category]:
            one_by_one._index(item)
    assert cold.by_subject == one_by_one.look.by_subject
    assert cold.by_token == one_by_one.look.by_token
    assert len(items) > 500
