"""The per-branch archive: items that left a branch's memory without the user deleting them.

Owns `<home>/archive/<branch stem>.md`. Weekly maintenance merges near-duplicates and caps
sections; the items it takes out come here with the reason, and so do items that would
otherwise survive only in a version about to be evicted. Nothing the product removes on its
own is therefore gone: the archive is a readable Markdown file (one heading per item), can
be searched (`includeArchive`) and any entry restored to its branch.

Each entry ends with an HTML comment holding the item as JSON (`<` and `>` escaped, so the
comment cannot be closed early); the Markdown above it is for people, the comment is what
is read back, and an entry whose comment is damaged is skipped rather than failing the file.
Items the user forgot are recorded by id only (`<stem>.forgotten.json`): they must not be
brought back into the archive from old versions.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from app.core.atomic import atomic_write_bytes, held_lock
from app.core.errors import NotFound, StorageError
from app.core.models import MemoryItem, normalize_timestamp, utc_now
from app.core.paths import encode_branch

_ENTRY_RE = re.compile(r"<!-- puffin-archive (\{.*?\}) -->")
LOCK_TIMEOUT_S = 30.0


@dataclass(frozen=True, slots=True)
class ArchivedItem:
    """One archived item, when and why it left the branch."""

    item: MemoryItem
    archived: datetime
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """API shape: the item's fields plus `archived` and `reason`."""
        data = self.item.model_dump(mode="json")
        data["archived"] = self.archived.strftime("%Y-%m-%dT%H:%M:%SZ")
        data["reason"] = self.reason
        return data


def _escape(payload: str) -> str:
    # Valid JSON escapes; the comment can then never be closed by item text ("-->").
    return payload.replace("<", "\\u003c").replace(">", "\\u003e")


def _entry_markdown(entry: ArchivedItem) -> str:
    item = entry.item
    stamp = entry.archived.strftime("%Y-%m-%dT%H:%M:%SZ")
    payload = _escape(
        json.dumps(
            {"item": item.model_dump(mode="json"), "archived": stamp, "reason": entry.reason},
            ensure_ascii=False,
            sort_keys=True,
        )
    )
    lines = [
        f"## {item.title} (`{item.id}`)",
        "",
        f"- Category: {item.category.heading}",
        f"- Archived: {stamp} ({entry.reason})",
        f"- {item.content}",
        "",
        f"<!-- puffin-archive {payload} -->",
        "",
    ]
    return "\n".join(lines)


class Archive:
    """Reads and appends to the per-branch archive files under `<home>/archive`."""

    def __init__(self, home: Path) -> None:
        self.folder = home.expanduser() / "archive"
        self.locks = home.expanduser() / ".locks"

    def path(self, branch: str) -> Path:
        """The archive file of a branch (which may not exist)."""
        return self.folder / f"{encode_branch(branch)}.md"

    def _forgotten_path(self, branch: str) -> Path:
        return self.folder / f"{encode_branch(branch)}.forgotten.json"

    @contextlib.contextmanager
    def _lock(self, branch: str) -> Iterator[None]:
        try:
            self.locks.mkdir(parents=True, exist_ok=True)
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(f"Cannot create the archive folder {self.folder}: {exc}") from exc
        with held_lock(
            self.locks / f"{encode_branch(branch)}.archive.lock",
            LOCK_TIMEOUT_S,
            f"The archive of {branch!r} is busy; try again.",
        ):
            yield

    # -- reading -----------------------------------------------------------------------
    def branches(self) -> list[str]:
        """Branches with an archive file (a deleted branch's archive included)."""
        from app.core.paths import decode_stem

        found: list[str] = []
        with contextlib.suppress(OSError):
            for path in sorted(self.folder.glob("*.md")):
                branch = decode_stem(path.stem)
                if branch is None:
                    with contextlib.suppress(OSError, ValueError):
                        head = path.read_text("utf-8").split("\n", 1)[0]
                        branch = head.removeprefix("# Archive: ").strip() or None
                if branch is not None and self.path(branch) == path:
                    found.append(branch)
        return found

    def entries(self, branch: str) -> list[ArchivedItem]:
        """Archived items of a branch, oldest first; damaged entries are skipped."""
        try:
            text = self.path(branch).read_text("utf-8", errors="replace")
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise StorageError(f"Cannot read the archive of {branch!r}: {exc}") from exc
        found: list[ArchivedItem] = []
        for match in _ENTRY_RE.finditer(text):
            with contextlib.suppress(ValueError, TypeError, KeyError):
                data = json.loads(match.group(1))
                found.append(
                    ArchivedItem(
                        item=MemoryItem.model_validate(data["item"]),
                        archived=normalize_timestamp(
                            datetime.fromisoformat(str(data["archived"]).replace("Z", "+00:00"))
                        ),
                        reason=str(data.get("reason", "")),
                    )
                )
        return found

    def ids(self, branch: str) -> set[str]:
        """Ids of the items archived for a branch."""
        return {entry.item.id for entry in self.entries(branch)}

    def forgotten(self, branch: str) -> set[str]:
        """Ids the user forgot on purpose (never to be archived from old versions)."""
        try:
            data = json.loads(self._forgotten_path(branch).read_text("utf-8"))
        except (OSError, ValueError):
            return set()
        return {str(x) for x in data} if isinstance(data, list) else set()

    def get(self, branch: str, item_id: str) -> ArchivedItem:
        """The newest archived entry with this id; NotFound when there is none."""
        for entry in reversed(self.entries(branch)):
            if entry.item.id == item_id:
                return entry
        raise NotFound(f"No archived item {item_id!r} for branch {branch!r}.")

    # -- writing -----------------------------------------------------------------------
    def add(
        self, branch: str, items: Iterable[tuple[MemoryItem, str]], when: datetime | None = None
    ) -> list[str]:
        """Append items with their reasons; returns the ids archived (already there: skipped)."""
        pending = list(items)
        if not pending:
            return []
        moment = normalize_timestamp(when) if when is not None else utc_now()
        with self._lock(branch):
            present = self.ids(branch)
            added = [
                ArchivedItem(item, moment, reason)
                for item, reason in pending
                if item.id not in present
            ]
            if not added:
                return []
            self._write(branch, [*self.entries(branch), *added])
        return [entry.item.id for entry in added]

    def remove(self, branch: str, ids: Iterable[str]) -> int:
        """Take entries out (after a restore, or an archiving that did not happen)."""
        gone = set(ids)
        with self._lock(branch):
            entries = self.entries(branch)
            kept = [e for e in entries if e.item.id not in gone]
            if len(kept) != len(entries):
                self._write(branch, kept)
            return len(entries) - len(kept)

    def mark_forgotten(self, branch: str, ids: Iterable[str]) -> None:
        """Record ids the user removed on purpose; their archived copies go too."""
        new = set(ids)
        if not new:
            return
        with self._lock(branch):
            known = self.forgotten(branch) | new
            atomic_write_bytes(
                self._forgotten_path(branch), json.dumps(sorted(known)).encode("utf-8")
            )
            entries = self.entries(branch)
            kept = [e for e in entries if e.item.id not in new]
            if len(kept) != len(entries):
                self._write(branch, kept)

    def _write(self, branch: str, entries: list[ArchivedItem]) -> None:
        head = (
            f"# Archive: {branch}\n\n"
            "Items that left this branch's memory without being deleted: merged into another "
            "item, pruned by weekly maintenance, or kept from an old version before it was "
            "removed. Restore one from the memory browser or with "
            f"`puffin-memory archive restore {branch} <id>`.\n\n"
        )
        body = "".join(_entry_markdown(e) + "\n" for e in entries)
        atomic_write_bytes(self.path(branch), (head + body).encode("utf-8"))
