"""The composition root: reads config once and builds every object the API needs.

Nothing else constructs stores, engines or indexes. The engine is built lazily (on first
use), so commands that never think — `status`, `branch show`, fast `retrieve` — do not pay
for importing the Anthropic SDK.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from app.core.activity import ActivityLog
from app.core.api import Empty, MemoryApi
from app.core.config import Config, load_config
from app.core.engine import Candidate, DeepAnswer, Engine
from app.core.index import MemoryIndex
from app.core.maintenance import MaintenanceLog, MaintenanceManager
from app.core.models import BranchMemory, EvolutionResult, ExtractionResult, MemoryItem
from app.core.reader import MemoryReader
from app.core.review import ReviewQueue
from app.core.store import MemoryStore, default_home
from app.core.writer import MemoryWriter

log = logging.getLogger(__name__)


class LazyEngine:
    """Builds the configured engine on first use and delegates to it."""

    def __init__(self, config: Config, home: Path, override: str | None,
                 http_client: object | None) -> None:
        self._config = config
        self._home = home
        self._override = override
        self._http_client = http_client
        self._engine: Engine | None = None
        self.name = override or config.engine

    def get(self) -> Engine:
        """The real engine (built now if needed)."""
        if self._engine is None:
            from app.engines.select import build_engine

            self._engine = build_engine(
                self._config, self._home, override=self._override,
                http_client=self._http_client,
            )
            self.name = self._engine.name
        return self._engine

    @property
    def status_note(self) -> str | None:
        """The engine's own note (e.g. budget reached), if it has been built."""
        return getattr(self._engine, "status_note", None) if self._engine else None

    async def extract(self, conversation: str, *, source: str) -> ExtractionResult:
        return await self.get().extract(conversation, source=source)

    async def evolve(
        self, current: BranchMemory | None, items: list[MemoryItem], *, branch_id: str
    ) -> EvolutionResult:
        return await self.get().evolve(current, items, branch_id=branch_id)

    async def consolidate(self, memory: BranchMemory) -> EvolutionResult:
        return await self.get().consolidate(memory)

    async def deep_retrieve(self, query: str, candidates: list[Candidate]) -> DeepAnswer:
        return await self.get().deep_retrieve(query, candidates)


def resolve_home(home: Path | str | None) -> Path:
    """`--home`, else `PUFFIN_MEMORY_HOME`, else `~/.puffin/memory`."""
    return Path(home).expanduser() if home else default_home()


def build_api(
    home: Path | str | None = None,
    *,
    engine_override: str | None = None,
    http_client: object | None = None,
) -> MemoryApi:
    """Build the whole core for one memory home."""
    from app.engines.offline import OfflineEngine

    home_path = resolve_home(home)
    probe = MemoryStore(home_path)
    probe.ensure()
    config, config_warning = load_config(probe.config_path)
    store = MemoryStore(home_path, versions_keep=config.versions_keep)
    index = MemoryIndex(store.index_path)
    merger = OfflineEngine(config)
    engine: Engine = (
        merger if (engine_override or config.engine) == "offline"
        else LazyEngine(config, home_path, engine_override, http_client)
    )
    review = ReviewQueue(store.review_queue_path)
    activity = ActivityLog(store.activity_path)
    maintenance_log = MaintenanceLog(store.maintenance_log_path)
    writer = MemoryWriter(store, index, engine, merger, config, review, maintenance_log, activity)
    reader = MemoryReader(store, index, engine, config)
    maintenance = MaintenanceManager(
        store, index, engine, merger, maintenance_log, section_cap=config.section_cap
    )
    api = MemoryApi(
        store=store, index=index, writer=writer, reader=reader, maintenance=maintenance,
        review=review, activity=activity, maintenance_log=maintenance_log, config=config,
        engine_name=engine.name, warnings=[config_warning] if config_warning else [],
    )
    if isinstance(engine, LazyEngine):
        api.status_notes.append(lambda: engine.status_note)
    _register_usage(api, store)
    _register_sources(api, store, config)
    return api


def _register_usage(api: MemoryApi, store: MemoryStore) -> None:
    async def usage(_req: Any) -> dict[str, Any]:
        from app.core.usage import UsageLedger

        ledger = UsageLedger(store.usage_path)
        return {"today": ledger.today(), "month": ledger.month()}

    api.register("memory:usage", Empty, usage)


def _register_sources(api: MemoryApi, store: MemoryStore, config: Config) -> None:
    async def sources(_req: Any) -> dict[str, Any]:
        from app.sources.scan import sources_report

        return sources_report(config.sources, store.home)

    api.register("memory:sources", Empty, sources)
