"""Review queue: medium-confidence items can be approved, edited then approved, or rejected;
approval writes the item into its branch file."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractButton,
    QComboBox,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QProgressBar,
    QWidget,
)
from pytestqt.qtbot import QtBot

from app.core.models import Category, MemoryItem
from app.core.review import ReviewQueue
from app.core.store import MemoryStore
from app.service.channels import MemoryChannels
from app.ui.review import ReviewPanel


def _queue(home: Path) -> None:
    ReviewQueue(MemoryStore(home).review_queue_path).add(
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
    with qtbot.waitSignal(panel.count_changed, timeout=10_000, check_params_cb=lambda n: n == 1):
        panel.approve_button.click()
    text = MemoryStore(seeded_home).read_text("spotter/main") or ""
    assert "**Full type hints**: Every public function has full type hints (mypy strict)." in text
    assert "Type hints everywhere" not in text
    assert panel.status_label.text() == "Approved 'Full type hints' into spotter/main."
    assert panel.undo_button.isEnabled()


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


# -- review at scale (issue 15) ----------------------------------------------------------

WORDS = (
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
    "uniform",
    "victor",
    "whiskey",
    "xray",
)


def _many(home: Path, count: int, branch: str = "spotter/main") -> list[MemoryItem]:
    """`count` distinct candidates (no two alike, so none merges on approval)."""
    items = [
        MemoryItem(
            category=Category.IMPLEMENTATION_NOTES,
            title=f"Note {n} {WORDS[n % len(WORDS)]} {WORDS[(n * 7) % len(WORDS)]}",
            content=f"Candidate number {n}: {WORDS[n % len(WORDS)]} "
            f"{WORDS[(n // len(WORDS)) % len(WORDS)]} handling {n * 31}.",
            confidence=0.6,
            sources=[f"claude-code:thread-{n}"],
        )
        for n in range(count)
    ]
    ReviewQueue(MemoryStore(home).review_queue_path).add(branch, items)
    return items


def _queued_titles(home: Path) -> list[str]:
    return [e.item.title for e in ReviewQueue(MemoryStore(home).review_queue_path).entries()]


def _loaded(qtbot: QtBot, channels: MemoryChannels, count: int) -> ReviewPanel:
    panel = _panel(qtbot, channels)
    qtbot.waitUntil(lambda: panel.list.count() == count, timeout=10_000)
    return panel


def _shown_titles(panel: ReviewPanel) -> list[str]:
    return [
        panel.list.item(r).text().split("\n")[0]
        for r in range(panel.list.count())
        if not panel.list.item(r).isHidden()
    ]


def _decide(qtbot: QtBot, panel: ReviewPanel, action: Any) -> str:
    """Run `action` and wait until the page says what it did; returns that line."""
    with qtbot.waitSignal(panel.decided, timeout=20_000) as blocker:
        action()
    qtbot.waitUntil(lambda: not panel.channels.tasks, timeout=10_000)
    return str(blocker.args[0])


def test_search_category_and_branch_filters_narrow_the_list(
    qtbot: QtBot, seeded_channels: MemoryChannels, seeded_home: Path
) -> None:
    _queue(seeded_home)
    _many(seeded_home, 6, branch="puffin-todo-list/ui")
    panel = _loaded(qtbot, seeded_channels, 8)
    assert panel.count_label.text() == "8 of 8 candidates"

    qtbot.keyClicks(panel.search, "clock")
    assert panel.count_label.text() == "8 of 8 candidates"  # debounced: not yet
    qtbot.waitUntil(lambda: panel.count_label.text() == "1 of 8 candidates", timeout=3000)
    assert _shown_titles(panel) == ["Flaky clock test"]
    assert panel.title_edit.text() == "Flaky clock test"  # the shown one is selected

    panel.search.clear()
    panel.category_filter.setCurrentIndex(panel.category_filter.findData("bug_patterns"))
    qtbot.waitUntil(lambda: panel.count_label.text() == "1 of 8 candidates", timeout=3000)
    panel.category_filter.setCurrentIndex(0)
    panel.branch_filter.setCurrentIndex(panel.branch_filter.findData("branch:puffin-todo-list/ui"))
    assert panel.count_label.text() == "6 of 8 candidates"
    panel.branch_filter.setCurrentIndex(panel.branch_filter.findData("project:spotter"))
    assert _shown_titles(panel) == ["Type hints everywhere", "Flaky clock test"]

    qtbot.keyClicks(panel.search, "no such words")
    qtbot.waitUntil(lambda: panel.list_stack.currentWidget() is panel.no_match, timeout=3000)
    assert panel.count_label.text() == "0 of 8 candidates"
    assert panel.no_match.headline.text() == "No candidates match"
    assert not panel.approve_button.isEnabled()
    assert panel.no_match.button is not None
    panel.no_match.button.click()
    assert panel.count_label.text() == "8 of 8 candidates"
    assert panel.list_stack.currentWidget() is panel.list


def test_bulk_approve_of_300_keeps_the_loop_running(
    qtbot: QtBot, seeded_channels: MemoryChannels, seeded_home: Path
) -> None:
    _many(seeded_home, 300)
    panel = _loaded(qtbot, seeded_channels, 300)
    panel.list.setFocus()
    qtbot.keyClick(panel.list, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    assert len(panel.selected_ids()) == 300
    assert panel.approve_button.text() == "Approve 300"
    ticks: list[int] = []
    progress: list[int] = []
    timer = QTimer(panel, interval=1)
    timer.timeout.connect(lambda: ticks.append(len(progress)))
    panel.progress.valueChanged.connect(progress.append)
    timer.start()
    message = _decide(qtbot, panel, panel.approve_button.click)
    timer.stop()
    assert message == "Approved 300 candidates."
    # The progress bar moved in steps, and timers fired between them: the GUI thread was
    # free while the core wrote.
    steps = [v for v in progress if 0 < v < 300]
    assert len(steps) >= 5
    assert len({t for t in ticks if 0 < t < len(progress)}) >= 3
    assert _queued_titles(seeded_home) == []
    text = MemoryStore(seeded_home).read_text("spotter/main") or ""
    assert "Note 0 alpha alpha" in text and "Note 299 " in text
    qtbot.waitUntil(lambda: panel.stack.currentWidget() is panel.empty, timeout=5000)


def test_keys_move_approve_reject_and_edit(
    qtbot: QtBot, seeded_channels: MemoryChannels, seeded_home: Path
) -> None:
    _many(seeded_home, 4)
    panel = _loaded(qtbot, seeded_channels, 4)
    panel.list.setFocus()
    titles = _shown_titles(panel)
    assert panel.title_edit.text() == titles[0]
    qtbot.keyClick(panel.list, Qt.Key.Key_J)
    qtbot.keyClick(panel.list, Qt.Key.Key_J)
    assert panel.title_edit.text() == titles[2]
    qtbot.keyClick(panel.list, Qt.Key.Key_K)
    assert panel.title_edit.text() == titles[1]

    message = _decide(qtbot, panel, lambda: qtbot.keyClick(panel.list, Qt.Key.Key_R))
    assert message == f"Rejected '{titles[1]}'."
    assert panel.title_edit.text() == titles[2]  # moved on to the next one
    assert titles[1] not in _queued_titles(seeded_home)

    message = _decide(qtbot, panel, lambda: qtbot.keyClick(panel.list, Qt.Key.Key_A))
    assert message == f"Approved '{titles[2]}' into spotter/main."
    assert panel.title_edit.text() == titles[3]

    qtbot.keyClick(panel.list, Qt.Key.Key_E)
    assert panel.content_edit.hasFocus()
    # Typing in the editor must not move, approve or reject.
    qtbot.keyClicks(panel.content_edit, " (just a draft)")
    assert panel.list.count() == 2
    message = _decide(
        qtbot,
        panel,
        lambda: qtbot.keyClick(
            panel.content_edit, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier
        ),
    )
    assert message == f"Approved '{titles[3]}' into spotter/main."
    text = MemoryStore(seeded_home).read_text("spotter/main") or ""
    assert "(just a draft)" in text
    assert _queued_titles(seeded_home) == [titles[0]]


def test_typing_in_search_box_does_not_trigger_shortcuts(
    qtbot: QtBot, seeded_channels: MemoryChannels, seeded_home: Path
) -> None:
    _queue(seeded_home)
    panel = _loaded(qtbot, seeded_channels, 2)
    panel.search.setFocus()
    qtbot.keyClicks(panel.search, "jkare")
    qtbot.wait(50)
    assert panel.search.text() == "jkare"
    assert not panel.channels.tasks
    assert len(_queued_titles(seeded_home)) == 2


def test_undo_of_reject_returns_the_candidate(
    qtbot: QtBot, seeded_channels: MemoryChannels, seeded_home: Path
) -> None:
    _queue(seeded_home)
    panel = _loaded(qtbot, seeded_channels, 2)
    panel.list.setCurrentRow(1)
    _decide(qtbot, panel, panel.reject_button.click)
    assert _queued_titles(seeded_home) == ["Type hints everywhere"]
    assert panel.undo_button.isEnabled()
    assert panel.undo_button.toolTip() == "Undo rejecting 'Flaky clock test' (Ctrl+Z)"
    panel.list.setFocus()
    message = _decide(
        qtbot,
        panel,
        lambda: qtbot.keyClick(panel.list, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier),
    )
    assert message == "Undid rejecting 'Flaky clock test': back in the queue."
    assert panel.status_label.text() == message
    assert sorted(_queued_titles(seeded_home)) == ["Flaky clock test", "Type hints everywhere"]
    qtbot.waitUntil(lambda: panel.list.count() == 2, timeout=5000)
    assert panel.title_edit.text() == "Flaky clock test"  # the restored one is selected
    assert not panel.undo_button.isEnabled()  # nothing more to undo


def test_undo_of_approve_removes_it_from_memory_and_requeues(
    qtbot: QtBot, seeded_channels: MemoryChannels, seeded_home: Path
) -> None:
    _queue(seeded_home)
    panel = _loaded(qtbot, seeded_channels, 2)
    _decide(qtbot, panel, panel.approve_button.click)
    assert "Type hints everywhere" in (MemoryStore(seeded_home).read_text("spotter/main") or "")
    message = _decide(qtbot, panel, panel.undo_button.click)
    assert message == (
        "Undid approving 'Type hints everywhere': removed from spotter/main and back in the queue."
    )
    assert "Type hints everywhere" not in (MemoryStore(seeded_home).read_text("spotter/main") or "")
    assert sorted(_queued_titles(seeded_home)) == ["Flaky clock test", "Type hints everywhere"]
    qtbot.waitUntil(lambda: panel.list.count() == 2, timeout=5000)


def test_undo_of_bulk_reject_restores_all(
    qtbot: QtBot, seeded_channels: MemoryChannels, seeded_home: Path
) -> None:
    _many(seeded_home, 40)
    panel = _loaded(qtbot, seeded_channels, 40)
    panel.list.selectAll()
    assert _decide(qtbot, panel, panel.reject_button.click) == "Rejected 40 candidates."
    assert _queued_titles(seeded_home) == []
    message = _decide(qtbot, panel, panel.undo)
    assert message == "Undid rejecting 40 candidates: all back in the queue."
    assert len(_queued_titles(seeded_home)) == 40


def test_candidate_shows_provenance_and_why_it_was_queued(
    qtbot: QtBot, seeded_channels: MemoryChannels, seeded_home: Path
) -> None:
    _queue(seeded_home)
    panel = _loaded(qtbot, seeded_channels, 2)
    meta = panel.detail_meta.text()
    assert "from Claude Code" in meta and "said " in meta and "queued " in meta
    assert panel.detail_reason.text().startswith("Queued because Puffin was 62% sure")
    assert "75%" in panel.detail_reason.text()


def test_every_interactive_widget_has_an_accessible_name(
    qtbot: QtBot, seeded_channels: MemoryChannels, seeded_home: Path
) -> None:
    _queue(seeded_home)
    panel = _loaded(qtbot, seeded_channels, 2)
    kinds = (QAbstractButton, QLineEdit, QPlainTextEdit, QComboBox, QListWidget, QProgressBar)
    widgets = [w for w in panel.findChildren(QWidget) if isinstance(w, kinds)]
    assert len(widgets) >= 12
    unnamed = [f"{type(w).__name__} {w.objectName()!r}" for w in widgets if not w.accessibleName()]
    assert not unnamed
    # Tab goes from the filters to the list to the editor to the decisions.
    assert panel.search.nextInFocusChain() is not None
    chain = [panel.search, panel.category_filter, panel.branch_filter, panel.list]
    for first, second in itertools.pairwise(chain):
        nxt = first.nextInFocusChain()
        while not (nxt.focusPolicy() & Qt.FocusPolicy.TabFocus) or not nxt.isVisible():
            nxt = nxt.nextInFocusChain()
        assert nxt is second, (first.accessibleName(), nxt.accessibleName())


def test_stop_ends_a_bulk_action_after_the_current_chunk(
    qtbot: QtBot, seeded_channels: MemoryChannels, seeded_home: Path
) -> None:
    _many(seeded_home, 100)
    panel = _loaded(qtbot, seeded_channels, 100)
    panel.list.selectAll()
    panel.progress.valueChanged.connect(
        lambda value: panel.stop_button.click() if value > 0 else None
    )
    message = _decide(qtbot, panel, panel.reject_button.click)
    assert message == "Rejected 25 candidates. Stopped; 75 left in the queue."
    assert len(_queued_titles(seeded_home)) == 75
    qtbot.waitUntil(lambda: panel.count_label.text() == "75 of 75 candidates", timeout=5000)


def test_w_shows_where_a_candidate_came_from(
    qtbot: QtBot, seeded_channels: MemoryChannels, seeded_home: Path
) -> None:
    ReviewQueue(seeded_home / "review-queue.json").add(
        "spotter/main",
        [
            MemoryItem(
                category=Category.CODING_PREFERENCES,
                title="Tabs",
                content="Indent with tabs.",
                confidence=0.6,
                sources=["cc-12345678"],
            )
        ],
    )
    panel = ReviewPanel(seeded_channels)
    qtbot.addWidget(panel)
    panel.show()
    panel.refresh()
    qtbot.waitUntil(lambda: panel.current_id is not None, timeout=5000)
    panel.list.setFocus()
    qtbot.keyClick(panel.list, Qt.Key.Key_W)
    qtbot.waitUntil(lambda: panel.provenance.source_count == 1, timeout=5000)
    assert panel.where_button.accessibleName()


def test_a_candidate_queued_by_a_scan_shows_its_reason_and_excerpt(
    qtbot: QtBot, seeded_channels: MemoryChannels, seeded_home: Path
) -> None:
    queue = ReviewQueue(MemoryStore(seeded_home).review_queue_path)
    item = MemoryItem(
        category=Category.ARCHITECTURAL_DECISIONS,
        title="SAM Pattern",
        content="Architecture follows the SAM Pattern (Model, Actions, State/Render).",
        confidence=0.6,
        sources=["pf-1"],
        tags=["source:agent"],
    )
    conversation = "User: build the todo app\nAssistant: app.js follows the SAM Pattern.\n"
    queue.offer(
        "todo/fullstack",
        [item],
        threshold=0.9,
        promote_at=0.75,
        excerpts={item.id: conversation.strip()},
    )
    panel = _loaded(qtbot, seeded_channels, 1)
    assert panel.detail_reason.text().startswith("The agent said it and nobody")
    assert "Queued because Puffin was 60% sure" in panel.detail_reason.text()
    assert panel.detail_excerpt.isVisible()
    assert "follows the SAM Pattern" in panel.detail_excerpt.text()
    assert panel.detail_excerpt.accessibleName() == "Excerpt of the conversation"
