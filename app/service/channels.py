"""MemoryChannels: the Qt face of the memory API, the one object every widget talks to.

Each `memory:*` channel is an async member (Qt names cannot hold ':' or '-', so
`CHANNEL_MEMBERS` maps `memory:get-branch-memory` to `get_branch_memory`); every answered
request is also announced as `replied(request_id, channel, response)`. Push signals tell
widgets what changed: `status_changed`, `stats_changed`, `branch_changed(branch)`,
`progress(job, done, total)`, `job_finished(job, kind, reply)`, `config_changed`. Like
qutebrowser's message bridge, the latest status and stats are kept and replayed to a late
subscriber (`watch_status`, `watch_stats`). Widget coroutines run through `start()`, which
keeps a strong reference to each task (qasync does not), cancels a widget's tasks when the
widget is destroyed and routes every failure to the host's one error handler.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from app.service.host import MUTATING_CHANNELS, HostListener, MemoryHost, Reply, is_error
from app.service.watcher import BranchWatcher

log = logging.getLogger(__name__)
__all__ = ["CHANNEL_MEMBERS", "MemoryChannels", "is_error"]

CHANNEL_MEMBERS: dict[str, str] = {
    "memory:memorize": "memorize",
    "memory:retrieve": "retrieve",
    "memory:get-branch-memory": "get_branch_memory",
    "memory:get-stats": "get_stats",
    "memory:get-status": "get_status",
    "memory:clear-branch-memory": "clear_branch_memory",
    "memory:run-maintenance": "run_maintenance",
    "memory:list-branches": "list_branches",
    "memory:save-branch-memory": "save_branch_memory",
    "memory:list-versions": "list_versions",
    "memory:get-version": "get_version",
    "memory:restore-version": "restore_version",
    "memory:archive-list": "archive_list",
    "memory:review-bulk": "review_bulk",
    "memory:review-requeue": "review_requeue",
    "memory:archive-restore": "archive_restore",
    "memory:review-list": "review_list",
    "memory:review-approve": "review_approve",
    "memory:review-reject": "review_reject",
    "memory:list-conflicts": "list_conflicts",
    "memory:resolve-conflict": "resolve_conflict",
    "memory:remember": "remember",
    "memory:get-item": "get_item",
    "memory:list-items": "list_items",
    "memory:forget": "forget",
    "memory:activity": "activity",
    "memory:context": "context",
    "memory:health": "health",
    "memory:repair": "repair",
    "memory:export": "export",
    "memory:import": "import_memory",
    "memory:get-config": "get_config",
    "memory:set-config": "set_config",
    "memory:scan": "scan",
    "memory:improve": "improve",
    "memory:provenance": "provenance",
    "memory:sources": "sources",
    "memory:usage": "usage",
    "memory:auth-status": "auth_status",
    "memory:auth-set": "auth_set",
    "memory:auth-test": "auth_test",
    "memory:install-hooks": "install_hooks",
}


def _drop_none(payload: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in payload.items() if v is not None}


class MemoryChannels(QObject):
    """Async members per channel plus push signals; see the module docstring."""

    replied = Signal(int, str, object)
    status_changed = Signal(object)
    stats_changed = Signal(object)
    branch_changed = Signal(str)
    progress = Signal(str, int, int)
    job_finished = Signal(str, str, object)
    config_changed = Signal(object)
    error_reported = Signal(str)

    def __init__(self, host: MemoryHost, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._host = host
        self._ids = itertools.count(1)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._owned: dict[int, set[asyncio.Task[Any]]] = {}
        self._stats: Reply | None = None
        self._config: Reply | None = None
        self._closed = False
        host.listener.status = self._on_host_status
        host.listener.progress = self.progress.emit
        host.listener.job_finished = self._on_host_job_finished
        host.listener.changed = self._on_host_changed
        self._watcher = BranchWatcher(host.home, self.start, self)
        self._watcher.branches_changed.connect(self._on_watcher_branches_changed)
        self._watcher.home_files_changed.connect(self.refresh_stats)
        self._stats_timer = QTimer(self, singleShot=True, interval=120)
        self._stats_timer.timeout.connect(self._on_stats_timer_timeout)

    # -- life cycle ---------------------------------------------------------------------
    @property
    def home(self) -> Path:
        """The memory home this app serves."""
        return self._host.home

    def start_service(self) -> None:
        """Start the core in the background, then load status, stats and config."""
        self._host.start()
        self._watcher.start()
        self.start(self._load_initial())

    async def _load_initial(self) -> None:
        reply = await self.get_config()
        if not is_error(reply):
            self._set_config(reply.get("config", {}))
        await self._refresh_stats_now()

    async def shutdown(self) -> None:
        """Stop watching, cancel every task, stop the host."""
        self._closed = True
        self._watcher.stop()
        self._stats_timer.stop()
        for task in list(self._tasks):
            task.cancel()
        await self._host.stop()
        # Break the host -> channels reference cycle so both are freed by reference
        # counting on this thread, not later by the cyclic collector on any thread.
        self._host.listener = HostListener()

    # -- tasks --------------------------------------------------------------------------
    def start(
        self, coro: Coroutine[Any, Any, Any], owner: QObject | None = None
    ) -> asyncio.Task[Any]:
        """Run a coroutine on the GUI loop, holding it until done (cancelled with `owner`)."""
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        if owner is not None:
            key = id(owner)
            if key not in self._owned:
                self._owned[key] = set()
                owner.destroyed.connect(lambda *_args, key=key: self._on_owner_destroyed(key))
            self._owned[key].add(task)
        task.add_done_callback(self._on_task_done)
        return task

    def _on_owner_destroyed(self, key: int) -> None:
        for task in self._owned.pop(key, set()):
            task.cancel()

    def _on_task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        for owned in self._owned.values():
            owned.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is None:
            return
        if isinstance(exc, RuntimeError) and "already deleted" in str(exc):
            return  # the widget went away while its request was in flight
        self.report_error(f"{type(exc).__name__}: {exc}", exc)

    def report_error(self, message: str, exc: BaseException | None = None) -> None:
        """The one handler for unexpected failures: log, set the error status, tell the UI."""
        self._host.report_error(message, exc)
        self.error_reported.emit(message)

    @property
    def tasks(self) -> frozenset[asyncio.Task[Any]]:
        """Tasks still running (tests wait for these to drain)."""
        return frozenset(self._tasks)

    # -- requests -----------------------------------------------------------------------
    async def invoke(self, channel: str, payload: dict[str, Any] | None = None) -> Reply:
        """Answer one request; the reply is also emitted as `replied`."""
        request_id = next(self._ids)
        reply = await self._host.invoke(channel, payload or {})
        if not self._closed:
            self.replied.emit(request_id, channel, reply)
        return reply

    @Slot(str, dict, result=int)
    def request(self, channel: str, payload: dict[str, Any]) -> int:
        """Fire-and-forget form of `invoke`: returns the request id used in `replied`."""
        request_id = next(self._ids)

        async def run() -> None:
            reply = await self._host.invoke(channel, payload)
            if not self._closed:
                self.replied.emit(request_id, channel, reply)

        self.start(run())
        return request_id

    # One member per channel (CHANNEL_MEMBERS); keyword names follow Python, payload keys
    # follow the API.
    async def memorize(self, conversation_text: str, branch_id: str) -> Reply:
        """memory:memorize."""
        return await self.invoke(
            "memory:memorize", {"conversationText": conversation_text, "branchId": branch_id}
        )

    async def retrieve(
        self,
        query: str,
        max_results: int = 5,
        *,
        branch: str | None = None,
        project: str | None = None,
        mode: str = "fast",
    ) -> Reply:
        """memory:retrieve."""
        return await self.invoke(
            "memory:retrieve",
            _drop_none(
                {
                    "query": query,
                    "maxResults": max_results,
                    "branch": branch,
                    "project": project,
                    "mode": mode,
                }
            ),
        )

    async def get_branch_memory(self, branch: str) -> Reply:
        """memory:get-branch-memory."""
        return await self.invoke("memory:get-branch-memory", {"branch": branch})

    async def get_stats(self) -> Reply:
        """memory:get-stats."""
        return await self.invoke("memory:get-stats", {})

    async def get_status(self) -> Reply:
        """memory:get-status (the core's own view; `status` has the app's)."""
        return await self.invoke("memory:get-status", {})

    async def clear_branch_memory(self, branch: str) -> Reply:
        """memory:clear-branch-memory."""
        return await self.invoke("memory:clear-branch-memory", {"branch": branch})

    async def run_maintenance(self, kind: str) -> Reply:
        """memory:run-maintenance (weekly, monthly or full)."""
        return await self.invoke("memory:run-maintenance", {"type": kind})

    async def list_branches(self) -> Reply:
        """memory:list-branches."""
        return await self.invoke("memory:list-branches", {})

    async def save_branch_memory(self, branch: str, content: str) -> Reply:
        """memory:save-branch-memory."""
        return await self.invoke(
            "memory:save-branch-memory", {"branch": branch, "content": content}
        )

    async def list_versions(self, branch: str) -> Reply:
        """memory:list-versions."""
        return await self.invoke("memory:list-versions", {"branch": branch})

    async def get_version(self, branch: str, version: str) -> Reply:
        """memory:get-version."""
        return await self.invoke("memory:get-version", {"branch": branch, "version": version})

    async def restore_version(self, branch: str, version: str) -> Reply:
        """memory:restore-version."""
        return await self.invoke("memory:restore-version", {"branch": branch, "version": version})

    async def review_bulk(self, action: str, item_ids: list[str]) -> Reply:
        """memory:review-bulk (approve or reject many)."""
        return await self.invoke("memory:review-bulk", {"action": action, "ids": list(item_ids)})

    async def review_requeue(self, entries: list[dict[str, Any]]) -> Reply:
        """memory:review-requeue (undo of an approve or reject)."""
        return await self.invoke("memory:review-requeue", {"entries": list(entries)})

    async def archive_list(self, branch: str) -> Reply:
        """memory:archive-list."""
        return await self.invoke("memory:archive-list", {"branch": branch})

    async def archive_restore(self, branch: str, item_id: str) -> Reply:
        """memory:archive-restore."""
        return await self.invoke("memory:archive-restore", {"branch": branch, "id": item_id})

    async def review_list(self) -> Reply:
        """memory:review-list."""
        return await self.invoke("memory:review-list", {})

    async def review_approve(
        self,
        item_id: str,
        *,
        title: str | None = None,
        content: str | None = None,
        category: str | None = None,
    ) -> Reply:
        """memory:review-approve (with optional edits)."""
        return await self.invoke(
            "memory:review-approve",
            _drop_none(
                {
                    "id": item_id,
                    "title": title,
                    "content": content,
                    "category": category,
                }
            ),
        )

    async def review_reject(self, item_id: str) -> Reply:
        """memory:review-reject."""
        return await self.invoke("memory:review-reject", {"id": item_id})

    async def list_conflicts(self) -> Reply:
        """memory:list-conflicts."""
        return await self.invoke("memory:list-conflicts", {})

    async def resolve_conflict(
        self,
        conflict_id: str,
        action: str,
        *,
        branch: str | None = None,
        item_ids: list[str] | None = None,
    ) -> Reply:
        """memory:resolve-conflict (keep-newer, keep-both or mark-outdated)."""
        payload: dict[str, Any] = {"id": conflict_id, "action": action}
        if branch:
            payload["branch"] = branch
        if item_ids:
            payload["itemIds"] = list(item_ids)
        return await self.invoke("memory:resolve-conflict", payload)

    async def remember(self, branch: str, text: str, *, category: str | None = None) -> Reply:
        """memory:remember (a pinned user item)."""
        return await self.invoke(
            "memory:remember", _drop_none({"branch": branch, "text": text, "category": category})
        )

    async def get_item(self, item_id: str) -> Reply:
        """memory:get-item."""
        return await self.invoke("memory:get-item", {"id": item_id})

    async def list_items(self, **filters: Any) -> Reply:
        """memory:list-items (type, branch, tags, limit)."""
        return await self.invoke("memory:list-items", _drop_none(filters))

    async def forget(self, **selector: Any) -> Reply:
        """memory:forget (id, tags, pattern, olderThan or all+confirm)."""
        return await self.invoke("memory:forget", _drop_none(selector))

    async def activity(self, limit: int = 20) -> Reply:
        """memory:activity."""
        return await self.invoke("memory:activity", {"limit": limit})

    async def context(self, topic: str | None = None, limit: int = 40) -> Reply:
        """memory:context (what a session start would be given)."""
        return await self.invoke("memory:context", _drop_none({"topic": topic, "limit": limit}))

    async def health(self, *, index: bool = False) -> Reply:
        """memory:health."""
        return await self.invoke("memory:health", {"index": index})

    async def repair(self) -> Reply:
        """memory:repair."""
        return await self.invoke("memory:repair", {})

    async def export(self, fmt: str = "json") -> Reply:
        """memory:export (json or md)."""
        return await self.invoke("memory:export", {"format": fmt})

    async def import_memory(self, content: str, *, branch: str | None = None) -> Reply:
        """memory:import (`import` is a Python keyword)."""
        return await self.invoke(
            "memory:import", _drop_none({"content": content, "branch": branch})
        )

    async def get_config(self) -> Reply:
        """memory:get-config."""
        return await self.invoke("memory:get-config", {})

    async def set_config(self, changes: dict[str, Any]) -> Reply:
        """memory:set-config with a partial config; `config_changed` follows on success."""
        reply = await self.invoke("memory:set-config", {"config": changes})
        if not is_error(reply):
            self._set_config(reply.get("config", {}))
        return reply

    async def scan(
        self,
        *,
        source: str | None = None,
        path: str | None = None,
        dry_run: bool = False,
    ) -> Reply:
        """memory:scan (runs as a background job unless it is a dry run)."""
        return await self.invoke(
            "memory:scan", _drop_none({"source": source, "path": path, "dryRun": dry_run or None})
        )

    async def provenance(self, item_id: str, branch: str | None = None) -> Reply:
        """memory:provenance (where an item came from, with excerpts)."""
        return await self.invoke("memory:provenance", _drop_none({"id": item_id, "branch": branch}))

    async def improve(self, branch: str) -> Reply:
        """memory:improve (re-read the branch's offline-only threads with the LLM engine)."""
        return await self.invoke("memory:improve", {"branch": branch})

    async def sources(self) -> Reply:
        """memory:sources."""
        return await self.invoke("memory:sources", {})

    async def usage(self) -> Reply:
        """memory:usage."""
        return await self.invoke("memory:usage", {})

    async def auth_status(self) -> Reply:
        """memory:auth-status."""
        return await self.invoke("memory:auth-status", {})

    async def auth_set(self, key: str) -> Reply:
        """memory:auth-set (stores the key in the system keyring)."""
        return await self.invoke("memory:auth-set", {"key": key})

    async def auth_test(self) -> Reply:
        """memory:auth-test."""
        return await self.invoke("memory:auth-test", {})

    async def install_hooks(self, *, uninstall: bool = False) -> Reply:
        """memory:install-hooks."""
        return await self.invoke("memory:install-hooks", {"uninstall": uninstall})

    # -- commands used by the tray and the window ---------------------------------------
    @Slot()
    def scan_now(self) -> None:
        """Start a scan of the agent sources in the background."""
        self.request("memory:scan", {})

    @Slot(str)
    def scan_folder(self, path: str) -> None:
        """Start a scan of one folder of transcripts in the background."""
        self.request("memory:scan", {"path": path})

    @Slot(str)
    def start_maintenance(self, kind: str) -> None:
        """Start a maintenance run in the background."""
        self.request("memory:run-maintenance", {"type": kind})

    @Slot(bool)
    def set_paused(self, paused: bool) -> None:
        """Pause or resume automatic memorization."""
        self._host.set_paused(paused)

    @property
    def paused(self) -> bool:
        """Whether automatic memorization is paused."""
        return self._host.paused

    @property
    def jobs(self) -> list[dict[str, Any]]:
        """Running and queued jobs."""
        return [job.to_dict() for job in self._host.jobs]

    # -- replayed state -----------------------------------------------------------------
    @property
    def status(self) -> Reply | None:
        """The latest app status, if the service has published one."""
        return self._host.last_status

    @property
    def stats(self) -> Reply | None:
        """The latest stats, if loaded."""
        return self._stats

    @property
    def config(self) -> Reply | None:
        """The latest settings, if loaded."""
        return self._config

    def watch_status(self, slot: Callable[[Reply], Any]) -> None:
        """Connect `slot` to `status_changed` and call it now with the latest status."""
        self.status_changed.connect(slot)
        if self.status is not None:
            slot(self.status)

    def watch_stats(self, slot: Callable[[Reply], Any]) -> None:
        """Connect `slot` to `stats_changed` and call it now with the latest stats."""
        self.stats_changed.connect(slot)
        if self._stats is not None:
            slot(self._stats)

    def watch_config(self, slot: Callable[[Reply], Any]) -> None:
        """Connect `slot` to `config_changed` and call it now with the latest settings."""
        self.config_changed.connect(slot)
        if self._config is not None:
            slot(self._config)

    @Slot()
    def refresh_stats(self) -> None:
        """Reload stats soon (bursts of changes are coalesced)."""
        if not self._closed:
            self._stats_timer.start()

    @Slot()
    def refresh(self) -> None:
        """Reload everything the window shows: status, stats and changed branches."""
        self.refresh_stats()
        self._watcher.check_now()
        self.start(self._host.refresh_status())

    def _on_stats_timer_timeout(self) -> None:
        self.start(self._refresh_stats_now())

    async def _refresh_stats_now(self) -> None:
        reply = await self.get_stats()
        if not is_error(reply) and reply != self._stats and not self._closed:
            self._stats = reply
            self.stats_changed.emit(reply)

    def _set_config(self, config: Reply) -> None:
        self._config = config
        self._host.update_config(config)
        self.config_changed.emit(config)

    # -- host and watcher events --------------------------------------------------------
    def _on_host_status(self, status: Reply) -> None:
        if not self._closed:
            self.status_changed.emit(status)

    def _on_host_job_finished(self, name: str, kind: str, reply: Reply) -> None:
        if not self._closed:
            self.job_finished.emit(name, kind, reply)
            self.refresh_stats()

    def _on_host_changed(self, channel: str) -> None:
        if self._closed or channel not in MUTATING_CHANNELS:
            return
        # Our own writes show up through the same signature check as the CLI's, so a change
        # is announced once whoever made it.
        self._watcher.check_now()
        self.refresh_stats()

    def _on_watcher_branches_changed(self, branches: list[str]) -> None:
        for branch in branches:
            self.branch_changed.emit(branch)
        self.refresh_stats()
