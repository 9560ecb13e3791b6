"""What a handler may use of the API: the core's parts and a little shared state.

A `Protocol`, so the handler modules depend on this description and not on `MemoryApi`
(which imports them to attach them): no import circle, and a handler's needs are visible.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from app.core.activity import ActivityLog
from app.core.archive import Archive
from app.core.config import Config
from app.core.index import MemoryIndex
from app.core.maintenance import MaintenanceLog, MaintenanceManager
from app.core.reader import MemoryReader
from app.core.review import ReviewQueue
from app.core.store import MemoryStore
from app.core.writer import MemoryWriter


class Core(Protocol):
    """The parts of `MemoryApi` the handlers use."""

    store: MemoryStore
    index: MemoryIndex
    writer: MemoryWriter
    reader: MemoryReader
    maintenance: MaintenanceManager
    review: ReviewQueue
    archive: Archive
    activity: ActivityLog
    maintenance_log: MaintenanceLog
    config: Config
    engine_name: str
    warnings: list[str]
    status_notes: list[Callable[[], str | None]]
    last_error: str | None
    busy: int
    maintenance_running: bool
    file_facts: dict[str, tuple[tuple[int, int], str | None, bool]]
    queue_length: Callable[[], int]
    describe_engine: Callable[[], dict[str, Any]] | None

    def sync_index(self) -> None:
        """Bring the index up to date with the files."""

    def channels(self) -> list[str]:
        """Channels that have a handler."""

    def invoke(self, channel: str, payload: dict[str, Any] | None = None) -> dict[str, Any]:
        """Answer one request."""


# A handler answers from the core and the validated request; it may block on files, SQLite
# or an engine's network call (the core is synchronous and runs off the GUI thread).
Handler = Callable[[Core, Any], dict[str, Any]]
