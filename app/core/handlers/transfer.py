"""Activity, context digest, health, repair, export and import.

Each handler takes the `MemoryApi` it answers for and the validated request; `HANDLERS`
maps the operations of this concern to their handlers (the API attaches them).
"""

from __future__ import annotations

import logging
from typing import Any

from app.core import operations as ops
from app.core.handlers.base import Core, Handler
from app.core.paths import validate_branch_id
from app.core.redact import redact

# The request models live in app.core.requests; the names are re-exported for callers.
from app.core.requests import (
    ActivityRequest,
    ContextRequest,
    Empty,
    ExportRequest,
    HealthRequest,
    ImportRequest,
)
from app.core.transfer import (
    context_digest,
    export_bundle,
    health_report,
    merge_import,
    read_bundle,
    repair,
)

log = logging.getLogger(__name__)


def activity(api: Core, req: ActivityRequest) -> dict[str, Any]:
    """Recent activity: what was memorized, maintained, changed."""
    return {"events": api.activity.recent(req.limit)}


def context(api: Core, req: ContextRequest) -> dict[str, Any]:
    """A Markdown digest of the memory, as a session start would be given."""
    hits = None
    if req.topic:
        reply = api.reader.retrieve(req.topic, min(req.limit, 100))
        hits = reply["memories"]
    return {"topic": req.topic, "markdown": context_digest(api.store, hits, req.limit)}


def health(api: Core, req: HealthRequest) -> dict[str, Any]:
    """Check every branch file (and the index)."""
    return health_report(api.store, api.index, with_index=req.index)


def repair_memory(api: Core, _req: Empty) -> dict[str, Any]:
    """Rebuild the index and fix what can be fixed."""
    report = repair(api.store, api.index)
    api.activity.record(
        "repair",
        f"Repair: {len(report['fixed'])} file(s) fixed, {len(report['unfixable'])} need a person",
    )
    return {"success": True, **report}


def export(api: Core, req: ExportRequest) -> dict[str, Any]:
    """Every branch memory in one document (JSON or Markdown)."""
    return {
        "format": req.format,
        "branches": len(api.store.list_branches()),
        "content": export_bundle(api.store, req.format),
    }


def import_memory(api: Core, req: ImportRequest) -> dict[str, Any]:
    """Merge an export into the memory (user items always kept)."""
    if req.branch is not None:
        validate_branch_id(req.branch)
    bundle = read_bundle(redact(req.content), req.branch)
    report: list[dict[str, Any]] = []
    threshold = api.config.import_duplicate_threshold
    for branch, incoming in bundle:
        stats: dict[str, int] = {}

        def change(
            current: Any,
            incoming: Any = incoming,
            stats: dict[str, int] = stats,
            branch: str = branch,
        ) -> Any:
            incoming.branch_id = branch
            merged, found = merge_import(current, incoming, threshold)
            stats.update(found)
            return merged

        memory = api.store.update(branch, change)
        api.writer.refresh_index(branch, memory)
        report.append({"branch": branch, **stats})
    added = sum(r.get("added", 0) for r in report)
    api.activity.record("import", f"Imported {added} item(s) into {len(report)} branch(es)")
    return {"success": True, "branches": report, "added": added}


HANDLERS: dict[ops.Operation, Handler] = {
    ops.ACTIVITY: activity,
    ops.CONTEXT: context,
    ops.HEALTH: health,
    ops.REPAIR: repair_memory,
    ops.EXPORT: export,
    ops.IMPORT: import_memory,
}
