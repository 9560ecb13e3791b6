"""The composition root: reads config once and builds every object the API needs.

Nothing else constructs stores, engines or indexes. The engine is built lazily (on first
use), so commands that never think — `status`, `branch show`, fast `retrieve` — do not pay
for importing the Anthropic SDK.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from app.core import operations as ops
from app.core.activity import ActivityLog
from app.core.api import MemoryApi
from app.core.atomic import sweep_temp_files
from app.core.config import Config, load_config
from app.core.engine import Candidate, DeepAnswer, Engine
from app.core.errors import InvalidInput, NotFound, PuffinError, StorageError
from app.core.index import MemoryIndex
from app.core.maintenance import MaintenanceLog, MaintenanceManager
from app.core.models import BranchMemory, EvolutionResult, ExtractionResult, MemoryItem
from app.core.paths import resolve_home
from app.core.reader import MemoryReader
from app.core.requests import ImproveRequest, KeyRequest, ProvenanceRequest, ScanRequest
from app.core.review import ReviewQueue
from app.core.store import MemoryStore
from app.core.writer import MemoryWriter

log = logging.getLogger(__name__)


class LazyEngine:
    """Builds the configured engine on first use and delegates to it."""

    def __init__(
        self, config: Config, home: Path, override: str | None, http_client: object | None
    ) -> None:
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
                self._config,
                self._home,
                override=self._override,
                http_client=self._http_client,
            )
            self.name = self._engine.name
        return self._engine

    @property
    def status_note(self) -> str | None:
        """The engine's own note (e.g. budget reached), if it has been built."""
        return getattr(self._engine, "status_note", None) if self._engine else None

    def extract(self, conversation: str, *, source: str) -> ExtractionResult:
        """The engine's extraction (the engine is built on first use)."""
        return self.get().extract(conversation, source=source)

    def evolve(
        self, current: BranchMemory | None, items: list[MemoryItem], *, branch_id: str
    ) -> EvolutionResult:
        """The engine's evolution of a branch with new items."""
        return self.get().evolve(current, items, branch_id=branch_id)

    def consolidate(self, memory: BranchMemory) -> EvolutionResult:
        """The engine's consolidation of one branch."""
        return self.get().consolidate(memory)

    def deep_retrieve(self, query: str, candidates: list[Candidate]) -> DeepAnswer:
        """The engine's deep retrieval over candidates."""
        return self.get().deep_retrieve(query, candidates)


def _vector_progress(api: MemoryApi) -> Callable[[int, int], None] | None:
    """Report the vector backfill as scan progress ("Preparing semantic search")."""
    report = api.progress
    if report is None:
        return None

    def progress(done: int, total: int) -> None:
        report(done, total, f"Preparing semantic search: {done} of {total} items")

    return progress


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
    # Leftovers of writes a crash interrupted (repair also sweeps the version folders).
    sweep_temp_files([home_path, probe.branches_dir, home_path / "archive"])
    probe.migrate_file_names()
    store = MemoryStore(home_path, versions_keep=config.versions_keep)
    from app.core import embeddings  # cheap: numpy and the model load on first use

    embeddings.configure(config.embedding_model_dir or None)
    index = MemoryIndex(store.index_path)
    merger = OfflineEngine(config)
    engine: Engine = (
        merger
        if (engine_override or config.engine) == "offline"
        else LazyEngine(config, home_path, engine_override, http_client)
    )
    review = ReviewQueue(store.review_queue_path)
    activity = ActivityLog(store.activity_path)
    maintenance_log = MaintenanceLog(store.maintenance_log_path)

    def settle(
        memory: BranchMemory, items: list[MemoryItem], pending: Sequence[MemoryItem]
    ) -> tuple[BranchMemory, list[str]]:
        from app.engines.offline.evolve import settle_review

        return settle_review(memory, items, pending, config=config)

    def in_force(
        current: BranchMemory | None,
        held: Sequence[MemoryItem],
        committing: Sequence[MemoryItem],
    ) -> list[MemoryItem]:
        from app.engines.offline.evolve import replaces_in_force

        return replaces_in_force(current, held, config=config, committing=committing)

    def transcript(text: str) -> tuple[str, date | None] | None:
        from app.sources.transcript_text import rendered_transcript

        return rendered_transcript(text)

    writer = MemoryWriter(
        store,
        index,
        engine,
        merger,
        config,
        review,
        maintenance_log,
        activity,
        settle=settle,
        in_force=in_force,
        transcript=transcript,
    )
    reader = MemoryReader(store, index, engine, config, semantic=config.semantic_search)
    maintenance = MaintenanceManager(
        store, index, engine, merger, maintenance_log, section_cap=config.section_cap
    )
    api = MemoryApi(
        store=store,
        index=index,
        writer=writer,
        reader=reader,
        maintenance=maintenance,
        review=review,
        activity=activity,
        maintenance_log=maintenance_log,
        config=config,
        engine_name=engine.name,
        warnings=[config_warning] if config_warning else [],
    )
    if isinstance(engine, LazyEngine):
        api.status_notes.append(lambda: engine.status_note)
    _register_usage(api, store)
    _register_sources(api, store, config, engine)
    _register_auth(api)

    def describe() -> dict[str, Any]:
        from app.engines.select import describe_engine

        info = describe_engine(config, home_path)
        if (engine_override or config.engine) == "offline":
            info["engine"] = "offline"
        return info

    api.describe_engine = describe
    from app.integrations.channels import register_hook_channels

    register_hook_channels(api)
    return api


def _register_auth(api: MemoryApi) -> None:
    def status(req: Any) -> dict[str, Any]:
        from app.core.keys import auth_status

        return auth_status()

    def set_key(req: KeyRequest) -> dict[str, Any]:
        from app.core.keys import auth_status, set_key

        set_key(req.key.strip())
        return {"success": True, **auth_status()}

    def test_key(req: Any) -> dict[str, Any]:
        from app.core.keys import find_key

        key, origin = find_key()
        if key is None:
            return {"ok": False, "message": f"No API key: {origin}."}
        import anthropic

        from app.engines.claude.caller import describe_api_error

        client = anthropic.Anthropic(api_key=key, max_retries=1, timeout=20.0)
        try:
            client.models.list(limit=1)
        except anthropic.APIError as exc:
            message, _ = describe_api_error(exc, model="models.list", timeout_s=20.0, retries=1)
            return {"ok": False, "message": message}
        finally:
            client.close()
        return {"ok": True, "message": f"The key works (from {origin})."}

    api.handle(ops.AUTH_STATUS, status)
    api.handle(ops.AUTH_SET, set_key)
    api.handle(ops.AUTH_TEST, test_key)


def _register_usage(api: MemoryApi, store: MemoryStore) -> None:
    def usage(req: Any) -> dict[str, Any]:
        from app.core.usage import UsageLedger

        ledger = UsageLedger(store.usage_path)
        return {"today": ledger.today(), "month": ledger.month()}

    api.handle(ops.USAGE, usage)


def _expand(value: str) -> Path:
    return Path(value).expanduser()


def _parse_since(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise InvalidInput(f"--since {value!r} is not a date (use YYYY-MM-DD).") from exc
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


Memorize = Callable[[str, str, str], dict[str, Any]]
BatchExtract = Callable[[list[tuple[str, str]]], list[Any]]
# At most this many threads of a branch are integrated by one change-list call.
_TOGETHER = 8


def _backlog_extractor(engine: Engine, config: Config, pending: int) -> BatchExtract | None:
    """How a backlog of several threads is extracted when an LLM engine is configured.

    With `use_batches` every pending thread goes to the Message Batches API in one batch
    (half price, answers later); otherwise the threads of each branch go to the grouped
    extraction (several short threads per call). The offline engine, or a single thread,
    takes the normal per-thread path.
    """
    if pending < 2 or not isinstance(engine, LazyEngine):
        return None
    wrapper = engine.get()
    # The LLM-with-fallback wrapper, not the bare engine: a failed call then goes offline
    # and counts toward the circuit breaker like any other call.
    if getattr(wrapper, "claude", None) is None:
        return None
    if config.use_batches:
        extract_many = getattr(wrapper, "extract_many", None)
        return extract_many if callable(extract_many) else None
    extract_group = getattr(wrapper, "extract_group", None)
    if not callable(extract_group):
        return None

    def per_branch(collected: list[tuple[str, str]]) -> list[Any]:
        return list(extract_group(collected))

    return per_branch


def _combined(results: list[ExtractionResult]) -> ExtractionResult:
    """The extractions of several threads of one branch as one (each item keeps its source)."""
    notes = list(dict.fromkeys(n for r in results for n in r.notes))
    return ExtractionResult(
        items=[i for r in results for i in r.items],
        no_content_to_extract=all(r.no_content_to_extract for r in results),
        engine=results[0].engine,
        notes=notes,
    )


def _conversation_days(planned: list[Any]) -> dict[str, str]:
    """Each planned thread's ref -> the day (UTC, ISO) its conversation last had a message:
    what its items are dated by (`conversationDate`), not the day the scan read it."""
    return {p.thread.ref: p.thread.ended.astimezone(UTC).date().isoformat() for p in planned}


def _memorize_request(text: str, branch: str, ref: str, days: dict[str, str]) -> dict[str, str]:
    request = {"conversationText": text, "branchId": branch, "source": ref}
    if ref in days:
        request["conversationDate"] = days[ref]
    return request


def _prepare_backlog(
    planned: list[Any],
    ledger: Any,
    memorize_pending: Any,
    extract: BatchExtract,
    api: MemoryApi,
    *,
    per_branch: bool,
) -> Memorize:
    """Extract a backlog first (one batch, or grouped calls per branch), then memorize it.

    Pass one only collects the rendered, redacted text of each pending thread (replying
    "deferred", so nothing is marked in the ledger); the extractor then reads them all; pass
    two (the caller's) integrates the threads of each branch together: one evolution (one
    change-list call with an LLM engine) for up to `_TOGETHER` threads, where one per thread
    would repeat the branch's relevant items each time. Each thread still gets its own reply,
    and is marked in the ledger only when the write that holds its items succeeded.
    """
    collected: list[tuple[str, str, str]] = []

    def collect(text: str, branch: str, ref: str) -> dict[str, Any]:
        collected.append((text, branch, ref))
        return {"error": True, "code": "DEFERRED"}

    memorize_pending(planned, ledger, collect)
    outcomes: dict[tuple[str, str], Any] = {}
    if per_branch:
        branches: dict[str, list[tuple[str, str]]] = {}
        for text, branch, ref in collected:
            branches.setdefault(branch, []).append((text, ref))
        for branch, threads in branches.items():
            found = extract(threads)
            outcomes.update({(branch, ref): o for (_t, ref), o in zip(threads, found, strict=True)})
    else:
        found = extract([(text, ref) for text, _branch, ref in collected])
        outcomes = {(branch, ref): o for (_t, branch, ref), o in zip(collected, found, strict=True)}
    # Threads integrated together: same branch, same engine label (a thread that went
    # offline is not reported as Claude's), in order, at most `_TOGETHER` at a time.
    together: dict[tuple[str, str], list[str]] = {}
    groups: dict[tuple[str, str], list[str]] = {}
    for _text, branch, ref in collected:
        outcome = outcomes.get((branch, ref))
        if not isinstance(outcome, ExtractionResult):
            continue
        members = groups.setdefault((branch, outcome.engine), [])
        if len(members) >= _TOGETHER:
            members = groups[(branch, outcome.engine)] = []
        members.append(ref)
        together[(branch, ref)] = members
    applied: dict[tuple[str, str], dict[str, Any]] = {}

    texts = {(branch, ref): text for text, branch, ref in collected}
    days = _conversation_days(planned)

    def integrate(branch: str, members: list[str]) -> dict[str, Any]:
        results = [outcomes[(branch, ref)] for ref in members]
        try:
            reply = api.writer.apply_extraction(
                _combined(results),
                branch,
                texts={ref: texts[(branch, ref)] for ref in members},
                dates={ref: date.fromisoformat(days[ref]) for ref in members if ref in days},
            )
        except PuffinError as exc:
            return {"error": True, "code": exc.code, "message": exc.message}
        if len(members) > 1:
            reply["memorizedTogether"] = list(members)
            reply["notes"] = [
                *reply["notes"],
                f"{len(members)} threads of this branch integrated in one step",
            ]
        return reply

    def apply(text: str, branch: str, ref: str) -> dict[str, Any]:
        outcome = outcomes.get((branch, ref))
        members = together.get((branch, ref))
        if members is not None:
            first = members[0]
            if (branch, first) not in applied:
                applied[(branch, first)] = integrate(branch, members)
            reply = applied[(branch, first)]
            if ref == first or "error" in reply:
                return reply
            # The items of this thread were written by the first thread's step.
            return {
                "branch": branch,
                "itemsExtracted": 0,
                "queuedForReview": 0,
                "engine": reply.get("engine"),
                "path": reply.get("path"),
                "notes": [f"integrated together with {first}"],
                "memorizedTogether": list(members),
            }
        if isinstance(outcome, PuffinError):
            return {"error": True, "code": outcome.code, "message": outcome.message}
        return api.invoke(ops.MEMORIZE.name, _memorize_request(text, branch, ref, days))

    return apply


def _register_sources(api: MemoryApi, store: MemoryStore, config: Config, engine: Engine) -> None:
    def sources(req: Any) -> dict[str, Any]:
        from app.sources.scan import sources_report

        return sources_report(config.sources)

    # Transcripts fully memorized, with the file signatures they had: the app scans every
    # few minutes, and re-reading an unchanged history each time would cost seconds.
    settled: dict[tuple[str, ...], tuple[tuple[int, int], ...]] = {}

    def scan(req: ScanRequest) -> dict[str, Any]:
        from filelock import FileLock, Timeout

        from app.sources.ledger import Ledger
        from app.sources.scan import (
            describe_scan,
            discover,
            dry_run_report,
            memorize_pending,
            plan,
            settled_transcripts,
        )

        since = _parse_since(req.since)
        path = _expand(req.path) if req.path else None
        if path is not None and not path.exists():
            raise InvalidInput(f"No such file or folder: {path}")
        lock = FileLock(str(store.home / ".scan.lock"))
        try:
            lock.acquire(timeout=0)
        except Timeout as exc:
            raise StorageError(
                "Another scan is running (in the app or another terminal); try again when it "
                "finishes."
            ) from exc
        try:
            discovery = discover(
                config.sources,
                source=req.source,
                path=path,
                since=since,
                settled=None if req.dry_run else settled,
            )
            ledger = Ledger.open(store.home)
            planned = plan(discovery, ledger, idle_minutes=config.idle_minutes)
            if req.dry_run:
                report = dry_run_report(discovery, planned, include_size=True)
                if ledger.warning:
                    report["errors"].append(ledger.warning)
                return report

            days = _conversation_days(planned)

            def memorize(text: str, branch: str, ref: str) -> dict[str, Any]:
                return api.invoke(ops.MEMORIZE.name, _memorize_request(text, branch, ref, days))

            fallbacks = 0

            def counted(text: str, branch: str, ref: str) -> dict[str, Any]:
                nonlocal fallbacks
                reply = memorize_fn(text, branch, ref)
                # The offline engine stood in for a failed Claude call (API error, open
                # breaker): the thread is memorized, but the user asked for Claude.
                if "offline-fallback" in (reply.get("engine"), reply.get("path")):
                    fallbacks += 1
                return reply

            pending = sum(1 for p in planned if p.complete and not p.processed)
            memorize_fn: Memorize = memorize
            backlog = _backlog_extractor(engine, config, pending)
            if backlog is not None:
                memorize_fn = _prepare_backlog(
                    planned,
                    ledger,
                    memorize_pending,
                    backlog,
                    api,
                    per_branch=not config.use_batches,
                )
            result = memorize_pending(planned, ledger, counted, progress=api.progress)
            # Items get their vectors in the scan's time, not a query's (also items written
            # before semantic search existed, once).
            api.reader.backfill_vectors(_vector_progress(api))
            settled.update(settled_transcripts(discovery, planned, ledger))
        finally:
            lock.release()
        result.update(
            {
                "threads": len(planned),
                "pending": pending,
                # Threads changed too recently to be finished: read once idle.
                "inProgress": sum(1 for p in planned if not p.complete and not p.processed),
                "idleMinutes": config.idle_minutes,
                "discoveryErrors": list(discovery.errors),
                "fallbacks": fallbacks,
                "skippedRecords": dict(discovery.skipped),
                "unchangedTranscripts": discovery.unchanged,
                "batchRecommended": pending > config.batch_backlog_threshold
                and api.engine_name != "offline",
            }
        )
        # Files that could not be read are named with the threads that failed, so a user
        # reading `errors` sees every problem of the scan in one place.
        result["errors"] = [*discovery.errors, *result["errors"]]
        if ledger.warning:
            result["errors"].append(ledger.warning)
        note = getattr(engine, "status_note", None)
        if fallbacks and note:
            result["engineNote"] = note
        if path is None:
            # Transcripts queued by the Claude Code session-end hook whose own background
            # run failed (or never started) are retried with every full scan.
            from app.integrations.inbox import drain_inbox

            drained = drain_inbox(store.home, api)
            result["inbox"] = {k: drained.get(k) for k in ("records", "memorized", "remaining")}
        result["summary"] = describe_scan(result)
        if result["memorized"] or result["failed"] or result["errors"]:
            # The app scans every few minutes; only scans that did something are news.
            api.activity.record("scan", f"Scan: {result['summary']}")
        return result

    def improve(req: ImproveRequest) -> dict[str, Any]:
        from filelock import FileLock, Timeout

        from app.sources.ledger import Ledger
        from app.sources.scan import improvable, improve_threads

        built = engine.get() if isinstance(engine, LazyEngine) else engine
        if built.name == "offline":
            raise InvalidInput(
                "Improving a branch needs Claude or a local model: add an API key in Settings "
                "(or run `puffin-memory auth set`), or choose the local engine."
            )
        lock = FileLock(str(store.home / ".scan.lock"))
        try:
            lock.acquire(timeout=0)
        except Timeout as exc:
            raise StorageError("A scan is running; improve the branch when it finishes.") from exc
        try:
            ledger = Ledger.open(store.home)
            entries = improvable(ledger, req.branch)
            days = {
                e.ref or e.thread_id: e.conversed.astimezone(UTC).date().isoformat()
                for e in entries
                if e.conversed is not None
            }

            def memorize(text: str, branch: str, ref: str) -> dict[str, Any]:
                return api.invoke(ops.MEMORIZE.name, _memorize_request(text, branch, ref, days))

            result = improve_threads(entries, ledger, memorize, progress=api.progress)
        finally:
            lock.release()
        result["branch"] = req.branch
        if not entries:
            result["summary"] = (
                "Nothing to improve: every thread of this branch was already "
                "read by an LLM, or none was scanned from a transcript."
            )
        else:
            result["summary"] = (
                f"{result['improved']} of {len(entries)} threads re-read by "
                f"{built.name}, {result['itemsAdded']} items found"
                + (f"; {result['failed']} failed" if result["failed"] else "")
            )
            api.activity.record("improve", f"Improve {req.branch}: {result['summary']}")
        return result

    api.handle(ops.SOURCES, sources)
    api.handle(ops.SCAN, scan)
    api.handle(ops.IMPROVE, improve)

    def provenance(req: ProvenanceRequest) -> dict[str, Any]:
        from app.sources.provenance import provenance as trace

        branch = req.branch
        queued = next((e for e in api.writer.review.entries() if e.item.id == req.id), None)
        if queued is not None:
            # A review candidate: not in any file yet, its sources are the queue's.
            return trace(queued.item, queued.branch, store.home)
        if branch is None:
            api.index.sync(store)
            hit = api.index.get(req.id)
            if hit is None:
                raise NotFound(f"No item with id {req.id!r}.")
            branch = hit.branch
        memory = store.read(branch)
        item = memory.find(req.id) if memory is not None else None
        if item is None:
            held = [
                i
                for c in (memory.contradictions if memory else [])
                for i in c.items
                if i.id == req.id
            ]
            if not held:
                raise NotFound(f"Item {req.id!r} is not in {branch!r}.")
            item = held[0]
        return trace(item, branch, store.home)

    api.handle(ops.PROVENANCE, provenance)
