"""The review queue (`review-queue.json`): medium-confidence items waiting for a person.

Seeds 000 and 001 route extracted items by confidence: strong ones are committed, weak ones
dropped, and the ones in between wait here until someone approves (the item then enters the
branch file as a user item, so no rewrite may drop it) or rejects them. Each entry says why
it waits (`queue_reason`) and shows the lines of the conversation it came from (`excerpt`),
so a person can decide without opening the transcript; a thread offers at most
`PER_THREAD` candidates, the strongest.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ValidationError

from app.core.atomic import move_aside, read_json, write_json
from app.core.errors import NotFound, StorageError
from app.core.models import MemoryItem, utc_now
from app.core.similarity import item_similarity, tokens
from app.core.words import as_written

if TYPE_CHECKING:
    from filelock import BaseFileLock


# A conversation offers at most this many candidates for review: a person reads each one,
# and a thread that yields more is mostly noise below the strongest few.
PER_THREAD = 3
_CONTEXT_LINES = 2
_LINE_CHARS = 400


def excerpt(text: str, item: MemoryItem, *, read: list[frozenset[str]] | None = None) -> str:
    """The lines of `text` around the one sharing most words with the item's statement.

    `read`: the words of each line of `text` (`line_words`), when several items take
    excerpts from one conversation.
    """
    wanted = tokens(f"{item.title} {item.content}")
    lines = text.splitlines()
    if not wanted or not lines:
        return ""
    words = read if read is not None and len(read) == len(lines) else line_words(text)
    best, score = -1, 0.0
    for n, have in enumerate(words):
        if not have:
            continue
        overlap = len(wanted & have) / len(wanted)
        if overlap > score:
            best, score = n, overlap
    if best < 0 or score < 0.3:
        return ""
    start, end = max(0, best - _CONTEXT_LINES), min(len(lines), best + _CONTEXT_LINES + 1)
    return "\n".join(line[:_LINE_CHARS] for line in lines[start:end] if line.strip())


def _excerpt_of(
    excerpts: Mapping[str, str] | Callable[[MemoryItem], str] | None, item: MemoryItem
) -> str:
    if excerpts is None:
        return ""
    if callable(excerpts):
        return excerpts(item)
    return excerpts.get(item.id, "")


def queue_reason(item: MemoryItem, commit_at: float) -> str:
    """Why an item waits for a person instead of entering the memory, in one sentence.

    Read from what the extraction knew: who said it (the speaker tag the engines set), the
    fields a confirmed finding has, and how far the confidence is from committing.
    """
    gap = f"confidence {item.confidence:.2f}, {commit_at:.2f} enters the memory"
    if item.category.value == "bug_patterns" and not (item.root_cause and item.fix):
        return f"A problem without a confirmed cause and fix ({gap})."
    if "source:agent" in item.tags:
        return f"The agent said it and nobody in the conversation confirmed it ({gap})."
    retired = [
        t.removeprefix("replaces:")
        for t in item.tags
        if t.startswith("replaces:")
        and t not in ("replaces:any", "replaces:earlier", "replaces:unnamed")
    ]
    if retired and "source:user" in item.tags:
        # (the writer commits such a change at once when the branch holds what it retires;
        # each name as the statement wrote it, the tag holds it in lower case)
        said = f"{item.title}\n{item.content}"
        retired = [as_written(name, said) for name in retired]
        return (
            f"Reads as a change away from {', '.join(retired)}, which this branch does not "
            f"hold; it may be a task for that session only ({gap})."
        )
    if "source:user" in item.tags:
        return f"Said once, not stated as a rule for the project ({gap})."
    return f"Not stated clearly enough to keep without a check ({gap})."


def line_words(text: str) -> list[frozenset[str]]:
    """The words of each line of `text`, for `excerpt`."""
    return [tokens(line) for line in text.splitlines()]


class ReviewEntry(BaseModel):
    """One queued item, the branch it was extracted for, why it waits and where it is from."""

    branch: str
    item: MemoryItem
    queued: str
    reason: str = ""
    excerpt: str = ""

    def to_dict(self) -> dict[str, object]:
        """API shape."""
        item = self.item
        return {
            "id": item.id,
            "branch": self.branch,
            "category": item.category.value,
            "title": item.title,
            "content": item.content,
            "confidence": item.confidence,
            "source": ", ".join(item.sources),
            "queued": self.queued,
            "sources": list(item.sources),
            "extracted": item.extracted.isoformat(),
            "tags": list(item.tags),
            "reason": self.reason,
            "excerpt": self.excerpt,
        }


def _reinforced(old: MemoryItem, new: MemoryItem) -> MemoryItem:
    base = max(old.confidence, new.confidence)
    sources = [*old.sources, *(x for x in new.sources if x not in old.sources)]
    tags = [*old.tags, *(x for x in new.tags if x not in old.tags)]
    return old.model_copy(
        update={
            "confidence": round(min(0.99, base + (1.0 - base) * 0.25), 2),
            "sources": sources,
            "tags": tags,
            "occurrences": old.occurrences + new.occurrences,
            "extracted": min(old.extracted, new.extracted),
        }
    )


class ReviewQueue:
    """Read-modify-write of the queue file under its own lock."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.warning: str | None = None

    @property
    def _lock(self) -> BaseFileLock:
        from filelock import FileLock  # deferred: costly import, CLI start-up matters

        return FileLock(str(self.path) + ".lock", timeout=30)

    def entries(self) -> list[ReviewEntry]:
        """All queued entries, oldest first."""
        return self._load()

    def add(self, branch: str, items: list[MemoryItem]) -> int:
        """Queue items (an item already queued for the branch is not queued twice)."""
        if not items:
            return 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            entries = self._load()
            known = {(e.branch, e.item.id) for e in entries}
            stamp = utc_now().strftime("%Y-%m-%dT%H:%M:%SZ")
            added = 0
            for item in items:
                if (branch, item.id) in known:
                    continue
                entries.append(ReviewEntry(branch=branch, item=item, queued=stamp))
                known.add((branch, item.id))
                added += 1
            self._save(entries)
        return added

    def offer(
        self,
        branch: str,
        items: list[MemoryItem],
        *,
        threshold: float,
        promote_at: float,
        excerpts: Mapping[str, str] | Callable[[MemoryItem], str] | None = None,
    ) -> tuple[int, list[MemoryItem]]:
        """Queue items, letting repetitions from other threads add up.

        A queued item said again by a different source (another thread) is reinforced
        instead of queued twice; once its confidence reaches `promote_at` it leaves the queue
        and is returned for committing. One medium-confidence remark is a hint; the same
        remark in three threads is knowledge. Returns (newly queued, promoted).

        `excerpts`: each item's lines of its conversation, by item id or as a function of
        the item; a function is called only for the items that enter the queue (finding
        the lines reads the whole conversation). The file is not rewritten when nothing
        changed (the same thread memorized again).
        """
        if not items:
            return 0, []
        self.path.parent.mkdir(parents=True, exist_ok=True)
        promoted: list[MemoryItem] = []
        added = changed = 0
        with self._lock:
            entries = self._load()
            stamp = utc_now().strftime("%Y-%m-%dT%H:%M:%SZ")
            for item in items:
                match = next(
                    (
                        e
                        for e in entries
                        if e.branch == branch
                        and e.item.category is item.category
                        and (
                            e.item.id == item.id
                            or item_similarity(e.item, item, floor=threshold) >= threshold
                        )
                    ),
                    None,
                )
                if match is None:
                    entries.append(
                        ReviewEntry(
                            branch=branch,
                            item=item,
                            queued=stamp,
                            reason=queue_reason(item, promote_at),
                            excerpt=_excerpt_of(excerpts, item),
                        )
                    )
                    added += 1
                    continue
                if set(item.sources) <= set(match.item.sources):
                    continue  # the same thread again: no new evidence
                match.item = _reinforced(match.item, item)
                changed += 1
                if match.item.confidence >= promote_at:
                    entries.remove(match)
                    promoted.append(match.item)
            if added or changed:
                self._save(entries)
        return added, promoted

    def take(self, item_id: str) -> ReviewEntry:
        """Remove and return an entry (approve or reject)."""
        with self._lock:
            entries = self._load()
            for index, entry in enumerate(entries):
                if entry.item.id == item_id:
                    del entries[index]
                    self._save(entries)
                    return entry
        raise NotFound(f"No queued item with id {item_id!r}.")

    def take_many(self, item_ids: list[str]) -> tuple[list[ReviewEntry], list[str]]:
        """Remove and return the entries with these ids in one write; also the ids not queued.

        One read and one write for a whole selection: taking 300 one by one rewrites the
        file 300 times.
        """
        wanted = set(item_ids)
        with self._lock:
            entries = self._load()
            taken = [e for e in entries if e.item.id in wanted]
            if taken:
                self._save([e for e in entries if e.item.id not in wanted])
        found = {e.item.id for e in taken}
        return taken, [i for i in dict.fromkeys(item_ids) if i not in found]

    def settle(self, branch: str, item_ids: list[str]) -> int:
        """Remove a branch's entries that a later thread replaced; returns how many left."""
        wanted = set(item_ids)
        if not wanted:
            return 0
        with self._lock:
            entries = self._load()
            kept = [e for e in entries if not (e.branch == branch and e.item.id in wanted)]
            if len(kept) != len(entries):
                self._save(kept)
        return len(entries) - len(kept)

    def put_back_many(self, entries: list[ReviewEntry]) -> list[ReviewEntry]:
        """Return entries to the queue (undo), skipping any still queued; returns those added."""
        if not entries:
            return []
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            current = self._load()
            known = {(e.branch, e.item.id) for e in current}
            added = []
            for entry in entries:
                if (entry.branch, entry.item.id) not in known:
                    known.add((entry.branch, entry.item.id))
                    added.append(entry)
            if added:
                # Oldest first, as the queue is kept: a returned entry goes back among its
                # neighbours of the same day instead of to the end.
                self._save(sorted([*current, *added], key=lambda e: e.queued))
        return added

    def put_back(self, entry: ReviewEntry) -> None:
        """Return an entry taken for approval whose write failed."""
        with self._lock:
            entries = self._load()
            entries.append(entry)
            self._save(entries)

    def _load(self) -> list[ReviewEntry]:
        try:
            data = read_json(self.path, default=[])
            if not isinstance(data, list):
                raise StorageError("review-queue.json must hold a list")
            return [ReviewEntry.model_validate(e) for e in data]
        except (StorageError, ValidationError) as exc:
            # A damaged queue must not stop memorization: keep the file for a person.
            moved = move_aside(self.path)
            self.warning = f"review-queue.json was unreadable ({exc}); moved to {moved.name}"
            return []

    def _save(self, entries: list[ReviewEntry]) -> None:
        write_json(self.path, [e.model_dump(mode="json") for e in entries])
