"""Conflicts panel: contradictions recorded inside branch files and contradictions found
across branches, each with the statements involved and three resolutions written through
the API: Keep newer, Keep both, Mark older as outdated."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.service.channels import MemoryChannels, is_error
from app.ui import icons
from app.ui.dashboard import CATEGORY_NAMES
from app.ui.provenance import ProvenanceView
from app.ui.widgets import (
    SPACING,
    Banner,
    EmptyState,
    Panel,
    current_data,
    heading,
    muted,
    push_button,
    scaled_font,
    select_row_with,
)

KEY_ROLE = Qt.ItemDataRole.UserRole
ACTIONS = (
    (
        "keep-newer",
        "Keep newer",
        "Keep the newest statement; the others move to the file's conflict record.",
    ),
    ("keep-both", "Keep both", "Both statements stay; the conflict is marked resolved."),
    (
        "mark-outdated",
        "Mark older as outdated",
        "Keep the newest; the older statements are kept, tagged outdated.",
    ),
)


def conflict_title(conflict: Mapping[str, Any]) -> str:
    """A short title: the statements' titles for conflicts across branches."""
    if conflict.get("scope") == "cross-branch":
        titles = [str(i.get("title")) for i in conflict.get("items", []) if i.get("title")]
        if len(titles) >= 2:
            return " vs ".join(dict.fromkeys(titles))
    return str(conflict.get("title", ""))


def conflict_key(conflict: Mapping[str, Any]) -> str:
    """A key unique across scopes (branch conflicts share ids between files)."""
    return f"{conflict.get('scope')}|{conflict.get('branch', '')}|{conflict.get('id')}"


class StatementCard(QFrame):
    """One statement taking part in a conflict, with a button to see where it came from."""

    where_requested = Signal(str, str)  # item id, branch

    def __init__(self, item: dict[str, Any], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resultCard")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 10, 12, 10)
        layout.setSpacing(3)
        title = QLabel(str(item.get("title", "")))
        title.setFont(scaled_font(title, 1.0, bold=True))
        title.setWordWrap(True)
        content = QLabel(str(item.get("content", "")))
        content.setWordWrap(True)
        content.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        parts = [str(item.get("branch", ""))]
        confidence = item.get("confidence")
        if isinstance(confidence, int | float):
            parts.append(f"{round(confidence * 100)}% confidence")
        if item.get("extracted"):
            parts.append(f"extracted {item['extracted']}")
        if "outdated" in (item.get("tags") or []):
            parts.append("outdated")
        if item.get("pinned"):
            parts.append("written by you")
        meta = muted(QLabel(" · ".join(p for p in parts if p)))
        meta.setWordWrap(True)
        layout.addWidget(title)
        layout.addWidget(content)
        row = QHBoxLayout()
        row.addWidget(meta, 1)
        self.where_button = push_button(
            "Where from", tooltip="The conversation this statement came from, with an excerpt"
        )
        self.where_button.setAccessibleName(f"Where {item.get('title', 'this')} came from")
        item_id, branch = str(item.get("id", "")), str(item.get("branch", ""))
        self.where_button.setEnabled(bool(item_id))
        self.where_button.clicked.connect(lambda: self.where_requested.emit(item_id, branch))
        row.addWidget(self.where_button)
        layout.addLayout(row)


class ConflictsPanel(Panel):
    """See the module docstring."""

    title = "Conflicts"
    subtitle = "Statements that contradict each other, inside a branch or across branches."
    icon = "conflicts"

    def __init__(self, channels: MemoryChannels, parent: QWidget | None = None) -> None:
        super().__init__(channels, parent)
        self._conflicts: dict[str, Mapping[str, Any]] = {}
        self.show_resolved = QCheckBox("Show resolved")
        self.show_resolved.toggled.connect(self._on_show_resolved_toggled)
        self.header_actions.addWidget(self.show_resolved)
        self.banner = Banner()
        self.body.addWidget(self.banner)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setChildrenCollapsible(False)
        self.list = QListWidget()
        self.list.setAccessibleName("Conflicts")
        self.list.setObjectName("itemList")
        self.list.setWordWrap(True)
        self.list.setIconSize(QSize(18, 18))
        self.list.currentItemChanged.connect(self._on_list_current_item_changed)
        splitter.addWidget(self.list)

        detail = QWidget()
        box = QVBoxLayout(detail)
        box.setContentsMargins(SPACING, 0, 0, 0)
        box.setSpacing(8)
        self.detail_title = heading("", 1.2)
        self.detail_title.setWordWrap(True)
        self.detail_scope = muted(QLabel(""))
        self.detail_scope.setWordWrap(True)
        self.detail_description = QLabel("")
        self.detail_description.setWordWrap(True)
        self.detail_description.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
        )
        box.addWidget(self.detail_title)
        box.addWidget(self.detail_scope)
        box.addWidget(self.detail_description)
        self.statements = QWidget()
        self.statements_layout = QVBoxLayout(self.statements)
        self.statements_layout.setContentsMargins(0, 0, 8, 0)
        self.statements_layout.setSpacing(8)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self.statements)
        box.addWidget(scroll, 1)
        self.provenance = ProvenanceView(self.channels)
        box.addWidget(self.provenance)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.action_buttons: dict[str, Any] = {}
        for action, label, tip in ACTIONS:
            button = push_button(label, tooltip=tip)
            button.clicked.connect(lambda _checked=False, a=action: self.resolve(a))
            self.action_buttons[action] = button
            buttons.addWidget(button)
        box.addLayout(buttons)
        splitter.addWidget(detail)
        splitter.setSizes([320, 640])

        self.empty = EmptyState(
            "No conflicts",
            "When two memories disagree — inside a branch or between "
            "branches — they show up here for you to settle.",
            icon="conflicts",
        )
        self.stack = QStackedWidget()
        self.stack.addWidget(self.empty)
        self.stack.addWidget(splitter)
        self.body.addWidget(self.stack, 1)
        self._reload_timer = QTimer(self, singleShot=True, interval=200)
        self._reload_timer.timeout.connect(self._on_reload_timer_timeout)
        channels.branch_changed.connect(self._on_channels_branch_changed)

    def refresh(self) -> None:
        """Reload the conflicts."""
        self.run(self._load())

    async def _load(self) -> None:
        reply = await self.channels.list_conflicts()
        if is_error(reply):
            self.banner.show_message(str(reply.get("message", "")))
            return
        self._conflicts = {conflict_key(c): c for c in reply.get("conflicts", [])}
        self._fill()

    def _visible(self) -> list[Mapping[str, Any]]:
        show_all = self.show_resolved.isChecked()
        return [
            c for c in self._conflicts.values() if show_all or c.get("status", "open") == "open"
        ]

    def _fill(self) -> None:
        keep = self.current_key
        visible = self._visible()
        self.list.blockSignals(True)
        self.list.clear()
        for conflict in visible:
            if conflict.get("scope") == "cross-branch":
                where = "across " + ", ".join(str(b) for b in conflict.get("branches", []))
            else:
                where = f"in {conflict.get('branch', '')}"
            status = conflict.get("status", "open")
            item = QListWidgetItem(
                f"{conflict_title(conflict)}\n{where}"
                + ("" if status == "open" else f" · {status}")
            )
            item.setIcon(icons.glyph("conflicts"))
            item.setData(KEY_ROLE, conflict_key(conflict))
            item.setToolTip(str(conflict.get("description", "")))
            self.list.addItem(item)
        self.list.blockSignals(False)
        if not visible:
            resolved = len(self._conflicts)
            self.empty.set_text(
                "No conflicts" if not resolved else "No open conflicts",
                "When two memories disagree — inside a branch or between branches — they "
                "show up here for you to settle."
                if not resolved
                else f"{resolved} resolved {'conflict' if resolved == 1 else 'conflicts'} "
                "kept in the branch files (Show resolved).",
            )
            self.stack.setCurrentWidget(self.empty)
            return
        self.stack.setCurrentIndex(1)
        select_row_with(self.list, KEY_ROLE, keep)
        self._show(self.current_key)

    @property
    def current_key(self) -> str | None:
        """Key of the selected conflict."""
        return current_data(self.list, KEY_ROLE)

    def _on_list_current_item_changed(
        self, current: QListWidgetItem | None, _previous: QListWidgetItem | None
    ) -> None:
        self._show(str(current.data(KEY_ROLE)) if current is not None else None)

    def _on_show_resolved_toggled(self, _checked: bool) -> None:
        self._fill()

    def _show(self, key: str | None) -> None:
        conflict = self._conflicts.get(key or "")
        while self.statements_layout.count():
            item = self.statements_layout.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        open_ = conflict is not None and conflict.get("status", "open") == "open"
        for button in self.action_buttons.values():
            button.setEnabled(open_)
        if conflict is None:
            for label in (self.detail_title, self.detail_scope, self.detail_description):
                label.setText("")
            return
        self.detail_title.setText(conflict_title(conflict))
        category = CATEGORY_NAMES.get(str(conflict.get("category")), "")
        if conflict.get("scope") == "cross-branch":
            scope = "Across branches: " + ", ".join(str(b) for b in conflict.get("branches", []))
        else:
            scope = f"Inside {conflict.get('branch', '')}"
        self.detail_scope.setText(
            " · ".join(p for p in (scope, category, str(conflict.get("status", "open"))) if p)
        )
        self.detail_description.setText(str(conflict.get("description", "")))
        self.provenance.hide()
        for statement in conflict.get("items", []):
            card = StatementCard(statement)
            card.where_requested.connect(
                lambda item_id, branch: self.provenance.show_for(item_id, branch or None)
            )
            self.statements_layout.addWidget(card)
        self.statements_layout.addStretch(1)

    def resolve(self, action: str) -> None:
        """Apply a resolution to the selected conflict."""
        conflict = self._conflicts.get(self.current_key or "")
        if conflict is None:
            return
        for button in self.action_buttons.values():
            button.setEnabled(False)
        self.run(self._resolve(conflict, action))

    async def _resolve(self, conflict: Mapping[str, Any], action: str) -> None:
        if conflict.get("scope") == "cross-branch":
            ids = conflict.get("itemIds") or [i.get("id") for i in conflict.get("items", [])]
            reply = await self.channels.resolve_conflict(
                str(conflict["id"]), action, item_ids=[str(i) for i in ids if i]
            )
        else:
            reply = await self.channels.resolve_conflict(
                str(conflict["id"]), action, branch=str(conflict.get("branch", ""))
            )
        if is_error(reply):
            self.banner.show_message(str(reply.get("message", "Could not resolve.")))
            self._show(self.current_key)
            return
        label = next(text for key, text, _tip in ACTIONS if key == action)
        self.banner.show_message(
            f"Resolved: {label.lower()}. Earlier files are kept as versions.", level="ok"
        )
        await self._load()

    def _on_channels_branch_changed(self, _branch: str) -> None:
        self._reload_timer.start()  # a scan changes many branches at once

    def _on_reload_timer_timeout(self) -> None:
        if self.isVisible():
            self.refresh()
