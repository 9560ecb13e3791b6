"""Activity feed: one line per event, repeated identical events folded into one with a count."""

from __future__ import annotations

from pathlib import Path

import pytest

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


def test_recording_appends_one_line_and_leaves_the_rest_untouched(tmp_path: Path) -> None:
    path = tmp_path / "activity.json"
    log = ActivityLog(path)
    log.record("scan", "Scan: 3 threads")
    before = path.read_bytes()
    log.record("memorize", "Remembered 2 item(s) for main", branch="main")
    after = path.read_bytes()
    assert after.startswith(before)
    assert after[len(before) :].count(b"\n") == 1


def test_a_torn_last_line_is_skipped_and_not_glued_to_the_next_event(tmp_path: Path) -> None:
    path = tmp_path / "activity.json"
    log = ActivityLog(path)
    log.record("scan", "Scan: 1 thread")
    with path.open("ab") as handle:
        handle.write(b'{"timestamp": "2026-01-01T00:00:00Z", "kind": "mem')  # a crash mid-line
    assert [e["message"] for e in log.recent()] == ["Scan: 1 thread"]
    log.record("scan", "Scan: 2 threads")
    assert [e["message"] for e in log.recent()] == ["Scan: 2 threads", "Scan: 1 thread"]


def test_the_old_array_format_is_read_and_rewritten_as_lines(tmp_path: Path) -> None:
    import json

    path = tmp_path / "activity.json"
    path.write_text(
        json.dumps(
            [{"timestamp": "2026-01-01T00:00:00Z", "kind": "scan", "message": "Scan: old"}],
            indent=2,
        ),
        encoding="utf-8",
    )
    log = ActivityLog(path)
    assert [e["message"] for e in log.recent()] == ["Scan: old"]
    log.record("scan", "Scan: new")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["message"] for line in lines] == ["Scan: old", "Scan: new"]


def test_a_large_feed_is_compacted_to_the_newest_events_without_duplicates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.core import activity

    monkeypatch.setattr(activity, "COMPACT_BYTES", 4096)
    monkeypatch.setattr(activity, "MAX_EVENTS", 10)
    path = tmp_path / "activity.json"
    log = ActivityLog(path)
    for n in range(100):
        log.record("memorize", f"Remembered {n}", branch="main")
        log.record("memorize", f"Remembered {n}", branch="main")  # folded into a count
    assert path.stat().st_size <= 4096 + 200
    events = log.recent(50)
    assert [e["message"] for e in events] == [f"Remembered {n}" for n in range(99, 89, -1)]
    assert {e["count"] for e in events} == {2}
