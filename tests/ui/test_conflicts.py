"""Conflicts panel: contradictions inside a branch file and across branches, resolved with
Keep newer / Keep both / Mark older as outdated through the API."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.core.store import MemoryStore
from app.service.channels import MemoryChannels
from app.ui.conflicts import ConflictsPanel


def _panel(qtbot: QtBot, channels: MemoryChannels) -> ConflictsPanel:
    panel = ConflictsPanel(channels)
    qtbot.addWidget(panel)
    panel.show()
    panel.refresh()
    return panel


def test_branch_conflict_is_listed_with_its_statements(
    qtbot: QtBot, seeded_channels: MemoryChannels
) -> None:
    panel = _panel(qtbot, seeded_channels)
    qtbot.waitUntil(lambda: panel.list.count() == 1, timeout=5000)
    assert panel.list.item(0).text() == "Tabs or spaces\nin spotter/main"
    assert panel.detail_scope.text().startswith("Inside spotter/main")
    assert "Indent with tabs" in [
        c.findChildren(type(panel.detail_title))[0].text()
        for c in panel.statements.children()
        if hasattr(c, "findChildren") and c.findChildren(type(panel.detail_title))
    ]
    assert all(b.isEnabled() for b in panel.action_buttons.values())


def test_keep_both_is_written_to_the_file(
    qtbot: QtBot, seeded_channels: MemoryChannels, seeded_home: Path
) -> None:
    panel = _panel(qtbot, seeded_channels)
    qtbot.waitUntil(lambda: panel.list.count() == 1, timeout=5000)
    panel.action_buttons["keep-both"].click()
    qtbot.waitUntil(lambda: panel.stack.currentWidget() is panel.empty, timeout=5000)
    assert panel.empty.headline.text() == "No open conflicts"
    memory = MemoryStore(seeded_home).read("spotter/main")
    assert memory is not None
    assert [c.status for c in memory.contradictions] == ["resolved"]
    assert memory.find("conv-9c8d7e6f") is not None, "both statements are kept"
    panel.show_resolved.setChecked(True)
    assert panel.list.count() == 1
    assert not panel.action_buttons["keep-newer"].isEnabled()


def _add_bullet(store: MemoryStore, branch: str, section: str, bullet: str) -> None:
    text = store.read_text(branch) or ""
    store.write_text(branch, text.replace(f"## {section}\n", f"## {section}\n\n{bullet}\n", 1))


def test_cross_branch_conflict_mark_older_outdated(
    qtbot: QtBot, seeded_channels: MemoryChannels, seeded_home: Path
) -> None:
    store = MemoryStore(seeded_home)
    _add_bullet(
        store,
        "puffin-todo-list/ui",
        "Coding Preferences",
        "- **Use semicolons**: Always use semicolons in JavaScript. "
        "(id: pref-old11111, confidence: 0.85, extracted: 2026-02-11)",
    )
    _add_bullet(
        store,
        "spotter/main",
        "Coding Preferences",
        "- **No semicolons**: Never use semicolons in JavaScript. "
        "(id: pref-new22222, confidence: 0.85, extracted: 2026-03-05)",
    )
    panel = _panel(qtbot, seeded_channels)
    qtbot.waitUntil(lambda: panel.list.count() == 2, timeout=5000)
    row = next(i for i in range(panel.list.count()) if "across" in panel.list.item(i).text())
    assert panel.list.item(row).text().endswith("across puffin-todo-list/ui, spotter/main")
    panel.list.setCurrentRow(row)
    assert panel.detail_scope.text().startswith("Across branches:")
    panel.action_buttons["mark-outdated"].click()
    qtbot.waitUntil(lambda: panel.banner.label.text().startswith("Resolved"), timeout=5000)
    older = store.read("puffin-todo-list/ui")
    newer = store.read("spotter/main")
    assert older is not None and newer is not None
    assert older.find("pref-old11111") is None, "the older statement left its section"
    kept = [i for c in older.contradictions for i in c.items if i.id == "pref-old11111"]
    assert kept and "outdated" in kept[0].tags, "and was kept, tagged outdated"
    assert newer.find("pref-new22222") is not None
    qtbot.waitUntil(lambda: panel.list.count() == 1, timeout=5000)


def test_no_conflicts_empty_state(qtbot: QtBot, channels: MemoryChannels) -> None:
    panel = _panel(qtbot, channels)
    qtbot.waitUntil(lambda: panel.stack.currentWidget() is panel.empty, timeout=5000)
    assert panel.empty.headline.text() == "No conflicts"


def test_each_statement_shows_where_it_came_from(
    qtbot: QtBot, seeded_channels: MemoryChannels
) -> None:
    from app.ui.conflicts import StatementCard

    panel = _panel(qtbot, seeded_channels)
    qtbot.waitUntil(lambda: bool(panel.statements.findChildren(StatementCard)), timeout=5000)
    card = panel.statements.findChildren(StatementCard)[0]
    assert card.where_button.isEnabled() and card.where_button.accessibleName()
    qtbot.mouseClick(card.where_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: (
            panel.provenance.isVisible()
            and panel.provenance.status.text() != "Looking up the conversations…"
        ),
        timeout=5000,
    )
    assert panel.provenance.source_count >= 1 or panel.provenance.status.text()
