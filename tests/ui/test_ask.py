"""Ask panel: fast search as you type (debounced), deep search on demand, each answer with
branch, category, confidence and score, and friendly empty states."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from app.service.channels import MemoryChannels
from app.ui.ask import AskPanel, ResultCard


def _panel(qtbot: QtBot, channels: MemoryChannels) -> AskPanel:
    panel = AskPanel(channels, debounce_ms=50)
    qtbot.addWidget(panel)
    panel.show()
    return panel


def _cards(panel: AskPanel) -> list[ResultCard]:
    return panel.results.findChildren(ResultCard)


def test_typing_searches_fast_and_shows_where_each_answer_lives(
    qtbot: QtBot, seeded_channels: MemoryChannels
) -> None:
    panel = _panel(qtbot, seeded_channels)
    with qtbot.waitSignal(
        seeded_channels.replied,
        timeout=5000,
        check_params_cb=lambda _i, channel, _r: channel == "memory:retrieve",
    ):
        qtbot.keyClicks(panel.query, "sqlite index")
    qtbot.waitUntil(lambda: panel.result_count > 0, timeout=5000)
    assert panel.last_reply is not None and panel.last_reply.get("mode", "fast") == "fast"
    texts = [label.text() for card in _cards(panel) for label in card.findChildren(QLabel)]
    assert "SQLite index in WAL mode" in texts
    meta = next(t for t in texts if t.startswith("spotter/main · Architectural Decisions"))
    assert "92% confidence" in meta and "score " in meta
    assert "fast search" in panel.summary.text()


def test_only_the_latest_question_is_answered(
    qtbot: QtBot, seeded_channels: MemoryChannels
) -> None:
    panel = _panel(qtbot, seeded_channels)
    panel.query.setText("localStorage")
    panel.search("fast")
    panel.query.setText("pathlib")
    panel.search("fast")
    qtbot.waitUntil(lambda: panel.result_count > 0, timeout=5000)
    qtbot.wait(200)
    titles = [c.findChildren(QLabel)[0].text() for c in _cards(panel)]
    assert titles[0] == "Prefer pathlib"
    assert "LocalStorage persistence" not in titles


def test_deep_search_on_demand(qtbot: QtBot, seeded_channels: MemoryChannels) -> None:
    panel = _panel(qtbot, seeded_channels)
    panel.activateWindow()
    qtbot.waitUntil(panel.isActiveWindow, timeout=2000)
    panel.query.setText("watcher inode")
    qtbot.keyClick(panel.query, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: "deep search" in panel.summary.text(), timeout=10_000)
    assert panel.result_count > 0
    assert panel.deep_button.isEnabled()


def test_empty_states(qtbot: QtBot, seeded_channels: MemoryChannels) -> None:
    panel = _panel(qtbot, seeded_channels)
    assert panel.stack.currentWidget() is panel.empty
    assert panel.empty.headline.text() == "Ask anything about your projects"
    panel.query.setText("kubernetes helm chart")
    panel.search("fast")
    qtbot.waitUntil(lambda: panel.empty.headline.text().startswith("Nothing found"), timeout=5000)
    assert panel.stack.currentWidget() is panel.empty
