"""Cross-branch conflict detection: items in different branches that say opposite things.

Seed 001 section 4.2 leaves contradictions inside one branch to evolution and surfaces those
*across* branches at retrieval time. This module owns that check for the deterministic path:
`find_conflicts` takes the candidate items of a retrieval as (branch id, item) pairs, finds
pairs from different branches that `contradicts` (app/core/similarity.py), groups pairs that
share an item into one conflict, and describes each with both branches, dates and sources.
It runs on every retrieve, so it only compares items whose stance subjects share a word.

The check itself reads only attributes (`conflict_groups`), and this module imports no
pydantic model at load time: the command line's cold `retrieve` (app/readpath.py) runs it on
plain rows, so a conflict between branches costs it no model import.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from datetime import date
from typing import TYPE_CHECKING, NamedTuple, Protocol, cast

from app.core.similarity import contradicts, item_stances

if TYPE_CHECKING:
    from app.core.engine import CrossConflict
    from app.core.models import MemoryItem

__all__ = ["ConflictGroup", "Statement", "conflict_groups", "describe_statement", "find_conflicts"]

_QUOTE_MAX = 120
_MIN_COMMON = 60
_COMMON_SHARE = 0.02
# (as `app.core.models.one_line`, without importing the models)
_SPACE_RE = re.compile(r"\s+")


class Statement(Protocol):
    """What the check reads of an item: a `MemoryItem`, or a plain row of the index."""

    @property
    def id(self) -> str:
        """The item's id."""
        ...

    @property
    def category(self) -> str:
        """The category's value ("project_conventions")."""
        ...

    @property
    def title(self) -> str:
        """The item's title."""
        ...

    @property
    def content(self) -> str:
        """What the item says."""
        ...

    @property
    def sources(self) -> list[str]:
        """Where it was said."""
        ...

    @property
    def extracted(self) -> date:
        """When it was said."""
        ...


class ConflictGroup(NamedTuple):
    """One conflict as plain values (`find_conflicts` makes a `CrossConflict` of it)."""

    category: str
    description: str
    item_ids: list[str]
    branches: list[str]


def describe_statement(item: Statement) -> str:
    """An item as a short quoted statement with its date and sources, for conflict texts."""
    text = _SPACE_RE.sub(" ", item.content).strip() or item.title
    if len(text) > _QUOTE_MAX:
        text = text[: _QUOTE_MAX - 1].rstrip() + "…"
    sources = ", ".join(item.sources) if item.sources else "unknown source"
    return f'"{text}" ({item.extracted.isoformat()}, {sources})'


def find_conflicts(entries: list[tuple[str, MemoryItem]]) -> list[CrossConflict]:
    """Contradicting items from different branches, one `CrossConflict` per connected group
    (see `conflict_groups`)."""
    from app.core.engine import CrossConflict
    from app.core.models import Category

    return [
        CrossConflict(
            category=Category(group.category),
            description=group.description,
            item_ids=group.item_ids,
            branches=group.branches,
        )
        for group in conflict_groups(entries)
    ]


def conflict_groups(entries: Sequence[tuple[str, Statement]]) -> list[ConflictGroup]:
    """Contradicting items from different branches, one group per connected set of them.

    Entries repeating the same (branch, item id) count once. A group's items are ordered
    oldest first and its description names every branch with the date of its statement and
    the newest one last, so a reader sees which branch said what, and when. Groups come out
    ordered by their oldest statement.
    """
    unique: list[tuple[str, Statement]] = []
    seen: set[tuple[str, str]] = set()
    for branch, item in entries:
        if (branch, item.id) in seen:
            continue
        seen.add((branch, item.id))
        unique.append((branch, item))
    if len(unique) < 2:
        return []

    # Prefilter: only items whose stance subjects share a word can contradict.
    by_word: dict[str, list[int]] = defaultdict(list)
    for index, (_branch, item) in enumerate(unique):
        words: set[str] = set()
        for s in item_stances(cast("MemoryItem", item)):
            words |= s.subject
        for word in words:
            by_word[word].append(index)

    parent = list(range(len(unique)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    linked: set[int] = set()
    checked: set[tuple[int, int]] = set()
    # A subject word shared by a large share of all items ("code", "tests") names no subject
    # in particular; pairs linked only through such words are not compared. Without this,
    # a whole-memory check over thousands of items degenerates into comparing every pair.
    common = max(_MIN_COMMON, int(len(unique) * _COMMON_SHARE))
    for indices in by_word.values():
        if len(indices) > common:
            continue
        for pos, i in enumerate(indices):
            for j in indices[pos + 1 :]:
                pair = (i, j) if i < j else (j, i)
                if pair in checked:
                    continue
                checked.add(pair)
                (bi, a), (bj, b) = unique[pair[0]], unique[pair[1]]
                if bi == bj:
                    continue
                if not contradicts(cast("MemoryItem", a), cast("MemoryItem", b)):
                    continue
                parent[root(pair[0])] = root(pair[1])
                linked.update(pair)

    groups: dict[int, list[int]] = defaultdict(list)
    for index in sorted(linked):
        groups[root(index)].append(index)

    found_groups: list[tuple[tuple[date, str], ConflictGroup]] = []
    for members in groups.values():
        ordered = sorted(
            members, key=lambda k: (unique[k][1].extracted, unique[k][0], unique[k][1].id)
        )
        branches: list[str] = []
        for k in ordered:
            if unique[k][0] not in branches:
                branches.append(unique[k][0])
        said = "; ".join(
            f'branch "{unique[k][0]}" says {describe_statement(unique[k][1])}' for k in ordered
        )
        newest_branch, newest = unique[ordered[-1]]
        names = ", ".join(f'"{b}"' for b in branches[:-1]) + f' and "{branches[-1]}"'
        description = (
            f"Branches {names} disagree: {said}. "
            f'The newest statement is from "{newest_branch}" ({newest.extracted.isoformat()}).'
        )
        conflict = ConflictGroup(
            category=str(unique[ordered[0]][1].category),
            description=description,
            item_ids=list(dict.fromkeys(unique[k][1].id for k in ordered)),
            branches=branches,
        )
        oldest = unique[ordered[0]][1]
        found_groups.append(((oldest.extracted, description), conflict))
    found_groups.sort(key=lambda g: g[0])
    return [conflict for _key, conflict in found_groups]
