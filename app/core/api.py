"""MemoryApi: the single entry to the memory system, one `memory:*` channel per operation.

`api.invoke(channel, payload)` validates the request with pydantic, runs the handler and
returns a plain dict: the documented success keys, or `{"error": true, "code", "message",
"timestamp"}`. Nothing raises out of `invoke`. The CLI, the Claude Code hooks and the Qt
channels all go through here. The operations are declared in `app.core.operations`; the
core's handlers live in `app.core.handlers` (one module per concern) and those that need
layers above the core (sources, engines, hooks) are attached by the composition root
(`app/container.py`) with `handle()`. This module only routes: validation, errors, the
operations log and the busy count.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from app.core import operations as ops
from app.core import requests as request_models
from app.core.activity import ActivityLog
from app.core.archive import Archive
from app.core.config import Config
from app.core.errors import (
    PuffinError,
    describe_os_error,
)
from app.core.index import MemoryIndex
from app.core.maintenance import MaintenanceLog, MaintenanceManager
from app.core.models import (
    utc_now,
)
from app.core.reader import MemoryReader

# The request models live in app.core.requests; the names are re-exported for callers.
from app.core.requests import (
    Request,
    describe_validation,
)
from app.core.review import ReviewQueue
from app.core.store import MemoryStore
from app.core.writer import MemoryWriter

log = logging.getLogger(__name__)
# One line per operation with its outcome and duration (the operational log, app/logsetup.py).
oplog = logging.getLogger("puffin.ops")

# Every channel the app answers, core and registered ones alike: the operation table's.
CHANNELS = ops.CHANNELS

# A handler answers a validated request with the reply dict (blocking on I/O when it must).
Handler = Callable[[Any], dict[str, Any]]


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
        self.busy = 0
        self.maintenance_running = False
        self.queue_length: Callable[[], int] = lambda: 0
        # Set by the composition root: which engine runs, key origin, budget (for status).
        self.describe_engine: Callable[[], dict[str, Any]] | None = None
        # Set by the CLI or the app to hear about long jobs (done, total, label).
        self.progress: Callable[[int, int, str], None] | None = None
        self._handlers: dict[str, tuple[type[Request], Handler]] = {}
        self.file_facts: dict[str, tuple[tuple[int, int], str | None, bool]] = {}
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

    def invoke(self, channel: str, payload: dict[str, Any] | None = None) -> dict[str, Any]:
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
            return error_response("INVALID_INPUT", describe_validation(channel, exc))
        busy = channel in ops.LONG
        if busy:
            self.busy += 1
        started = time.perf_counter()
        where = _context(payload or {})
        if busy:
            # Long work says when it starts: a log cut short by a crash or a kill still
            # shows what was running.
            oplog.info("op=%s%s started", channel, where)
        try:
            reply = handler(request)
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
                self.busy -= 1
        oplog.info(
            "op=%s%s outcome=ok ms=%.0f", channel, where, (time.perf_counter() - started) * 1000
        )
        if busy and channel != ops.SCAN.name:
            # A success after a failure means the trouble is over (the network is back, the
            # key was fixed): the indicator returns to ready instead of staying red.
            self.last_error = None
        return reply

    def _register_core(self) -> None:
        from app.core.handlers import HANDLER_MODULES
        from app.core.handlers.base import Core

        core: Core = self  # mypy checks that this API gives the handlers what they use
        for module in HANDLER_MODULES:
            for op, handler in module.HANDLERS.items():
                self.handle(op, functools.partial(handler, core))

    def check_maintenance(self) -> dict[str, Any]:
        """Run the maintenance that is due (weekly, monthly), if any; what ran."""
        from app.core.handlers.maintenance import check_maintenance

        return check_maintenance(self)

    def sync_index(self) -> None:
        """Bring the index up to date with the files (a failure is logged, not raised)."""
        try:
            self.index.sync(self.store)
        except Exception:
            log.exception("index sync failed")

    # -- core channels ----------------------------------------------------------------

    # -- branches and versions ----------------------------------------------------------

    # -- review queue -------------------------------------------------------------------

    # -- conflicts ----------------------------------------------------------------------

    # -- items ---------------------------------------------------------------------------


def _context(payload: dict[str, Any]) -> str:
    """The request's where-about for the operations log (never its text or secrets)."""
    parts = []
    for key in ("branch", "branchId", "id", "type", "source", "path"):
        value = payload.get(key)
        if isinstance(value, str) and value:
            parts.append(f" {key}={value[:120]!r}")
    return "".join(parts)
