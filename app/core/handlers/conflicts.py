"""Contradictions: list them (inside branches and across) and settle them.

Each handler takes the `MemoryApi` it answers for and the validated request; `HANDLERS`
maps the operations of this concern to their handlers (the API attaches them).
"""

from __future__ import annotations

import logging
import re
from typing import Any

from app.core import operations as ops
from app.core.conflicts import find_conflicts
from app.core.errors import (
    InvalidInput,
    NotFound,
)
from app.core.handlers.base import Core, Handler
from app.core.handlers.items import item_dict
from app.core.models import (
    MemoryItem,
    utc_now,
)
from app.core.paths import validate_branch_id

# The request models live in app.core.requests; the names are re-exported for callers.
from app.core.requests import (
    Empty,
    ResolveConflictRequest,
)
from app.core.resolution import apply_resolution, resolve_cross_in

log = logging.getLogger(__name__)


def list_conflicts(api: Core, _req: Empty) -> dict[str, Any]:
    """Open contradictions, inside branches and across them."""
    conflicts: list[dict[str, Any]] = []
    api.sync_index()
    for branch in api.store.list_branches():
        text = api.store.read_text(branch) or ""
        # Parsing costs ~5 ms a file: only files with entries under the heading need it.
        section = text.partition("## Contradictions and Conflicts")[2]
        if not re.search(r"^\s*[-*+] ", section, re.MULTILINE):
            continue
        memory = api.store.read(branch)
        if memory is None:
            continue
        for c in memory.contradictions:
            conflicts.append(
                {
                    "scope": "branch",
                    "branch": branch,
                    "id": c.id,
                    "title": c.title,
                    "description": c.description,
                    "status": c.status,
                    "category": c.items[0].category.value if c.items else None,
                    "refs": c.refs,
                    "items": [item_dict(branch, i) for i in c.items]
                    + [item_dict(branch, i) for r in c.refs if (i := memory.find(r))],
                }
            )
    # Cross-branch: every item as the index holds it (no file parsing).
    entries = [(hit.branch, hit.memory_item()) for hit in api.index.items()]
    by_id = {item.id: (branch, item) for branch, item in entries}
    for cross in find_conflicts(entries):
        conflicts.append(
            {
                "scope": "cross-branch",
                "id": "x-" + "-".join(sorted(cross.item_ids))[:60],
                "category": cross.category.value,
                "title": cross.description[:80],
                "description": cross.description,
                "status": "open",
                "branches": cross.branches,
                "itemIds": cross.item_ids,
                "items": [item_dict(*by_id[i]) for i in cross.item_ids if i in by_id],
            }
        )
    return {"conflicts": conflicts}


def resolve_conflict(api: Core, req: ResolveConflictRequest) -> dict[str, Any]:
    """Settle a contradiction: keep the newer, keep both, or mark one outdated."""
    if req.branch and not req.item_ids:
        return _resolve_in_branch(api, req.branch, req.id, req.action)
    return _resolve_cross(api, req.item_ids, req.action)


def _resolve_in_branch(api: Core, branch: str, conflict_id: str, action: str) -> dict[str, Any]:
    validate_branch_id(branch)
    found: list[bool] = []

    def change(memory: Any) -> Any:
        if memory is None:
            raise NotFound(f"No memory file for branch {branch!r}.")
        conflict = next((c for c in memory.contradictions if c.id == conflict_id), None)
        if conflict is None:
            raise NotFound(f"No conflict {conflict_id!r} in {branch!r}.")
        found.append(True)
        apply_resolution(memory, conflict, action)
        memory.last_updated = utc_now()
        return memory

    memory = api.store.update(branch, change)
    api.writer.refresh_index(branch, memory)
    api.activity.record("conflict", f"Resolved a conflict in {branch} ({action})", branch=branch)
    return {"success": True, "branch": branch, "id": conflict_id, "action": action}


def _resolve_cross(api: Core, item_ids: list[str], action: str) -> dict[str, Any]:
    if len(item_ids) < 2:
        raise InvalidInput("A cross-branch conflict needs itemIds of two items.")
    api.sync_index()
    located = []
    for item_id in item_ids:
        hit = api.index.get(item_id)
        if hit is None:
            raise NotFound(f"No item with id {item_id!r}.")
        memory = api.store.read(hit.branch)
        item = memory.find(item_id) if memory else None
        if item is None:
            raise NotFound(f"Item {item_id!r} is no longer in {hit.branch!r}.")
        located.append((hit.branch, item))
    located.sort(key=lambda pair: (pair[1].extracted, pair[1].confidence))
    newer_branch, newer = located[-1]
    changed = []
    for branch, older in located[:-1]:
        if older.pinned and action != "keep-both":
            raise InvalidInput(
                f"'{older.title}' in {branch} is a user item; edit it by hand instead."
            )

        def change(memory: Any, older: MemoryItem = older, branch: str = branch) -> Any:
            if memory is None or memory.find(older.id) is None:
                return None
            resolve_cross_in(memory, older, newer, newer_branch, action)
            memory.last_updated = utc_now()
            return memory

        result = api.store.update(branch, change)
        api.writer.refresh_index(branch, result)
        changed.append(branch)
    api.activity.record("conflict", f"Resolved a cross-branch conflict ({action})")
    return {"success": True, "action": action, "branches": changed}


HANDLERS: dict[ops.Operation, Handler] = {
    ops.LIST_CONFLICTS: list_conflicts,
    ops.RESOLVE_CONFLICT: resolve_conflict,
}
