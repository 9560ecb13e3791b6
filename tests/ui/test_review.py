"""Review queue: medium-confidence items can be approved, edited then approved, or rejected;
approval writes the item into its branch file."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from app.core.models import Category, MemoryItem
from app.core.review import ReviewQueue
from app.core.store import MemoryStore
from app.service.channels import MemoryChannels
from app.ui.review import ReviewPanel


def _queue(home: Path) -> None:
    ReviewQueue(MemoryStore(home).review_queue_path).add("spotter/main", [
        MemoryItem(category=Category.CODING_PREFERENCES, title="Type hints everywhere",
                   content="Every function has full type hints.", confidence=0.62,
                   sources=["claude-code:short"]),
        MemoryItem(category=Category.BUG_PATTERNS, title="Flaky clock test",
                   content="A test depended on the wall clock.", confidence=0.55),
    ])


def _panel(qtbot: QtBot, channels: MemoryChannels) -> ReviewPanel:
    panel = ReviewPanel(channels)
    qtbot.addWidget(panel)
    panel.show()
    panel.refresh()
    return panel


def test_queue_lists_items_with_branch_category_and_confidence(
    qtbot: QtBot, seeded_channels: MemoryChannels, seeded_home: Path
) -> None:
    _queue(seeded_home)
    panel = _panel(qtbot, seeded_channels)
    qtbot.waitUntil(lambda: panel.list.count() == 2, timeout=5000)
    first = panel.list.item(0).text()
    assert first.startswith("Type hints everywhere\nspotter/main · Coding Preferences · 62%")
    assert panel.title_edit.text() == "Type hints everywhere"
    assert "62% confidence" in panel.detail_meta.text()


def test_edit_then_approve_writes_the_edited_item(
    qtbot: QtBot, seeded_channels: MemoryChannels, seeded_home: Path
) -> None:
    _queue(seeded_home)
    panel = _panel(qtbot, seeded_channels)
    qtbot.waitUntil(lambda: panel.list.count() == 2, timeout=5000)
    panel.title_edit.setText("Full type hints")
    panel.content_edit.setPlainText("Every public function has full type hints (mypy strict).")
    with qtbot.waitSignal(panel.count_changed, timeout=10_000,
                          check_params_cb=lambda n: n == 1):
        panel.approve_button.click()
    text = MemoryStore(seeded_home).read_text("spotter/main") or ""
    assert "**Full type hints**: Every public function has full type hints (mypy strict)." in text
    assert "Type hints everywhere" not in text
    assert panel.banner.label.text() == "Approved into spotter/main."


def test_reject_drops_the_item(
    qtbot: QtBot, seeded_channels: MemoryChannels, seeded_home: Path
) -> None:
    _queue(seeded_home)
    panel = _panel(qtbot, seeded_channels)
    qtbot.waitUntil(lambda: panel.list.count() == 2, timeout=5000)
    panel.list.setCurrentRow(1)
    assert panel.title_edit.text() == "Flaky clock test"
    panel.reject_button.click()
    qtbot.waitUntil(lambda: panel.list.count() == 1, timeout=5000)
    queued = ReviewQueue(MemoryStore(seeded_home).review_queue_path).entries()
    assert [e.item.title for e in queued] == ["Type hints everywhere"]
    assert "Flaky clock test" not in (MemoryStore(seeded_home).read_text("spotter/main") or "")


def test_empty_queue_explains_itself(qtbot: QtBot, seeded_channels: MemoryChannels) -> None:
    panel = _panel(qtbot, seeded_channels)
    qtbot.waitUntil(lambda: panel.stack.currentWidget() is panel.empty, timeout=5000)
    assert panel.empty.headline.text() == "Nothing to review"
