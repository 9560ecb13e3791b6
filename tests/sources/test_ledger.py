"""The processed-thread ledger: persistence, damage handling, concurrent writers."""

from __future__ import annotations

import json
from pathlib import Path

from app.sources.ledger import LEDGER_FILE, Ledger


def _record(ledger: Ledger, key: str, messages: int) -> None:
    source, thread_id = key.split(":", 1)
    ledger.record(
        key,
        source=source,
        thread_id=thread_id,
        branch_id="shop/main",
        ref="cc-1",
        content_hash="abc",
        messages=messages,
    )


def test_missing_ledger_is_empty(home: Path) -> None:
    ledger = Ledger.open(home)
    assert len(ledger) == 0
    assert ledger.warning is None
    assert not (home / LEDGER_FILE).exists()


def test_recorded_threads_survive_a_reopen(home: Path) -> None:
    _record(Ledger.open(home), "claude-code:s1", 7)
    again = Ledger.open(home)
    entry = again.get("claude-code:s1")
    assert entry is not None
    assert (entry.messages, entry.branch_id, entry.hash) == (7, "shop/main", "abc")
    on_disk = json.loads((home / LEDGER_FILE).read_text())
    assert on_disk["threads"]["claude-code:s1"]["threadId"] == "s1"


def test_corrupt_ledger_is_moved_aside_and_reported(home: Path) -> None:
    (home / LEDGER_FILE).write_text("{ this is not json")
    ledger = Ledger.open(home)
    assert len(ledger) == 0
    assert ledger.warning is not None
    assert "moved to ledger.json.broken-" in ledger.warning
    assert [p.name.startswith("ledger.json.broken-") for p in home.iterdir()] == [True]
    _record(ledger, "puffin:r1", 2)
    assert Ledger.open(home).get("puffin:r1") is not None


def test_ledger_of_the_wrong_shape_is_moved_aside(home: Path) -> None:
    (home / LEDGER_FILE).write_text("[1, 2, 3]")
    ledger = Ledger.open(home)
    assert ledger.warning is not None
    assert not (home / LEDGER_FILE).exists()


def test_bad_entries_are_ignored_and_reported(home: Path) -> None:
    good = {"source": "codex", "threadId": "c1", "branchId": "tool/main", "messages": 3}
    (home / LEDGER_FILE).write_text(
        json.dumps({"version": 1, "threads": {"codex:c1": good, "codex:c2": {"messages": -5}}})
    )
    ledger = Ledger.open(home)
    assert ledger.get("codex:c1") is not None
    assert ledger.get("codex:c2") is None
    assert ledger.warning == "ledger.json: 1 unreadable entries were ignored"


def test_two_writers_do_not_undo_each_other(home: Path) -> None:
    first = Ledger.open(home)
    second = Ledger.open(home)
    _record(first, "claude-code:a", 5)
    _record(second, "claude-code:b", 2)
    merged = Ledger.open(home)
    assert merged.get("claude-code:a") is not None
    assert merged.get("claude-code:b") is not None
