"""MemoryApi: the single entry to the memory system, one `memory:*` channel per operation.

`await api.invoke(channel, payload)` validates the request with pydantic, runs the handler and
returns a plain dict: the documented success keys, or `{"error": true, "code", "message",
"timestamp"}`. Nothing raises out of `invoke`. The CLI, the Claude Code hooks and the Qt
channels all go through here. Channels that need layers above core (sources, engines,
hooks) are registered by the composition root (`app/container.py`) with `register()`.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import ValidationError

from app.core import operations as ops
from app.core import requests as request_models
from app.core.activity import ActivityLog
from app.core.archive import Archive
from app.core.config import Config
from app.core.conflicts import find_conflicts
from app.core.errors import (
    InvalidInput,
    NotFound,
    PuffinError,
    StorageError,
    describe_os_error,
)
from app.core.format import header_last_updated, parse, validate
from app.core.index import MemoryIndex
from app.core.maintenance import MaintenanceLog, MaintenanceManager
from app.core.models import (
    BranchMemory,
    Category,
    MemoryItem,
    derive_title,
    utc_now,
)
from app.core.paths import project_of, validate_branch_id
from app.core.reader import MemoryReader
from app.core.redact import redact, redact_with_count

# The request models live in app.core.requests; the names are re-exported for callers.
from app.core.requests import (
    ActivityRequest,
    ArchiveRestoreRequest,
    BranchRequest,
    ContextRequest,
    Empty,
    ExportRequest,
    ForgetRequest,
    HealthRequest,
    IdRequest,
    ImportRequest,
    ListItemsRequest,
    MaintenanceRequest,
    MemorizeRequest,
    RememberRequest,
    Request,
    ResolveConflictRequest,
    RetrieveRequest,
    ReviewApproveRequest,
    ReviewBulkRequest,
    ReviewRequeueRequest,
    SaveBranchRequest,
    SetConfigRequest,
    VersionRequest,
)
from app.core.resolution import apply_resolution, resolve_cross_in
from app.core.review import ReviewEntry, ReviewQueue
from app.core.store import MemoryStore
from app.core.transfer import (
    context_digest,
    effective_tags,
    export_bundle,
    health_report,
    merge_import,
    read_bundle,
    repair,
)
from app.core.writer import MemoryWriter

log = logging.getLogger(__name__)
# One line per operation with its outcome and duration (the operational log, app/logsetup.py).
oplog = logging.getLogger("puffin.ops")

# Every channel the app answers, core and registered ones alike: the operation table's.
CHANNELS = ops.CHANNELS

Handler = Callable[[Any], Awaitable[dict[str, Any]]]


def error_response(
    code: str, message: str, context: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The documented error shape."""
    reply: dict[str, Any] = {
        "error": True,
        "code": code,
        "message": message,
        "timestamp": utc_now().strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    if context:
        reply["context"] = context
    return reply


def _describe_validation(channel: str, exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:3]:
        where = ".".join(str(p) for p in err["loc"]) or "request"
        parts.append(f"{where}: {err['msg']}")
    return f"{channel}: " + "; ".join(parts)


class MemoryApi:
    """Routes `memory:*` channels to the writer, reader, store and maintenance."""

    def __init__(
        self,
        *,
        store: MemoryStore,
        index: MemoryIndex,
        writer: MemoryWriter,
        reader: MemoryReader,
        maintenance: MaintenanceManager,
        review: ReviewQueue,
        activity: ActivityLog,
        maintenance_log: MaintenanceLog,
        config: Config,
        engine_name: str = "offline",
        warnings: list[str] | None = None,
    ) -> None:
        self.store = store
        self.index = index
        self.writer = writer
        self.reader = reader
        self.maintenance = maintenance
        self.review = review
        self.archive = Archive(store.home)
        self.activity = activity
        self.maintenance_log = maintenance_log
        self.config = config
        self.engine_name = engine_name
        self.warnings = list(warnings or [])
        self.status_notes: list[Callable[[], str | None]] = []
        self.last_error: str | None = None
        self._busy = 0
        self._maintenance_running = False
        self.queue_length: Callable[[], int] = lambda: 0
        # Set by the composition root: which engine runs, key origin, budget (for status).
        self.describe_engine: Callable[[], dict[str, Any]] | None = None
        # Set by the CLI or the app to hear about long jobs (done, total, label).
        self.progress: Callable[[int, int, str], None] | None = None
        self._handlers: dict[str, tuple[type[Request], Handler]] = {}
        self._facts: dict[str, tuple[tuple[int, int], str | None, bool]] = {}
        self._register_core()

    # -- plumbing ---------------------------------------------------------------------
    def handle(self, op: ops.Operation, handler: Handler) -> None:
        """Answer `op` with `handler` (core here; layers above core through the composition
        root); the request model is the one the operation table names."""
        model: type[Request] = getattr(request_models, op.request)
        self._handlers[op.name] = (model, handler)

    def channels(self) -> list[str]:
        """Channels that currently have a handler."""
        return [c for c in CHANNELS if c in self._handlers]

    async def invoke(self, channel: str, payload: dict[str, Any] | None = None) -> dict[str, Any]:
        """Answer one request; never raises."""
        entry = self._handlers.get(channel)
        if entry is None:
            return error_response("INVALID_INPUT", f"Unknown channel {channel!r}.")
        model, handler = entry
        if payload is not None and not isinstance(payload, dict):
            return error_response("INVALID_INPUT", f"{channel}: the request must be an object.")
        try:
            request = model.model_validate(payload or {})
        except ValidationError as exc:
            return error_response("INVALID_INPUT", _describe_validation(channel, exc))
        busy = channel in ops.LONG
        if busy:
            self._busy += 1
        started = time.perf_counter()
        where = _context(payload or {})
        if busy:
            # Long work says when it starts: a log cut short by a crash or a kill still
            # shows what was running.
            oplog.info("op=%s%s started", channel, where)
        try:
            reply = await handler(request)
        except PuffinError as exc:
            if exc.code not in {"INVALID_INPUT", "NOT_FOUND"}:
                self.last_error = exc.message
            oplog.warning(
                "op=%s%s outcome=%s ms=%.0f message=%r",
                channel,
                where,
                exc.code,
                (time.perf_counter() - started) * 1000,
                exc.message,
            )
            return error_response(exc.code, exc.message, exc.context or None)
        except OSError as exc:
            # A lock file or a folder the home cannot hold (read-only, full, no permission):
            # the user's situation, not a defect, so it gets the storage error's sentence.
            where_path = exc.filename if isinstance(exc.filename, str) else str(self.store.home)
            message = describe_os_error(exc, where_path)
            self.last_error = message
            oplog.warning(
                "op=%s%s outcome=STORAGE_ERROR ms=%.0f message=%r",
                channel,
                where,
                (time.perf_counter() - started) * 1000,
                message,
            )
            return error_response("STORAGE_ERROR", message)
        except Exception as exc:
            log.exception("%s crashed", channel)
            self.last_error = f"{channel}: {exc}"
            return error_response("INTERNAL_ERROR", f"{channel} failed unexpectedly: {exc}")
        finally:
            if busy:
                self._busy -= 1
        oplog.info(
            "op=%s%s outcome=ok ms=%.0f", channel, where, (time.perf_counter() - started) * 1000
        )
        if busy and channel != ops.SCAN.name:
            # A success after a failure means the trouble is over (the network is back, the
            # key was fixed): the indicator returns to ready instead of staying red.
            self.last_error = None
        return reply

    def _register_core(self) -> None:
        table: dict[ops.Operation, Handler] = {
            ops.MEMORIZE: self._memorize,
            ops.RETRIEVE: self._retrieve,
            ops.GET_BRANCH_MEMORY: self._get_branch_memory,
            ops.GET_STATS: self._get_stats,
            ops.GET_STATUS: self._get_status,
            ops.CLEAR_BRANCH_MEMORY: self._clear,
            ops.RUN_MAINTENANCE: self._run_maintenance,
            ops.LIST_BRANCHES: self._list_branches,
            ops.SAVE_BRANCH_MEMORY: self._save_branch,
            ops.LIST_VERSIONS: self._list_versions,
            ops.GET_VERSION: self._get_version,
            ops.RESTORE_VERSION: self._restore_version,
            ops.ARCHIVE_LIST: self._archive_list,
            ops.ARCHIVE_RESTORE: self._archive_restore,
            ops.REVIEW_LIST: self._review_list,
            ops.REVIEW_APPROVE: self._review_approve,
            ops.REVIEW_REJECT: self._review_reject,
            ops.REVIEW_BULK: self._review_bulk,
            ops.REVIEW_REQUEUE: self._review_requeue,
            ops.LIST_CONFLICTS: self._list_conflicts,
            ops.RESOLVE_CONFLICT: self._resolve_conflict,
            ops.REMEMBER: self._remember,
            ops.GET_ITEM: self._get_item,
            ops.LIST_ITEMS: self._list_items,
            ops.FORGET: self._forget,
            ops.ACTIVITY: self._activity,
            ops.CONTEXT: self._context,
            ops.HEALTH: self._health,
            ops.REPAIR: self._repair,
            ops.EXPORT: self._export,
            ops.IMPORT: self._import,
            ops.GET_CONFIG: self._get_config,
            ops.SET_CONFIG: self._set_config,
        }
        for op, handler in table.items():
            self.handle(op, handler)

    def _sync_index(self) -> None:
        try:
            self.index.sync(self.store)
        except Exception:
            log.exception("index sync failed")

    # -- core channels ----------------------------------------------------------------
    async def _memorize(self, req: MemorizeRequest) -> dict[str, Any]:
        return await self.writer.memorize(req.conversation_text, req.branch_id, source=req.source)

    async def _retrieve(self, req: RetrieveRequest) -> dict[str, Any]:
        if req.branch is not None:
            validate_branch_id(req.branch)
        if req.include_archive:
            reply = await self._retrieve_active(req)
            reply["archived"] = self._search_archive(req)
            return reply
        return await self._retrieve_active(req)

    def _search_archive(self, req: RetrieveRequest) -> list[dict[str, Any]]:
        """Archived items holding the query's words (most words first), marked archived."""
        from app.core.words import STOP_WORDS

        words = re.findall(r"\w[\w.+#-]*", req.query.casefold())
        terms = [w for w in words if len(w) > 2 and w not in STOP_WORDS] or words
        found: list[tuple[int, dict[str, Any]]] = []
        branches = [req.branch] if req.branch else self.archive.branches()
        for branch in branches:
            if req.project and project_of(branch) != req.project:
                continue
            for entry in self.archive.entries(branch):
                item = entry.item
                text = f"{item.title} {item.content} {item.root_cause} {item.fix}".casefold()
                score = sum(1 for t in terms if t in text)
                if score:
                    found.append(
                        (score, {**entry.to_dict(), "branch": branch, "archivedItem": True})
                    )
        found.sort(key=lambda pair: -pair[0])
        return [hit for _score, hit in found[: req.max_results]]

    async def _archive_list(self, req: BranchRequest) -> dict[str, Any]:
        validate_branch_id(req.branch)
        entries = self.archive.entries(req.branch)
        return {
            "branch": req.branch,
            "items": [e.to_dict() for e in reversed(entries)],
            "path": str(self.archive.path(req.branch)),
        }

    async def _archive_restore(self, req: ArchiveRestoreRequest) -> dict[str, Any]:
        """Put an archived item back in its section; the archive entry goes after."""
        validate_branch_id(req.branch)
        entry = self.archive.get(req.branch, req.id)
        restored: list[bool] = []

        def change(memory: BranchMemory | None) -> BranchMemory | None:
            memory = memory or BranchMemory(branch_id=req.branch)
            if memory.find(entry.item.id) is not None:
                return None  # already back (restored twice, or never left)
            memory.items[entry.item.category].append(entry.item)
            memory.last_updated = utc_now()
            restored.append(True)
            return memory

        memory = self.store.update(req.branch, change)
        self.archive.remove(req.branch, [req.id])
        self.writer.refresh_index(req.branch, memory)
        if restored:
            self.activity.record(
                "restore", f"Restored archived item {entry.item.title!r}", branch=req.branch
            )
        return {
            "success": True,
            "branch": req.branch,
            "id": req.id,
            "title": entry.item.title,
            "alreadyPresent": not restored,
        }

    async def _retrieve_active(self, req: RetrieveRequest) -> dict[str, Any]:
        if not req.tags:
            return await self.reader.retrieve(
                req.query,
                req.max_results,
                branch=req.branch,
                project=req.project,
                mode=req.mode,
            )
        # Tag filters narrow a wider search (seed 002's `recall --tags`).
        reply = await self.reader.retrieve(
            req.query, 100, branch=req.branch, project=req.project, mode=req.mode
        )
        wanted = set(req.tags)
        kept = []
        for memory in reply["memories"]:
            hit = self.index.get(memory["id"])
            if hit is not None and wanted <= effective_tags(hit.branch, hit.memory_item()):
                kept.append(memory)
        reply["memories"] = kept[: req.max_results]
        return reply

    async def _get_branch_memory(self, req: BranchRequest) -> dict[str, Any]:
        validate_branch_id(req.branch)
        text = self.store.read_text(req.branch)
        if text is None:
            raise NotFound(f"No memory file for branch {req.branch!r}.")
        memory = parse(text, req.branch)
        problems = validate(text)
        return {
            "branch": req.branch,
            "content": text,
            "lastUpdated": header_last_updated(text),
            "itemCount": memory.item_count(),
            "valid": not problems,
            "problems": [p.message for p in problems],
        }

    async def _get_stats(self, _req: Empty) -> dict[str, Any]:
        self._sync_index()
        branches = self.store.list_branches()
        counts = {c.value: 0 for c in Category}
        for item in self.index.items():
            counts[item.category] = counts.get(item.category, 0) + 1
        stats: dict[str, Any] = {
            "totalBranches": len(branches),
            "totalItems": sum(counts.values()),
            "totalCategories": sum(1 for n in counts.values() if n),
            "categories": counts,
            "lastMemorized": self.maintenance_log.last_memorized(),
            "nextMaintenance": self.maintenance_log.next_maintenance(),
            "reviewQueue": len(self.review.entries()),
            "tokensToday": 0,
            "costToday": 0.0,
        }
        usage = self._handlers.get(ops.USAGE.name)
        if usage is not None:
            figures = await usage[1](Empty())
            today = figures.get("today", {})
            stats["tokensToday"] = today.get("total_tokens", 0)
            stats["costToday"] = today.get("cost_usd", 0.0)
        return stats

    async def _get_status(self, _req: Empty) -> dict[str, Any]:
        problems = self._problems()
        notes = list(problems)
        for provider in self.status_notes:
            note = provider()
            if note:
                notes.append(note)
        if self._maintenance_running:
            status = "maintenance"
        elif self._busy:
            status = "processing"
        elif self.last_error:
            status = "error"
        elif problems:
            status = "warning"
        else:
            status = "ready"
        reply: dict[str, Any] = {
            "status": status,
            "lastError": self.last_error,
            "problems": problems,
            "maintenanceInProgress": self._maintenance_running,
            "queueLength": self.queue_length(),
            "engine": self.engine_name,
            "home": str(self.store.home),
            "notes": notes,
        }
        if self.describe_engine is not None:
            details = self.describe_engine()
            reply["engine"] = details.get("engine", self.engine_name)
            reply["engineDetails"] = details
            if details.get("note"):
                notes.append(details["note"])
        return reply

    async def _clear(self, req: BranchRequest) -> dict[str, Any]:
        validate_branch_id(req.branch)
        version = self.store.delete(req.branch)
        self.writer.refresh_index(req.branch, None)
        self.activity.record(
            "clear",
            f"Cleared {req.branch} (restorable from version {version})",
            branch=req.branch,
        )
        return {"success": True, "branch": req.branch, "version": version}

    async def _run_maintenance(self, req: MaintenanceRequest) -> dict[str, Any]:
        started = time.perf_counter()
        self._maintenance_running = True
        try:
            results = await self.maintenance.run(req.type)
        finally:
            self._maintenance_running = False
        self.activity.record("maintenance", f"{req.type.capitalize()} maintenance finished")
        return {
            "success": True,
            "type": req.type,
            "duration": round((time.perf_counter() - started) * 1000, 1),
            "results": results,
        }

    async def check_maintenance(self) -> dict[str, Any]:
        """Start-up maintenance check (seed 001 section 6.1)."""
        self._maintenance_running = True
        try:
            ran = await self.maintenance.check_and_run()
        finally:
            self._maintenance_running = False
        if ran:
            self.activity.record(
                "maintenance", f"Start-up maintenance ran: {', '.join(sorted(ran))}"
            )
        return ran

    # -- branches and versions ----------------------------------------------------------
    async def _list_branches(self, _req: Empty) -> dict[str, Any]:
        self._sync_index()
        per_branch: dict[str, int] = {}
        for item in self.index.items():
            per_branch[item.branch] = per_branch.get(item.branch, 0) + 1
        branches = []
        signatures = self.store.signatures()
        for branch in sorted(signatures):
            last_updated, valid = self._file_facts(branch, signatures[branch])
            branches.append(
                {
                    "branch": branch,
                    "project": project_of(branch),
                    "itemCount": per_branch.get(branch, 0),
                    "lastUpdated": last_updated,
                    "valid": valid,
                }
            )
        return {"branches": branches}

    def _problems(self) -> list[str]:
        """What needs the user's attention: files moved aside, branch files that do not parse.

        Each says what happened, to which file, and what to do; the status turns to
        "warning" while any remains, so a damaged file is never hidden behind "Ready".
        """
        problems = list(self.warnings)
        for source in (self.review.warning, self.maintenance_log.warning):
            if source:
                problems.append(source)
        try:
            signatures = self.store.signatures()
        except OSError:
            return problems
        for branch in sorted(signatures):
            if not self._file_facts(branch, signatures[branch])[1]:
                problems.append(
                    f"The memory file of {branch} ({self.store.branch_file(branch)}) does not "
                    "parse: fix it in Branches (the problems are listed there) or restore a "
                    "version. The next memory written to this branch replaces it; its text "
                    "stays in Versions."
                )
        return problems

    def _file_facts(self, branch: str, signature: tuple[int, int]) -> tuple[str | None, bool]:
        """Header date and validity of a branch file, re-read only when the file changed.

        Validating means parsing (~5 ms a file); the branch list is asked for on every
        refresh of the browser, and files rarely change between two refreshes.
        """
        cached = self._facts.get(branch)
        if cached is not None and cached[0] == signature:
            return cached[1], cached[2]
        text = self.store.read_text(branch) or ""
        facts = (signature, header_last_updated(text), not validate(text))
        self._facts[branch] = facts
        return facts[1], facts[2]

    async def _save_branch(self, req: SaveBranchRequest) -> dict[str, Any]:
        validate_branch_id(req.branch)
        # A secret pasted into the editor must not land in memory (it would reach agents).
        content, redacted = redact_with_count(req.content)
        problems = validate(content)
        if problems:
            raise InvalidInput(
                "The memory file is not valid: " + "; ".join(p.message for p in problems[:5]),
                context={"problems": [{"line": p.line, "message": p.message} for p in problems]},
            )
        version = self.store.write_text(req.branch, content)
        self.writer.refresh_index(req.branch, parse(content, req.branch))
        self.activity.record("edit", f"Saved an edit of {req.branch}", branch=req.branch)
        return {
            "success": True,
            "branch": req.branch,
            "version": version,
            "secretsRedacted": redacted,
        }

    async def _list_versions(self, req: BranchRequest) -> dict[str, Any]:
        validate_branch_id(req.branch)
        return {
            "branch": req.branch,
            "versions": [v.to_dict() for v in self.store.list_versions(req.branch)],
        }

    async def _get_version(self, req: VersionRequest) -> dict[str, Any]:
        validate_branch_id(req.branch)
        content = self.store.read_version(req.branch, req.version)
        return {"branch": req.branch, "version": req.version, "content": content}

    async def _restore_version(self, req: VersionRequest) -> dict[str, Any]:
        validate_branch_id(req.branch)
        previous = self.store.restore(req.branch, req.version)
        self.writer.refresh_index(req.branch, self.store.read(req.branch))
        self.activity.record(
            "restore", f"Restored {req.branch} to version {req.version}", branch=req.branch
        )
        return {
            "success": True,
            "branch": req.branch,
            "restored": req.version,
            "previousVersion": previous,
        }

    # -- review queue -------------------------------------------------------------------
    async def _review_list(self, _req: Empty) -> dict[str, Any]:
        return {"items": [e.to_dict() for e in self.review.entries()]}

    async def _review_approve(self, req: ReviewApproveRequest) -> dict[str, Any]:
        entry = self.review.take(req.id)
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
        try:
            await self.writer.integrate(entry.branch, [item])
        except PuffinError:
            self.review.put_back(entry)
            raise
        self.activity.record(
            "review", f"Approved '{item.title}' into {entry.branch}", branch=entry.branch
        )
        # `entry` (the queued entry as it was) lets a client undo: forget `id`, then requeue.
        return {
            "success": True,
            "branch": entry.branch,
            "id": item.id,
            "entry": entry.model_dump(mode="json"),
        }

    async def _review_reject(self, req: IdRequest) -> dict[str, Any]:
        entry = self.review.take(req.id)
        self.activity.record("review", f"Rejected '{entry.item.title}'", branch=entry.branch)
        return {
            "success": True,
            "branch": entry.branch,
            "id": req.id,
            "entry": entry.model_dump(mode="json"),
        }

    async def _review_bulk(self, req: ReviewBulkRequest) -> dict[str, Any]:
        """Approve or reject many queued items: one queue write, one file write per branch."""
        taken, missing = self.review.take_many(req.ids)
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
                    await self.writer.integrate(branch, items)
                except PuffinError as exc:
                    self.review.put_back_many(entries)
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
            self.activity.record("review", f"{verb} {len(done)} queued item(s)")
        return {
            "success": not failed,
            "action": req.action,
            "done": done,
            "failed": failed,
            "missing": missing,
        }

    async def _review_requeue(self, req: ReviewRequeueRequest) -> dict[str, Any]:
        added = self.review.put_back_many(req.entries)
        if added:
            self.activity.record("review", f"Returned {len(added)} item(s) to the review queue")
        return {
            "success": True,
            "requeued": [e.item.id for e in added],
            "alreadyQueued": [e.item.id for e in req.entries if e not in added],
        }

    # -- conflicts ----------------------------------------------------------------------
    async def _list_conflicts(self, _req: Empty) -> dict[str, Any]:
        conflicts: list[dict[str, Any]] = []
        self._sync_index()
        for branch in self.store.list_branches():
            text = self.store.read_text(branch) or ""
            # Parsing costs ~5 ms a file: only files with entries under the heading need it.
            section = text.partition("## Contradictions and Conflicts")[2]
            if not re.search(r"^\s*[-*+] ", section, re.MULTILINE):
                continue
            memory = self.store.read(branch)
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
                        "items": [_item_dict(branch, i) for i in c.items]
                        + [_item_dict(branch, i) for r in c.refs if (i := memory.find(r))],
                    }
                )
        # Cross-branch: every item as the index holds it (no file parsing).
        entries = [(hit.branch, hit.memory_item()) for hit in self.index.items()]
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
                    "items": [_item_dict(*by_id[i]) for i in cross.item_ids if i in by_id],
                }
            )
        return {"conflicts": conflicts}

    async def _resolve_conflict(self, req: ResolveConflictRequest) -> dict[str, Any]:
        if req.branch and not req.item_ids:
            return await self._resolve_in_branch(req.branch, req.id, req.action)
        return await self._resolve_cross(req.item_ids, req.action)

    async def _resolve_in_branch(
        self, branch: str, conflict_id: str, action: str
    ) -> dict[str, Any]:
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

        memory = self.store.update(branch, change)
        self.writer.refresh_index(branch, memory)
        self.activity.record(
            "conflict", f"Resolved a conflict in {branch} ({action})", branch=branch
        )
        return {"success": True, "branch": branch, "id": conflict_id, "action": action}

    async def _resolve_cross(self, item_ids: list[str], action: str) -> dict[str, Any]:
        if len(item_ids) < 2:
            raise InvalidInput("A cross-branch conflict needs itemIds of two items.")
        self._sync_index()
        located = []
        for item_id in item_ids:
            hit = self.index.get(item_id)
            if hit is None:
                raise NotFound(f"No item with id {item_id!r}.")
            memory = self.store.read(hit.branch)
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

            result = self.store.update(branch, change)
            self.writer.refresh_index(branch, result)
            changed.append(branch)
        self.activity.record("conflict", f"Resolved a cross-branch conflict ({action})")
        return {"success": True, "action": action, "branches": changed}

    # -- items ---------------------------------------------------------------------------
    async def _remember(self, req: RememberRequest) -> dict[str, Any]:
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
        result = await self.writer.integrate(req.branch, [item])
        # The new item's vector now, so semantic search finds it at once.
        await asyncio.to_thread(self.reader.backfill_vectors)
        stored = result.memory.find(item.id)
        self.activity.record(
            "remember", f"Remembered '{item.title}' in {req.branch}", branch=req.branch
        )
        return {
            "success": True,
            "branch": req.branch,
            "id": item.id,
            "added": stored is not None,
            "stats": result.stats,
        }

    async def _get_item(self, req: IdRequest) -> dict[str, Any]:
        self._sync_index()
        hit = self.index.get(req.id)
        if hit is None:
            raise NotFound(f"No item with id {req.id!r}.")
        memory = self.store.read(hit.branch)
        item = memory.find(req.id) if memory else None
        if item is None:
            raise NotFound(f"No item with id {req.id!r}.")
        return {"item": _item_dict(hit.branch, item)}

    async def _list_items(self, req: ListItemsRequest) -> dict[str, Any]:
        self._sync_index()
        if req.branch is not None:
            validate_branch_id(req.branch)
        hits = self.index.items(
            category=req.category.value if req.category else None,
            branch=req.branch,
            limit=None if req.tags else req.limit,
        )
        if req.tags:
            wanted = set(req.tags)
            hits = [h for h in hits if wanted <= effective_tags(h.branch, h.memory_item())]
            hits = hits[: req.limit] if req.limit else hits
        return {"items": [h.to_dict() for h in hits], "count": len(hits)}

    async def _forget(self, req: ForgetRequest) -> dict[str, Any]:
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
        for branch in self.store.list_branches():
            gone: list[MemoryItem] = []
            matcher = _forget_matcher(req, branch, functools.partial(self.store.read, branch))

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

            before = self.store.list_versions(branch)
            memory = self.store.update(branch, change)
            if gone:
                after = self.store.list_versions(branch)
                versions[branch] = after[0].version if after and after != before else None
                removed.extend({"branch": branch, "id": i.id, "title": i.title} for i in gone)
                self.writer.refresh_index(branch, memory)
                # Forgotten on purpose: old versions must not bring them into the archive.
                self.archive.mark_forgotten(branch, [i.id for i in gone])
        if req.id is not None and not removed:
            raise NotFound(f"No item with id {req.id!r}.")
        if removed:
            self.activity.record("forget", f"Forgot {len(removed)} item(s)")
        return {
            "success": True,
            "forgotten": len(removed),
            "items": removed,
            "versions": versions,
            "undo": "puffin-memory branch restore <branch> <version>" if removed else None,
        }

    async def _activity(self, req: ActivityRequest) -> dict[str, Any]:
        return {"events": self.activity.recent(req.limit)}

    async def _context(self, req: ContextRequest) -> dict[str, Any]:
        hits = None
        if req.topic:
            reply = await self.reader.retrieve(req.topic, min(req.limit, 100))
            hits = reply["memories"]
        return {"topic": req.topic, "markdown": context_digest(self.store, hits, req.limit)}

    async def _health(self, req: HealthRequest) -> dict[str, Any]:
        return health_report(self.store, self.index, with_index=req.index)

    async def _repair(self, _req: Empty) -> dict[str, Any]:
        report = repair(self.store, self.index)
        self.activity.record(
            "repair",
            f"Repair: {len(report['fixed'])} file(s) fixed, "
            f"{len(report['unfixable'])} need a person",
        )
        return {"success": True, **report}

    async def _export(self, req: ExportRequest) -> dict[str, Any]:
        return {
            "format": req.format,
            "branches": len(self.store.list_branches()),
            "content": export_bundle(self.store, req.format),
        }

    async def _import(self, req: ImportRequest) -> dict[str, Any]:
        if req.branch is not None:
            validate_branch_id(req.branch)
        bundle = read_bundle(redact(req.content), req.branch)
        report: list[dict[str, Any]] = []
        threshold = self.config.import_duplicate_threshold
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

            memory = self.store.update(branch, change)
            self.writer.refresh_index(branch, memory)
            report.append({"branch": branch, **stats})
        added = sum(r.get("added", 0) for r in report)
        self.activity.record("import", f"Imported {added} item(s) into {len(report)} branch(es)")
        return {"success": True, "branches": report, "added": added}

    async def _get_config(self, _req: Empty) -> dict[str, Any]:
        return {"config": self.config.model_dump(mode="json"), "home": str(self.store.home)}

    async def _set_config(self, req: SetConfigRequest) -> dict[str, Any]:
        from app.core.config import save_config

        merged = _deep_merge(self.config.model_dump(mode="json"), req.config)
        try:
            config = Config.model_validate(merged)
        except ValidationError as exc:
            raise InvalidInput(_describe_validation(ops.SET_CONFIG.name, exc)) from exc
        try:
            save_config(self.store.config_path, config)
        except StorageError:
            raise
        # Objects built from the old config keep working; the new values apply to settings
        # read per call (thresholds) right away and to the engine at the next start.
        for name in Config.model_fields:
            setattr(self.config, name, getattr(config, name))
        from app.core import embeddings

        embeddings.configure(config.embedding_model_dir or None)
        warning = None
        if config.embedding_model_dir and embeddings.model_dir() is None:
            warning = (
                f"{config.embedding_model_dir} holds no model.safetensors and "
                "tokenizer.json: search stays lexical until the folder is fixed."
            )
        return {
            "success": True,
            "config": config.model_dump(mode="json"),
            **({"warning": warning} if warning else {}),
        }


def _context(payload: dict[str, Any]) -> str:
    """The request's where-about for the operations log (never its text or secrets)."""
    parts = []
    for key in ("branch", "branchId", "id", "type", "source", "path"):
        value = payload.get(key)
        if isinstance(value, str) and value:
            parts.append(f" {key}={value[:120]!r}")
    return "".join(parts)


def _deep_merge(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _item_dict(branch: str, item: MemoryItem) -> dict[str, Any]:
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
