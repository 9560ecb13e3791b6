"""The review queue: list, approve (optionally edited), reject, in bulk, and undo.

Each handler takes the `MemoryApi` it answers for and the validated request; `HANDLERS`
maps the operations of this concern to their handlers (the API attaches them).
"""

from __future__ import annotations

import logging
from typing import Any

from app.core import operations as ops
from app.core.errors import (
    InvalidInput,
    PuffinError,
)
from app.core.handlers.base import Core, Handler
from app.core.models import (
    MemoryItem,
)
from app.core.redact import redact

# The request models live in app.core.requests; the names are re-exported for callers.
from app.core.requests import (
    Empty,
    IdRequest,
    ReviewApproveRequest,
    ReviewBulkRequest,
    ReviewRequeueRequest,
)
from app.core.review import ReviewEntry

log = logging.getLogger(__name__)


def review_list(api: Core, _req: Empty) -> dict[str, Any]:
    """Medium-confidence items waiting for a person's approval."""
    return {"items": [e.to_dict() for e in api.review.entries()]}


def review_approve(api: Core, req: ReviewApproveRequest) -> dict[str, Any]:
    """Approve a queued item (optionally edited) into its branch as a pinned user item."""
    entry = api.review.take(req.id)
    updates: dict[str, Any] = {"sources": [*entry.item.sources, "user"], "pinned": True}
    if req.title:
        updates["title"] = redact(req.title)
    if req.content:
        updates["content"] = redact(req.content)
    if req.category:
        updates["category"] = req.category
    data = entry.item.model_dump()
    data.update(updates)
    item = MemoryItem.model_validate(data)
    from app.core.screen import screen_text

    reasons = screen_text(f"{item.title} {item.content}")
    if reasons:
        # As `remember` answers: an edit that would steer the next agent is refused, and
        # the candidate waits in the queue as it was.
        api.review.put_back(entry)
        raise InvalidInput(
            f"Not approved: the text {' and '.join(reasons)}. Memory is handed to agents "
            "as notes; this one would steer them. Edit it and approve again."
        )
    try:
        api.writer.integrate(entry.branch, [item])
    except PuffinError:
        api.review.put_back(entry)
        raise
    api.activity.record(
        "review", f"Approved '{item.title}' into {entry.branch}", branch=entry.branch
    )
    # `entry` (the queued entry as it was) lets a client undo: forget `id`, then requeue.
    return {
        "success": True,
        "branch": entry.branch,
        "id": item.id,
        "entry": entry.model_dump(mode="json"),
    }


def review_reject(api: Core, req: IdRequest) -> dict[str, Any]:
    """Reject a queued item."""
    entry = api.review.take(req.id)
    api.activity.record("review", f"Rejected '{entry.item.title}'", branch=entry.branch)
    return {
        "success": True,
        "branch": entry.branch,
        "id": req.id,
        "entry": entry.model_dump(mode="json"),
    }


def review_bulk(api: Core, req: ReviewBulkRequest) -> dict[str, Any]:
    """Approve or reject many queued items: one queue write, one file write per branch."""
    taken, missing = api.review.take_many(req.ids)
    done: list[dict[str, Any]] = []
    failed: list[dict[str, str]] = []
    by_branch: dict[str, list[ReviewEntry]] = {}
    for entry in taken:
        by_branch.setdefault(entry.branch, []).append(entry)
    for branch, entries in by_branch.items():
        if req.action == "approve":
            items = [
                e.item.model_copy(update={"sources": [*e.item.sources, "user"], "pinned": True})
                for e in entries
            ]
            try:
                api.writer.integrate(branch, items)
            except PuffinError as exc:
                api.review.put_back_many(entries)
                failed.extend({"id": e.item.id, "message": str(exc)} for e in entries)
                continue
        done.extend(
            {
                "id": e.item.id,
                "branch": branch,
                "title": e.item.title,
                "entry": e.model_dump(mode="json"),
            }
            for e in entries
        )
    if done:
        verb = "Approved" if req.action == "approve" else "Rejected"
        api.activity.record("review", f"{verb} {len(done)} queued item(s)")
    return {
        "success": not failed,
        "action": req.action,
        "done": done,
        "failed": failed,
        "missing": missing,
    }


def review_requeue(api: Core, req: ReviewRequeueRequest) -> dict[str, Any]:
    """Undo review decisions: put entries back in the queue."""
    added = api.review.put_back_many(req.entries)
    if added:
        api.activity.record("review", f"Returned {len(added)} item(s) to the review queue")
    return {
        "success": True,
        "requeued": [e.item.id for e in added],
        "alreadyQueued": [e.item.id for e in req.entries if e not in added],
    }


HANDLERS: dict[ops.Operation, Handler] = {
    ops.REVIEW_LIST: review_list,
    ops.REVIEW_APPROVE: review_approve,
    ops.REVIEW_REJECT: review_reject,
    ops.REVIEW_BULK: review_bulk,
    ops.REVIEW_REQUEUE: review_requeue,
}
