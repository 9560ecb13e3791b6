"""MemoryHost: owns the core (built by `app.container.build_api`) on a worker thread, the job queue
for background memorization and maintenance, the periodic source watcher and the app status.

The core is synchronous (blocking file, SQLite and network work), so it never runs on the GUI
thread: one worker thread (`CoreWorker`) builds the `MemoryApi` and answers every request, one
at a time. GUI-side code submits a call and awaits its `concurrent.futures.Future` through
`asyncio.wrap_future`, so the qasync loop only ever waits; there is no second event loop.
Everything else in this module (jobs, status, timers) lives on the GUI thread's loop and
touches no QObject; `MemoryChannels` turns its callbacks into Qt signals.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from app.core import operations as ops

log = logging.getLogger(__name__)

Reply = dict[str, Any]
JobKind = Literal["scan", "maintenance", "memorize"]
ApiFactory = Callable[[Path, str | None], Any]

# Channels that can run for minutes: they go through the job queue, so they show up in the
# status, report progress and never run twice at once for the same branch.
JOB_CHANNELS = ops.JOBS
# Channels after which branch files, stats or the review queue may have changed.
MUTATING_CHANNELS = ops.WRITES
# A request the person can fix (a wrong path) is answered, not shown as the app's error state.
USER_ERRORS = frozenset({"INVALID_INPUT", "NOT_FOUND"})
SOURCE_SCAN_INTERVAL_S = 300.0
STOP_TIMEOUT_S = 3.0


def error_reply(code: str, message: str) -> Reply:
    """The API's error shape, for failures that happen before the core answers."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return {"error": True, "code": code, "message": message, "timestamp": stamp}


def is_error(reply: Mapping[str, Any]) -> bool:
    """Whether a reply is the API's error shape."""
    return bool(reply.get("error"))


def _default_factory(home: Path, engine_override: str | None) -> Any:
    from app.container import build_api

    return build_api(home, engine_override=engine_override)


class CoreWorker:
    """The one thread the synchronous core lives on: the `MemoryApi` is built there and
    answers every request there, one at a time.

    Requests come in two kinds. A job (a scan, a maintenance run, a memorization) may run for
    minutes; a quick request (a search, a listing, an edit) takes milliseconds. Quick requests
    go first, and a job lets the ones that arrived meanwhile run between its steps
    (`interleave`, called at each thread of a scan): a search during a long scan waits for
    one thread, not for the scan. Each step is a complete transaction, so nothing sees a half
    written branch.

    A daemon thread rather than a `ThreadPoolExecutor`: a step that cannot be interrupted
    (parsing a big transcript) must not hold the process open at exit, and writes are atomic,
    so leaving it to die with the process is safe.
    """

    def __init__(self, factory: Callable[[], Any]) -> None:
        self._factory = factory
        self.api: Any = None
        self.build_error: str | None = None
        self._quick: collections.deque[_Work] = collections.deque()
        self._jobs: collections.deque[_Work] = collections.deque()
        self._wake = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="puffin-core", daemon=True)
        # Completed when the thread has closed the core and is about to end.
        self.finished: concurrent.futures.Future[None] = concurrent.futures.Future()

    def start(self) -> None:
        """Start the thread; requests submitted before the core is built wait for it."""
        self._thread.start()

    def _run(self) -> None:
        try:
            self.api = self._factory()
        except Exception as exc:  # the app must still open and say what is wrong
            log.exception("building the memory core failed")
            self.build_error = f"The memory core could not start: {exc}"
        while (work := self._next()) is not None:
            _do(work)
        closer = getattr(self.api, "close", None)
        if callable(closer):
            with contextlib.suppress(Exception):
                closer()
        with contextlib.suppress(concurrent.futures.InvalidStateError):  # stop gave up waiting
            self.finished.set_result(None)

    def _next(self) -> _Work | None:
        with self._wake:
            while not (self._quick or self._jobs or self._closed):
                self._wake.wait()
            if self._quick:
                return self._quick.popleft()
            if self._jobs and not self._closed:
                return self._jobs.popleft()
            return None

    def interleave(self) -> None:
        """Answer the quick requests waiting now (called on the core thread between a job's
        steps; anywhere else it does nothing)."""
        if threading.current_thread() is not self._thread:
            return
        while True:
            with self._wake:
                if not self._quick or self._closed:
                    return
                work = self._quick.popleft()
            _do(work)

    def submit(
        self, fn: Callable[..., Any], *args: Any, job: bool = False
    ) -> concurrent.futures.Future[Any]:
        """Run `fn(*args)` on the core thread (`job`: a long one, see the class docstring);
        the future completes from that thread."""
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        with self._wake:
            if self._closed:
                future.set_exception(RuntimeError("the memory core has stopped"))
                return future
            (self._jobs if job else self._quick).append((future, fn, args))
            self._wake.notify()
        return future

    def stop(self) -> concurrent.futures.Future[None]:
        """Let the current request finish, then close the core and end the thread; `finished`
        completes when that is done. Requests still waiting are cancelled."""
        with self._wake:
            self._closed = True
            waiting = [*self._quick, *self._jobs]
            self._quick.clear()
            self._jobs.clear()
            self._wake.notify()
        for future, _fn, _args in waiting:
            future.cancel()
        if not self._thread.is_alive():
            with contextlib.suppress(concurrent.futures.InvalidStateError):
                self.finished.set_result(None)
        return self.finished

    @property
    def alive(self) -> bool:
        """Whether the thread runs."""
        return self._thread.is_alive()


_Work = tuple[concurrent.futures.Future[Any], Callable[..., Any], tuple[Any, ...]]


def _do(work: _Work) -> None:
    future, fn, args = work
    if not future.set_running_or_notify_cancel():
        return  # cancelled while it waited
    try:
        future.set_result(fn(*args))
    except BaseException as exc:  # handed to whoever waits on the future
        future.set_exception(exc)


@dataclass(eq=False)
class Job:
    """One background job: a scan, a maintenance run or a memorization of one branch."""

    name: str
    kind: JobKind
    key: str  # the branch it writes, or "*" when it may write any branch
    channel: str
    payload: dict[str, Any]
    future: asyncio.Future[Reply]
    done: int = 0
    total: int = 0
    label: str = ""
    started: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """What the status shows about this job."""
        return {
            "name": self.name,
            "kind": self.kind,
            "done": self.done,
            "total": self.total,
            "label": self.label,
        }


@dataclass
class HostListener:
    """Callbacks the host calls on the GUI loop (MemoryChannels turns them into signals)."""

    status: Callable[[Reply], None] = lambda _status: None
    progress: Callable[[str, int, int], None] = lambda _job, _done, _total: None
    job_finished: Callable[[str, str, Reply], None] = lambda _name, _kind, _reply: None
    changed: Callable[[str], None] = lambda _channel: None


@dataclass
class _StatusParts:
    core: Reply = field(default_factory=dict)
    error: str | None = None


class MemoryHost:
    """Owns the core thread, the job queue, the source watcher and the composed app status."""

    def __init__(
        self,
        home: Path,
        *,
        engine_override: str | None = None,
        api_factory: ApiFactory | None = None,
        source_scan_interval: float = SOURCE_SCAN_INTERVAL_S,
    ) -> None:
        self.home = home
        self.engine_override = engine_override
        factory = api_factory or _default_factory
        self._core = CoreWorker(lambda: self._hooked(factory(home, engine_override)))
        self._loop: asyncio.AbstractEventLoop | None = None
        self.listener = HostListener()
        self._queue: list[Job] = []
        self._running: list[Job] = []
        self._in_flight: set[concurrent.futures.Future[Any]] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._status = _StatusParts()
        self._last_status: Reply | None = None
        self._config: dict[str, Any] = {}
        self.paused = False
        self._started = False
        self._stopping = False
        self._source_scan_interval = source_scan_interval

    # -- life cycle ---------------------------------------------------------------------
    def start(self) -> None:
        """Start the core thread and the start-up work; call once the GUI loop runs."""
        if self._started:
            return
        self._started = True
        self._loop = asyncio.get_running_loop()
        self._core.start()
        self.spawn(self._start_up())

    async def _start_up(self) -> None:
        await self.refresh_status()
        if self._core.build_error:
            return
        reply = await self.invoke(ops.GET_CONFIG.name, {})
        self._config = reply.get("config", {}) if not is_error(reply) else {}
        if self._config.get("maintenance_on_start", True):
            self.submit_job("Maintenance check", "maintenance", "*", "check-maintenance", {})
        # Its own setting: a person may want one scan per start and nothing in between.
        if self._config.get("scan_on_start", True) and not self.paused:
            self.scan()
        self.spawn(self._watch_sources())

    async def stop(self) -> None:
        """Cancel jobs and requests, stop the core thread (waiting at most a few seconds)."""
        self._stopping = True
        for job in [*self._queue, *self._running]:
            if not job.future.done():
                job.future.cancel()
        self._queue.clear()
        for task in list(self._tasks):
            task.cancel()
        for future in list(self._in_flight):
            future.cancel()
        if self._core.alive:
            done = asyncio.wrap_future(self._core.stop())
            try:
                await asyncio.wait_for(asyncio.shield(done), STOP_TIMEOUT_S)
            except TimeoutError:
                # A blocking step (parsing a big transcript) cannot be interrupted; writes are
                # atomic, so leaving the daemon thread to die with the process is safe.
                log.warning("the memory core was still busy after %.0f s", STOP_TIMEOUT_S)

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run `coro` on the GUI loop, keeping a strong reference until it ends."""
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._on_task_done)
        return task

    def _on_task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            self.report_error(f"Background task failed: {exc}", exc)

    def report_error(self, message: str, exc: BaseException | None = None) -> None:
        """The one place unexpected failures go: logged, and shown as the error status."""
        if exc is not None:
            log.error("%s", message, exc_info=(type(exc), exc, exc.__traceback__))
        else:
            log.error("%s", message)
        self._status.error = message
        self._publish_status()

    # -- requests -----------------------------------------------------------------------
    async def invoke(self, channel: str, payload: dict[str, Any] | None = None) -> Reply:
        """Answer one `memory:*` request without blocking the calling loop."""
        payload = dict(payload or {})
        if channel in JOB_CHANNELS:
            return await self.run_job_for(channel, payload)
        return await self._call_core(channel, payload)

    async def _call_core(
        self, channel: str, payload: dict[str, Any], *, job: bool = False
    ) -> Reply:
        if self._stopping:
            return error_reply("INTERNAL_ERROR", "The app is shutting down.")
        if not self._started:
            return error_reply("INTERNAL_ERROR", "The memory core has not been started.")
        future = self._core.submit(self._answer, channel, payload, job=job)
        self._in_flight.add(future)
        try:
            reply: Reply = await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if future.cancelled() and self._stopping and task is not None and not task.cancelling():
                # Cancelled by the shutdown, not by its caller: an answer, not an exception.
                return error_reply("INTERNAL_ERROR", "The app is shutting down.")
            raise
        finally:
            self._in_flight.discard(future)
        if not is_error(reply) and channel in MUTATING_CHANNELS:
            self.listener.changed(channel)
        return reply

    def _answer(self, channel: str, payload: dict[str, Any]) -> Reply:
        """Runs on the core thread."""
        # The factory ran on this thread before the first request, so the api (or the reason
        # there is none) is known by the time any request runs here.
        api = self._core.api
        if api is None:
            return error_reply("INTERNAL_ERROR", self._core.build_error or "No memory core.")
        try:
            if channel == "check-maintenance":
                results = api.check_maintenance()
                return {"success": True, "results": results}
            reply = api.invoke(channel, payload)
        except Exception as exc:  # invoke promises not to raise; this is the safety net
            log.exception("%s raised", channel)
            return error_reply("INTERNAL_ERROR", f"{channel} failed unexpectedly: {exc}")
        return (
            reply
            if isinstance(reply, dict)
            else error_reply(
                "INTERNAL_ERROR", f"{channel} returned {type(reply).__name__}, not an object."
            )
        )

    def _hooked(self, api: Any) -> Any:
        """Let the core report scan progress and the queue length; runs on the core thread
        as soon as the core is built, so every request, the first scan included, has them."""
        loop = self._loop
        assert loop is not None  # set by start(), which starts the core thread

        def progress(done: int, total: int, label: str) -> None:
            with contextlib.suppress(RuntimeError):  # GUI loop closed during shutdown
                loop.call_soon_threadsafe(self._on_core_progress, done, total, label)
            # Between two threads of a scan: searches and edits that came in meanwhile.
            self._core.interleave()

        api.progress = progress
        api.queue_length = lambda: len(self._queue) + len(self._running)
        return api

    # -- jobs ---------------------------------------------------------------------------
    def scan(self, *, source: str | None = None, path: str | None = None) -> asyncio.Future[Reply]:
        """Queue a memorization scan of the agent sources (or one folder)."""
        payload: dict[str, Any] = {}
        if source:
            payload["source"] = source
        if path:
            payload["path"] = path
        name = "Scan " + (Path(path).name if path else source or "agent history")
        return self.submit_job(name, "scan", "*", ops.SCAN.name, payload)

    def run_maintenance(self, kind: str) -> asyncio.Future[Reply]:
        """Queue a maintenance run (weekly, monthly or full)."""
        return self.submit_job(
            f"{kind.capitalize()} maintenance",
            "maintenance",
            "*",
            ops.RUN_MAINTENANCE.name,
            {"type": kind},
        )

    async def run_job_for(self, channel: str, payload: dict[str, Any]) -> Reply:
        """Run a long channel as a job and wait for its reply."""
        if channel == ops.SCAN.name:
            if payload.get("dryRun"):
                return await self._call_core(channel, payload)  # a dry run only reads
            future = self.submit_job(
                "Scan "
                + (
                    Path(str(payload["path"])).name
                    if payload.get("path")
                    else str(payload.get("source") or "agent history")
                ),
                "scan",
                "*",
                channel,
                payload,
            )
        elif channel == ops.RUN_MAINTENANCE.name:
            future = self.submit_job(
                f"{str(payload.get('type', '')).capitalize()} maintenance",
                "maintenance",
                "*",
                channel,
                payload,
            )
        else:
            branch = str(payload.get("branchId") or "")
            future = self.submit_job(
                f"Memorize {branch}", "memorize", branch or "*", channel, payload, dedupe=False
            )
        return await asyncio.shield(future)

    def submit_job(
        self,
        name: str,
        kind: JobKind,
        key: str,
        channel: str,
        payload: dict[str, Any],
        *,
        dedupe: bool = True,
    ) -> asyncio.Future[Reply]:
        """Queue a job; an identical job already waiting or running is reused."""
        if dedupe:
            for job in [*self._running, *self._queue]:
                if job.channel == channel and job.payload == payload and not job.future.done():
                    return job.future
        job = Job(name, kind, key, channel, payload, asyncio.get_running_loop().create_future())
        self._queue.append(job)
        self._schedule()
        self._publish_status()
        return job.future

    def _schedule(self) -> None:
        """Start every queued job whose branch is free ("*" waits for, and blocks, all)."""
        if self._stopping:
            return
        for job in list(self._queue):
            busy = {j.key for j in self._running}
            if busy and (job.key == "*" or "*" in busy or job.key in busy):
                if job.key == "*":
                    break  # keep order: nothing overtakes a waiting exclusive job
                continue
            self._queue.remove(job)
            self._running.append(job)
            self.spawn(self._run_job(job))

    async def _run_job(self, job: Job) -> None:
        job.started = time.monotonic()
        self.listener.progress(job.name, 0, 0)
        try:
            reply = await self._call_core(job.channel, job.payload, job=True)
        except asyncio.CancelledError:
            if not job.future.done():
                job.future.cancel()
            raise
        except Exception as exc:  # the job's waiters must get an answer whatever happened
            log.exception("%s failed", job.name)
            reply = error_reply("INTERNAL_ERROR", f"{job.name} failed unexpectedly: {exc}")
        finally:
            if job in self._running:
                self._running.remove(job)
        if is_error(reply) and reply.get("code") not in USER_ERRORS:
            self._status.error = f"{job.name}: {reply.get('message', 'failed')}"
        elif not is_error(reply):
            self._status.error = None
            if job.channel == "check-maintenance":
                self.listener.changed(ops.RUN_MAINTENANCE.name)
        if not job.future.done():
            job.future.set_result(reply)
        self._publish_status()
        self.listener.progress(job.name, job.total or 1, job.total or 1)
        self.listener.job_finished(job.name, job.kind, reply)
        self._schedule()
        await self.refresh_status()

    def _on_core_progress(self, done: int, total: int, label: str) -> None:
        job = next((j for j in self._running if j.kind == "scan"), None)
        if job is None:
            return
        job.done, job.total, job.label = done, total, label
        self.listener.progress(job.name, done, total)
        self._publish_status()

    @property
    def jobs(self) -> list[Job]:
        """Running jobs first, then queued ones."""
        return [*self._running, *self._queue]

    # -- automatic memorization ---------------------------------------------------------
    def _auto_scan_enabled(self) -> bool:
        return bool(self._config.get("auto_memorize", True)) and not self.paused

    def set_paused(self, paused: bool) -> None:
        """Pause or resume automatic memorization (manual scans still run)."""
        self.paused = paused
        self._publish_status()

    def update_config(self, config: dict[str, Any]) -> None:
        """Settings changed: the source watcher follows them."""
        self._config = dict(config)
        self._publish_status()

    async def _watch_sources(self) -> None:
        """Scan the agent sources every few minutes while automatic memorization is on.

        Polling rather than file watching: source folders hold thousands of nested files,
        and the core's ledger makes a scan with nothing new cheap.
        """
        while True:
            await asyncio.sleep(self._source_scan_interval)
            if self._auto_scan_enabled() and not self._running:
                self.scan()

    # -- status -------------------------------------------------------------------------
    async def refresh_status(self) -> Reply:
        """Ask the core for its status and publish the composed status."""
        if not any(j.kind in ("scan", "memorize") for j in self._running):
            # While a job runs the core thread is busy; its status would only arrive after
            # the job, so the host's own view of the jobs stands in for it.
            reply = await self._call_core(ops.GET_STATUS.name, {})
            if not is_error(reply):
                self._status.core = reply
        if self._core.build_error:  # known once the first request has been answered
            self._status.core = {"status": "error", "lastError": self._core.build_error}
        return self._publish_status()

    def status(self) -> Reply:
        """The app status: the core's, overlaid with the host's jobs, pause and last error."""
        core = self._status.core
        running = self._running
        last_error = self._status.error or core.get("lastError")
        if any(j.kind == "maintenance" for j in running) or core.get("maintenanceInProgress"):
            state = "maintenance"
        elif running or self._queue:
            state = "processing"
        elif self._status.error or core.get("status") == "error":
            state = "error"
        elif not core:
            state = "starting"
        else:
            state = core.get("status", "ready")
        return {
            "status": state,
            "lastError": last_error,
            "maintenanceInProgress": state == "maintenance",
            "queueLength": len(self._queue) + len(running),
            "engine": core.get("engine"),
            "notes": list(core.get("notes") or []),
            "problems": list(core.get("problems") or []),
            "jobs": [j.to_dict() for j in self.jobs],
            "paused": self.paused,
            "autoMemorize": bool(self._config.get("auto_memorize", True)),
            "home": str(self.home),
        }

    def _publish_status(self) -> Reply:
        status = self.status()
        if status != self._last_status:
            self._last_status = status
            self.listener.status(status)
        return status

    @property
    def last_status(self) -> Reply | None:
        """The latest published status (replayed to late subscribers)."""
        return self._last_status
