"""Branch browser panel: branches grouped by project with a filter, the selected memory file
rendered as Markdown, a plain-text editor (validated by the API before it saves, which keeps a
version), the version list with a diff against the current file and restore, and Clear with
confirmation that an Undo banner can reverse."""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import re
from urllib.parse import quote

from PySide6.QtCore import QSettings, Qt, QTimer, QUrl
from PySide6.QtGui import (
    QDesktopServices,
    QFont,
    QFontDatabase,
    QKeySequence,
    QPalette,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QSplitter,
    QStackedWidget,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

import app.core.answers as answers
from app.service.channels import MemoryChannels, is_error
from app.ui.provenance import ProvenanceView
from app.ui.widgets import (
    SPACING,
    Banner,
    EmptyState,
    Panel,
    confirm,
    format_time,
    heading,
    muted,
    parse_time,
    push_button,
    search_box,
    who_said,
)

BRANCH_ROLE = Qt.ItemDataRole.UserRole
# Links of the viewer that show where an item came from, instead of opening a browser.
ITEM_SCHEME = "puffin-item"
_META = re.compile(r"\s*\((id: [^()]*)\)\s*$")
_HEADER_LINE = re.compile(r"^\*\*(Last Updated|Last Extraction|Thread Count):\*\*")


def display_markdown(content: str) -> str:
    """The file as shown: inline metadata becomes a short italic note, header lines break,
    and empty sections say so."""
    lines: list[str] = []
    section_empty: bool | None = None  # None outside a "## " section

    def close_section() -> None:
        if section_empty:
            lines.extend(["*Nothing yet.*", ""])

    for raw in content.splitlines():
        line = _escape_html(raw)
        if line.startswith("## "):
            close_section()
            section_empty = True
            lines.append(line)
            continue
        if line.startswith("# "):
            close_section()
            section_empty = None
        elif line.strip() and section_empty is not None:
            section_empty = False
        if _HEADER_LINE.match(line):
            lines.append(line + "  ")
            continue
        match = _META.search(line)
        if match and line.lstrip().startswith("- "):
            fields = dict(
                part.split(": ", 1) for part in match.group(1).split(", ") if ": " in part
            )
            notes = []
            if "confidence" in fields:
                with contextlib.suppress(ValueError):
                    notes.append(f"{round(float(fields['confidence']) * 100)}%")
            for key in ("status", "source", "extracted", "detected"):
                if fields.get(key):
                    notes.append(who_said(fields[key]) if key == "source" else fields[key])
            line = line[: match.start()] + (f" *— {' · '.join(notes)}*" if notes else "")
            if fields.get("id"):
                line += f" [where from]({ITEM_SCHEME}:{fields['id']})"
        lines.append(line)
    close_section()
    return "\n".join(lines)


HEADING_SCALE = {1: 1.45, 2: 1.18, 3: 1.05}


def tidy_headings(viewer: QTextBrowser) -> None:
    """Calmer heading sizes than Qt's Markdown defaults, with room above each section."""
    base = viewer.font().pointSizeF()
    block = viewer.document().begin()
    while block.isValid():
        level = block.blockFormat().headingLevel()
        if level and base > 0:
            fragments = block.begin()
            while not fragments.atEnd():
                fragment = fragments.fragment()
                cursor = QTextCursor(viewer.document())
                cursor.setPosition(fragment.position())
                cursor.setPosition(
                    fragment.position() + fragment.length(), QTextCursor.MoveMode.KeepAnchor
                )
                char = fragment.charFormat()
                # The importer sizes headings by adjustment, which wins over a point size.
                char.clearProperty(QTextFormat.Property.FontSizeAdjustment)
                char.setFontPointSize(base * HEADING_SCALE.get(level, 1.0))
                cursor.setCharFormat(char)
                fragments += 1
            layout = block.blockFormat()
            layout.setTopMargin(18 if level > 1 else 0)
            layout.setBottomMargin(6)
            QTextCursor(block).setBlockFormat(layout)
        block = block.next()


def _escape_html(line: str) -> str:
    """Keep `<layer>` and the like as text: Markdown would read them as HTML tags."""
    parts = line.split("`")
    for i in range(0, len(parts), 2):  # outside inline code spans
        parts[i] = parts[i].replace("<", "\\<")
    return "`".join(parts)


def unified_diff(old: str, new: str, old_name: str, new_name: str) -> str:
    """A unified diff, or a sentence when there is no difference."""
    diff = "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=old_name,
            tofile=new_name,
        )
    )
    return diff or "This version is identical to the current file."


class DiffHighlighter(QSyntaxHighlighter):
    """Added lines bold, removed lines struck through and dimmed, hunk headers in the
    highlight colour: palette roles and font styles only, so it reads in light and dark."""

    def __init__(self, document: QTextDocument, palette: QPalette) -> None:
        super().__init__(document)
        self.added = QTextCharFormat()
        self.added.setFontWeight(QFont.Weight.Bold)
        self.removed = QTextCharFormat()
        self.removed.setFontStrikeOut(True)
        self.removed.setForeground(palette.color(QPalette.ColorRole.PlaceholderText))
        self.hunk = QTextCharFormat()
        self.hunk.setForeground(palette.color(QPalette.ColorRole.Highlight))

    def highlightBlock(self, text: str) -> None:  # noqa: N802 - Qt override
        """Style one line of the diff."""
        if text.startswith(("+++", "---")):
            self.setFormat(0, len(text), self.hunk)
        elif text.startswith("+"):
            self.setFormat(0, len(text), self.added)
        elif text.startswith("-"):
            self.setFormat(0, len(text), self.removed)
        elif text.startswith("@@"):
            self.setFormat(0, len(text), self.hunk)


def _size(value: object) -> str:
    size = int(value) if isinstance(value, int | float) else 0
    return f"{size / 1024:.1f} KB" if size >= 1024 else f"{size} B"


class BranchBrowserPanel(Panel):
    """See the module docstring."""

    title = "Branches"
    subtitle = "One Markdown memory file per branch. Edit by hand; every change keeps a version."
    icon = "branches"

    PAGE_EMPTY, PAGE_VIEW, PAGE_EDIT, PAGE_VERSIONS, PAGE_ARCHIVE = range(5)

    def __init__(self, channels: MemoryChannels, parent: QWidget | None = None) -> None:
        super().__init__(channels, parent)
        self.current: str | None = None
        self._content = ""
        self._branches: list[answers.BranchSummary] = []
        self._versions: list[answers.Version] = []
        self._undo_clear: tuple[str, str] | None = None
        self._resume_draft: str | None = None
        self._pending_select: str | None = None
        self._pending_item: str | None = None
        # Unsaved editor text survives Esc, quitting and crashes of the session as a draft
        # per branch, offered back when the branch is opened or edited again.
        self._drafts = QSettings(str(channels.home / "ui-drafts.ini"), QSettings.Format.IniFormat)

        self.refresh_button = push_button("Refresh", "refresh", tooltip="Reload (F5)")
        self.refresh_button.clicked.connect(self.refresh)
        self.header_actions.addWidget(self.refresh_button)

        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.setChildrenCollapsible(False)
        self.body.addWidget(splitter, 1)

        # Left: filter and tree
        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, SPACING, 0)
        left_layout.setSpacing(8)
        self.filter = search_box("Filter branches (Ctrl+F)", "Filter branches")
        self.filter.textChanged.connect(self._on_filter_text_changed)
        self.tree = QTreeWidget()
        self.tree.setColumnCount(3)
        self.tree.setHeaderLabels(["Branch", "Items", "Updated"])
        self.tree.setAccessibleName("Branches")
        self.tree.setUniformRowHeights(True)
        header = self.tree.header()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(False)
        self.tree.currentItemChanged.connect(self._on_tree_current_item_changed)
        self.list_empty = EmptyState(
            "No memories yet. Scan your agent history",
            "Branch memory files appear here after a scan.",
            action="Scan now",
            icon="scan",
        )
        self.list_empty.action_triggered.connect(channels.scan_now)
        self.left_stack = QStackedWidget()
        self.left_stack.addWidget(self.tree)
        self.left_stack.addWidget(self.list_empty)
        left_layout.addWidget(self.filter)
        left_layout.addWidget(self.left_stack, 1)
        splitter.addWidget(left)

        # Right: banner + pages
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(SPACING, 0, 0, 0)
        right_layout.setSpacing(8)
        self.banner = Banner()
        self.banner.action.clicked.connect(self._on_banner_action_clicked)
        right_layout.addWidget(self.banner)
        self.pages = QStackedWidget()
        right_layout.addWidget(self.pages, 1)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 5)
        splitter.setSizes([300, 700])

        self.placeholder = EmptyState(
            "Select a branch",
            "Its memory file is shown here, ready to read or edit.",
            icon="branches",
        )
        self.pages.addWidget(self.placeholder)
        self.pages.addWidget(self._build_view_page())
        self.pages.addWidget(self._build_edit_page())
        self.pages.addWidget(self._build_versions_page())
        self.pages.addWidget(self._build_archive_page())

        self._reload_timer = QTimer(self, singleShot=True, interval=150)
        self._reload_timer.timeout.connect(self._on_reload_timer_timeout)
        channels.branch_changed.connect(self._on_channels_branch_changed)

    # -- pages --------------------------------------------------------------------------
    def _build_view_page(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)
        top = QHBoxLayout()
        names = QVBoxLayout()
        names.setSpacing(2)
        self.branch_title = heading("", 1.25)
        self.branch_title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.branch_meta = muted(QLabel(""))
        names.addWidget(self.branch_title)
        names.addWidget(self.branch_meta)
        top.addLayout(names, 1)
        self.edit_button = push_button("Edit", "edit", tooltip="Edit the file (Ctrl+E)")
        self.versions_button = push_button(
            "Versions", "versions", tooltip="Earlier versions, diff and restore"
        )
        self.archive_button = push_button(
            "Archive",
            "versions",
            tooltip="Items maintenance merged or pruned from this branch, to restore",
        )
        self.clear_button = push_button(
            "Clear", "clear", tooltip="Clear this memory (undoable from Versions)"
        )
        self.improve_button = push_button(
            "Improve",
            tooltip="Re-read this branch's conversations that only the offline "
            "engine read, with Claude or the local model",
        )
        self.improve_button.setAccessibleName("Improve with Claude or the local model")
        self.improve_button.clicked.connect(self._on_improve_button_clicked)
        self.edit_button.clicked.connect(self.start_edit)
        self.versions_button.clicked.connect(self.show_versions)
        self.archive_button.clicked.connect(self.show_archive)
        self.clear_button.clicked.connect(self._on_clear_button_clicked)
        # The actions get their own row: beside the title they squeezed it to a few letters
        # in a small window.
        layout.addLayout(top)
        actions = QHBoxLayout()
        actions.setSpacing(6)
        for button in (
            self.edit_button,
            self.versions_button,
            self.archive_button,
            self.improve_button,
            self.clear_button,
        ):
            actions.addWidget(button)
        actions.addStretch(1)
        layout.addLayout(actions)
        self.viewer = QTextBrowser()
        self.viewer.setOpenLinks(False)
        self.viewer.anchorClicked.connect(self._on_viewer_anchor_clicked)
        self.viewer.setAccessibleName("Branch memory")
        self.viewer.document().setDocumentMargin(14)
        layout.addWidget(self.viewer, 1)
        self.provenance = ProvenanceView(self.channels)
        layout.addWidget(self.provenance)
        return page

    def _build_edit_page(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)
        top = QHBoxLayout()
        self.edit_title = heading("", 1.25)
        top.addWidget(self.edit_title, 1)
        hint = muted(QLabel("Bullets without an id get one when saved."))
        top.addWidget(hint)
        layout.addLayout(top)
        self.editor = QPlainTextEdit()
        self.editor.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.editor.setAccessibleName("Memory file editor")
        self.editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        layout.addWidget(self.editor, 1)
        self.problems = QLabel("")
        self.problems.setWordWrap(True)
        self.problems.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.problems.setVisible(False)
        layout.addWidget(self.problems)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.cancel_button = push_button("Cancel")
        self.cancel_button.setShortcut(QKeySequence(Qt.Key.Key_Escape))
        self.save_button = push_button("Save", "save", tooltip="Validate and save (Ctrl+S)")
        self.save_button.setDefault(True)
        self.cancel_button.clicked.connect(self.cancel_edit)
        self.save_button.clicked.connect(self.save)
        self.discard_button = push_button("Discard draft")
        self.discard_button.setToolTip("Throw away the unsaved edits and show the saved file")
        self.discard_button.setAccessibleName("Discard draft")
        self.discard_button.clicked.connect(self.discard_draft)
        self.discard_button.setVisible(False)
        buttons.addWidget(self.discard_button)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.save_button)
        layout.addLayout(buttons)
        return page

    def _build_versions_page(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)
        top = QHBoxLayout()
        self.versions_title = heading("", 1.25)
        top.addWidget(self.versions_title, 1)
        self.back_button = push_button("Back to file")
        self.back_button.clicked.connect(self._show_view)
        self.restore_button = push_button("Restore this version", "restore")
        self.restore_button.setEnabled(False)
        self.restore_button.clicked.connect(self._on_restore_button_clicked)
        top.addWidget(self.back_button)
        top.addWidget(self.restore_button)
        layout.addLayout(top)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        self.version_list = QListWidget()
        self.version_list.setAccessibleName("Versions")
        self.version_list.currentRowChanged.connect(self._on_version_list_current_row_changed)
        self.diff = QPlainTextEdit()
        self.diff.setReadOnly(True)
        self.diff.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.diff.setAccessibleName("Difference from the current file")
        self.diff.setPlaceholderText("Select a version to compare it with the current file.")
        self.diff.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self._highlighter = DiffHighlighter(self.diff.document(), self.palette())
        splitter.addWidget(self.version_list)
        splitter.addWidget(self.diff)
        splitter.setSizes([220, 600])
        layout.addWidget(splitter, 1)
        return page

    def _build_archive_page(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(8)
        top = QHBoxLayout()
        self.archive_title = heading("", 1.25)
        top.addWidget(self.archive_title, 1)
        back = push_button("Back to file")
        back.setAccessibleName("Back to the branch file")
        back.clicked.connect(self._show_view)
        self.archive_restore_button = push_button("Restore item", "restore")
        self.archive_restore_button.setAccessibleName("Restore the selected archived item")
        self.archive_restore_button.setEnabled(False)
        self.archive_restore_button.clicked.connect(self._on_archive_restore_button_clicked)
        top.addWidget(back)
        top.addWidget(self.archive_restore_button)
        layout.addLayout(top)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        self.archive_list = QListWidget()
        self.archive_list.setAccessibleName("Archived items")
        self.archive_list.currentRowChanged.connect(self._on_archive_list_current_row_changed)
        self.archive_detail = QTextBrowser()
        self.archive_detail.setAccessibleName("Archived item")
        splitter.addWidget(self.archive_list)
        splitter.addWidget(self.archive_detail)
        splitter.setSizes([300, 520])
        layout.addWidget(splitter, 1)
        self._archived: list[answers.ArchivedItem] = []
        return page

    # -- list -----------------------------------------------------------------------------
    def refresh(self) -> None:
        """Reload the branch list (and the open file when not editing)."""
        self.run(self._load_branches())

    def focus_filter(self) -> None:
        """Ctrl+F."""
        self.filter.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.filter.selectAll()

    def select_branch(self, branch: str) -> None:
        """Show a branch (once the list has it)."""
        item = self._find_item(branch)
        if item is None:
            self._pending_select = branch
            self.refresh()
            return
        self.tree.setCurrentItem(item)

    async def _load_branches(self) -> None:
        reply = await self.channels.list_branches()
        if is_error(reply):
            self.banner.show_message(reply.get("message", "Could not list branches."))
            return
        self._branches = list(reply.get("branches", []))
        self._fill_tree()
        if self.current and self.pages.currentIndex() == self.PAGE_VIEW:
            await self._load_file(self.current)

    def _fill_tree(self) -> None:
        keep = self._pending_select or self.current
        self._pending_select = None
        self.tree.blockSignals(True)
        self.tree.clear()
        groups: dict[str, QTreeWidgetItem] = {}
        entry: answers.BranchSummary
        for entry in sorted(self._branches, key=lambda b: (b.get("project", ""), b["branch"])):
            project = entry.get("project") or ""
            group = groups.get(project)
            if group is None:
                group = QTreeWidgetItem([project or "Other branches", "", ""])
                font = group.font(0)
                font.setBold(True)
                group.setFont(0, font)
                group.setFlags(Qt.ItemFlag.ItemIsEnabled)
                groups[project] = group
                self.tree.addTopLevelItem(group)
            branch = entry["branch"]
            short = (
                branch[len(project) + 1 :]
                if project and branch.startswith(project + "/")
                else branch
            )
            when = entry.get("lastUpdated")
            item = QTreeWidgetItem(
                [short, str(entry.get("itemCount", 0)), format_time(when, never="")]
            )
            item.setData(0, BRANCH_ROLE, branch)
            moment = parse_time(when)
            item.setToolTip(
                0, branch + ("" if entry.get("valid", True) else "\nThis file has format problems.")
            )
            if moment:
                item.setToolTip(2, moment.astimezone().strftime("%Y-%m-%d %H:%M"))
            item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if not entry.get("valid", True):
                item.setText(0, short + "  ⚠")
            group.addChild(item)
        self.tree.expandAll()
        self._apply_filter()
        self.tree.blockSignals(False)
        self.left_stack.setCurrentWidget(self.tree if self._branches else self.list_empty)
        if not self._branches:
            self.placeholder.set_text(
                "No memories yet. Scan your agent history",
                "Puffin turns agent conversations into branch memories.",
            )
        else:
            self.placeholder.set_text(
                "Select a branch", "Its memory file is shown here, ready to read or edit."
            )
        kept = self._find_item(keep) if keep else None
        if kept is not None:
            self.tree.blockSignals(True)
            self.tree.setCurrentItem(kept)
            self.tree.blockSignals(False)
            if self.current != keep:
                self._open(str(keep))
        elif self.current and self.pages.currentIndex() != self.PAGE_EDIT:
            self.current = None
            self.pages.setCurrentIndex(self.PAGE_EMPTY)

    def _groups(self) -> list[tuple[QTreeWidgetItem, list[QTreeWidgetItem]]]:
        """(project item, its branch items) for every project in the tree."""
        found = []
        for i in range(self.tree.topLevelItemCount()):
            group = self.tree.topLevelItem(i)
            if group is None:
                continue
            children = [group.child(j) for j in range(group.childCount())]
            found.append((group, [c for c in children if c is not None]))
        return found

    def _find_item(self, branch: str | None) -> QTreeWidgetItem | None:
        for _group, children in self._groups():
            for child in children:
                if child.data(0, BRANCH_ROLE) == branch:
                    return child
        return None

    def _on_filter_text_changed(self, _text: str) -> None:
        self._apply_filter()

    def _apply_filter(self) -> None:
        needle = self.filter.text().strip().lower()
        for group, children in self._groups():
            visible = 0
            for child in children:
                hide = bool(needle) and needle not in str(child.data(0, BRANCH_ROLE)).lower()
                child.setHidden(hide)
                visible += not hide
            group.setHidden(visible == 0)

    def _on_tree_current_item_changed(
        self, current: QTreeWidgetItem | None, _previous: QTreeWidgetItem | None
    ) -> None:
        branch = current.data(0, BRANCH_ROLE) if current is not None else None
        if branch:
            self._open(str(branch))

    # -- viewing --------------------------------------------------------------------------
    def _open(self, branch: str) -> None:
        if self.pages.currentIndex() == self.PAGE_EDIT and branch != self.current:
            self.banner.show_message(
                "Save or cancel your edit before opening another branch.", level="warning"
            )
            item = self._find_item(self.current)
            if item is not None:
                self.tree.blockSignals(True)
                self.tree.setCurrentItem(item)
                self.tree.blockSignals(False)
            return
        self.current = branch
        self.run(self._load_file(branch))

    async def _load_file(self, branch: str) -> None:
        reply = await self.channels.get_branch_memory(branch)
        if branch != self.current:
            return
        if is_error(reply):
            self._content = ""
            self.pages.setCurrentIndex(self.PAGE_EMPTY)
            self.placeholder.set_text(f"{branch} has no memory file", reply.get("message", ""))
            return
        self._content = str(reply.get("content", ""))
        self.branch_title.setText(branch)
        meta = [
            f"{reply.get('itemCount', 0)} items",
            f"updated {format_time(reply.get('lastUpdated'), never='never')}",
        ]
        if reply.get("valid") is False:
            meta.append("format problems: " + "; ".join(reply.get("problems", [])[:2]))
        self.branch_meta.setText(" · ".join(meta))
        scroll = self.viewer.verticalScrollBar().value()
        self.viewer.setMarkdown(display_markdown(self._content))
        tidy_headings(self.viewer)
        self.viewer.verticalScrollBar().setValue(scroll)
        if self._pending_item:
            self._reveal_pending_item()
        if self.pages.currentIndex() in (self.PAGE_EMPTY, self.PAGE_VIEW):
            self.pages.setCurrentIndex(self.PAGE_VIEW)
            if self.draft(branch) is not None and self._resume_draft != branch:
                self._offer_draft(branch, f"You have unsaved edits to {branch} from before.")

    def _on_viewer_anchor_clicked(self, url: QUrl) -> None:
        if url.scheme() == ITEM_SCHEME:
            self.provenance.show_for(url.path(), self.current)
        else:
            QDesktopServices.openUrl(url)

    def show_item(self, branch: str, item_id: str) -> None:
        """Open `branch`, bring the item into view and show where it came from."""
        self._pending_item = item_id
        if branch == self.current and self._content:
            self._reveal_pending_item()
        else:
            self.select_branch(branch)
        self.provenance.show_for(item_id, branch)

    def _reveal_pending_item(self) -> None:
        item_id, self._pending_item = self._pending_item, None
        if not item_id:
            return
        line = next((ln for ln in self._content.splitlines() if f"id: {item_id}" in ln), "")
        title = re.match(r"\s*-\s*\*\*(.+?)\*\*", line)
        self.viewer.moveCursor(QTextCursor.MoveOperation.Start)
        if title and self.viewer.find(title.group(1)):
            self.viewer.ensureCursorVisible()

    def _on_improve_button_clicked(self) -> None:
        if self.current:
            self.improve_button.setEnabled(False)
            self.branch_meta.setText("Re-reading this branch's conversations…")
            self.run(self._improve(self.current))

    async def _improve(self, branch: str) -> None:
        try:
            reply = await self.channels.improve(branch)
        finally:
            self.improve_button.setEnabled(True)
        if branch != self.current:
            return
        text = str(reply.get("message") if is_error(reply) else reply.get("summary", ""))
        self.branch_meta.setText(text)
        if not is_error(reply) and reply.get("improved"):
            self.run(self._load_file(branch))

    def _show_view(self) -> None:
        if self.current:
            self.pages.setCurrentIndex(self.PAGE_VIEW)
            self.run(self._load_file(self.current))
        else:
            self.pages.setCurrentIndex(self.PAGE_EMPTY)

    # -- editing --------------------------------------------------------------------------
    @property
    def editing(self) -> bool:
        """Whether the editor is open."""
        return self.pages.currentIndex() == self.PAGE_EDIT

    def start_edit(self) -> None:
        """Ctrl+E: edit the open branch file as plain text (or the draft left unsaved)."""
        if not self.current or not self._content or self.editing:
            return
        draft = self.draft(self.current)
        self.edit_title.setText(f"Editing {self.current}")
        self.editor.setPlainText(self._content if draft is None else draft)
        self.discard_button.setVisible(draft is not None)
        self.problems.setVisible(False)
        self.banner.hide()
        if draft is not None:
            self.banner.show_message(
                "These are your unsaved edits from before. Save keeps them; Discard draft "
                "shows the saved file again.",
                level="warning",
            )
        self.pages.setCurrentIndex(self.PAGE_EDIT)
        self.editor.setFocus()

    def cancel_edit(self) -> None:
        """Esc: leave the editor; edits that were not saved are kept as a draft."""
        kept = self.keep_unsaved_edits()
        self.banner.hide()
        self._show_view()
        if kept and self.current:
            self._offer_draft(
                self.current, f"Your unsaved edits to {self.current} were kept as a draft."
            )

    def discard_draft(self) -> None:
        """Drop the draft of the open branch and leave the editor."""
        if self.current:
            self._drafts.remove(self._draft_key(self.current))
            self._drafts.sync()
        self.editor.setPlainText(self._content)
        self.discard_button.setVisible(False)
        self.banner.hide()
        self._show_view()

    # -- drafts ---------------------------------------------------------------------------
    @staticmethod
    def _draft_key(branch: str) -> str:
        return "drafts/" + quote(branch, safe="")

    def draft(self, branch: str) -> str | None:
        """The unsaved editor text kept for `branch`, if any."""
        value = self._drafts.value(self._draft_key(branch))
        return value if isinstance(value, str) and value else None

    def keep_unsaved_edits(self) -> bool:
        """Keep the editor's unsaved text as a draft (quit, close, Esc); True if there was."""
        if not self.editing or not self.current:
            return False
        text = self.editor.toPlainText()
        key = self._draft_key(self.current)
        if text == self._content:
            self._drafts.remove(key)
            self._drafts.sync()
            return False
        self._drafts.setValue(key, text)
        self._drafts.sync()
        return True

    def _offer_draft(self, branch: str, message: str) -> None:
        self._undo_clear = None
        self._resume_draft = branch
        self.banner.show_message(message, level="warning", action="Resume editing")

    def save(self) -> None:
        """Ctrl+S: validate and save through the API (which keeps the old file as a version)."""
        if not self.editing or not self.current:
            return
        self.save_button.setEnabled(False)
        self.run(self._save(self.current, self.editor.toPlainText()))

    async def _save(self, branch: str, text: str) -> None:
        try:
            reply = await self.channels.save_branch_memory(branch, text)
        finally:
            self.save_button.setEnabled(True)
        if is_error(reply):
            problems = (reply.get("context") or {}).get("problems") or []
            if problems:
                lines = [
                    (f"• Line {p['line']}: " if p.get("line") else "• ") + str(p.get("message", ""))
                    for p in problems[:8]
                ]
                text = "Not saved — the file is not valid:\n" + "\n".join(lines)
            else:
                text = f"Not saved — {reply.get('message', 'the file could not be saved')}"
            self.problems.setText(text)
            self.problems.setVisible(True)
            return
        self.problems.setVisible(False)
        self._drafts.remove(self._draft_key(branch))
        self._drafts.sync()
        self.discard_button.setVisible(False)
        self.banner.show_message(
            f"Saved {branch}. The previous file was kept as a version.", level="ok"
        )
        self._show_view()

    # -- versions -------------------------------------------------------------------------
    def show_versions(self) -> None:
        """List earlier versions of the open branch."""
        if not self.current:
            return
        self.versions_title.setText(f"Versions of {self.current}")
        self.version_list.clear()
        self.diff.clear()
        self.restore_button.setEnabled(False)
        self.pages.setCurrentIndex(self.PAGE_VERSIONS)
        self.run(self._load_versions(self.current))

    async def _load_versions(self, branch: str) -> None:
        reply = await self.channels.list_versions(branch)
        if is_error(reply) or branch != self.current:
            return
        self._versions = list(reply.get("versions", []))
        self.version_list.clear()
        for version in self._versions:
            moment = parse_time(version.get("timestamp"))
            when = (
                moment.astimezone().strftime("%d %b %Y, %H:%M:%S")
                if moment
                else str(version.get("version"))
            )
            item = QListWidgetItem(f"{when}\n{_size(version.get('size'))}")
            item.setToolTip(str(version.get("version")))
            self.version_list.addItem(item)
        if not self._versions:
            self.diff.setPlainText(
                "No earlier versions yet. Every save, rewrite and clear "
                "keeps the previous file here."
            )

    def _on_version_list_current_row_changed(self, row: int) -> None:
        if 0 <= row < len(self._versions) and self.current:
            self.restore_button.setEnabled(True)
            self.run(self._show_diff(self.current, str(self._versions[row]["version"])))

    async def _show_diff(self, branch: str, version: str) -> None:
        old = await self.channels.get_version(branch, version)
        if is_error(old):
            self.diff.setPlainText(old.get("message", "This version cannot be read."))
            return
        current = await self.channels.get_branch_memory(branch)
        now = "" if is_error(current) else str(current.get("content", ""))
        text = await asyncio.to_thread(
            unified_diff, str(old.get("content", "")), now, f"version {version}", "current"
        )
        if branch == self.current:
            self.diff.setPlainText(text)

    def _on_restore_button_clicked(self) -> None:
        row = self.version_list.currentRow()
        if not self.current or not 0 <= row < len(self._versions):
            return
        branch, version = self.current, str(self._versions[row]["version"])
        confirm(
            self,
            "Restore version",
            f"Restore {branch} to the version of {self.version_list.item(row).text()[:22]}?",
            lambda: self.run(self._restore(branch, version)),
            yes_text="Restore",
            informative="The current file is kept as a version first.",
        )

    async def _restore(self, branch: str, version: str) -> None:
        reply = await self.channels.restore_version(branch, version)
        if is_error(reply):
            self.banner.show_message(reply.get("message", "Restore failed."))
            return
        self.banner.show_message(f"Restored {branch}.", level="ok")
        self.current = branch
        self._pending_select = branch
        await self._load_branches()
        self._show_view()

    # -- archive --------------------------------------------------------------------------
    def show_archive(self) -> None:
        """List the items maintenance took out of the open branch."""
        if not self.current:
            return
        self.archive_title.setText(f"Archive of {self.current}")
        self.archive_list.clear()
        self.archive_detail.clear()
        self.archive_restore_button.setEnabled(False)
        self.pages.setCurrentIndex(self.PAGE_ARCHIVE)
        self.run(self._load_archive(self.current))

    async def _load_archive(self, branch: str) -> None:
        reply = await self.channels.archive_list(branch)
        if is_error(reply) or branch != self.current:
            if is_error(reply):
                self.archive_detail.setPlainText(reply.get("message", "Cannot read the archive."))
            return
        self._archived = list(reply.get("items", []))
        self.archive_list.clear()
        for entry in self._archived:
            moment = parse_time(entry.get("archived"))
            when = moment.astimezone().strftime("%d %b %Y") if moment else ""
            row = QListWidgetItem(f"{entry.get('title', '')}\n{when}")
            row.setToolTip(str(entry.get("reason", "")))
            self.archive_list.addItem(row)
        if not self._archived:
            self.archive_detail.setPlainText(
                "Nothing archived for this branch. When weekly maintenance merges duplicates "
                "or trims a crowded section, the items it takes out are kept here."
            )

    def _on_archive_list_current_row_changed(self, row: int) -> None:
        if not 0 <= row < len(self._archived):
            self.archive_restore_button.setEnabled(False)
            return
        entry = self._archived[row]
        self.archive_restore_button.setEnabled(True)
        lines = [
            f"# {entry.get('title', '')}",
            "",
            str(entry.get("content", "")),
            "",
            f"- Category: {str(entry.get('category', '')).replace('_', ' ')}",
            f"- Archived: {entry.get('archived', '')} ({entry.get('reason', '')})",
            f"- Id: `{entry.get('id', '')}`",
        ]
        self.archive_detail.setMarkdown("\n".join(lines))

    def _on_archive_restore_button_clicked(self) -> None:
        row = self.archive_list.currentRow()
        if not self.current or not 0 <= row < len(self._archived):
            return
        self.run(self._restore_archived(self.current, str(self._archived[row]["id"])))

    async def _restore_archived(self, branch: str, item_id: str) -> None:
        reply = await self.channels.archive_restore(branch, item_id)
        if is_error(reply):
            self.banner.show_message(reply.get("message", "Restore failed."))
            return
        self.banner.show_message(
            f"Restored {reply.get('title', item_id)!r} to {branch}.", level="ok"
        )
        await self._load_archive(branch)

    # -- clearing -------------------------------------------------------------------------
    def _on_clear_button_clicked(self) -> None:
        if not self.current:
            return
        branch = self.current
        confirm(
            self,
            "Clear memory",
            f"Clear the memory of {branch}?",
            lambda: self.run(self._clear(branch)),
            yes_text="Clear",
            informative="The file is kept as a version: Undo, or restore it later.",
        )

    async def _clear(self, branch: str) -> None:
        reply = await self.channels.clear_branch_memory(branch)
        if is_error(reply):
            self.banner.show_message(reply.get("message", "Clear failed."))
            return
        self._resume_draft = None
        self._undo_clear = (branch, str(reply.get("version")))
        self.banner.show_message(f"Cleared {branch}.", level="warning", action="Undo")
        self.current = None
        self.pages.setCurrentIndex(self.PAGE_EMPTY)
        await self._load_branches()

    def _on_banner_action_clicked(self) -> None:
        if self._resume_draft is not None:
            branch, self._resume_draft = self._resume_draft, None
            if branch == self.current:
                self.start_edit()
            return
        if self._undo_clear is not None:
            branch, version = self._undo_clear
            self._undo_clear = None
            self.banner.hide()
            self.run(self._restore(branch, version))

    # -- outside changes -------------------------------------------------------------------
    def _on_channels_branch_changed(self, branch: str) -> None:
        if branch == self.current and self.editing:
            self._undo_clear = None
            self.banner.show_message(
                f"{branch} changed on disk while you were editing. Saving keeps your text; "
                "the other change stays in Versions.",
                level="warning",
            )
        self._reload_timer.start()

    def _on_reload_timer_timeout(self) -> None:
        if self.isVisible():  # a hidden browser reloads when it is shown (activate)
            self.refresh()
