"""The evolution guard: what any engine's rewrite of a branch memory must satisfy.

An engine (Claude or the offline merger) returns a new `BranchMemory`; before the writer saves
it, `check_evolution` compares it with the file it replaces and the items it was asked to add.
The rules are the promise the app makes about a person's memory: the result renders to a file
that validates; every earlier item is still there (in its section under the same id, possibly
reinforced, or moved whole into "Contradictions and Conflicts", or merged into a similar item
of its section that now carries its sources); earlier contradictions are kept; items written
by the user are unchanged; no source appears that neither the old file nor the new items
carry; and the header still names the same branch. An empty list means the
rewrite may be written; otherwise each string says what is wrong, in words an LLM retry prompt
and a person can both act on.
"""

from __future__ import annotations

from collections.abc import Collection

from app.core.format import render, validate
from app.core.models import USER_SOURCE, BranchMemory, MemoryItem
from app.core.similarity import item_similarity

# Problems listed per kind before the rest are summarised, to keep retry prompts short.
_MAX_LISTED = 8
# How alike a vanished item and a survivor must be for the survivor to count as the merge of
# both (consolidation merges near-duplicates at `Config.duplicate_threshold`, 0.8 by default;
# this lower bar only confirms that the survivor is the same statement, not a stranger).
MERGE_SIMILARITY = 0.5


def _earlier_items(old: BranchMemory) -> list[MemoryItem]:
    items = list(old.all_items())
    for conflict in old.contradictions:
        items.extend(conflict.items)
    return items


def _merged_into(item: MemoryItem, survivors: list[MemoryItem]) -> MemoryItem | None:
    """The survivor that absorbed `item` in a merge: same section, alike, carrying its sources.

    A pinned survivor (written by the user) never takes sources, so it only has to be alike.
    """
    if item.pinned:
        return None
    for other in survivors:
        if other.category is not item.category:
            continue
        if not (other.pinned or set(item.sources) <= set(other.sources)):
            continue
        if item_similarity(item, other, floor=MERGE_SIMILARITY) >= MERGE_SIMILARITY:
            return other
    return None


def _listed(problems: list[str], what: str) -> list[str]:
    if len(problems) <= _MAX_LISTED:
        return problems
    extra = len(problems) - _MAX_LISTED
    return [*problems[:_MAX_LISTED], f"... and {extra} more {what}"]


def check_evolution(
    old: BranchMemory | None,
    new: BranchMemory,
    new_items: list[MemoryItem],
    *,
    branch_id: str | None = None,
    allowed_removals: Collection[str] = (),
    rendered: str | None = None,
) -> list[str]:
    """Problems that forbid writing `new` in place of `old` (empty list: safe to write).

    `branch_id` is checked against the header when there is no old file. `allowed_removals`
    names item ids a caller removes on purpose (a section cap that prunes to `versions/`).
    `rendered` is `render(new)` when the caller already has it (it is about to write it).
    """
    problems: list[str] = []

    expected_branch = old.branch_id if old is not None else branch_id
    if expected_branch is not None and new.branch_id != expected_branch:
        problems.append(
            f"the header names branch {new.branch_id!r} but this file is branch "
            f"{expected_branch!r}"
        )

    problems.extend(
        f"format: {p}" for p in validate(rendered if rendered is not None else render(new))
    )

    in_sections: dict[str, MemoryItem] = {}
    duplicates: list[str] = []
    for item in new.all_items():
        if item.id in in_sections:
            duplicates.append(f"item id {item.id} appears more than once")
        in_sections[item.id] = item
    problems.extend(_listed(duplicates, "duplicate ids"))
    in_conflicts = {item.id for c in new.contradictions for item in c.items}

    # Only a person writes user items (a bullet without metadata parses as one): an engine
    # may carry them over or pass on the new items it was given, never make one up.
    given_items = [*new_items, *(_earlier_items(old) if old is not None else [])]
    given = {i.id for i in given_items} | {(i.title, i.content) for i in given_items}
    claimed = [
        f"item {item.id} ({item.title!r}) claims to be written by the user but is new; "
        "every bullet needs its (id, confidence, source, extracted) metadata"
        for item in new.all_items()
        if (item.pinned or USER_SOURCE in item.sources)
        and item.id not in given
        and (item.title, item.content) not in given
    ]
    problems.extend(_listed(claimed, "made-up user items"))

    if old is not None:
        missing: list[str] = []
        changed_pinned: list[str] = []
        # A merge keeps one of the earlier items: only those can have absorbed another.
        earlier_ids = {i.id for i in old.all_items()}
        survivors = [i for i in new.all_items() if i.id in earlier_ids]
        for item in _earlier_items(old):
            if item.id in allowed_removals:
                continue
            if item.id in in_sections or item.id in in_conflicts:
                continue
            if _merged_into(item, survivors) is None:
                missing.append(
                    f"earlier item {item.id} ({item.title!r}) is missing: keep it under the "
                    "same id, or move it whole into Contradictions and Conflicts"
                )
        for item in old.all_items():
            if not item.pinned:
                continue
            now = in_sections.get(item.id)
            if now is None:
                if item.id not in allowed_removals and item.id in in_conflicts:
                    changed_pinned.append(
                        f"pinned item {item.id} ({item.title!r}) was written by the user and "
                        "must stay in its section"
                    )
                continue
            if now.model_dump() != item.model_dump():
                fields = sorted(
                    k for k, v in item.model_dump().items() if now.model_dump().get(k) != v
                )
                changed_pinned.append(
                    f"pinned item {item.id} ({item.title!r}) was changed ({', '.join(fields)}); "
                    "items written by the user must be kept exactly"
                )
        new_conflict_ids = {c.id for c in new.contradictions}
        lost_conflicts = [
            f"earlier contradiction {c.id} ({c.title!r}) is missing"
            for c in old.contradictions
            if c.id not in new_conflict_ids
        ]
        problems.extend(_listed(missing, "missing items"))
        problems.extend(_listed(changed_pinned, "changed pinned items"))
        problems.extend(_listed(lost_conflicts, "missing contradictions"))

    known_sources: set[str] = {s for item in new_items for s in item.sources}
    if old is not None:
        known_sources.update(s for item in _earlier_items(old) for s in item.sources)
    all_new = [*new.all_items(), *(i for c in new.contradictions for i in c.items)]
    invented = sorted({s for item in all_new for s in item.sources} - known_sources)
    problems.extend(
        _listed(
            [f"source {s!r} appears in neither the old file nor the new items" for s in invented],
            "unknown sources",
        )
    )
    return problems
