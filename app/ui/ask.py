"""Ask panel: a question box over `ops.RETRIEVE`. Fast search runs as you type (debounced);
a deep search (engine tiers, cross-branch conflicts) runs on demand. Each answer shows its
branch, category, confidence and score; conflicts found between branches are listed below."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QMouseEvent, QShortcut
from PySide6.QtWidgets import (
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QScrollArea,
    QSpinBox,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.core.answers import CrossConflictFields, Memory, RetrieveAnswer
from app.service.channels import MemoryChannels, is_error
from app.ui import icons
from app.ui.dashboard import CATEGORY_NAMES
from app.ui.widgets import (
    EmptyState,
    Panel,
    heading,
    muted,
    push_button,
    scaled_font,
    search_box,
)


class ResultCard(QFrame):
    """One retrieved memory; clicking it (or its Open button) opens it in its branch."""

    opened = Signal(str, str)  # branch, item id

    def __init__(self, memory: Memory, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resultCard")
        self.branch = str(memory.get("branch", ""))
        self.item_id = str(memory.get("id", ""))
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 10, 12, 10)
        layout.setSpacing(4)
        title = QLabel(str(memory.get("title") or "Untitled"))
        title.setFont(scaled_font(title, 1.0, bold=True))
        title.setWordWrap(True)
        content = QLabel(str(memory.get("content", "")))
        content.setWordWrap(True)
        content.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        confidence = memory.get("confidence")
        score = memory.get("score")
        parts = [
            str(memory.get("branch", "")),
            CATEGORY_NAMES.get(str(memory.get("category")), str(memory.get("category", ""))),
        ]
        if isinstance(confidence, int | float):
            parts.append(f"{round(confidence * 100)}% confidence")
        if isinstance(score, int | float):
            parts.append(f"score {score:.2f}")
        meta = muted(QLabel(" · ".join(p for p in parts if p)))
        meta.setFont(scaled_font(meta, 0.9))
        meta.setWordWrap(True)
        layout.addWidget(title)
        layout.addWidget(content)
        bottom = QHBoxLayout()
        bottom.addWidget(meta, 1)
        self.open_button = push_button(
            "Open", tooltip="Open this memory in its branch, with where it came from"
        )
        self.open_button.setAccessibleName(f"Open {memory.get('title', 'this memory')}")
        self.open_button.setEnabled(bool(self.branch and self.item_id))
        self.open_button.clicked.connect(self._open)
        bottom.addWidget(self.open_button)
        layout.addLayout(bottom)
        self.setAccessibleName(f"{memory.get('title', '')}: {memory.get('content', '')}")

    def _open(self) -> None:
        if self.branch and self.item_id:
            self.opened.emit(self.branch, self.item_id)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802 - Qt override
        """A click anywhere on the card opens the memory."""
        if event.button() == Qt.MouseButton.LeftButton:
            self._open()
        super().mouseReleaseEvent(event)


class ConflictCard(QFrame):
    """A contradiction found between branches during retrieval."""

    def __init__(self, conflict: CrossConflictFields, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resultCard")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 10, 12, 10)
        dot = QLabel()
        dot.setPixmap(icons.status_dot("maintenance"))
        dot.setAlignment(Qt.AlignmentFlag.AlignTop)
        text = QVBoxLayout()
        text.setSpacing(2)
        description = QLabel(str(conflict.get("description", "")))
        description.setWordWrap(True)
        branches = ", ".join(str(b) for b in conflict.get("branches", []))
        category = CATEGORY_NAMES.get(str(conflict.get("category")), "")
        meta = muted(QLabel(" · ".join(p for p in (category, branches) if p)))
        meta.setWordWrap(True)
        text.addWidget(description)
        text.addWidget(meta)
        layout.addWidget(dot)
        layout.addLayout(text, 1)


class AskPanel(Panel):
    """See the module docstring."""

    title = "Ask"
    subtitle = "Search everything Puffin remembers. Fast search runs as you type."
    icon = "ask"
    # A result was opened: (branch, item id), for the window to show it in the browser.
    item_requested = Signal(str, str)

    def __init__(
        self, channels: MemoryChannels, parent: QWidget | None = None, *, debounce_ms: int = 300
    ) -> None:
        super().__init__(channels, parent)
        self._seq = 0
        self.last_reply: RetrieveAnswer | None = None

        row = QHBoxLayout()
        row.setSpacing(8)
        self.query = search_box(
            "Ask your memory… e.g. how do we store the index? (Ctrl+K)", "Question"
        )
        self.query.setFont(scaled_font(self.query, 1.1))
        self.query.textChanged.connect(self._on_query_text_changed)
        self.query.returnPressed.connect(self._on_query_return_pressed)
        self.scope = QComboBox()
        self.scope.setAccessibleName("Search scope")
        self.scope.addItem("All projects", None)
        self.scope.currentIndexChanged.connect(self._on_scope_current_index_changed)
        self.max_results = QSpinBox()
        self.max_results.setRange(1, 50)
        self.max_results.setValue(8)
        self.max_results.setPrefix("top ")
        self.max_results.setAccessibleName("Number of results")
        self.deep_button = push_button(
            "Deep search", "ask", tooltip="Ask the engine to search deeper (Ctrl+Enter)"
        )
        self.deep_button.clicked.connect(self.deep_search)
        row.addWidget(self.query, 1)
        row.addWidget(self.scope)
        row.addWidget(self.max_results)
        row.addWidget(self.deep_button)
        self.body.addLayout(row)
        for keys in ("Ctrl+Return", "Ctrl+Enter"):
            shortcut = QShortcut(QKeySequence(keys), self)
            shortcut.activated.connect(self.deep_search)

        self.summary = muted(QLabel(""))
        self.body.addWidget(self.summary)

        self.results = QWidget()
        self.results_layout = QVBoxLayout(self.results)
        self.results_layout.setContentsMargins(0, 0, 8, 0)
        self.results_layout.setSpacing(8)
        self.results_layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(self.results)
        self.empty = EmptyState(
            "Ask anything about your projects",
            "Decisions, conventions, bug patterns and preferences from "
            "every branch, ranked by relevance and confidence.",
            icon="ask",
        )
        self.stack = QStackedWidget()
        self.stack.addWidget(self.empty)
        self.stack.addWidget(scroll)
        self.body.addWidget(self.stack, 1)

        self._debounce = QTimer(self, singleShot=True, interval=debounce_ms)
        self._debounce.timeout.connect(self._on_debounce_timeout)

    def focus_query(self) -> None:
        """Ctrl+K."""
        self.query.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.query.selectAll()

    def refresh(self) -> None:
        """Reload the project scopes; search again if there is a question."""
        self.run(self._load_scopes())
        if self.query.text().strip():
            self.search("fast")

    async def _load_scopes(self) -> None:
        reply = await self.channels.list_branches()
        if is_error(reply):
            return
        projects = sorted(
            {str(b.get("project")) for b in reply.get("branches", []) if b.get("project")}
        )
        current = self.scope.currentData()
        self.scope.blockSignals(True)
        self.scope.clear()
        self.scope.addItem("All projects", None)
        for project in projects:
            self.scope.addItem(project, project)
        index = self.scope.findData(current)
        self.scope.setCurrentIndex(max(index, 0))
        self.scope.blockSignals(False)

    def _on_query_text_changed(self, _text: str) -> None:
        self._debounce.start()

    def _on_query_return_pressed(self) -> None:
        self._debounce.stop()
        self.search("fast")

    def _on_scope_current_index_changed(self, _index: int) -> None:
        if self.query.text().strip():
            self.search("fast")

    def _on_debounce_timeout(self) -> None:
        self.search("fast")

    def deep_search(self) -> None:
        """Ctrl+Enter: a deep search of the current question."""
        self._debounce.stop()
        self.search("deep")

    def search(self, mode: str) -> None:
        """Ask the current question (replies to older questions are dropped)."""
        text = self.query.text().strip()
        self._seq += 1
        if not text:
            self.last_reply = None
            self.summary.setText("")
            self.empty.set_text(
                "Ask anything about your projects",
                "Decisions, conventions, bug patterns and preferences from "
                "every branch, ranked by relevance and confidence.",
            )
            self.stack.setCurrentWidget(self.empty)
            return
        self.summary.setText("Searching deeply…" if mode == "deep" else "Searching…")
        self.deep_button.setEnabled(mode != "deep")
        self.run(self._search(self._seq, text, mode))

    async def _search(self, seq: int, text: str, mode: str) -> None:
        try:
            reply = await self.channels.retrieve(
                text, self.max_results.value(), project=self.scope.currentData(), mode=mode
            )
        finally:
            if seq == self._seq:
                self.deep_button.setEnabled(True)
        if seq != self._seq:
            return  # the question changed while this one was answered
        self.last_reply = reply
        self._show(text, mode, reply)

    def _show(self, text: str, mode: str, reply: RetrieveAnswer) -> None:
        while self.results_layout.count() > 1:
            item = self.results_layout.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.setParent(None)  # out of the count now, freed at once
                widget.deleteLater()
        if is_error(reply):
            self.summary.setText("")
            self.empty.set_text("The search failed", str(reply.get("message", "")))
            self.stack.setCurrentWidget(self.empty)
            return
        memories = reply.get("memories", [])
        conflicts = reply.get("conflicts", [])
        took = reply.get("retrievalTime")
        parts = [
            f"{len(memories)} {'memory' if len(memories) == 1 else 'memories'}",
            f"{reply.get('totalTokens', 0)} tokens",
        ]
        if isinstance(took, int | float):
            parts.append(f"{took:.0f} ms")
        parts.append("deep search" if mode == "deep" else "fast search")
        self.summary.setText(" · ".join(parts))
        if not memories and not conflicts:
            self.empty.set_text(
                f"Nothing found for “{text}”",
                "Try other words, widen the scope, or run a deep search.",
            )
            self.stack.setCurrentWidget(self.empty)
            return
        position = 0
        for memory in memories:
            card = ResultCard(memory)
            card.opened.connect(self.item_requested)
            self.results_layout.insertWidget(position, card)
            position += 1
        if conflicts:
            label = heading(f"Conflicts ({len(conflicts)})", 1.05)
            self.results_layout.insertWidget(position, label)
            position += 1
            for conflict in conflicts:
                self.results_layout.insertWidget(position, ConflictCard(conflict))
                position += 1
        self.stack.setCurrentIndex(1)

    @property
    def result_count(self) -> int:
        """Memories shown."""
        return len(self.results.findChildren(ResultCard))
