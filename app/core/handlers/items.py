"""Items: remember one, get one, list, and forget by id, tags, pattern or age.

Each handler takes the `MemoryApi` it answers for and the validated request; `HANDLERS`
maps the operations of this concern to their handlers (the API attaches them).
"""

from __future__ import annotations

import functools
import logging
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from app.core import operations as ops
from app.core.errors import (
    InvalidInput,
    NotFound,
)
from app.core.handlers.base import Core, Handler
from app.core.models import (
    BranchMemory,
    Category,
    MemoryItem,
    derive_title,
    utc_now,
)
from app.core.paths import project_of, validate_branch_id
from app.core.redact import redact

# The request models live in app.core.requests; the names are re-exported for callers.
from app.core.requests import (
    ForgetRequest,
    IdRequest,
    ListItemsRequest,
    RememberRequest,
)
from app.core.transfer import (
    effective_tags,
)

log = logging.getLogger(__name__)


def remember(api: Core, req: RememberRequest) -> dict[str, Any]:
    """Add a statement a person wrote as a pinned user item."""
    validate_branch_id(req.branch)
    text = redact(req.text)
    from app.core.screen import screen_text

    reasons = screen_text(f"{req.title or ''} {text}")
    if reasons:
        # An agent calling `remember` (MCP) may be relaying injected text: memory
        # that steers the next agent this way is refused, whoever asks.
        raise InvalidInput(
            f"Not remembered: the text {' and '.join(reasons)}. Memory "
            "is handed to agents as notes; this one would steer them."
        )
    item = MemoryItem(
        category=req.category,
        title=redact(req.title) if req.title else derive_title(text),
        content=text,
        confidence=1.0,
        sources=["user"],
        tags=[*req.tags, "source:user"],
        pinned=True,
    )
    result = api.writer.integrate(req.branch, [item])
    # The new item's vector now, so semantic search finds it at once.
    api.reader.backfill_vectors()
    stored = result.memory.find(item.id)
    api.activity.record("remember", f"Remembered '{item.title}' in {req.branch}", branch=req.branch)
    return {
        "success": True,
        "branch": req.branch,
        "id": item.id,
        "added": stored is not None,
        "stats": result.stats,
    }


def get_item(api: Core, req: IdRequest) -> dict[str, Any]:
    """One item by id."""
    api.sync_index()
    hit = api.index.get(req.id)
    if hit is None:
        raise NotFound(f"No item with id {req.id!r}.")
    memory = api.store.read(hit.branch)
    item = memory.find(req.id) if memory else None
    if item is None:
        raise NotFound(f"No item with id {req.id!r}.")
    return {"item": item_dict(hit.branch, item)}


def list_items(api: Core, req: ListItemsRequest) -> dict[str, Any]:
    """Items by category, branch and tags."""
    api.sync_index()
    if req.branch is not None:
        validate_branch_id(req.branch)
    hits = api.index.items(
        category=req.category.value if req.category else None,
        branch=req.branch,
        limit=None if req.tags else req.limit,
    )
    if req.tags:
        wanted = set(req.tags)
        hits = [h for h in hits if wanted <= effective_tags(h.branch, h.memory_item())]
        hits = hits[: req.limit] if req.limit else hits
    return {"items": [h.to_dict() for h in hits], "count": len(hits)}


def forget(api: Core, req: ForgetRequest) -> dict[str, Any]:
    """Remove items by id, tags, pattern or age (undoable through versions)."""
    selectors = sum(
        x
        for x in (
            req.id is not None,
            bool(req.tags),
            req.pattern is not None,
            req.older_than is not None,
            req.all,
        )
    )
    if selectors != 1:
        raise InvalidInput(
            "Say what to forget: exactly one of id, tags, pattern, olderThan or all."
        )
    if req.all and not req.confirm:
        raise InvalidInput(
            "Forgetting everything needs confirm (--all --confirm); nothing was changed."
        )
    removed: list[dict[str, str]] = []
    versions: dict[str, str | None] = {}
    for branch in api.store.list_branches():
        gone: list[MemoryItem] = []
        matcher = _forget_matcher(req, branch, functools.partial(api.store.read, branch))

        def change(
            memory: Any,
            gone: list[MemoryItem] = gone,
            matcher: Callable[[MemoryItem], bool] = matcher,
        ) -> Any:
            if memory is None:
                return None
            for cat in Category:
                keep: list[MemoryItem] = []
                for item in memory.items[cat]:
                    (gone if matcher(item) else keep).append(item)
                memory.items[cat] = keep
            if not gone:
                return None
            memory.last_updated = utc_now()
            return memory

        before = api.store.list_versions(branch)
        memory = api.store.update(branch, change)
        if gone:
            after = api.store.list_versions(branch)
            versions[branch] = after[0].version if after and after != before else None
            removed.extend({"branch": branch, "id": i.id, "title": i.title} for i in gone)
            api.writer.refresh_index(branch, memory)
            # Forgotten on purpose: old versions must not bring them into the archive.
            api.archive.mark_forgotten(branch, [i.id for i in gone])
    if req.id is not None and not removed:
        raise NotFound(f"No item with id {req.id!r}.")
    if removed:
        api.activity.record("forget", f"Forgot {len(removed)} item(s)")
    return {
        "success": True,
        "forgotten": len(removed),
        "items": removed,
        "versions": versions,
        "undo": "puffin-memory branch restore <branch> <version>" if removed else None,
    }


def item_dict(branch: str, item: MemoryItem) -> dict[str, Any]:
    """An item as the API answers it: its fields, its branch and project."""
    data = item.model_dump(mode="json")
    data["branch"] = branch
    data["project"] = project_of(branch)
    return data


_MAX_PATTERN = 300
_PATTERN_BUDGET_S = 2.0
_UNSAFE_PATTERN = (
    "Pattern {pattern!r} could take exponential time ({why}); nothing was forgotten. "
    "Use a simpler regular expression (no repeated group that itself repeats or "
    "alternates, no back-reference), e.g. 'word' or 'foo.*bar'."
)


def _regex_hazard(pattern: str) -> str | None:
    """Why a regex could backtrack exponentially, or None.

    Python's `re` backtracks: a repeated group whose body can match the same text in
    several ways (`(a+)+`, `(a|a)*`, `(a?){30}`) takes exponential time on a near miss,
    and back-references make matching NP-hard. These shapes are found on the pattern's
    text: groups are tracked as a stack of frames that record whether their body holds a
    quantifier or an alternation; a repeating quantifier right after a group with either
    is refused.
    """
    frames: list[list[bool]] = [[False, False]]  # per open group: [quantified, alternates]
    last_group: list[bool] | None = None  # the group that just closed, if the last atom
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        closed: list[bool] | None = None
        if char == "\\":
            if i + 1 < n and pattern[i + 1] in "123456789":
                return "a back-reference"
            i += 2
        elif char == "[":
            i += 1
            if i < n and pattern[i] == "^":
                i += 1
            if i < n and pattern[i] == "]":
                i += 1
            while i < n and pattern[i] != "]":
                i += 2 if pattern[i] == "\\" else 1
            i += 1
        elif char == "(":
            if pattern.startswith("(?P=", i):
                return "a back-reference"
            frames.append([False, False])
            i += 1
        elif char == ")":
            if len(frames) > 1:
                closed = frames.pop()
                frames[-1][0] = frames[-1][0] or closed[0]
                frames[-1][1] = frames[-1][1] or closed[1]
            i += 1
        elif char == "|":
            frames[-1][1] = True
            i += 1
        elif char in "*+?{":
            end = i + 1
            repeats = char in "*+"
            if char == "{":
                close = pattern.find("}", i)
                bounds = pattern[i + 1 : close] if close > 0 else ""
                if not re.fullmatch(r"\d*(,\d*)?", bounds) or not bounds:
                    i += 1  # a literal brace
                    last_group = None
                    continue
                low, comma, high = bounds.partition(",")
                top = high if comma else low
                repeats = top == "" or int(top) > 1  # `{2,}`, `{0,5}`, `{3}` repeat
                end = close + 1
            if repeats and last_group is not None and (last_group[0] or last_group[1]):
                return "a repeated group that itself repeats or alternates"
            frames[-1][0] = True
            i = end
            if i < n and pattern[i] in "?+":  # lazy or possessive suffix
                i += 1
        else:
            i += 1
        last_group = closed
    return None


def _pattern_matcher(pattern: str, memory: BranchMemory | None) -> Callable[[MemoryItem], bool]:
    """Which items a `forget --pattern` removes, decided before the branch lock is taken.

    The regex is checked for shapes that backtrack exponentially (refused with
    INVALID_INPUT), then run over the branch as it is now, outside the lock and within a
    time budget, so a slow pattern can never hold the lock that writers wait on. Inside the
    lock only item ids are compared; an item added meanwhile is not forgotten.
    """
    if len(pattern) > _MAX_PATTERN:
        raise InvalidInput(f"Pattern is longer than {_MAX_PATTERN} characters.")
    try:
        regex = re.compile(pattern, re.IGNORECASE)
    except re.error as exc:
        raise InvalidInput(f"Invalid pattern {pattern!r}: {exc}") from exc
    why = _regex_hazard(pattern)
    if why is not None:
        raise InvalidInput(_UNSAFE_PATTERN.format(pattern=pattern, why=why))
    chosen: set[str] = set()
    deadline = time.monotonic() + _PATTERN_BUDGET_S
    for items in memory.items.values() if memory is not None else ():
        for item in items:
            if regex.search(item.text):
                chosen.add(item.id)
            if time.monotonic() > deadline:
                raise InvalidInput(
                    f"Pattern {pattern!r} is too slow on this memory; nothing was forgotten."
                )
    return lambda item: item.id in chosen


def _forget_matcher(
    req: ForgetRequest, branch: str, current: Callable[[], BranchMemory | None]
) -> Callable[[MemoryItem], bool]:
    """Which items `forget` removes from `branch`; `current` reads the branch as it is now."""
    if req.id is not None:
        target = req.id
        return lambda item: item.id == target
    if req.tags:
        wanted = set(req.tags)
        return lambda item: wanted <= effective_tags(branch, item)
    if req.pattern is not None:
        return _pattern_matcher(req.pattern, current())
    if req.older_than is not None:
        cutoff = (datetime.now(UTC) - timedelta(days=req.older_than)).date()
        return lambda item: item.extracted < cutoff
    return lambda _item: True


HANDLERS: dict[ops.Operation, Handler] = {
    ops.REMEMBER: remember,
    ops.GET_ITEM: get_item,
    ops.LIST_ITEMS: list_items,
    ops.FORGET: forget,
}
