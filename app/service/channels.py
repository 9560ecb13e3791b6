"""MemoryChannels: the Qt face of the memory API, the one object every widget talks to.

Each operation of the table (`app.core.operations`) is an awaitable member returning the
operation's answer type (`app.core.answers`), a fire-and-forget
slot and a result signal, generated in `app/service/members.py` (Qt names cannot hold ':'
or '-', so `CHANNEL_MEMBERS` maps each channel to its Python name); every answered request
is announced on its operation's `<name>_done(request_id, reply)` and on
`replied(request_id, channel, response)`. Push signals tell
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

from app.core import answers
from app.core import operations as ops
from app.service.host import MUTATING_CHANNELS, HostListener, MemoryHost, Reply, is_error
from app.service.members import ChannelMembers
from app.service.watcher import BranchWatcher

log = logging.getLogger(__name__)
__all__ = ["CHANNEL_MEMBERS", "MemoryChannels", "is_error"]

# The member answering each channel (generated from the operation table, app/service/members.py).
CHANNEL_MEMBERS: dict[str, str] = {op.name: op.method for op in ops.OPERATIONS}


class MemoryChannels(ChannelMembers):
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
        self._stats: answers.StatsAnswer | None = None
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
        return await self._answer(next(self._ids), channel, payload or {})

    async def _answer(self, request_id: int, channel: str, payload: dict[str, Any]) -> Reply:
        reply = await self._host.invoke(channel, payload)
        if channel == ops.SET_CONFIG.name and not is_error(reply):
            self._set_config(reply.get("config", {}))
        if not self._closed:
            self.replied.emit(request_id, channel, reply)
            if channel in ops.BY_NAME:
                self.result_signal(channel).emit(request_id, reply)
        return reply

    @Slot(str, dict, result=int)
    def request(self, channel: str, payload: dict[str, Any]) -> int:
        """Fire-and-forget form of `invoke`: returns the request id used in `replied`."""
        request_id = next(self._ids)
        self.start(self._answer(request_id, channel, payload))
        return request_id

    # -- commands used by the tray and the window ---------------------------------------
    @Slot()
    def scan_now(self) -> None:
        """Start a scan of the agent sources in the background."""
        self.request(ops.SCAN.name, {})

    @Slot(str)
    def scan_folder(self, path: str) -> None:
        """Start a scan of one folder of transcripts in the background."""
        self.request(ops.SCAN.name, {"path": path})

    @Slot(str)
    def start_maintenance(self, kind: str) -> None:
        """Start a maintenance run in the background."""
        self.request(ops.RUN_MAINTENANCE.name, {"type": kind})

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
    def stats(self) -> answers.StatsAnswer | None:
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

    def watch_stats(self, slot: Callable[[answers.StatsAnswer], Any]) -> None:
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
