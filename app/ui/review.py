"""Review queue panel: medium-confidence candidates wait here for a person. It owns the
filters (debounced search, category, project or branch, an "N of M" count), multi-select
bulk approve and reject with progress, the keyboard flow (j/k to move, a/r to decide, e to
edit before approving), an undo line that reverts the last decision through the normal API
(forget by id, then `ops.REVIEW_REQUEUE`), and the provenance of each candidate."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QEvent, QItemSelectionModel, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

import app.core.answers as answers
from app.service.channels import MemoryChannels, is_error
from app.ui.dashboard import CATEGORY_NAMES
from app.ui.provenance import ProvenanceView
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
    search_box,
    who_said,
)

ID_ROLE = Qt.ItemDataRole.UserRole
SEARCH_DEBOUNCE_MS = 200
BULK_CHUNK = 25  # ids per `ops.REVIEW_BULK` call: progress steps vs. file writes
ALL = ""  # data of the "All …" entry of a filter box


@dataclass
class Decision:
    """One approve or reject the API answered, with what is needed to revert it."""

    kind: str  # "approve" or "reject"
    item_id: str
    title: str
    branch: str
    entry: Mapping[str, Any] | None  # the queued entry as the API returned it
    memory_id: str = ""  # id of the item written into the branch (approve only)


@dataclass
class UndoStep:
    """What one Ctrl+Z reverts: a single decision or a whole bulk action."""

    kind: str
    decisions: list[Decision] = field(default_factory=list)

    def describe(self) -> str:
        """'approving 'Title'' or 'rejecting 12 candidates'."""
        verb = "approving" if self.kind == "approve" else "rejecting"
        if len(self.decisions) == 1:
            return f"{verb} '{self.decisions[0].title}'"
        return f"{verb} {len(self.decisions)} candidates"


def _haystack(entry: Mapping[str, Any]) -> str:
    parts = [
        entry.get("title"),
        entry.get("content"),
        entry.get("source"),
        entry.get("branch"),
        CATEGORY_NAMES.get(str(entry.get("category")), ""),
        " ".join(entry.get("tags") or []),
    ]
    return " ".join(str(p) for p in parts if p).lower()


def _project(branch: str) -> str:
    return branch.split("/", 1)[0]


class ReviewPanel(Panel):
    """See the module docstring."""

    title = "Review"
    subtitle = (
        "Items Puffin was not sure about. Approve, edit then approve, or reject. "
        "Keys: j/k move, a approve, r reject, e edit, Ctrl+Z undo."
    )
    icon = "review"
    count_changed = Signal(int)
    # The status line's text once an approve, reject or undo has finished.
    decided = Signal(str)

    def __init__(self, channels: MemoryChannels, parent: QWidget | None = None) -> None:
        super().__init__(channels, parent)
        self._items: dict[str, Mapping[str, Any]] = {}
        self._queue_size: int | None = None
        self._busy = False
        self._stop_requested = False
        self._undo: list[UndoStep] = []
        self.banner = Banner()
        self.banner.action.setAccessibleName("Banner action")
        self.body.addWidget(self.banner)

        # -- filters ----------------------------------------------------------------------
        self.filters = QWidget()
        filters = QHBoxLayout(self.filters)
        filters.setContentsMargins(0, 0, 0, 0)
        filters.setSpacing(8)
        self.search = search_box("Search candidates (text, source, branch)", "Search candidates")
        self.search.setAccessibleDescription("Shows only candidates holding every word you type.")
        self.category_filter = QComboBox()
        self.category_filter.setAccessibleName("Category filter")
        self.category_filter.addItem("All categories", ALL)
        for key, name in CATEGORY_NAMES.items():
            self.category_filter.addItem(name, key)
        self.branch_filter = QComboBox()
        self.branch_filter.setAccessibleName("Project or branch filter")
        self.branch_filter.addItem("All projects and branches", ALL)
        self.count_label = muted(QLabel(""))
        self.count_label.setAccessibleName("Candidates shown")
        filters.addWidget(self.search, 2)
        filters.addWidget(self.category_filter, 1)
        filters.addWidget(self.branch_filter, 1)
        filters.addWidget(self.count_label)
        self.body.addWidget(self.filters)
        self._filter_timer = QTimer(self, singleShot=True, interval=SEARCH_DEBOUNCE_MS)
        self._filter_timer.timeout.connect(self._apply_filter)
        self.search.textChanged.connect(self._on_search_text_changed)
        self.category_filter.currentIndexChanged.connect(self._apply_filter)
        self.branch_filter.currentIndexChanged.connect(self._apply_filter)

        # -- list and detail --------------------------------------------------------------
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setChildrenCollapsible(False)
        self.list = QListWidget()
        self.list.setAccessibleName("Items to review")
        self.list.setAccessibleDescription(
            "Shift or Ctrl click to select several; Ctrl+A selects all shown. "
            "j and k move, a approves, r rejects, e edits, Ctrl+Z undoes."
        )
        self.list.setObjectName("itemList")
        self.list.setWordWrap(True)
        self.list.setUniformItemSizes(True)
        self.list.setSpacing(2)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.list.currentItemChanged.connect(self._on_list_current_item_changed)
        self.list.itemSelectionChanged.connect(self._on_list_item_selection_changed)
        self.list.installEventFilter(self)
        self.no_match = EmptyState(
            "No candidates match",
            "Nothing in the queue matches these filters. Clear the search box or pick "
            "another category, project or branch.",
            action="Clear filters",
            icon="review",
        )
        if self.no_match.button is not None:
            self.no_match.button.setAccessibleName("Clear filters")
        self.no_match.action_triggered.connect(self.clear_filters)
        self.list_stack = QStackedWidget()
        self.list_stack.addWidget(self.list)
        self.list_stack.addWidget(self.no_match)
        self.splitter.addWidget(self.list_stack)

        detail = QWidget()
        form_box = QVBoxLayout(detail)
        form_box.setContentsMargins(SPACING, 0, 0, 0)
        form_box.setSpacing(SPACING)
        self.detail_title = heading("", 1.2)
        self.detail_title.setWordWrap(True)
        self.detail_meta = muted(QLabel(""))
        self.detail_meta.setWordWrap(True)
        self.detail_meta.setAccessibleName("Provenance")
        self.detail_reason = muted(QLabel(""))
        self.detail_reason.setWordWrap(True)
        self.detail_reason.setAccessibleName("Why it was queued")
        # The lines of the conversation the candidate came from, kept when it was queued.
        self.detail_excerpt = muted(QLabel(""))
        self.detail_excerpt.setWordWrap(True)
        self.detail_excerpt.setTextFormat(Qt.TextFormat.PlainText)
        self.detail_excerpt.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail_excerpt.setAccessibleName("Excerpt of the conversation")
        self.detail_excerpt.hide()
        form_box.addWidget(self.detail_title)
        form_box.addWidget(self.detail_meta)
        form_box.addWidget(self.detail_reason)
        form_box.addWidget(self.detail_excerpt)
        self.where_button = push_button(
            "Where from", tooltip="The conversation this candidate came from, with an excerpt (W)"
        )
        self.where_button.setAccessibleName("Show where this candidate came from")
        self.where_button.clicked.connect(self._on_where_button_clicked)
        form_box.addWidget(self.where_button)
        self.provenance = ProvenanceView(self.channels)
        form_box.addWidget(self.provenance)
        form = QFormLayout()
        form.setSpacing(8)
        self.category = QComboBox()
        for key, name in CATEGORY_NAMES.items():
            self.category.addItem(name, key)
        self.title_edit = QLineEdit()
        self.content_edit = QPlainTextEdit()
        self.content_edit.setTabChangesFocus(True)
        self.content_edit.setAccessibleName("Content")
        self.content_edit.setAccessibleDescription(
            "Edit before approving. Ctrl+Enter approves with your edits, Escape goes back."
        )
        self.title_edit.setAccessibleName("Title")
        self.title_edit.setAccessibleDescription(self.content_edit.accessibleDescription())
        self.category.setAccessibleName("Category")
        for editor in (self.title_edit, self.content_edit):
            editor.installEventFilter(self)
        form.addRow("Category", self.category)
        form.addRow("Title", self.title_edit)
        form.addRow("Content", self.content_edit)
        form_box.addLayout(form, 1)
        buttons = QHBoxLayout()
        self.selection_label = muted(QLabel(""))
        self.selection_label.setAccessibleName("Selection")
        buttons.addWidget(self.selection_label)
        buttons.addStretch(1)
        self.reject_button = push_button("Reject", "close", tooltip="Drop the selected items (r)")
        self.approve_button = push_button(
            "Approve", "check", tooltip="Add the selected items to their branch (a)"
        )
        self.reject_button.setAccessibleName("Reject selected")
        self.approve_button.setAccessibleName("Approve selected")
        self.approve_button.setDefault(True)
        self.reject_button.clicked.connect(self._on_reject_button_clicked)
        self.approve_button.clicked.connect(self._on_approve_button_clicked)
        buttons.addWidget(self.reject_button)
        buttons.addWidget(self.approve_button)
        form_box.addLayout(buttons)
        self.splitter.addWidget(detail)
        self.splitter.setSizes([320, 640])

        self.empty = EmptyState(
            "Nothing to review",
            "Items Puffin is unsure about (50–75% confidence) wait here for you to approve, "
            "edit or reject. Scans and memorized conversations add to this queue.",
            icon="review",
        )
        self.stack = QStackedWidget()
        self.stack.addWidget(self.empty)
        self.stack.addWidget(self.splitter)
        self.body.addWidget(self.stack, 1)

        # -- status line: progress, last decision, undo -----------------------------------
        status = QHBoxLayout()
        status.setSpacing(8)
        self.progress = QProgressBar()
        self.progress.setAccessibleName("Bulk action progress")
        self.progress.setMaximumWidth(220)
        self.progress.hide()
        self.status_label = QLabel("")
        self.status_label.setAccessibleName("Last action")
        self.status_label.setWordWrap(True)
        self.stop_button = QPushButton("Stop")
        self.stop_button.setAccessibleName("Stop bulk action")
        self.stop_button.setToolTip("Stop after the current item; what is done stays done")
        self.stop_button.clicked.connect(self._on_stop_button_clicked)
        self.stop_button.hide()
        self.undo_button = push_button("Undo", tooltip="Revert the last approve or reject (Ctrl+Z)")
        self.undo_button.setAccessibleName("Undo last decision")
        self.undo_button.clicked.connect(self.undo)
        self.undo_button.setEnabled(False)
        status.addWidget(self.progress)
        status.addWidget(self.status_label, 1)
        status.addWidget(self.stop_button)
        status.addWidget(self.undo_button)
        self.body.addLayout(status)

        # A text field takes Ctrl+Z for itself (ShortcutOverride), so typing is never undone
        # here; everywhere else on the page Ctrl+Z reverts the last decision.
        self.undo_shortcut = QShortcut(QKeySequence.StandardKey.Undo, self)
        self.undo_shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.undo_shortcut.activated.connect(self.undo)
        find = QShortcut(QKeySequence.StandardKey.Find, self)
        find.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        find.activated.connect(self.search.setFocus)

        order = [
            self.search,
            self.category_filter,
            self.branch_filter,
            self.list,
            self.category,
            self.title_edit,
            self.content_edit,
            self.reject_button,
            self.approve_button,
            self.stop_button,
            self.undo_button,
        ]
        for first, second in itertools.pairwise(order):
            QWidget.setTabOrder(first, second)
        self._set_busy(False)
        channels.watch_stats(self._on_channels_stats_changed)

    # -- loading ------------------------------------------------------------------------
    def refresh(self) -> None:
        """Reload the queue (skipped while an action runs: it reloads when done)."""
        if self._busy:
            return
        self.run(self._load())

    async def _load(self, select: str | None = None) -> None:
        reply = await self.channels.review_list()
        if is_error(reply):
            self.banner.show_message(str(reply.get("message", "")))
            return
        if self._busy:  # an action started meanwhile: it reloads when done
            return
        items = list(reply.get("items", []))
        self._items = {str(i["id"]): i for i in items}
        keep = select or self.current_id
        self.list.blockSignals(True)
        self.list.clear()
        for entry in items:
            confidence = entry.get("confidence")
            pct = f"{round(confidence * 100)}%" if isinstance(confidence, int | float) else ""
            text = (
                f"{entry.get('title', '')}\n{entry.get('branch', '')} · "
                f"{CATEGORY_NAMES.get(str(entry.get('category')), '')} · {pct}"
            )
            item = QListWidgetItem(text)
            item.setData(ID_ROLE, str(entry["id"]))
            item.setToolTip(str(entry.get("content", "")))
            self.list.addItem(item)
        self.list.blockSignals(False)
        self._fill_branch_filter(items)
        self.count_changed.emit(len(items))
        self.filters.setVisible(bool(items))
        if not items:
            self.stack.setCurrentWidget(self.empty)
            self._show(None)
            return
        self.stack.setCurrentWidget(self.splitter)
        self._apply_filter(keep=keep)

    def _fill_branch_filter(self, items: Sequence[Mapping[str, Any]]) -> None:
        current = self.branch_filter.currentData()
        branches = sorted({str(i.get("branch", "")) for i in items})
        projects = sorted({_project(b) for b in branches})
        self.branch_filter.blockSignals(True)
        self.branch_filter.clear()
        self.branch_filter.addItem("All projects and branches", ALL)
        for project in projects:
            inside = [b for b in branches if _project(b) == project]
            if len(inside) > 1 or inside != [project]:
                self.branch_filter.addItem(f"{project} (all branches)", f"project:{project}")
            for branch in inside:
                self.branch_filter.addItem(f"    {branch}", f"branch:{branch}")
        index = self.branch_filter.findData(current)
        self.branch_filter.setCurrentIndex(max(index, 0))
        self.branch_filter.blockSignals(False)

    # -- filtering ----------------------------------------------------------------------
    def _on_search_text_changed(self, _text: str) -> None:
        self._filter_timer.start()

    def clear_filters(self) -> None:
        """Show every candidate again."""
        for box in (self.category_filter, self.branch_filter):
            box.blockSignals(True)
            box.setCurrentIndex(0)
            box.blockSignals(False)
        self.search.blockSignals(True)
        self.search.clear()
        self.search.blockSignals(False)
        self._apply_filter()

    def _matches(
        self, entry: Mapping[str, Any], words: list[str], category: str, place: str
    ) -> bool:
        if category and entry.get("category") != category:
            return False
        branch = str(entry.get("branch", ""))
        if place.startswith("branch:") and branch != place[len("branch:") :]:
            return False
        if place.startswith("project:") and _project(branch) != place[len("project:") :]:
            return False
        if words:
            hay = _haystack(entry)
            return all(w in hay for w in words)
        return True

    def _apply_filter(self, *_args: object, keep: str | None = None) -> None:
        self._filter_timer.stop()
        words = self.search.text().lower().split()
        category = str(self.category_filter.currentData() or "")
        place = str(self.branch_filter.currentData() or "")
        keep = keep if keep is not None else self.current_id
        shown = 0
        self.list.setUpdatesEnabled(False)
        for row in range(self.list.count()):
            item = self.list.item(row)
            entry = self._items.get(str(item.data(ID_ROLE)), {})
            visible = self._matches(entry, words, category, place)
            item.setHidden(not visible)
            if not visible:
                item.setSelected(False)
            shown += visible
        self.list.setUpdatesEnabled(True)
        self._show_count(shown)
        self._select_visible(keep)

    def _show_count(self, shown: int | None = None) -> None:
        if shown is None:
            shown = len(self._visible_rows())
        total = len(self._items)
        self.count_label.setText(f"{shown} of {total} candidates")
        self.list_stack.setCurrentWidget(self.list if shown or not total else self.no_match)

    def _visible_rows(self) -> list[int]:
        return [r for r in range(self.list.count()) if not self.list.item(r).isHidden()]

    def _select_visible(self, item_id: str | None, near_row: int = 0) -> None:
        """Make `item_id` current if it is shown, else the shown row at or after `near_row`."""
        rows = self._visible_rows()
        if not rows:
            self.list.setCurrentRow(-1)
            self._show(None)
            return
        row = next((r for r in rows if self.list.item(r).data(ID_ROLE) == item_id), None)
        if row is None:
            row = next((r for r in rows if r >= near_row), rows[-1])
        self.list.setCurrentRow(row, QItemSelectionModel.SelectionFlag.ClearAndSelect)
        self._show(self.current_id)

    # -- selection and detail -------------------------------------------------------------
    @property
    def current_id(self) -> str | None:
        """Id of the current (focused) item."""
        item = self.list.currentItem()
        if item is None or item.isHidden():
            return None
        return current_data(self.list, ID_ROLE)

    def selected_ids(self) -> list[str]:
        """Ids of the selected, shown items in list order (the current one if none is)."""
        rows = sorted(self.list.row(i) for i in self.list.selectedItems() if not i.isHidden())
        ids = [str(self.list.item(r).data(ID_ROLE)) for r in rows]
        if not ids and self.current_id is not None:
            ids = [self.current_id]
        return ids

    def _on_list_current_item_changed(
        self, current: QListWidgetItem | None, _previous: QListWidgetItem | None
    ) -> None:
        self._show(str(current.data(ID_ROLE)) if current is not None else None)

    def _on_list_item_selection_changed(self) -> None:
        count = len(self.selected_ids())
        self.selection_label.setText(f"{count} selected" if count > 1 else "")
        self.approve_button.setText(f"Approve {count}" if count > 1 else "Approve")
        self.reject_button.setText(f"Reject {count}" if count > 1 else "Reject")

    def _reason(self, entry: Mapping[str, Any]) -> str:
        confidence = entry.get("confidence")
        if not isinstance(confidence, int | float):
            return ""
        config = self.channels.config or {}
        commit = float(config.get("commit_threshold", 0.75))
        floor = float(config.get("review_threshold", 0.5))
        stored = str(entry.get("reason") or "")
        # The reason the engine gave when it queued the item (who said it, what is missing),
        # then the thresholds it sits between.
        why = (stored.split(" (confidence")[0].rstrip(".") + ". ") if stored else ""
        why += (
            f"Queued because Puffin was {round(confidence * 100)}% sure: below the "
            f"{round(commit * 100)}% needed to save it on its own, above the "
            f"{round(floor * 100)}% under which it is dropped."
        )
        sources = entry.get("sources") or []
        if len(sources) > 1:
            why += f" Said in {len(sources)} threads."
        return why

    def _on_where_button_clicked(self) -> None:
        if self.current_id is not None:
            self.provenance.show_for(self.current_id)

    def _show(self, item_id: str | None) -> None:
        self.provenance.hide()
        entry = self._items.get(item_id or "")
        enabled = entry is not None
        for widget in (self.category, self.title_edit, self.content_edit):
            widget.setEnabled(enabled)
        self._update_buttons()
        if entry is None:
            self.detail_title.setText("")
            self.detail_meta.setText("")
            self.detail_reason.setText("")
            self.detail_excerpt.hide()
            return
        self.detail_title.setText(str(entry.get("title", "")))
        confidence = entry.get("confidence")
        meta = [f"Branch {entry.get('branch', '')}"]
        if isinstance(confidence, int | float):
            meta.append(f"{round(confidence * 100)}% confidence")
        if entry.get("source"):
            meta.append(f"from {who_said(str(entry['source']))}")
        if entry.get("extracted"):
            meta.append(f"said {entry['extracted']}")
        meta.append(f"queued {format_time(entry.get('queued'), never='')}")
        self.detail_meta.setText(" · ".join(meta))
        self.detail_reason.setText(self._reason(entry))
        excerpt = str(entry.get("excerpt") or "")
        self.detail_excerpt.setText(f"From the conversation:\n{excerpt}" if excerpt else "")
        self.detail_excerpt.setVisible(bool(excerpt))
        self.category.setCurrentIndex(max(self.category.findData(entry.get("category")), 0))
        self.title_edit.setText(str(entry.get("title", "")))
        self.content_edit.setPlainText(str(entry.get("content", "")))

    def _update_buttons(self) -> None:
        can = not self._busy and self.current_id is not None
        self.approve_button.setEnabled(can)
        self.reject_button.setEnabled(can)
        self.undo_button.setEnabled(not self._busy and bool(self._undo))
        what = f"Undo {self._undo[-1].describe()} (Ctrl+Z)" if self._undo else "Nothing to undo"
        self.undo_button.setToolTip(what)
        self.undo_button.setAccessibleDescription(what)

    def _set_busy(self, busy: bool) -> None:
        self._busy = busy
        self.stop_button.setVisible(busy)
        self._update_buttons()

    # -- keyboard -------------------------------------------------------------------------
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt API)
        """Decision keys on the list; Ctrl+Enter and Escape in the editors."""
        if event.type() != QEvent.Type.KeyPress or not isinstance(event, QKeyEvent):
            return super().eventFilter(watched, event)
        key = event.key()
        mods = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
        if watched is self.list and mods == Qt.KeyboardModifier.NoModifier:
            actions = {
                Qt.Key.Key_J.value: lambda: self.select_next(1),
                Qt.Key.Key_K.value: lambda: self.select_next(-1),
                Qt.Key.Key_A.value: self.approve_selected,
                Qt.Key.Key_R.value: self.reject_selected,
                Qt.Key.Key_E.value: self.edit_current,
                Qt.Key.Key_W.value: self._on_where_button_clicked,
            }
            action = actions.get(int(key))
            if action is not None:
                action()
                return True
        if watched is self.list and event.matches(QKeySequence.StandardKey.Undo):
            self.undo()
            return True
        if watched in (self.title_edit, self.content_edit):
            if (
                key in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
                and mods == Qt.KeyboardModifier.ControlModifier
            ):
                self.approve_selected()
                return True
            if key == Qt.Key.Key_Escape:
                self._show(self.current_id)  # drop the edits
                self.list.setFocus()
                return True
        return super().eventFilter(watched, event)

    def select_next(self, step: int) -> None:
        """Make the next (step 1) or previous (-1) shown candidate the only selected one."""
        rows = self._visible_rows()
        if not rows:
            return
        current = self.list.currentRow()
        if step > 0:
            row = next((r for r in rows if r > current), rows[-1])
        else:
            row = next((r for r in reversed(rows) if r < current), rows[0])
        self.list.setCurrentRow(row, QItemSelectionModel.SelectionFlag.ClearAndSelect)

    def edit_current(self) -> None:
        """Put the cursor in the content editor of the current candidate."""
        if self.current_id is None or self._busy:
            return
        self.content_edit.setFocus()
        self.content_edit.moveCursor(self.content_edit.textCursor().MoveOperation.End)

    # -- decisions ------------------------------------------------------------------------
    def _on_approve_button_clicked(self) -> None:
        self.approve_selected()

    def _on_reject_button_clicked(self) -> None:
        self.reject_selected()

    def _on_stop_button_clicked(self) -> None:
        self._stop_requested = True
        self.status_label.setText("Stopping after the current item…")

    def _edits(self, item_id: str) -> dict[str, str | None]:
        entry = self._items.get(item_id, {})
        title = self.title_edit.text().strip()
        content = self.content_edit.toPlainText().strip()
        category = str(self.category.currentData())
        return {
            "title": title if title and title != entry.get("title") else None,
            "content": content if content and content != entry.get("content") else None,
            "category": category if category != entry.get("category") else None,
        }

    def approve_selected(self) -> None:
        """Approve the selected candidates (the current one with the editor's changes)."""
        self._start_decision("approve")

    def reject_selected(self) -> None:
        """Reject the selected candidates."""
        self._start_decision("reject")

    def _start_decision(self, kind: str) -> None:
        if self._busy:
            self.status_label.setText("Wait for the current action to finish.")
            return
        ids = self.selected_ids()
        if not ids:
            return
        edited = self.current_id if kind == "approve" else None
        edits = self._edits(edited) if edited is not None else {}
        self._set_busy(True)  # now, so a second key press cannot start a second action
        self._stop_requested = False
        self.run(self._decide(kind, ids, edited, edits))

    async def _decide(
        self, kind: str, ids: list[str], edited: str | None, edits: dict[str, str | None]
    ) -> None:
        self._set_busy(True)
        first_row = min((self._row_of(i) for i in ids), default=0)
        step = UndoStep(kind)
        failures: list[str] = []
        bulk = len(ids) > 1
        verb = "Approving" if kind == "approve" else "Rejecting"
        if bulk:
            self.progress.setRange(0, len(ids))
            self.progress.setValue(0)
            self.progress.show()
        # The edited candidate goes alone (its edits travel with it); the rest go in chunks
        # through `ops.REVIEW_BULK`, so 300 approvals are a dozen file writes, not 300,
        # and the progress bar moves between chunks.
        singles = [i for i in ids if i == edited or not bulk]
        chunks = [singles] + [
            rest[n : n + BULK_CHUNK]
            for rest in [[i for i in ids if i not in singles]]
            for n in range(0, len(rest), BULK_CHUNK)
        ]
        done = 0
        try:
            for chunk in chunks:
                if self._stop_requested or not chunk:
                    continue
                if chunk is singles:
                    for item_id in chunk:
                        await self._decide_one(
                            kind, item_id, edits if item_id == edited else {}, step, failures
                        )
                else:
                    await self._decide_chunk(kind, chunk, step, failures)
                done += len(chunk)
                self._show_count()
                if bulk:
                    self.progress.setValue(done)
                    self.status_label.setText(f"{verb} {done} of {len(ids)}…")
                # Replies already come back through the loop; this also lets paint and input
                # run between chunks that answer at once.
                await asyncio.sleep(0)
        finally:
            self.progress.hide()
            self._set_busy(False)
        if step.decisions:
            self._undo.append(step)
        message = self._decision_message(step, len(ids), failures)
        # The next candidate now sits where the first decided one was.
        self._select_visible(None, near_row=first_row)
        self._finish(message, error=bool(failures))
        await self._load()

    async def _decide_one(
        self,
        kind: str,
        item_id: str,
        edits: dict[str, str | None],
        step: UndoStep,
        failures: list[str],
    ) -> None:
        entry = self._items.get(item_id, {})
        if kind == "approve":
            reply = await self.channels.review_approve(item_id, **edits)
        else:
            reply = await self.channels.review_reject(item_id)
        if is_error(reply):
            failures.append(f"{entry.get('title', item_id)}: {reply.get('message', '')}")
            return
        title = edits.get("title") or str(entry.get("title", ""))
        step.decisions.append(
            Decision(
                kind,
                item_id,
                title,
                str(reply.get("branch", entry.get("branch", ""))),
                reply.get("entry"),
                str(reply.get("id", item_id)),
            )
        )
        self._drop_row(item_id)

    async def _decide_chunk(
        self, kind: str, ids: list[str], step: UndoStep, failures: list[str]
    ) -> None:
        reply = await self.channels.review_bulk(kind, ids)
        if is_error(reply):
            failures.extend(
                f"{self._items.get(i, {}).get('title', i)}: {reply.get('message', '')}" for i in ids
            )
            return
        for done in reply.get("done", []):
            item_id = str(done["id"])
            step.decisions.append(
                Decision(
                    kind,
                    item_id,
                    str(done.get("title", "")),
                    str(done.get("branch", "")),
                    done.get("entry"),
                    item_id,
                )
            )
            self._drop_row(item_id)
        failures.extend(
            f"{self._items.get(str(f['id']), {}).get('title', f['id'])}: {f.get('message', '')}"
            for f in reply.get("failed", [])
        )
        # Missing ids were decided elsewhere meanwhile (another window, the CLI).
        for item_id in reply.get("missing", []):
            self._drop_row(str(item_id))

    def _decision_message(self, step: UndoStep, asked: int, failures: list[str]) -> str:
        done = len(step.decisions)
        if done == 1 and step.kind == "approve":
            text = f"Approved '{step.decisions[0].title}' into {step.decisions[0].branch}."
        elif done == 1:
            text = f"Rejected '{step.decisions[0].title}'."
        elif done:
            text = f"{'Approved' if step.kind == 'approve' else 'Rejected'} {done} candidates."
        else:
            text = "Nothing changed."
        if done < asked and not failures:
            text += f" Stopped; {asked - done} left in the queue."
        if failures:
            text += f" {len(failures)} failed: {failures[0]}"
        return text

    def _row_of(self, item_id: str) -> int:
        return next(
            (r for r in range(self.list.count()) if self.list.item(r).data(ID_ROLE) == item_id), 0
        )

    def _drop_row(self, item_id: str) -> None:
        self._items.pop(item_id, None)
        for row in range(self.list.count()):
            if self.list.item(row).data(ID_ROLE) == item_id:
                self.list.blockSignals(True)
                self.list.takeItem(row)
                self.list.blockSignals(False)
                return

    def _finish(self, message: str, *, error: bool = False) -> None:
        self.status_label.setText(message)
        # Success is said once, in the status line next to Undo; a failure also gets the
        # banner, which stays until dismissed.
        if error:
            self.banner.show_message(message)
        else:
            self.banner.hide()
        self._update_buttons()
        self.channels.refresh_stats()
        self.decided.emit(message)

    # -- undo -----------------------------------------------------------------------------
    def undo(self) -> None:
        """Revert the last approve or reject (a bulk action counts as one)."""
        if self._busy:
            self.status_label.setText("Wait for the current action to finish.")
            return
        if not self._undo:
            self.status_label.setText("Nothing to undo.")
            return
        step = self._undo.pop()
        self._set_busy(True)
        self.run(self._undo_step(step))

    async def _undo_step(self, step: UndoStep) -> None:
        self._set_busy(True)
        failures: list[str] = []
        restored: list[str] = []
        bulk = len(step.decisions) > 1
        if bulk:
            self.progress.setRange(0, len(step.decisions))
            self.progress.setValue(0)
            self.progress.show()
        try:
            back: list[Decision] = []
            for done, decision in enumerate(step.decisions, start=1):
                problem = await self._unapprove(decision)
                if problem:
                    failures.append(f"{decision.title}: {problem}")
                else:
                    back.append(decision)
                if bulk:
                    self.progress.setValue(done)
                    self.status_label.setText(f"Undoing {done} of {len(step.decisions)}…")
                await asyncio.sleep(0)
            if back:
                reply = await self.channels.review_requeue([d.entry for d in back])
                if is_error(reply):
                    failures.append(str(reply.get("message", "requeue failed")))
                else:
                    restored = [d.item_id for d in back]
        finally:
            self.progress.hide()
            self._set_busy(False)
        what = step.describe()
        if step.kind == "approve" and len(step.decisions) == 1:
            message = (
                f"Undid {what}: removed from {step.decisions[0].branch} and back in the queue."
            )
        elif step.kind == "approve":
            message = f"Undid {what}: removed from their branches and back in the queue."
        elif len(step.decisions) == 1:
            message = f"Undid {what}: back in the queue."
        else:
            message = f"Undid {what}: all back in the queue."
        if failures:
            message = (
                f"Undo of {what} was partial: {len(restored)} restored, "
                f"{len(failures)} failed ({failures[0]})."
            )
        self._finish(message, error=bool(failures))
        await self._load(select=restored[-1] if restored else None)

    async def _unapprove(self, decision: Decision) -> str:
        """Take an approved item out of its branch again; returns why not, or ''."""
        if decision.entry is None:
            return "the service did not say what was decided"
        if decision.kind != "approve":
            return ""
        reply = await self.channels.forget(id=decision.memory_id)
        # NOT_FOUND: the person already removed it some other way; requeue anyway.
        if is_error(reply) and reply.get("code") != "NOT_FOUND":
            return str(reply.get("message", "forget failed"))
        return ""

    def _on_channels_stats_changed(self, stats: answers.StatsAnswer) -> None:
        size = int(stats.get("reviewQueue", 0) or 0)
        if size != self._queue_size:
            self._queue_size = size
            if not self._busy:
                self.count_changed.emit(size)
            self.refresh()
