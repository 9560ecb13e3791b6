"""Recent activity (`activity.json`): what the app did lately, for the dashboard and CLI.

A short, capped feed of events (memorized a thread, maintenance ran, a write was refused),
stored as JSON lines - one event per line, appended. Recording costs one short read of the
file's tail and one append, whatever the history holds (a scan records after every thread);
under a lock file, so the CLI and the app can both record. Repeating the event of the line
before it (a branch with nothing new, scan after scan) appends that event again with its
count raised, and readers keep only the last line of such a run, so the feed shows one line
with a count, never duplicates. Once the file passes `COMPACT_BYTES` it is rewritten
atomically to its newest `MAX_EVENTS` events. A line cut short by a crash is skipped by
readers and never glued to the next event. A file in the old format (one JSON array) is
read as it is and rewritten as lines on the next record.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from app.core.atomic import atomic_write_text
from app.core.errors import StorageError
from app.core.models import utc_now

MAX_EVENTS = 200
# The feed is rewritten to its newest MAX_EVENTS events once the file is this large (about
# 1,000 events): compaction runs once in several hundred records.
COMPACT_BYTES = 192 * 1024
# How much of the file's end is read to find the last event (events are short lines).
TAIL_BYTES = 16 * 1024
_KEY = ("kind", "message", "branch")


class ActivityLog:
    """Append-only (capped) list of recent events."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def record(self, kind: str, message: str, **extra: Any) -> None:
        """Add an event; never raises (activity is informational)."""
        event = {
            "timestamp": utc_now().strftime("%Y-%m-%dT%H:%M:%SZ"),
            "kind": kind,
            "message": message,
            **extra,
        }
        from filelock import FileLock  # deferred: costly import, CLI start-up matters

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(str(self.path) + ".lock", timeout=5):
                self._record(event)
        except (StorageError, OSError, TimeoutError, ValueError):
            return

    def recent(self, limit: int = 50) -> list[dict[str, Any]]:
        """Newest first."""
        return list(reversed(self._load()))[:limit]

    # -- storage -------------------------------------------------------------------------
    def _record(self, event: dict[str, Any]) -> None:
        tail, size, old_format = self._tail()
        last = _last_event(tail)
        if last is not None and all(last.get(k) == event.get(k) for k in _KEY):
            # The same event again: one line with a count (readers keep the last of a run).
            event = {
                **last,
                "count": int(last.get("count") or 1) + 1,
                "timestamp": event["timestamp"],
            }
        line = json.dumps(event, ensure_ascii=False, default=str) + "\n"
        if old_format or size + len(line) > COMPACT_BYTES:
            events = _collapse([*self._load(), event])[-MAX_EVENTS:]
            text = "".join(json.dumps(e, ensure_ascii=False, default=str) + "\n" for e in events)
            atomic_write_text(self.path, text, durable=False)
            return
        if tail and not tail.endswith(b"\n"):
            line = "\n" + line  # a torn last line stays alone on its line
        fd = os.open(
            self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0), 0o644
        )
        try:
            os.write(fd, line.encode("utf-8"))
        finally:
            os.close(fd)

    def _tail(self) -> tuple[bytes, int, bool]:
        """(the file's last bytes, its size, whether it is the old JSON-array format)."""
        try:
            with open(self.path, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                head = handle.read(1)
                handle.seek(max(0, size - TAIL_BYTES))
                tail = handle.read()
        except FileNotFoundError:
            return b"", 0, False
        return tail, size, head == b"["

    def _load(self) -> list[dict[str, Any]]:
        try:
            data = self.path.read_bytes()
        except OSError:
            return []
        if data.lstrip()[:1] == b"[":
            try:
                old = json.loads(data)
            except ValueError:
                return []
            events = [e for e in old if isinstance(e, dict)] if isinstance(old, list) else []
        else:
            events = [e for e in map(_parse, data.split(b"\n")) if e is not None]
        return _collapse(events)[-MAX_EVENTS:]


def _parse(line: bytes) -> dict[str, Any] | None:
    if not line.strip():
        return None
    try:
        event = json.loads(line)
    except ValueError:
        return None  # a line cut short by a crash
    return event if isinstance(event, dict) else None


def _last_event(tail: bytes) -> dict[str, Any] | None:
    """The last complete event in the file's tail."""
    for line in reversed(tail.split(b"\n")):
        event = _parse(line)
        if event is not None:
            return event
    return None


def _collapse(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A run of the same event keeps only its last line (which carries the run's count)."""
    kept: list[dict[str, Any]] = []
    for event in events:
        if (
            kept
            and all(kept[-1].get(k) == event.get(k) for k in _KEY)
            and (int(event.get("count") or 1) > int(kept[-1].get("count") or 1))
        ):
            kept[-1] = event
        else:
            kept.append(event)
    return kept
