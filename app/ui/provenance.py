"""`ProvenanceView`: where a memory came from, shown under an item in any panel.

For each source of the item: the agent (Claude Code, Codex, Aider, Puffin, you), the date
of the conversation, the redacted lines around the statement, and actions to open the
transcript or copy its path while it still exists. Loaded through `ops.PROVENANCE` off
the GUI thread; a newer request replaces an older one still on its way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices, QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from app.service.channels import MemoryChannels, is_error
from app.ui.widgets import heading, icon_button, muted, push_button


class _SourceRow(QWidget):
    """One source: who, when, the excerpt, and the transcript actions."""

    def __init__(self, source: dict[str, Any], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 4)
        layout.setSpacing(4)
        where = [str(source.get("agent", "")), str(source.get("date", ""))]
        if source.get("branch"):
            where.append(str(source["branch"]))
        line = QLabel(" · ".join(p for p in where if p))
        line.setWordWrap(True)
        layout.addWidget(line)
        excerpt = str(source.get("excerpt") or "")
        if excerpt:
            box = QPlainTextEdit(excerpt)
            box.setReadOnly(True)
            box.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
            box.setMaximumHeight(96)
            box.setAccessibleName(f"Excerpt from {source.get('agent', 'the source')}")
            layout.addWidget(box)
        note = str(source.get("note") or "")
        if note:
            layout.addWidget(muted(QLabel(note)))
        path = str(source.get("path") or "")
        if path:
            actions = QHBoxLayout()
            actions.setSpacing(6)
            self.open_button = push_button("Open transcript", tooltip=path)
            self.open_button.setAccessibleName("Open the transcript")
            self.open_button.setEnabled(bool(source.get("exists")))
            self.open_button.clicked.connect(
                lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(path))
            )
            copy = push_button("Copy path", tooltip="Copy the transcript's path")
            copy.setAccessibleName("Copy the transcript's path")
            copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(path))
            actions.addWidget(self.open_button)
            actions.addWidget(copy)
            actions.addStretch(1)
            layout.addLayout(actions)


class ProvenanceView(QFrame):
    """The sources of one item (see the module docstring); hidden until asked."""

    def __init__(self, channels: MemoryChannels, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.channels = channels
        self.setObjectName("provenance")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName("Where this memory came from")
        self.item_id: str | None = None
        self._seq = 0
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.setSpacing(4)
        top = QHBoxLayout()
        self.title = heading("Where this came from", 1.0)
        close = icon_button("close", "Hide (Esc)", text="Hide")
        close.setAccessibleName("Hide where this came from")
        close.clicked.connect(self.hide)
        top.addWidget(self.title, 1)
        top.addWidget(close)
        layout.addLayout(top)
        self.status = muted(QLabel(""))
        self.status.setWordWrap(True)
        layout.addWidget(self.status)
        self.rows = QVBoxLayout()
        self.rows.setSpacing(2)
        layout.addLayout(self.rows)
        self.hide()

    def show_for(self, item_id: str, branch: str | None = None) -> None:
        """Load and show the sources of `item_id`."""
        self._seq += 1
        self.item_id = item_id
        self._clear()
        self.status.setText("Looking up the conversations…")
        self.show()
        self.channels.start(self._load(self._seq, item_id, branch), owner=self)

    async def _load(self, seq: int, item_id: str, branch: str | None) -> None:
        reply = await self.channels.provenance(item_id, branch)
        if seq != self._seq:
            return  # another item was asked for meanwhile
        self.show_reply(reply)

    def show_reply(self, reply: Mapping[str, Any]) -> None:
        """Fill the view from a `ops.PROVENANCE` answer."""
        self._clear()
        if is_error(reply):
            self.status.setText(str(reply.get("message", "Not found.")))
            return
        sources = reply.get("sources") or []
        title = str(reply.get("title", ""))
        count = len(sources)
        self.title.setText(f"Where “{title}” came from" if title else "Where this came from")
        self.status.setText(
            "No source is recorded."
            if not count
            else f"Said in {count} conversation{'s' if count != 1 else ''}."
            if count > 1
            else ""
        )
        for source in sources:
            self.rows.addWidget(_SourceRow(source, self))

    def _clear(self) -> None:
        while self.rows.count():
            item = self.rows.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.setParent(None)
                widget.deleteLater()

    @property
    def source_count(self) -> int:
        """Sources shown."""
        return len(self.findChildren(_SourceRow))
