"""MemoryWriter: the write path from a conversation to a branch file.

redact -> engine.extract -> confidence routing (commit / review queue / drop) ->
engine.evolve -> guard -> validate -> compare-and-write -> index. The engine never writes:
its result is checked first, and the file is committed only if nobody changed it while the
engine was thinking (an LLM rewrite can take a minute; holding the lock that long would stall
every other writer). Any failure leaves the branch file exactly as it was.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import date
from typing import Any

from app.core.activity import ActivityLog
from app.core.archive import Archive
from app.core.config import Config
from app.core.engine import Engine
from app.core.errors import ExtractionFailed, InvalidInput, PuffinError, StorageError
from app.core.format import render, restamp
from app.core.guard import check_evolution
from app.core.index import MemoryIndex
from app.core.maintenance import MaintenanceLog
from app.core.models import (
    BranchMemory,
    EvolutionResult,
    ExtractionResult,
    MemoryItem,
    utc_now,
)
from app.core.paths import validate_branch_id
from app.core.redact import MARK as REDACTION_MARK
from app.core.redact import redact
from app.core.review import PER_THREAD, ReviewQueue, excerpt, line_words
from app.core.store import MemoryStore

log = logging.getLogger(__name__)
_WRITE_ATTEMPTS = 3
# (memory after evolve, the items committed, the branch's review candidates) -> (memory with
# the candidates those items replace recorded as superseded, their ids).
Settle = Callable[
    [BranchMemory, list[MemoryItem], Sequence[MemoryItem]], tuple[BranchMemory, list[str]]
]
# (the branch as it is, held candidates, what the same conversation commits) -> the held ones
# that change a choice in force there.
InForce = Callable[
    [BranchMemory | None, Sequence[MemoryItem], Sequence[MemoryItem]], list[MemoryItem]
]


class MemoryWriter:
    """Turns conversations (and approved or hand-given items) into branch file updates."""

    def __init__(
        self,
        store: MemoryStore,
        index: MemoryIndex,
        engine: Engine,
        merger: Engine,
        config: Config,
        review: ReviewQueue,
        maintenance_log: MaintenanceLog,
        activity: ActivityLog,
        *,
        settle: Settle | None = None,
        in_force: InForce | None = None,
        transcript: Callable[[str], tuple[str, date | None] | None] | None = None,
    ) -> None:
        self.store = store
        self.index = index
        self.engine = engine
        # The deterministic offline engine: used for merges that need no thinking (approved
        # review items, manual memories, imports) and as the last resort after a bad rewrite.
        self.merger = merger
        self.config = config
        self.review = review
        self.maintenance_log = maintenance_log
        self.activity = activity
        self.archive = Archive(store.home)
        # Review candidates a new item replaces, recorded as superseded (the offline
        # engine's `settle_review`, given by the container: core does not import engines).
        self.settle = settle
        # Held candidates that change a choice the branch holds ("switch the broker from
        # RabbitMQ to NATS" once a rule names RabbitMQ): committed, not queued (the offline
        # engine's `replaces_in_force`, given by the container).
        self.in_force = in_force
        # A raw agent transcript given as text (JSON lines), rendered as a scan renders it,
        # with the day it ended; None when the text is a conversation already (given by the
        # container: core does not import the readers).
        self.transcript = transcript

    def memorize(
        self, text: str, branch: str, *, source: str = "cli", said: date | None = None
    ) -> dict[str, Any]:
        """Extract from a conversation and integrate what passes the thresholds.

        `said`: the day the conversation took place, when it is not today (a transcript read
        later): its items are dated by it.
        """
        validate_branch_id(branch)
        read = self.transcript(text) if self.transcript is not None else None
        if read is not None:
            text, ended = read
            said = said or ended  # dated by its own messages unless told otherwise
        clean = redact(text)
        if not clean.strip():
            raise InvalidInput("conversationText is empty.")
        try:
            extraction = self.engine.extract(clean, source=source)
        except PuffinError:
            raise
        except Exception as exc:
            log.exception("extraction crashed")
            raise ExtractionFailed(f"Extraction failed: {exc}") from exc
        return self.apply_extraction(
            extraction,
            branch,
            texts={source: clean},
            dates={source: said} if said is not None else None,
        )

    def apply_extraction(
        self,
        extraction: ExtractionResult,
        branch: str,
        *,
        texts: dict[str, str] | None = None,
        dates: Mapping[str, date] | None = None,
    ) -> dict[str, Any]:
        """Route and integrate an extraction (made here or by a batch of many threads).

        `texts` (source -> redacted conversation) gives each review candidate the lines it
        came from; `dates` (source -> the day that conversation took place) dates its items
        by when they were said rather than when they were read.
        """
        validate_branch_id(branch)
        items, refusals = _screened(_dated(extraction.items, dates or {}))
        commit, queue, dropped = self._route(items)
        changes = self._changes_in_force(branch, queue, commit)
        if changes:
            commit.extend(changes)
            queue = [i for i in queue if all(i is not c for c in changes)]
        queue, left_out = _strongest_per_thread(queue)
        # What earlier threads left waiting for review, before this one adds to it: a
        # candidate this conversation replaces is settled, not offered any more.
        pending = [e.item for e in self.review.entries() if e.branch == branch] if commit else []
        secretive = sum(1 for i in dropped if REDACTION_MARK in i.text)
        queued, promoted = (
            self.review.offer(
                branch,
                queue,
                threshold=self.config.duplicate_threshold,
                promote_at=self.config.commit_threshold,
                excerpts=_Excerpts(texts or {}),
            )
            if queue
            else (0, [])
        )
        commit.extend(promoted)
        response: dict[str, Any] = {
            "branch": branch,
            "itemsExtracted": len(commit),
            "categoriesUpdated": sorted({i.category.value for i in commit}),
            "queuedForReview": queued,
            "promotedFromReview": len(promoted),
            "dropped": len(dropped),
            "engine": extraction.engine,
            "path": None,
            # Why a path other than the configured engine's was taken (an API failure, the
            # budget), and other remarks of the engines.
            "notes": [*extraction.notes, *refusals]
            + (
                [
                    f"{secretive} item(s) about a secret value were not kept (the value was "
                    "removed; the rest says nothing without it)"
                ]
                if secretive
                else []
            ),
            # Items refused by the injection screen: never written, never queued.
            "refusedUnsafe": len(refusals),
        }
        if changes:
            response["notes"].append(
                "committed without review, as a change of a choice this branch holds: "
                + "; ".join(i.title for i in changes)
            )
        if left_out:
            response["notes"].append(
                f"{left_out} weaker review candidate(s) left out: a conversation offers at "
                f"most {PER_THREAD} for review"
            )
        self.maintenance_log.thread_processed(branch)
        if not commit:
            self.activity.record(
                "memorize",
                f"Nothing new to remember for {branch}",
                branch=branch,
                queued=queued,
            )
            return response
        result = self.integrate(branch, commit, engine=self.engine, pending=pending)
        response["path"] = result.path
        response["stats"] = result.stats
        response["notes"] += [n for n in result.notes if n not in response["notes"]]
        if result.settled:
            response["settledFromReview"] = len(result.settled)
        self.activity.record(
            "memorize",
            f"Remembered {len(commit)} item(s) for {branch}"
            + (f", {queued} queued for review" if queued else ""),
            branch=branch,
        )
        return response

    def _changes_in_force(
        self, branch: str, held: list[MemoryItem], committing: list[MemoryItem]
    ) -> list[MemoryItem]:
        """The held candidates that change a choice `branch` holds (none without `in_force`).

        A branch that cannot be read promotes nothing: the candidates wait for review, and
        the write that follows reports the problem.
        """
        # (only a change that names what it replaces can be one: no read for the others)
        held = [i for i in held if any(t.startswith("replaces:") for t in i.tags)]
        if self.in_force is None or not held:
            return []
        try:
            current = self.store.read(branch)
        except PuffinError:
            return []
        return self.in_force(current, held, committing)

    def _route(
        self, items: list[MemoryItem]
    ) -> tuple[list[MemoryItem], list[MemoryItem], list[MemoryItem]]:
        commit, queue, dropped = [], [], []
        for item in items:
            if REDACTION_MARK in item.text:
                # A statement whose substance was a secret value ("use this key: ...") says
                # nothing once the value is gone, and a placeholder is still a pointer to a
                # secret: it is not kept, not even for review.
                dropped.append(item)
            elif item.confidence >= self.config.commit_threshold:
                commit.append(item)
            elif item.confidence >= self.config.review_threshold:
                queue.append(item)
            else:
                dropped.append(item)
        return commit, queue, dropped

    def integrate(
        self,
        branch: str,
        items: list[MemoryItem],
        *,
        engine: Engine | None = None,
        pending: list[MemoryItem] | None = None,
    ) -> EvolutionResult:
        """Evolve the branch with `items` and write it, guarded; returns the result used.

        `pending`: the branch's review candidates; those `items` replace are recorded as
        superseded (`settle_review`) and leave the queue once the file is written.
        """
        engine = engine or self.merger
        for _attempt in range(_WRITE_ATTEMPTS):
            data = self.store.read_bytes(branch)
            current = None if data is None else self.store.parse_bytes(branch, data)
            previous = data.decode("utf-8", "replace") if data is not None else None
            result, text = self._evolve_checked(
                engine, current, items, branch, previous, pending or []
            )
            if current is not None and data is not None and _same_but_stamp(current, text, data):
                # Nothing but the header's time stamps would change: no write, no version.
                result.stats["unchanged"] = True
                return result
            # An item the evolution folded into another (a merge) leaves the file: it goes to
            # the archive first, so a crash in between leaves it in both places, never neither.
            archived = self.archive.add(branch, _departures(current, result))
            if self.store.write_if_unchanged(branch, data, text):
                self.store.remember_parsed(branch, text, result.memory)
                self.refresh_index(branch, result.memory, text)
                if result.settled:
                    # (After the write: a failure before it leaves the queue as it was.)
                    self.review.settle(branch, result.settled)
                return result
            if archived:
                self.archive.remove(branch, archived)
        raise StorageError(
            f"Branch {branch!r} kept changing while it was being updated; nothing was written."
        )

    def _evolve_checked(
        self,
        engine: Engine,
        current: BranchMemory | None,
        items: list[MemoryItem],
        branch: str,
        previous: str | None = None,
        pending: list[MemoryItem] | None = None,
    ) -> tuple[EvolutionResult, str]:
        """The engine's result and its rendered file, once the guard has passed both."""
        result = self._settled(engine.evolve(current, items, branch_id=branch), items, pending)
        text = render(result.memory)
        # Settled review candidates are given items too: the guard checks where every item
        # and source of the new file came from.
        given = [*items, *(p for p in pending or [] if p.id in result.settled)]
        problems = check_evolution(current, result.memory, given, rendered=text, previous=previous)
        if not problems:
            return result, text
        log.warning("evolution by %s refused: %s", engine.name, problems)
        if engine is not self.merger:
            fallback = self._settled(
                self.merger.evolve(current, items, branch_id=branch), items, pending
            )
            text = render(fallback.memory)
            given = [*items, *(p for p in pending or [] if p.id in fallback.settled)]
            if not check_evolution(
                current, fallback.memory, given, rendered=text, previous=previous
            ):
                fallback.path = "offline-fallback"
                fallback.notes.append("rewrite refused: " + "; ".join(problems[:3]))
                return fallback, text
        raise ExtractionFailed(
            "The new version of the memory failed its checks ("
            + "; ".join(problems[:3])
            + "); the file was left unchanged."
        )

    def _settled(
        self, result: EvolutionResult, items: list[MemoryItem], pending: list[MemoryItem] | None
    ) -> EvolutionResult:
        """`result` with the review candidates its new items replace recorded as superseded."""
        if not pending or self.settle is None:
            return result
        memory, settled = self.settle(result.memory, items, pending)
        if not settled:
            return result
        stats = {**result.stats, "settled": len(settled)}
        notes = [
            *result.notes,
            f"{len(settled)} review candidate(s) replaced by this conversation left the queue "
            "(kept under Contradictions as superseded)",
        ]
        return result.model_copy(
            update={"memory": memory, "stats": stats, "notes": notes, "settled": settled}
        )

    def refresh_index(
        self, branch: str, memory: BranchMemory | None, text: str | None = None
    ) -> None:
        """Bring the index up to date for one branch (a failure only makes it stale)."""
        try:
            # Under the branch's lock and from the file as it is now: another process may
            # have written since `memory` was made, and indexing the older content with the
            # newer file's signature would hide that writer's items until a rebuild.
            with self.store.lock(branch):
                data = self.store.read_bytes(branch)
                if data is None:
                    self.index.remove_branch(branch)
                    return
                signature = self.store.signature(branch)
                if memory is None or text is None or text.encode("utf-8") != data:
                    memory = self.store.parse_bytes(branch, data)
                self.index.update_branch(branch, memory, signature)
        except Exception:  # the index is derived: the next sync rebuilds it
            log.exception("index update failed for %s", branch)


def _departures(
    current: BranchMemory | None, result: EvolutionResult
) -> list[tuple[MemoryItem, str]]:
    """Items of `current` that `result` no longer holds anywhere, each with the reason."""
    if current is None:
        return []
    staying = {i.id for i in result.memory.all_items()}
    staying |= {i.id for c in result.memory.contradictions for i in c.items}
    return [
        (item, f"merged into a near-duplicate while memorizing ({result.path})")
        for item in current.all_items()
        if item.id not in staying
    ]


def _same_but_stamp(current: BranchMemory, text: str, data: bytes) -> bool:
    """True when `text` (the new memory rendered) is the file's bytes once given the file's
    own timestamps."""
    same = restamp(text, current.last_updated, current.last_extraction)
    return same.encode("utf-8") == data


def _dated(items: Sequence[MemoryItem], dates: Mapping[str, date]) -> list[MemoryItem]:
    """Items dated by the day their conversation took place (never later than today)."""
    if not dates:
        return list(items)
    today = utc_now().date()
    dated: list[MemoryItem] = []
    for item in items:
        said = next((dates[s] for s in item.sources if s in dates), None)
        dated.append(
            item if said is None else item.model_copy(update={"extracted": min(said, today)})
        )
    return dated


def _screened(items: list[MemoryItem]) -> tuple[list[MemoryItem], list[str]]:
    """Items the injection screen lets through, and a note for each one it refused.

    This covers every engine (offline and Claude alike): an item that would make an agent
    run downloaded code, switch off a check, send secrets away or obey new instructions is
    an attack carried by pasted text or tool output, not something the team decided. It is
    refused rather than queued, because repeated candidates in the review queue can be
    promoted into the file without a person looking at them.
    """
    from app.core.screen import screen_text

    kept: list[MemoryItem] = []
    refusals: list[str] = []
    for item in items:
        reasons = screen_text(
            " ".join((item.title, item.content, item.rationale, item.fix, item.root_cause))
        )
        if reasons:
            refusals.append(f"refused {item.title!r}: it {' and '.join(reasons)}")
        else:
            kept.append(item)
    return kept, refusals


def _strongest_per_thread(queue: list[MemoryItem]) -> tuple[list[MemoryItem], int]:
    """At most `PER_THREAD` candidates per conversation, the most confident (file order kept
    among them); also how many were left out."""
    by_thread: dict[str, list[MemoryItem]] = {}
    for item in queue:
        by_thread.setdefault(item.sources[0] if item.sources else "", []).append(item)
    keep: set[int] = set()
    for items in by_thread.values():
        ranked = sorted(items, key=lambda i: -i.confidence)[:PER_THREAD]
        keep.update(id(i) for i in ranked)
    kept = [i for i in queue if id(i) in keep]
    return kept, len(queue) - len(kept)


class _Excerpts:
    """Each review candidate's lines in the conversation it came from (when that text is at
    hand), found when the queue asks: a candidate already queued (the same thread memorized
    again) needs none, and finding them reads every line of the conversation once."""

    def __init__(self, texts: dict[str, str]) -> None:
        self.texts = texts
        self.read: dict[str, list[frozenset[str]]] = {}  # each conversation's lines, once

    def __call__(self, item: MemoryItem) -> str:
        source = next((s for s in item.sources if s in self.texts), "")
        if not self.texts.get(source):
            return ""
        if source not in self.read:
            self.read[source] = line_words(self.texts[source])
        return excerpt(self.texts[source], item, read=self.read[source])
