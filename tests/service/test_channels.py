"""MemoryChannels over the real core (temp home, offline engine): the channel table, replies,
push signals, replayed status, and changes made outside the app."""

from __future__ import annotations

import inspect
from pathlib import Path

from pytestqt.qtbot import QtBot

from app.core.api import CHANNELS
from app.core.store import MemoryStore
from app.service.channels import CHANNEL_MEMBERS, MemoryChannels
from tests.service.support import FIXTURES, run


def test_every_api_channel_maps_to_an_async_member() -> None:
    missing = [c for c in CHANNELS if c not in CHANNEL_MEMBERS]
    assert not missing, f"channels without a Qt member: {missing}"
    for channel in CHANNELS:
        member = getattr(MemoryChannels, CHANNEL_MEMBERS[channel], None)
        assert member is not None, channel
        assert inspect.iscoroutinefunction(member), channel
        assert ":" not in CHANNEL_MEMBERS[channel] and "-" not in CHANNEL_MEMBERS[channel]


def test_reply_is_announced_with_request_id_and_channel(
    qtbot: QtBot, seeded_channels: MemoryChannels
) -> None:
    with qtbot.waitSignal(seeded_channels.replied, timeout=10_000) as blocker:
        request_id = seeded_channels.request("memory:list-branches", {})
    got_id, channel, reply = blocker.args
    assert (got_id, channel) == (request_id, "memory:list-branches")
    assert sorted(b["branch"] for b in reply["branches"]) == ["puffin-todo-list/ui", "spotter/main"]


def test_member_returns_the_api_reply(qtbot: QtBot, seeded_channels: MemoryChannels) -> None:
    reply = run(qtbot, seeded_channels.get_branch_memory("spotter/main"))
    assert reply["branch"] == "spotter/main"
    assert "SQLite index in WAL mode" in reply["content"]
    assert reply["itemCount"] == 5


def test_errors_come_back_as_replies_not_exceptions(
    qtbot: QtBot, seeded_channels: MemoryChannels
) -> None:
    reply = run(qtbot, seeded_channels.get_branch_memory("no/such-branch"))
    assert reply["error"] is True
    assert reply["code"] == "NOT_FOUND"
    bad = run(qtbot, seeded_channels.invoke("memory:run-maintenance", {"type": "hourly"}))
    assert bad["code"] == "INVALID_INPUT"


def test_status_is_replayed_to_a_late_subscriber(
    qtbot: QtBot, seeded_channels: MemoryChannels
) -> None:
    seen: list[dict[str, object]] = []
    seeded_channels.watch_status(seen.append)
    assert seen, "a late subscriber gets the latest status at once"
    assert seen[0]["status"] == "ready"
    assert seen[0]["engine"] == "offline"
    stats: list[dict[str, object]] = []
    seeded_channels.watch_stats(stats.append)
    assert stats[0]["totalBranches"] == 2


def test_save_announces_branch_and_stats_and_keeps_a_version(
    qtbot: QtBot, seeded_channels: MemoryChannels
) -> None:
    content = run(qtbot, seeded_channels.get_branch_memory("puffin-todo-list/ui"))["content"]
    edited = content.replace(
        "## Bug Patterns\n",
        "## Bug Patterns\n\n- **Double submit**: Pressing Enter twice added the todo twice.\n",
    )
    with qtbot.waitSignals(
        [seeded_channels.branch_changed, seeded_channels.stats_changed], timeout=10_000
    ):
        reply = run(qtbot, seeded_channels.save_branch_memory("puffin-todo-list/ui", edited))
    assert reply["success"] is True
    assert seeded_channels.stats is not None and seeded_channels.stats["totalItems"] == 8
    versions = run(qtbot, seeded_channels.list_versions("puffin-todo-list/ui"))["versions"]
    assert len(versions) == 1


def test_invalid_edit_is_refused_with_problems(
    qtbot: QtBot, seeded_channels: MemoryChannels
) -> None:
    reply = run(qtbot, seeded_channels.save_branch_memory("spotter/main", "just some text"))
    assert reply["code"] == "INVALID_INPUT"
    again = run(qtbot, seeded_channels.get_branch_memory("spotter/main"))
    assert "SQLite index in WAL mode" in again["content"]


def test_file_written_outside_the_app_is_announced(
    qtbot: QtBot, seeded_channels: MemoryChannels, seeded_home: Path
) -> None:
    store = MemoryStore(seeded_home)
    text = (
        (FIXTURES / "todo__ui.md")
        .read_text(encoding="utf-8")
        .replace("puffin-todo-list/ui", "puffin-todo-list/backend")
    )
    with qtbot.waitSignal(seeded_channels.branch_changed, timeout=2_000) as blocker:
        store.write_text("puffin-todo-list/backend", text)  # what the CLI does
    assert blocker.args == ["puffin-todo-list/backend"]
    qtbot.waitUntil(
        lambda: seeded_channels.stats is not None and seeded_channels.stats["totalBranches"] == 3,
        timeout=2_000,
    )
    # An editor writing in place (no rename) is noticed too, and the replaced file above
    # is still watched.
    path = store.branch_file("spotter/main")
    with (
        qtbot.waitSignal(seeded_channels.branch_changed, timeout=2_000) as blocker,
        path.open("a", encoding="utf-8") as handle,
    ):
        handle.write("\n")
    assert blocker.args == ["spotter/main"]
    with qtbot.waitSignal(seeded_channels.branch_changed, timeout=2_000) as blocker:
        store.write_text("puffin-todo-list/backend", text.replace("plain HTML", "HTML"))
    assert blocker.args == ["puffin-todo-list/backend"]


def test_clear_can_be_undone_by_restoring_the_version(
    qtbot: QtBot, seeded_channels: MemoryChannels
) -> None:
    cleared = run(qtbot, seeded_channels.clear_branch_memory("spotter/main"))
    assert cleared["success"] is True
    gone = run(qtbot, seeded_channels.get_branch_memory("spotter/main"))
    assert gone["code"] == "NOT_FOUND"
    restored = run(qtbot, seeded_channels.restore_version("spotter/main", cleared["version"]))
    assert restored["success"] is True
    back = run(qtbot, seeded_channels.get_branch_memory("spotter/main"))
    assert back["itemCount"] == 5
