"""Branch browser: grouped list with filter, Markdown view, validated edit, versions with
diff and restore, clear with confirmation and undo, and files changed by the CLI."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox
from pytestqt.qtbot import QtBot

from app.core.store import MemoryStore
from app.service.channels import MemoryChannels
from app.ui.browser import BranchBrowserPanel, display_markdown
from tests.service.support import FIXTURES


def _panel(qtbot: QtBot, channels: MemoryChannels) -> BranchBrowserPanel:
    panel = BranchBrowserPanel(channels)
    qtbot.addWidget(panel)
    panel.resize(1000, 700)
    panel.show()
    panel.refresh()
    qtbot.waitUntil(lambda: panel.tree.topLevelItemCount() > 0, timeout=5000)
    return panel


def _open(qtbot: QtBot, panel: BranchBrowserPanel, branch: str) -> None:
    panel.select_branch(branch)
    qtbot.waitUntil(
        lambda: (
            panel.pages.currentIndex() == panel.PAGE_VIEW and panel.branch_title.text() == branch
        ),
        timeout=5000,
    )


def _visible_branches(panel: BranchBrowserPanel) -> list[str]:
    found = []
    for i in range(panel.tree.topLevelItemCount()):
        group = panel.tree.topLevelItem(i)
        for j in range(group.childCount()):
            child = group.child(j)
            if not child.isHidden() and not group.isHidden():
                found.append(str(child.data(0, 256)))
    return found


def _confirm(qtbot: QtBot, panel: BranchBrowserPanel) -> None:
    qtbot.waitUntil(lambda: panel.findChild(QMessageBox, "confirmBox") is not None, timeout=2000)
    box = panel.findChild(QMessageBox, "confirmBox")
    accept = next(
        b for b in box.buttons() if box.buttonRole(b) == QMessageBox.ButtonRole.AcceptRole
    )
    accept.click()


def test_branches_are_grouped_by_project_and_filtered(
    qtbot: QtBot, seeded_channels: MemoryChannels
) -> None:
    panel = _panel(qtbot, seeded_channels)
    groups = [panel.tree.topLevelItem(i).text(0) for i in range(panel.tree.topLevelItemCount())]
    assert groups == ["puffin-todo-list", "spotter"]
    spotter = panel.tree.topLevelItem(1).child(0)
    assert (spotter.text(0), spotter.text(1)) == ("main", "5")
    qtbot.keyClicks(panel.filter, "spot")
    assert _visible_branches(panel) == ["spotter/main"]
    assert panel.tree.topLevelItem(0).isHidden()
    panel.filter.clear()
    assert len(_visible_branches(panel)) == 2


def test_selected_file_is_rendered_as_markdown(
    qtbot: QtBot, seeded_channels: MemoryChannels
) -> None:
    panel = _panel(qtbot, seeded_channels)
    _open(qtbot, panel, "spotter/main")
    text = panel.viewer.toPlainText()
    assert "SQLite index in WAL mode" in text
    assert "tests/<layer>/test_<module>.py" in text, "angle brackets are text, not HTML"
    assert "(id: arch-" not in text, "inline metadata is shown as a short note"
    assert "92%" in text
    assert panel.branch_meta.text().startswith("5 items")


def test_invalid_edit_shows_problems_and_changes_nothing(
    qtbot: QtBot, seeded_channels: MemoryChannels, seeded_home: Path
) -> None:
    panel = _panel(qtbot, seeded_channels)
    _open(qtbot, panel, "spotter/main")
    before = MemoryStore(seeded_home).read_text("spotter/main")
    panel.start_edit()
    assert panel.editing
    panel.editor.setPlainText("This is not a branch memory file.")
    panel.save()
    qtbot.waitUntil(lambda: panel.problems.isVisible(), timeout=5000)
    assert panel.problems.text().startswith("Not saved")
    assert panel.editing, "the editor stays open with the text"
    assert MemoryStore(seeded_home).read_text("spotter/main") == before


def test_edit_saves_through_the_api_and_keeps_a_version(
    qtbot: QtBot, seeded_channels: MemoryChannels, seeded_home: Path
) -> None:
    panel = _panel(qtbot, seeded_channels)
    _open(qtbot, panel, "puffin-todo-list/ui")
    panel.start_edit()
    text = panel.editor.toPlainText().replace(
        "## Bug Patterns\n", "## Bug Patterns\n\n- **Double submit**: Enter twice added twice.\n"
    )
    panel.editor.setPlainText(text)
    panel.save()
    qtbot.waitUntil(lambda: not panel.editing, timeout=5000)
    store = MemoryStore(seeded_home)
    assert "Double submit" in (store.read_text("puffin-todo-list/ui") or "")
    assert len(store.list_versions("puffin-todo-list/ui")) == 1
    qtbot.waitUntil(lambda: "Double submit" in panel.viewer.toPlainText(), timeout=5000)


def test_versions_show_a_diff_and_restore(
    qtbot: QtBot, seeded_channels: MemoryChannels, seeded_home: Path
) -> None:
    store = MemoryStore(seeded_home)
    original = store.read_text("puffin-todo-list/ui") or ""
    store.write_text("puffin-todo-list/ui", original.replace("plain HTML", "Svelte"))
    panel = _panel(qtbot, seeded_channels)
    _open(qtbot, panel, "puffin-todo-list/ui")
    panel.show_versions()
    qtbot.waitUntil(lambda: panel.version_list.count() == 1, timeout=5000)
    panel.version_list.setCurrentRow(0)
    qtbot.waitUntil(lambda: "+The todo list UI is Svelte" in panel.diff.toPlainText(), timeout=5000)
    assert "-The todo list UI is plain HTML" in panel.diff.toPlainText()
    assert panel.diff.isReadOnly()
    panel.restore_button.click()
    _confirm(qtbot, panel)
    qtbot.waitUntil(
        lambda: "plain HTML" in (store.read_text("puffin-todo-list/ui") or ""), timeout=5000
    )
    qtbot.waitUntil(lambda: panel.pages.currentIndex() == panel.PAGE_VIEW, timeout=5000)


def test_archive_lists_what_maintenance_took_out_and_restores_it(
    qtbot: QtBot, seeded_channels: MemoryChannels, seeded_home: Path
) -> None:
    from app.core.archive import Archive
    from app.core.models import Category, MemoryItem

    gone = MemoryItem(
        category=Category.PROJECT_CONVENTIONS,
        title="Use pnpm workspaces",
        content="Use pnpm workspaces for the monorepo.",
        id="conv-0badc0de",
    )
    Archive(seeded_home).add("puffin-todo-list/ui", [(gone, "pruned by weekly maintenance")])
    panel = _panel(qtbot, seeded_channels)
    _open(qtbot, panel, "puffin-todo-list/ui")
    panel.archive_button.click()
    qtbot.waitUntil(lambda: panel.archive_list.count() == 1, timeout=5000)
    panel.archive_list.setCurrentRow(0)
    assert "pruned by weekly maintenance" in panel.archive_detail.toPlainText()
    assert panel.archive_restore_button.isEnabled()
    panel.archive_restore_button.click()
    store = MemoryStore(seeded_home)
    qtbot.waitUntil(
        lambda: "Use pnpm workspaces" in (store.read_text("puffin-todo-list/ui") or ""),
        timeout=5000,
    )
    qtbot.waitUntil(lambda: panel.archive_list.count() == 0, timeout=5000)
    assert "Nothing archived" in panel.archive_detail.toPlainText()


def test_clear_asks_first_and_can_be_undone(
    qtbot: QtBot, seeded_channels: MemoryChannels, seeded_home: Path
) -> None:
    store = MemoryStore(seeded_home)
    panel = _panel(qtbot, seeded_channels)
    _open(qtbot, panel, "spotter/main")
    panel.clear_button.click()
    assert store.exists("spotter/main"), "nothing happens before the confirmation"
    _confirm(qtbot, panel)
    qtbot.waitUntil(lambda: not store.exists("spotter/main"), timeout=5000)
    qtbot.waitUntil(lambda: _visible_branches(panel) == ["puffin-todo-list/ui"], timeout=5000)
    assert panel.banner.isVisible() and panel.banner.action.text() == "Undo"
    panel.banner.action.click()
    qtbot.waitUntil(lambda: store.exists("spotter/main"), timeout=5000)
    qtbot.waitUntil(lambda: len(_visible_branches(panel)) == 2, timeout=5000)


def test_file_changed_by_the_cli_shows_up_within_two_seconds(
    qtbot: QtBot, seeded_channels: MemoryChannels, seeded_home: Path
) -> None:
    panel = _panel(qtbot, seeded_channels)
    _open(qtbot, panel, "spotter/main")
    store = MemoryStore(seeded_home)
    text = store.read_text("spotter/main") or ""
    store.write_text("spotter/main", text.replace("Prefer pathlib", "Prefer pathlib always"))
    new = (
        (FIXTURES / "todo__ui.md")
        .read_text(encoding="utf-8")
        .replace("puffin-todo-list/ui", "puffin-todo-list/api")
    )
    store.write_text("puffin-todo-list/api", new)
    qtbot.waitUntil(lambda: "Prefer pathlib always" in panel.viewer.toPlainText(), timeout=2000)
    qtbot.waitUntil(lambda: "puffin-todo-list/api" in _visible_branches(panel), timeout=2000)


def test_outside_change_while_editing_does_not_replace_the_text(
    qtbot: QtBot, seeded_channels: MemoryChannels, seeded_home: Path
) -> None:
    panel = _panel(qtbot, seeded_channels)
    _open(qtbot, panel, "spotter/main")
    panel.start_edit()
    panel.editor.setPlainText(panel.editor.toPlainText() + "\n")
    mine = panel.editor.toPlainText()
    store = MemoryStore(seeded_home)
    store.write_text("spotter/main", (store.read_text("spotter/main") or "") + "\n\n")
    qtbot.waitUntil(lambda: panel.banner.isVisible(), timeout=2000)
    assert "changed on disk" in panel.banner.label.text()
    assert panel.editing and panel.editor.toPlainText() == mine


def test_empty_home_invites_a_scan(qtbot: QtBot, channels: MemoryChannels) -> None:
    panel = BranchBrowserPanel(channels)
    qtbot.addWidget(panel)
    panel.show()
    panel.refresh()
    qtbot.waitUntil(lambda: panel.left_stack.currentWidget() is panel.list_empty, timeout=5000)
    assert panel.list_empty.headline.text() == "No memories yet. Scan your agent history"


def test_display_markdown_marks_empty_sections() -> None:
    shown = display_markdown((FIXTURES / "todo__ui.md").read_text(encoding="utf-8"))
    assert "## Architectural Decisions\n\n*Nothing yet.*" in shown
    assert "(id: pref-7d6c5b4a" not in shown
    assert "*— 86% · Puffin · 2026-02-11*" in shown


def test_esc_keeps_unsaved_edits_as_a_draft_that_is_offered_back(
    qtbot: QtBot, seeded_channels: MemoryChannels, seeded_home: Path
) -> None:
    panel = _panel(qtbot, seeded_channels)
    _open(qtbot, panel, "spotter/main")
    before = MemoryStore(seeded_home).read_text("spotter/main")
    panel.start_edit()
    panel.editor.appendPlainText("\n- **Half-written**: an edit the user has not saved yet.")
    edited = panel.editor.toPlainText()
    panel.cancel_button.click()  # what Esc triggers (the button's shortcut)
    qtbot.waitUntil(lambda: not panel.editing, timeout=2000)
    assert MemoryStore(seeded_home).read_text("spotter/main") == before, "nothing was saved"
    assert panel.banner.isVisible() and "draft" in panel.banner.label.text()

    panel.banner.action.click()  # Resume editing
    assert panel.editing and panel.editor.toPlainText() == edited
    assert panel.discard_button.isVisible()
    panel.discard_button.click()
    assert not panel.editing and panel.draft("spotter/main") is None


def test_quitting_with_unsaved_edits_keeps_them_for_the_next_session(
    qtbot: QtBot, seeded_channels: MemoryChannels
) -> None:
    panel = _panel(qtbot, seeded_channels)
    _open(qtbot, panel, "spotter/main")
    panel.start_edit()
    panel.editor.appendPlainText("\n- **Late idea**: typed just before Ctrl+Q.")
    edited = panel.editor.toPlainText()
    assert panel.keep_unsaved_edits()  # what the app does on every way of quitting

    later = _panel(qtbot, seeded_channels)  # the next session's browser
    _open(qtbot, later, "spotter/main")
    assert "unsaved edits" in later.banner.label.text()
    later.banner.action.click()
    assert later.editing and later.editor.toPlainText() == edited

    later.save()  # saving clears the draft
    qtbot.waitUntil(lambda: not later.editing, timeout=5000)
    assert later.draft("spotter/main") is None


def test_improve_without_an_llm_says_what_to_add(
    qtbot: QtBot, seeded_channels: MemoryChannels
) -> None:
    panel = _panel(qtbot, seeded_channels)
    panel.select_branch("spotter/main")
    qtbot.waitUntil(lambda: panel.current == "spotter/main", timeout=5000)
    assert panel.improve_button.accessibleName()
    qtbot.mouseClick(panel.improve_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: "API key" in panel.branch_meta.text(), timeout=5000)
    assert panel.improve_button.isEnabled()
