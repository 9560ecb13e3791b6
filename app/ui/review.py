"""Review queue panel: medium-confidence items wait here. Approve as is, edit then approve
(title, content, category), or reject; approved items enter their branch as user items."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.service.channels import MemoryChannels, is_error
from app.ui.dashboard import CATEGORY_NAMES
from app.ui.widgets import (
    SPACING,
    Banner,
    EmptyState,
    Panel,
    current_data,
    format_time,
    heading,
    muted,
    push_button,
    select_row_with,
)

ID_ROLE = Qt.ItemDataRole.UserRole


class ReviewPanel(Panel):
    """See the module docstring."""

    title = "Review"
    subtitle = "Items Puffin was not sure about. Approve, edit then approve, or reject."
    icon = "review"
    count_changed = Signal(int)

    def __init__(self, channels: MemoryChannels, parent: QWidget | None = None) -> None:
        super().__init__(channels, parent)
        self._items: dict[str, dict[str, Any]] = {}
        self._queue_size: int | None = None
        self.banner = Banner()
        self.body.addWidget(self.banner)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setChildrenCollapsible(False)
        self.list = QListWidget()
        self.list.setAccessibleName("Items to review")
        self.list.setObjectName("itemList")
        self.list.setWordWrap(True)
        self.list.currentItemChanged.connect(self._on_list_current_item_changed)
        splitter.addWidget(self.list)

        detail = QWidget()
        form_box = QVBoxLayout(detail)
        form_box.setContentsMargins(SPACING, 0, 0, 0)
        form_box.setSpacing(SPACING)
        self.detail_title = heading("", 1.2)
        self.detail_title.setWordWrap(True)
        self.detail_meta = muted(QLabel(""))
        self.detail_meta.setWordWrap(True)
        form_box.addWidget(self.detail_title)
        form_box.addWidget(self.detail_meta)
        form = QFormLayout()
        form.setSpacing(8)
        self.category = QComboBox()
        for key, name in CATEGORY_NAMES.items():
            self.category.addItem(name, key)
        self.title_edit = QLineEdit()
        self.content_edit = QPlainTextEdit()
        self.content_edit.setAccessibleName("Content")
        self.title_edit.setAccessibleName("Title")
        self.category.setAccessibleName("Category")
        form.addRow("Category", self.category)
        form.addRow("Title", self.title_edit)
        form.addRow("Content", self.content_edit)
        form_box.addLayout(form, 1)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.reject_button = push_button("Reject", "close", tooltip="Drop this item")
        self.approve_button = push_button("Approve", "check",
                                          tooltip="Add it to its branch (with your edits)")
        self.approve_button.setDefault(True)
        self.reject_button.clicked.connect(self._on_reject_button_clicked)
        self.approve_button.clicked.connect(self._on_approve_button_clicked)
        buttons.addWidget(self.reject_button)
        buttons.addWidget(self.approve_button)
        form_box.addLayout(buttons)
        splitter.addWidget(detail)
        splitter.setSizes([320, 640])

        self.empty = EmptyState(
            "Nothing to review",
            "Items Puffin is unsure about (50–75% confidence) wait here for you to approve, "
            "edit or reject.", icon="review")
        self.stack = QStackedWidget()
        self.stack.addWidget(self.empty)
        self.stack.addWidget(splitter)
        self.body.addWidget(self.stack, 1)
        channels.watch_stats(self._on_channels_stats_changed)

    def refresh(self) -> None:
        """Reload the queue."""
        self.run(self._load())

    async def _load(self) -> None:
        reply = await self.channels.review_list()
        if is_error(reply):
            self.banner.show_message(str(reply.get("message", "")))
            return
        items = list(reply.get("items", []))
        self._items = {str(i["id"]): i for i in items}
        keep = self.current_id
        self.list.blockSignals(True)
        self.list.clear()
        for entry in items:
            confidence = entry.get("confidence")
            pct = f"{round(confidence * 100)}%" if isinstance(confidence, int | float) else ""
            text = f"{entry.get('title', '')}\n{entry.get('branch', '')} · " \
                   f"{CATEGORY_NAMES.get(str(entry.get('category')), '')} · {pct}"
            item = QListWidgetItem(text)
            item.setData(ID_ROLE, str(entry["id"]))
            item.setToolTip(str(entry.get("content", "")))
            self.list.addItem(item)
        self.list.blockSignals(False)
        self.count_changed.emit(len(items))
        if not items:
            self.stack.setCurrentWidget(self.empty)
            return
        self.stack.setCurrentIndex(1)
        select_row_with(self.list, ID_ROLE, keep)
        self._show(self.current_id)

    @property
    def current_id(self) -> str | None:
        """Id of the selected item."""
        return current_data(self.list, ID_ROLE)

    def _on_list_current_item_changed(self, current: QListWidgetItem | None,
                                      _previous: QListWidgetItem | None) -> None:
        self._show(str(current.data(ID_ROLE)) if current is not None else None)

    def _show(self, item_id: str | None) -> None:
        entry = self._items.get(item_id or "")
        enabled = entry is not None
        for widget in (self.category, self.title_edit, self.content_edit, self.approve_button,
                       self.reject_button):
            widget.setEnabled(enabled)
        if entry is None:
            self.detail_title.setText("")
            self.detail_meta.setText("")
            return
        self.detail_title.setText(str(entry.get("title", "")))
        confidence = entry.get("confidence")
        meta = [f"Branch {entry.get('branch', '')}"]
        if isinstance(confidence, int | float):
            meta.append(f"{round(confidence * 100)}% confidence")
        if entry.get("source"):
            meta.append(f"from {entry['source']}")
        meta.append(f"queued {format_time(entry.get('queued'), never='')}")
        self.detail_meta.setText(" · ".join(meta))
        self.category.setCurrentIndex(max(self.category.findData(entry.get("category")), 0))
        self.title_edit.setText(str(entry.get("title", "")))
        self.content_edit.setPlainText(str(entry.get("content", "")))

    def _on_approve_button_clicked(self) -> None:
        item_id = self.current_id
        entry = self._items.get(item_id or "")
        if item_id is None or entry is None:
            return
        title = self.title_edit.text().strip()
        content = self.content_edit.toPlainText().strip()
        category = str(self.category.currentData())
        self.run(self._approve(
            item_id,
            title if title and title != entry.get("title") else None,
            content if content and content != entry.get("content") else None,
            category if category != entry.get("category") else None,
        ))

    async def _approve(self, item_id: str, title: str | None, content: str | None,
                       category: str | None) -> None:
        self.approve_button.setEnabled(False)
        reply = await self.channels.review_approve(item_id, title=title, content=content,
                                                   category=category)
        if is_error(reply):
            self.approve_button.setEnabled(True)
            self.banner.show_message(str(reply.get("message", "Approve failed.")))
            return
        self.banner.show_message(f"Approved into {reply.get('branch', 'its branch')}.",
                                 level="ok")
        await self._load()

    def _on_reject_button_clicked(self) -> None:
        item_id = self.current_id
        if item_id is not None:
            self.run(self._reject(item_id))

    async def _reject(self, item_id: str) -> None:
        reply = await self.channels.review_reject(item_id)
        if is_error(reply):
            self.banner.show_message(str(reply.get("message", "Reject failed.")))
            return
        self.banner.show_message("Rejected.", level="ok")
        await self._load()

    def _on_channels_stats_changed(self, stats: dict[str, Any]) -> None:
        size = int(stats.get("reviewQueue", 0) or 0)
        if size != self._queue_size:
            self._queue_size = size
            self.count_changed.emit(size)
            self.refresh()
