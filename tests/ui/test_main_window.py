"""Main window: panels and keyboard shortcuts, close-to-tray versus quit, accessible names,
and a screenshot of every panel (saved to $PUFFIN_SCREENSHOTS when set)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QToolButton
from pytestqt.qtbot import QtBot

from app.core.models import Category, MemoryItem
from app.core.review import ReviewQueue
from app.core.store import MemoryStore
from app.service.channels import MemoryChannels
from app.ui.main_window import MainWindow
from app.ui.tray import StatusIndicator


@pytest.fixture
def window(qtbot: QtBot, seeded_channels: MemoryChannels) -> Iterator[MainWindow]:
    indicator = StatusIndicator(seeded_channels, use_tray=False)
    win = MainWindow(seeded_channels, indicator)
    qtbot.addWidget(win)
    win.show()
    win.activateWindow()
    qtbot.waitUntil(win.isActiveWindow, timeout=2000)
    yield win
    indicator.close()


def _key(
    qtbot: QtBot,
    win: MainWindow,
    key: Qt.Key,
    modifier: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier,
) -> None:
    target = QApplication.focusWidget() or win
    qtbot.keyClick(target, key, modifier)


def test_ctrl_number_switches_panels(qtbot: QtBot, window: MainWindow) -> None:
    keys = [Qt.Key.Key_1, Qt.Key.Key_2, Qt.Key.Key_3, Qt.Key.Key_4, Qt.Key.Key_5, Qt.Key.Key_6]
    for index in (5, 1, 3, 0, 4, 2):
        _key(qtbot, window, keys[index], Qt.KeyboardModifier.ControlModifier)
        assert window.stack.currentIndex() == index
        assert window.nav.currentRow() == index


def test_ctrl_k_and_ctrl_f_focus_their_boxes(qtbot: QtBot, window: MainWindow) -> None:
    _key(qtbot, window, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    assert window.current_panel is window.ask
    assert QApplication.focusWidget() is window.ask.query
    _key(qtbot, window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert window.current_panel is window.browser
    assert QApplication.focusWidget() is window.browser.filter


def test_ctrl_e_edits_and_ctrl_s_saves(qtbot: QtBot, window: MainWindow) -> None:
    window.show_panel(1)
    window.browser.select_branch("spotter/main")
    qtbot.waitUntil(lambda: window.browser.branch_title.text() == "spotter/main", timeout=5000)
    _key(qtbot, window, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    assert window.browser.editing
    window.browser.editor.setPlainText(window.browser.editor.toPlainText() + "\n")
    with qtbot.waitSignal(
        window.channels.replied,
        timeout=5000,
        check_params_cb=lambda _i, ch, _r: ch == "memory:save-branch-memory",
    ):
        _key(qtbot, window, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: not window.browser.editing, timeout=5000)


def test_f5_refreshes_the_visible_panel(qtbot: QtBot, window: MainWindow) -> None:
    window.show_panel(3)
    with qtbot.waitSignal(
        window.channels.replied,
        timeout=5000,
        check_params_cb=lambda _i, ch, _r: ch == "memory:review-list",
    ):
        _key(qtbot, window, Qt.Key.Key_F5)


def test_ctrl_q_quits(qtbot: QtBot, window: MainWindow) -> None:
    with qtbot.waitSignal(window.quit_requested, timeout=1000):
        _key(qtbot, window, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)


def test_shift_f5_starts_a_scan(qtbot: QtBot, window: MainWindow) -> None:
    with qtbot.waitSignal(window.channels.job_finished, timeout=10_000) as blocker:
        _key(qtbot, window, Qt.Key.Key_F5, Qt.KeyboardModifier.ShiftModifier)
    assert blocker.args[1] == "scan"


def test_closing_without_a_tray_quits(qtbot: QtBot, window: MainWindow) -> None:
    with qtbot.waitSignal(window.quit_requested, timeout=1000):
        window.close()


def test_closing_with_a_tray_keeps_running(qtbot: QtBot, seeded_channels: MemoryChannels) -> None:
    indicator = StatusIndicator(seeded_channels, use_tray=True)
    win = MainWindow(seeded_channels, indicator)
    qtbot.addWidget(win)
    win.show()
    with qtbot.assertNotEmitted(win.quit_requested, wait=100):
        win.close()
    assert not win.isVisible()
    indicator.open_requested.connect(win.bring_forward)
    indicator.open_action.trigger()
    assert win.isVisible()
    assert win.status_widget.menu_button is None, "with a tray the menu lives there"
    indicator.close()


def test_icon_only_buttons_have_accessible_names(window: MainWindow) -> None:
    checked = 0
    for panel_index in range(len(window.panels)):
        window.show_panel(panel_index)
        for button in window.findChildren(QToolButton):
            if not button.isVisibleTo(window):
                continue  # other panels, or the menu bar's overflow button
            if not button.text() and not button.icon().isNull():
                checked += 1
                assert button.accessibleName(), (
                    f"{button.toolTip()!r} {button.objectName()!r} in "
                    f"{type(button.parent()).__name__} has no accessible name"
                )
    assert checked >= 5


def test_status_bar_shows_the_indicator_without_a_tray(window: MainWindow) -> None:
    assert window.status_widget.menu_button is not None
    assert window.status_widget.label.text() == "Ready"


def test_screenshot_of_every_panel(qtbot: QtBot, window: MainWindow, seeded_home: Path) -> None:
    folder = os.environ.get("PUFFIN_SCREENSHOTS")
    store = MemoryStore(seeded_home)
    ReviewQueue(store.review_queue_path).add(
        "spotter/main",
        [
            MemoryItem(
                category=Category.CODING_PREFERENCES,
                title="Type hints everywhere",
                content="Every function has full type hints.",
                confidence=0.62,
                sources=["claude-code:short"],
            ),
            MemoryItem(
                category=Category.BUG_PATTERNS,
                title="Flaky clock test",
                content="A test depended on the wall clock.",
                confidence=0.55,
            ),
        ],
    )
    text = store.read_text("puffin-todo-list/ui") or ""
    store.write_text(
        "puffin-todo-list/ui",
        text.replace(
            "## Coding Preferences\n",
            "## Coding Preferences\n\n- **Use semicolons**: Always use "
            "semicolons in JavaScript. (id: pref-old11111, confidence: 0.85, extracted: "
            "2026-02-11)\n",
            1,
        ),
    )
    text = store.read_text("spotter/main") or ""
    store.write_text(
        "spotter/main",
        text.replace(
            "## Coding Preferences\n",
            "## Coding Preferences\n\n- **No semicolons**: Never use "
            "semicolons in JavaScript. (id: pref-new22222, confidence: 0.85, extracted: "
            "2026-03-05)\n",
            1,
        ),
    )
    window.resize(1180, 760)
    window.ask.query.setText("sqlite index")
    window.browser.select_branch("spotter/main")
    for index, panel in enumerate(window.panels):
        window.show_panel(index)
        if panel is window.ask:
            qtbot.waitUntil(lambda: window.ask.result_count > 0, timeout=5000)
        if panel is window.browser:
            qtbot.waitUntil(
                lambda: window.browser.branch_title.text() == "spotter/main", timeout=5000
            )
        if panel is window.review:
            qtbot.waitUntil(lambda: window.review.list.count() == 2, timeout=5000)
        if panel is window.conflicts:
            qtbot.waitUntil(lambda: window.conflicts.list.count() == 2, timeout=5000)
            window.conflicts.list.setCurrentRow(1)
        qtbot.wait(150)
        image = window.grab()
        assert not image.isNull() and image.width() >= 1000
        if folder:
            Path(folder).mkdir(parents=True, exist_ok=True)
            image.save(str(Path(folder) / f"{index + 1}-{panel.title.lower()}.png"))


def test_glyphs_follow_a_palette_change(qtbot: QtBot, window: MainWindow) -> None:
    button = window.browser.edit_button
    before = button.icon().pixmap(20, 20).toImage()
    original = QPalette(QApplication.palette())
    dark = QPalette(original)
    dark.setColor(QPalette.ColorRole.ButtonText, QColor("#f0f0f0"))
    QApplication.setPalette(dark)
    try:
        qtbot.waitUntil(lambda: button.icon().pixmap(20, 20).toImage() != before, timeout=2000)
    finally:
        QApplication.setPalette(original)


def test_readme_keyboard_table_matches_the_menus(window: MainWindow) -> None:
    import re

    from PySide6.QtGui import QAction, QKeySequence

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    table = readme.split("## Keyboard", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| ([^|]+?) \| ([^|]+?) \|$", table, re.MULTILINE)[2:]
    assert rows, "README has a keyboard table"
    shortcuts: dict[str, str] = {}
    for action in window.findChildren(QAction):
        for sequence in action.shortcuts():
            shortcuts[sequence.toString(QKeySequence.SequenceFormat.PortableText)] = (
                action.text().replace("&", "")
            )
    for keys, what in rows:
        if "…" in keys or keys == "Esc":  # a range of panels; the editor's own button
            continue
        assert keys in shortcuts, f"README lists {keys} ({what}); no menu action has it"
        first_word = shortcuts[keys].split()[0].rstrip("…")
        assert first_word.lower() in what.lower(), (keys, what, shortcuts[keys])


def test_the_window_fits_800_by_600(window: MainWindow) -> None:
    window.resize(800, 600)
    assert (window.width(), window.height()) == (800, 600)


def test_an_ask_result_opens_in_its_branch_with_where_it_came_from(
    qtbot: QtBot, window: MainWindow
) -> None:
    from app.ui.ask import ResultCard
    from app.ui.provenance import ProvenanceView

    window.show_panel(2)
    window.ask.query.setText("sqlite index")
    window.ask.search("fast")
    qtbot.waitUntil(lambda: window.ask.result_count > 0, timeout=5000)
    card = window.ask.results.findChildren(ResultCard)[0]
    assert card.open_button.isEnabled() and card.open_button.accessibleName()

    qtbot.mouseClick(card.open_button, Qt.MouseButton.LeftButton)

    assert window.current_panel is window.browser
    qtbot.waitUntil(lambda: window.browser.current == card.branch, timeout=5000)
    view: ProvenanceView = window.browser.provenance
    qtbot.waitUntil(view.isVisible, timeout=5000)
    assert view.item_id == card.item_id
    qtbot.waitUntil(
        lambda: view.source_count > 0 or "No source" in view.status.text(), timeout=5000
    )
    assert view.title.text().startswith("Where")


def test_the_browser_links_every_item_to_where_it_came_from(
    qtbot: QtBot, window: MainWindow
) -> None:
    from PySide6.QtCore import QUrl

    from app.ui.browser import ITEM_SCHEME

    window.show_panel(1)
    window.browser.select_branch("spotter/main")
    qtbot.waitUntil(lambda: ITEM_SCHEME in window.browser.viewer.toMarkdown(), timeout=5000)
    item_id = window.browser.viewer.toMarkdown().split(f"{ITEM_SCHEME}:", 1)[1].split(")")[0]
    window.browser.viewer.anchorClicked.emit(QUrl(f"{ITEM_SCHEME}:{item_id}"))
    view = window.browser.provenance
    qtbot.waitUntil(
        lambda: view.isVisible() and view.status.text() != "Looking up the conversations…",
        timeout=5000,
    )
    assert view.item_id == item_id
