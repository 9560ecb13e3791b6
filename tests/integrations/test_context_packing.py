"""The session-start packer: one pass over the items, the same choice as rendering each try.

`build_context` adds up line lengths instead of rendering the whole text for every item it
tries. The reference below is the packer it replaced (render, measure, keep or drop); both
must choose the same items and give the same text for any memory and budget.
"""

from __future__ import annotations

import json
import random

import pytest

from app.integrations import context
from app.integrations.context import (
    _NOTE_RESERVE,
    CATEGORY_HEADINGS,
    CONSTRAINT_ORDER,
    CONSTRAINT_RESERVE,
    HOOK_OUTPUT_CAP,
    MAX_BRANCH_ITEMS,
    Item,
    Memory,
    _render,
    _strength,
    build_context,
    constraint_line,
    select_constraints,
)

WORDS = [
    "watcher",
    "index",
    "cache",
    "rename",
    "inode",
    "event",
    "atomic",
    "replace",
    "folder",
    "lesson",
    "bug",
    "fix",
]


def _reference(memory: Memory, project: str, budget: int) -> tuple[list[str], list[str]]:
    """Ids of the own items and constraints the render-every-try packer keeps."""
    strongest = sorted(memory.items, key=_strength)[:MAX_BRANCH_ITEMS]
    constraints = select_constraints(memory.others, project, exclude=memory.items)
    reserve = 0
    if constraints:
        reserve = min(
            CONSTRAINT_RESERVE, sum(len(constraint_line(i)) + 1 for i in constraints) + 200
        )
    placeholder = "x" * _NOTE_RESERVE

    def fits(own: list[Item], chosen: list[Item], limit: int) -> bool:
        return len(_render(memory, project, own, chosen, placeholder)) <= limit

    own: list[Item] = []
    chosen: list[Item] = []
    pending = list(strongest)
    for item in list(pending):
        if fits([*own, item], [], budget - reserve):
            own.append(item)
            pending.remove(item)
    for item in constraints:
        if fits(own, [*chosen, item], budget):
            chosen.append(item)
    for item in list(pending):
        if fits([*own, item], chosen, budget):
            own.append(item)
            pending.remove(item)
    return [i.id for i in own], [i.id for i in chosen]


def _items(rng: random.Random, branch: str, count: int, prefix: str) -> list[Item]:
    found = []
    for k in range(count):
        fields: dict[str, object] = {"occurrences": rng.randint(1, 4)}
        if rng.random() < 0.3:
            fields["root_cause"] = "rc " * rng.randint(1, 30)
        found.append(
            Item(
                id=f"{prefix}{k}",
                branch=branch,
                project="p",
                category=rng.choice(list(CATEGORY_HEADINGS)),
                title=" ".join(rng.choices(WORDS, k=rng.randint(1, 6))),
                content=" ".join(rng.choices(WORDS, k=rng.choice([0, 5, 40, 200]))),
                confidence=round(rng.random(), 2),
                pinned=rng.random() < 0.1,
                extracted=f"2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}",
                access_count=rng.randint(0, 3),
                data=json.dumps(fields),
            )
        )
    return found


@pytest.mark.parametrize("seed", range(60))
def test_one_pass_packing_chooses_what_rendering_each_try_chose(seed: int) -> None:
    rng = random.Random(seed)
    own = _items(rng, "p/x", rng.choice([0, 3, 25, 80]), "o")
    others = [
        i
        for b in range(rng.choice([0, 1, 5, 20]))
        for i in _items(rng, f"p/b{b}", rng.randint(1, 40), f"b{b}-")
        if i.category in CONSTRAINT_ORDER
    ]
    memory = Memory("p/x", rng.choice(["", "A summary.", "S " * 2000]), own, others, "index")
    budget = rng.choice([8_000, 3_000, 1_200])

    found = build_context(memory, "p", budget)

    own_ids, constraint_ids = _reference(memory, "p", budget)
    if found is None:
        assert not own_ids and not constraint_ids and not memory.summary
        return
    assert list(found.ids) == own_ids + constraint_ids
    assert (found.branch_items, found.constraints) == (len(own_ids), len(constraint_ids))
    assert len(found.text) <= budget


def test_no_budget_goes_past_claude_codes_cap() -> None:
    rng = random.Random(7)
    memory = Memory("p/x", "", _items(rng, "p/x", 300, "o"), [], "index")

    found = build_context(memory, "p", budget=50_000)

    assert found is not None
    assert len(found.text) <= HOOK_OUTPUT_CAP < 50_000
    assert context.BUDGET_CHARS < HOOK_OUTPUT_CAP
