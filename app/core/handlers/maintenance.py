"""Memorize, maintenance runs, and the stats and status of the memory.

Each handler takes the `MemoryApi` it answers for and the validated request; `HANDLERS`
maps the operations of this concern to their handlers (the API attaches them).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from app.core import operations as ops
from app.core.handlers.base import Core, Handler
from app.core.handlers.branches import branch_problems
from app.core.models import (
    Category,
)

# The request models live in app.core.requests; the names are re-exported for callers.
from app.core.requests import (
    Empty,
    MaintenanceRequest,
    MemorizeRequest,
)

log = logging.getLogger(__name__)


def memorize(api: Core, req: MemorizeRequest) -> dict[str, Any]:
    """Extract what matters from one conversation into a branch memory."""
    return api.writer.memorize(
        req.conversation_text, req.branch_id, source=req.source, said=req.conversation_date
    )


def get_stats(api: Core, _req: Empty) -> dict[str, Any]:
    """Counts across the memory: branches, items, review queue, usage today."""
    api.sync_index()
    branches = api.store.list_branches()
    counts = {c.value: 0 for c in Category}
    for item in api.index.items():
        counts[item.category] = counts.get(item.category, 0) + 1
    stats: dict[str, Any] = {
        "totalBranches": len(branches),
        "totalItems": sum(counts.values()),
        "totalCategories": sum(1 for n in counts.values() if n),
        "categories": counts,
        "lastMemorized": api.maintenance_log.last_memorized(),
        "nextMaintenance": api.maintenance_log.next_maintenance(),
        "reviewQueue": len(api.review.entries()),
        "tokensToday": 0,
        "costToday": 0.0,
    }
    if ops.USAGE.name in api.channels():
        figures = api.invoke(ops.USAGE.name, {})
        today = figures.get("today", {}) if not figures.get("error") else {}
        stats["tokensToday"] = today.get("total_tokens", 0)
        stats["costToday"] = today.get("cost_usd", 0.0)
    return stats


def get_status(api: Core, _req: Empty) -> dict[str, Any]:
    """Whether the memory is ready, busy or in trouble, and why."""
    problems = branch_problems(api)
    notes = list(problems)
    for provider in api.status_notes:
        note = provider()
        if note:
            notes.append(note)
    if api.maintenance_running:
        status = "maintenance"
    elif api.busy:
        status = "processing"
    elif api.last_error:
        status = "error"
    elif problems:
        status = "warning"
    else:
        status = "ready"
    reply: dict[str, Any] = {
        "status": status,
        "lastError": api.last_error,
        "problems": problems,
        "maintenanceInProgress": api.maintenance_running,
        "queueLength": api.queue_length(),
        "engine": api.engine_name,
        "home": str(api.store.home),
        "notes": notes,
    }
    if api.describe_engine is not None:
        details = api.describe_engine()
        reply["engine"] = details.get("engine", api.engine_name)
        reply["engineDetails"] = details
        if details.get("note"):
            notes.append(details["note"])
    return reply


def run_maintenance(api: Core, req: MaintenanceRequest) -> dict[str, Any]:
    """Consolidate, prune and check the memory (weekly, monthly or full)."""
    started = time.perf_counter()
    api.maintenance_running = True
    try:
        results = api.maintenance.run(req.type)
    finally:
        api.maintenance_running = False
    api.activity.record("maintenance", f"{req.type.capitalize()} maintenance finished")
    return {
        "success": True,
        "type": req.type,
        "duration": round((time.perf_counter() - started) * 1000, 1),
        "results": results,
    }


def check_maintenance(api: Core) -> dict[str, Any]:
    """Start-up maintenance check (seed 001 section 6.1)."""
    api.maintenance_running = True
    try:
        ran = api.maintenance.check_and_run()
    finally:
        api.maintenance_running = False
    if ran:
        api.activity.record("maintenance", f"Start-up maintenance ran: {', '.join(sorted(ran))}")
    return ran


HANDLERS: dict[ops.Operation, Handler] = {
    ops.MEMORIZE: memorize,
    ops.GET_STATS: get_stats,
    ops.GET_STATUS: get_status,
    ops.RUN_MAINTENANCE: run_maintenance,
}
