"""Retrieval: the items that answer a question (and, on request, archived ones).

Each handler takes the `MemoryApi` it answers for and the validated request; `HANDLERS`
maps the operations of this concern to their handlers (the API attaches them).
"""

from __future__ import annotations

import logging
import re
from typing import Any

from app.core import operations as ops
from app.core.handlers.base import Core, Handler
from app.core.paths import project_of, validate_branch_id

# The request models live in app.core.requests; the names are re-exported for callers.
from app.core.requests import (
    RetrieveRequest,
)
from app.core.transfer import (
    effective_tags,
)

log = logging.getLogger(__name__)


def retrieve(api: Core, req: RetrieveRequest) -> dict[str, Any]:
    """Search the memory: the items that answer a question, best first."""
    if req.branch is not None:
        validate_branch_id(req.branch)
    if req.include_archive:
        reply = _retrieve_active(api, req)
        reply["archived"] = _search_archive(api, req)
        return reply
    return _retrieve_active(api, req)


def _search_archive(api: Core, req: RetrieveRequest) -> list[dict[str, Any]]:
    """Archived items holding the query's words (most words first), marked archived."""
    from app.core.words import STOP_WORDS

    words = re.findall(r"\w[\w.+#-]*", req.query.casefold())
    terms = [w for w in words if len(w) > 2 and w not in STOP_WORDS] or words
    found: list[tuple[int, dict[str, Any]]] = []
    branches = [req.branch] if req.branch else api.archive.branches()
    for branch in branches:
        if req.project and project_of(branch) != req.project:
            continue
        for entry in api.archive.entries(branch):
            item = entry.item
            text = f"{item.title} {item.content} {item.root_cause} {item.fix}".casefold()
            score = sum(1 for t in terms if t in text)
            if score:
                found.append((score, {**entry.to_dict(), "branch": branch, "archivedItem": True}))
    found.sort(key=lambda pair: -pair[0])
    return [hit for _score, hit in found[: req.max_results]]


def _retrieve_active(api: Core, req: RetrieveRequest) -> dict[str, Any]:
    if not req.tags:
        return api.reader.retrieve(
            req.query,
            req.max_results,
            branch=req.branch,
            project=req.project,
            mode=req.mode,
        )
    # Tag filters narrow a wider search (seed 002's `recall --tags`).
    reply = api.reader.retrieve(
        req.query, 100, branch=req.branch, project=req.project, mode=req.mode
    )
    wanted = set(req.tags)
    kept = []
    for memory in reply["memories"]:
        hit = api.index.get(memory["id"])
        if hit is not None and wanted <= effective_tags(hit.branch, hit.memory_item()):
            kept.append(memory)
    reply["memories"] = kept[: req.max_results]
    return reply


HANDLERS: dict[ops.Operation, Handler] = {
    ops.RETRIEVE: retrieve,
}
