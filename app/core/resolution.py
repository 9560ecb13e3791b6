"""Resolving contradictions the way a person chose (the Conflicts panel, `ops.RESOLVE_CONFLICT`).

Inside one branch file a contradiction record holds the statements that are not in a section;
across branches the older item's file records what superseded it. Nothing is deleted: an item
that loses is kept whole inside a resolved record (tagged `outdated` when marked so), and the
store keeps the previous file as a version.
"""

from __future__ import annotations

from typing import Any

from app.core.errors import InvalidInput
from app.core.models import Contradiction, MemoryItem, utc_now

_WORDS = {
    "keep-both": "keep both: each stays valid in its own scope",
    "keep-newer": "keep newer",
    "mark-outdated": "older marked outdated",
}


def apply_resolution(memory: Any, conflict: Contradiction, action: str) -> None:
    """Resolve a contradiction recorded inside one branch file.

    The record in `memory.contradictions` is replaced by a resolved copy: contradiction
    records (like items) are shared with the store's parse cache and never changed in place.
    """
    section_items = {i.id: i for i in memory.all_items()}
    held = list(conflict.items)
    refs = [section_items[r] for r in conflict.refs if r in section_items]
    items_after, refs_after = list(conflict.items), list(conflict.refs)
    if action == "keep-both":
        for item in held:
            if memory.find(item.id) is None:
                memory.items[item.category].append(item)
        items_after = []
        refs_after = [*conflict.refs, *(i.id for i in held)]
    elif action in ("keep-newer", "mark-outdated"):
        everyone = sorted([*held, *refs], key=lambda i: (i.extracted, i.confidence))
        if not everyone:
            # The items it named were forgotten or settled since (a later change took them,
            # another resolution archived them): there is no newer one left to keep.
            raise InvalidInput(
                f"Conflict '{conflict.title}' no longer holds any item of the branch: "
                "there is nothing left to keep or mark outdated."
            )
        newer = everyone[-1]
        if memory.find(newer.id) is None:
            memory.items[newer.category].append(newer)
        archived = []
        for item in everyone[:-1]:
            if item.pinned:
                raise InvalidInput(f"'{item.title}' is a user item; edit it by hand instead.")
            section = memory.items[item.category]
            memory.items[item.category] = [i for i in section if i.id != item.id]
            if action == "mark-outdated":
                item = item.model_copy(update={"tags": [*item.tags, "outdated"]})
            archived.append(item)
        items_after, refs_after = archived, [newer.id]
    resolved = conflict.model_copy(
        update={
            "items": items_after,
            "refs": refs_after,
            "status": "resolved",
            "description": f"{conflict.description} Resolved by the user on "
            f"{utc_now().date().isoformat()} ({_WORDS[action]}).",
        }
    )
    memory.contradictions = [resolved if c is conflict else c for c in memory.contradictions]


def resolve_cross_in(
    memory: Any, older: MemoryItem, newer: MemoryItem, newer_branch: str, action: str
) -> None:
    """Apply a cross-branch resolution to the file holding the older item."""
    if action == "keep-both":
        updated = older.model_copy(update={"tags": [*older.tags, f"accepted-vs:{newer.id}"]})
        section = memory.items[older.category]
        memory.items[older.category] = [updated if i.id == older.id else i for i in section]
        return
    section = memory.items[older.category]
    memory.items[older.category] = [i for i in section if i.id != older.id]
    kept = older.model_copy(update={"tags": [*older.tags, "outdated"]})
    memory.contradictions.append(
        Contradiction(
            title=older.title,
            description=(
                f"Superseded by '{newer.title}' in {newer_branch} ({newer.extracted}); "
                f"resolved by the user on {utc_now().date().isoformat()} ({_WORDS[action]})."
            ),
            status="resolved",
            refs=[],
            items=[kept],
        )
    )
