"""The review queue (`review-queue.json`): medium-confidence items waiting for a person.

Seeds 000 and 001 route extracted items by confidence: strong ones are committed, weak ones
dropped, and the ones in between wait here until someone approves (the item then enters the
branch file as a user item, so no rewrite may drop it) or rejects them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ValidationError

from app.core.atomic import move_aside, read_json, write_json
from app.core.errors import NotFound, StorageError
from app.core.models import MemoryItem, utc_now

if TYPE_CHECKING:
    from filelock import BaseFileLock


class ReviewEntry(BaseModel):
    """One queued item and the branch it was extracted for."""

    branch: str
    item: MemoryItem
    queued: str

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
        }


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
