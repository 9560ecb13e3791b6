"""The processed-thread ledger: `ledger.json` in the memory home.

One entry per memorized thread (key `<source>:<thread id>`): its branch id, a hash of the
content memorized, how many messages were read, and when. A thread is memorized once; when
it grows later (a resumed session), only messages past the recorded count are memorized and
the entry moves forward. An unreadable ledger is moved aside and reported, never a crash:
the scan then starts from an empty ledger. Saving re-reads the file and keeps the furthest
entry for each thread, so two processes that memorize at once do not undo each other.
"""

from __future__ import annotations

import os
import stat
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.core.atomic import move_aside, read_json, write_json
from app.core.errors import StorageError
from app.core.models import utc_now

LEDGER_FILE = "ledger.json"
VERSION = 1


class LedgerEntry(BaseModel):
    """What was memorized of one thread."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    source: str
    thread_id: str = Field(alias="threadId")
    branch_id: str = Field(alias="branchId")
    ref: str = ""
    hash: str = ""
    messages: int = Field(default=0, ge=0)
    memorized_at: datetime = Field(default_factory=utc_now, alias="memorizedAt")
    path: str = ""
    # The engine path that memorized it ("offline", "anthropic", "offline-fallback", ...):
    # threads an LLM never read can be re-distilled later ("Improve with Claude").
    engine: str = ""
    # When the conversation itself last had a message (not when it was read).
    conversed: datetime | None = None

    def dump(self) -> dict[str, Any]:
        """JSON form with the file's camelCase names."""
        return self.model_dump(mode="json", by_alias=True)


class Ledger:
    """The ledger file, loaded into memory; `record` saves after each change."""

    def __init__(
        self, path: Path, entries: dict[str, LedgerEntry] | None = None, warning: str | None = None
    ) -> None:
        self.path = path
        self.entries: dict[str, LedgerEntry] = entries or {}
        # Set when the file on disk could not be used (it was moved aside).
        self.warning = warning

    @classmethod
    def open(cls, memory_home: Path) -> Ledger:
        """Load `<memory_home>/ledger.json`; a broken file is moved aside and reported."""
        path = memory_home / LEDGER_FILE
        try:
            data = _read(path)
        except StorageError as exc:
            return cls(path, {}, _set_aside(path, exc.message))
        if data is None:
            return cls(path)
        entries, problem = _parse(data)
        if entries is None:
            return cls(path, {}, _set_aside(path, problem or "unexpected content"))
        return cls(path, entries, problem)

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, key: str) -> LedgerEntry | None:
        """The entry for a thread key (`<source>:<thread id>`), if memorized."""
        return self.entries.get(key)

    def record(
        self,
        key: str,
        *,
        source: str,
        thread_id: str,
        branch_id: str,
        ref: str,
        content_hash: str,
        messages: int,
        path: str = "",
        engine: str = "",
        conversed: datetime | None = None,
        save: bool = True,
    ) -> LedgerEntry:
        """Mark a thread memorized up to `messages`; save the ledger unless told not to."""
        entry = LedgerEntry(
            source=source,
            thread_id=thread_id,
            branch_id=branch_id,
            ref=ref,
            hash=content_hash,
            messages=messages,
            memorized_at=utc_now(),
            path=path,
            engine=engine,
            conversed=conversed,
        )
        self.entries[key] = entry
        if save:
            self.save()
        return entry

    def save(self) -> None:
        """Write the ledger atomically, merged with what another process may have written."""
        try:
            on_disk = _read(self.path)
        except StorageError:
            on_disk = None
        if on_disk is not None:
            theirs, _ = _parse(on_disk)
            for key, entry in (theirs or {}).items():
                mine = self.entries.get(key)
                if mine is None or entry.messages > mine.messages:
                    self.entries[key] = entry
        write_json(
            self.path,
            {"version": VERSION, "threads": {k: e.dump() for k, e in self.entries.items()}},
        )


def _read(path: Path) -> object:
    """The ledger's JSON (None when missing); StorageError when it cannot be used.

    A FIFO or folder in its place is refused before any read (reading a FIFO blocks until a
    writer comes), and nesting too deep for the parser is an unusable file, not a crash.
    """
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise StorageError(f"Could not read {path}: {exc}") from exc
    if not stat.S_ISREG(mode):
        raise StorageError(f"{path.name} is not a regular file")
    try:
        return read_json(path, default=None)
    except RecursionError as exc:
        raise StorageError(f"{path.name} is nested too deeply to be a ledger") from exc


def _parse(data: object) -> tuple[dict[str, LedgerEntry] | None, str | None]:
    """Entries from the JSON document; (None, why) when it is not a ledger at all."""
    if not isinstance(data, dict) or not isinstance(data.get("threads"), dict):
        return None, "ledger.json must hold an object with a `threads` object"
    entries: dict[str, LedgerEntry] = {}
    bad = 0
    for key, raw in data["threads"].items():
        try:
            entries[str(key)] = LedgerEntry.model_validate(raw)
        except ValidationError:
            bad += 1
    problem = f"ledger.json: {bad} unreadable entries were ignored" if bad else None
    return entries, problem


def _set_aside(path: Path, why: str) -> str:
    try:
        moved = move_aside(path)
        where = f"moved to {moved.name}"
    except OSError as exc:
        where = f"could not be moved aside ({exc.strerror or exc})"
    return f"ledger.json was unreadable ({why}); {where}; starting from an empty ledger"
