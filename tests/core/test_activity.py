"""Activity feed: one line per event, repeated identical events folded into one with a count."""

from __future__ import annotations

from pathlib import Path

from app.core.activity import ActivityLog


def test_identical_events_in_a_row_become_one_line_with_a_count(tmp_path: Path) -> None:
    log = ActivityLog(tmp_path / "activity.json")
    for _ in range(3):
        log.record("memorize", "Nothing new to remember for main", branch="main")
    log.record("memorize", "Nothing new to remember for dev", branch="dev")
    log.record("memorize", "Nothing new to remember for main", branch="main")

    events = log.recent()
    assert [(e["message"], e.get("count", 1)) for e in events] == [
        ("Nothing new to remember for main", 1),
        ("Nothing new to remember for dev", 1),
        ("Nothing new to remember for main", 3),
    ]
