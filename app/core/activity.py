"""Recent activity (`activity.json`): what the app did lately, for the dashboard and CLI.

A short, capped list of events (memorized a thread, maintenance ran, a write was refused).
Appends are read-modify-write under a lock file so the CLI and the app can both record.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.core.atomic import read_json, write_json
from app.core.errors import StorageError
from app.core.models import utc_now

MAX_EVENTS = 200


class ActivityLog:
    """Append-only (capped) list of recent events."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def record(self, kind: str, message: str, **extra: Any) -> None:
        """Add an event; never raises (activity is informational)."""
        event = {"timestamp": utc_now().strftime("%Y-%m-%dT%H:%M:%SZ"), "kind": kind,
                 "message": message, **extra}
        from filelock import FileLock  # deferred: costly import, CLI start-up matters

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(str(self.path) + ".lock", timeout=5):
                events = self._load()
                last = events[-1] if events else None
                if last is not None and all(
                    last.get(k) == event.get(k) for k in ("kind", "message", "branch")
                ):
                    # The same event again (a branch with nothing new, scan after scan): one
                    # line with a count, so the feed does not fill with identical lines.
                    last["count"] = int(last.get("count") or 1) + 1
                    last["timestamp"] = event["timestamp"]
                else:
                    events.append(event)
                write_json(self.path, events[-MAX_EVENTS:], durable=False)
        except (StorageError, OSError, TimeoutError):
            return

    def recent(self, limit: int = 50) -> list[dict[str, Any]]:
        """Newest first."""
        return list(reversed(self._load()))[:limit]

    def _load(self) -> list[dict[str, Any]]:
        try:
            data = read_json(self.path, default=[])
        except StorageError:
            return []
        return [e for e in data if isinstance(e, dict)] if isinstance(data, list) else []
