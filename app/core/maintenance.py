"""Maintenance (seed 001 section 6): weekly consolidation, monthly validation and re-index.

There is no scheduler: `check_and_run()` runs on start-up whatever is due (7 days for weekly,
30 for monthly) and records when it ran in `maintenance-log.json`. Consolidation goes through
the engine and the same guard as any rewrite; validation only reports, it never deletes a
file a person may want to repair by hand.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from app.core.archive import Archive
from app.core.atomic import move_aside, read_json, write_json
from app.core.engine import Engine
from app.core.errors import MaintenanceFailed, PuffinError, StorageError
from app.core.format import parse, render, validate
from app.core.guard import check_evolution
from app.core.index import MemoryIndex
from app.core.models import BranchMemory, Category, EvolutionResult, MemoryItem, utc_now
from app.core.store import MemoryStore

log = logging.getLogger(__name__)
WEEK = timedelta(days=7)
MONTH = timedelta(days=30)
MaintenanceType = Literal["weekly", "monthly", "full"]


def _digest(data: bytes) -> str:
    import hashlib  # deferred: the hook path imports this module

    return hashlib.sha256(data).hexdigest()[:32]


def _iso(value: datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_iso(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


class MaintenanceLog:
    """`maintenance-log.json`: lastThreadProcessed, lastWeeklyConsolidation, lastMonthlyReindex."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.warning: str | None = None
        # The latest memorization, written after every thread: a file of its own, of constant
        # size, so a scan does not rewrite the log (which grows with the branches) per thread.
        self.thread_path = path.with_name(f"{path.stem}.last-thread.json")

    def read(self) -> dict[str, Any]:
        """The log (empty when missing; a broken file is moved aside and reported)."""
        try:
            data = read_json(self.path, default={})
        except StorageError as exc:
            moved = move_aside(self.path)
            self.warning = f"{exc.message}; moved to {moved.name}"
            data = {}
        data = data if isinstance(data, dict) else {}
        try:
            latest = read_json(self.thread_path, default=None)
        except StorageError:
            latest = None  # torn or damaged: the next thread rewrites it
        if isinstance(latest, dict):
            data["lastThreadProcessed"] = latest
        return data

    def _update(self, **fields: Any) -> None:
        from filelock import FileLock  # deferred: costly import, CLI start-up matters

        self.path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.path) + ".lock", timeout=30):
            data = self.read()
            data.update(fields)
            write_json(self.path, data, durable=False)

    def thread_processed(self, branch: str) -> None:
        """Record the latest memorization (one small atomic write; the last writer wins)."""
        entry = {"branchId": branch, "timestamp": _iso(utc_now())}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_json(self.thread_path, entry, durable=False)

    def ran(self, kind: MaintenanceType) -> None:
        """Record a maintenance run."""
        now = _iso(utc_now())
        if kind in ("weekly", "full"):
            self._update(lastWeeklyConsolidation=now)
        if kind in ("monthly", "full"):
            self._update(lastMonthlyReindex=now)

    def consolidated(self, digests: dict[str, str]) -> None:
        """Record each branch's file digest after consolidation (one write per run)."""
        if not digests:
            return
        known = self.read().get("consolidated")
        merged = {**(known if isinstance(known, dict) else {}), **digests}
        self._update(consolidated=merged)

    def consolidated_digest(self, branch: str) -> str | None:
        """The digest the branch file had when consolidation last left it."""
        known = self.read().get("consolidated")
        value = known.get(branch) if isinstance(known, dict) else None
        return value if isinstance(value, str) else None

    def last(self, key: str) -> datetime | None:
        """A recorded timestamp."""
        return _parse_iso(self.read().get(key))

    def last_memorized(self) -> str | None:
        """When a thread was last memorized."""
        entry = self.read().get("lastThreadProcessed")
        return entry.get("timestamp") if isinstance(entry, dict) else None

    def next_maintenance(self) -> str:
        """When weekly consolidation is next due (now if never run)."""
        last = self.last("lastWeeklyConsolidation")
        return _iso(last + WEEK) if last else _iso(utc_now())

    def due(self, now: datetime | None = None) -> list[MaintenanceType]:
        """What check_and_run would run now."""
        now = now or utc_now()
        due: list[MaintenanceType] = []
        weekly = self.last("lastWeeklyConsolidation")
        monthly = self.last("lastMonthlyReindex")
        if monthly is None or now - monthly >= MONTH:
            due.append("monthly")
        if weekly is None or now - weekly >= WEEK:
            due.append("weekly")
        return due


class MaintenanceManager:
    """Runs weekly / monthly / full maintenance over every branch."""

    def __init__(
        self,
        store: MemoryStore,
        index: MemoryIndex,
        engine: Engine,
        merger: Engine,
        log_file: MaintenanceLog,
        *,
        section_cap: int = 50,
    ) -> None:
        self.section_cap = section_cap
        self.store = store
        self.archive = Archive(store.home)
        self.index = index
        self.engine = engine
        self.merger = merger
        self.log = log_file

    def run(self, kind: MaintenanceType) -> dict[str, Any]:
        """Run one maintenance type and record it; returns the counts."""
        started = time.perf_counter()
        results: dict[str, Any] = {}
        try:
            if kind in ("weekly", "full"):
                results.update(self.run_weekly())
            if kind in ("monthly", "full"):
                results.update(self.run_monthly())
        except PuffinError as exc:
            raise MaintenanceFailed(f"{kind} maintenance failed: {exc.message}") from exc
        except Exception as exc:
            log.exception("maintenance crashed")
            raise MaintenanceFailed(f"{kind} maintenance failed: {exc}") from exc
        self.log.ran(kind)
        results["durationMs"] = round((time.perf_counter() - started) * 1000, 1)
        return results

    def check_and_run(self) -> dict[str, Any]:
        """On start-up: run what is due (monthly first, then weekly)."""
        ran: dict[str, Any] = {}
        for kind in self.log.due():
            ran[kind] = self.run(kind)
        return ran

    def run_weekly(self) -> dict[str, Any]:
        """Consolidate every branch: merge duplicates, cap sections, refresh summaries."""
        consolidated = merged = pruned = unchanged = 0
        skipped: list[dict[str, str]] = []
        settled: dict[str, str] = {}
        for branch in self.store.list_branches():
            data = self.store.read_bytes(branch)
            if data is None:
                continue
            digest = _digest(data)
            if self.log.consolidated_digest(branch) == digest:
                # Nothing changed since consolidation last left this file: no engine call.
                unchanged += 1
                continue
            text = data.decode("utf-8", "replace")
            if validate(text):
                skipped.append({"branch": branch, "reason": "file does not validate"})
                continue
            current = parse(text, branch)
            current.branch_id = branch
            result = self.engine.consolidate(current)
            problems = self._check(current, result)
            if problems and self.engine is not self.merger:
                result = self.merger.consolidate(current)
                problems = self._check(current, result)
            if problems:
                skipped.append({"branch": branch, "reason": "; ".join(problems[:2])})
                continue
            new_text = render(result.memory)
            if new_text == text or validate(new_text):
                settled[branch] = digest
                continue
            # Archived before the write: a crash in between leaves an item in both places,
            # never in neither.
            archived = self.archive.add(branch, self._departures(current, result))
            if self.store.write_if_unchanged(branch, data, new_text):
                settled[branch] = _digest(new_text.encode("utf-8"))
                consolidated += 1
                merged += result.stats.get("merged", 0)
                pruned += result.stats.get("pruned", 0)
                try:
                    self.index.update_branch(branch, result.memory, self.store.signature(branch))
                except Exception:
                    log.exception("index update failed for %s", branch)
            else:
                self.archive.remove(branch, archived)
                skipped.append({"branch": branch, "reason": "changed during maintenance"})
        self.log.consolidated(settled)
        return {
            "branchesConsolidated": consolidated,
            "branchesUnchanged": unchanged,
            "itemsMerged": merged,
            "itemsPruned": pruned,
            "skipped": skipped,
        }

    def _departures(
        self, current: BranchMemory, result: EvolutionResult
    ) -> list[tuple[MemoryItem, str]]:
        """Items of `current` the consolidation took out, each with the reason."""
        staying = {item.id for item in result.memory.all_items()}
        pruned = set(result.notes[: int(result.stats.get("pruned", 0))])
        gone: list[tuple[MemoryItem, str]] = []
        for item in current.all_items():
            if item.id in staying:
                continue
            if item.id in pruned:
                reason = (
                    f"pruned by weekly maintenance: its section held more than "
                    f"{self.section_cap} items"
                )
            else:
                reason = "merged into a near-duplicate by weekly maintenance"
            gone.append((item, reason))
        return gone

    def _check(self, current: BranchMemory, result: EvolutionResult) -> list[str]:
        """Guard a consolidation: only items pruned by the section cap may go (to versions)."""
        named = set(result.notes)
        allowed = {
            item.id
            for cat in Category
            if len(current.items[cat]) > self.section_cap
            for item in current.items[cat]
            if item.id in named and not item.pinned
        }
        return check_evolution(current, result.memory, [], allowed_removals=allowed)

    def run_monthly(self) -> dict[str, Any]:
        """Validate every file (report only) and rebuild the index."""
        valid = 0
        invalid: list[dict[str, Any]] = []
        for branch in self.store.list_branches():
            text = self.store.read_text(branch) or ""
            problems = validate(text)
            if problems:
                invalid.append({"branch": branch, "problems": [p.message for p in problems]})
            else:
                valid += 1
        self.index.rebuild(self.store)
        return {
            "filesValid": valid,
            "filesInvalid": len(invalid),
            "invalid": invalid,
            "indexRebuilt": True,
        }
