"""MainWindow: the navigation list and the six panels (Dashboard, Branches, Ask, Review,
Conflicts, Settings), the menu bar with every keyboard shortcut, and the status bar with the
status indicator and job progress. Closing the window hides it to the tray when there is
one and quits otherwise."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QSize, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QFontMetrics, QKeySequence
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMainWindow,
    QMenu,
    QProgressBar,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from app.service.channels import MemoryChannels
from app.ui import icons
from app.ui.ask import AskPanel
from app.ui.browser import BranchBrowserPanel
from app.ui.conflicts import ConflictsPanel
from app.ui.dashboard import DashboardPanel
from app.ui.review import ReviewPanel
from app.ui.settings import SettingsPanel
from app.ui.tray import StatusBarIndicator, StatusIndicator
from app.ui.widgets import STYLE_SHEET, Panel, muted, scaled_font


class MainWindow(QMainWindow):
    """See the module docstring."""

    quit_requested = Signal()

    def __init__(
        self, channels: MemoryChannels, indicator: StatusIndicator, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.channels = channels
        self.indicator = indicator
        self.has_tray = indicator.tray is not None
        self._told_about_tray = False
        self.setWindowTitle("Puffin Memory")
        self.setWindowIcon(icons.app_icon())
        self.resize(1120, 740)
        self.setMinimumSize(QSize(760, 540))
        self.setStyleSheet(STYLE_SHEET)

        self.dashboard = DashboardPanel(channels)
        self.browser = BranchBrowserPanel(channels)
        self.ask = AskPanel(channels)
        self.review = ReviewPanel(channels)
        self.conflicts = ConflictsPanel(channels)
        self.settings = SettingsPanel(channels)
        self.panels: list[Panel] = [
            self.dashboard,
            self.browser,
            self.ask,
            self.review,
            self.conflicts,
            self.settings,
        ]

        central = QWidget()
        row = QHBoxLayout(central)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        row.addWidget(self._build_sidebar())
        self.stack = QStackedWidget()
        for panel in self.panels:
            self.stack.addWidget(panel)
        row.addWidget(self.stack, 1)
        self.setCentralWidget(central)
        self._build_status_bar()
        self._build_menus()

        self.dashboard.review_requested.connect(lambda: self.show_panel(3))
        self.ask.item_requested.connect(self.open_item)
        self.review.count_changed.connect(self._on_review_count_changed)
        channels.progress.connect(self._on_channels_progress)
        channels.watch_status(self._on_channels_status_changed)
        self.nav.setCurrentRow(0)

    # -- building -------------------------------------------------------------------------
    def _build_sidebar(self) -> QWidget:
        side = QWidget()
        side.setFixedWidth(196)
        layout = QVBoxLayout(side)
        layout.setContentsMargins(8, 16, 8, 12)
        layout.setSpacing(10)
        brand = QHBoxLayout()
        brand.setContentsMargins(8, 0, 0, 0)
        logo = QLabel()
        logo.setPixmap(icons.app_icon().pixmap(28, 28))
        name = QLabel("Puffin Memory")
        name.setFont(scaled_font(name, 1.1, bold=True))
        brand.addWidget(logo)
        brand.addWidget(name, 1)
        layout.addLayout(brand)
        layout.addSpacing(6)
        self.nav = QListWidget()
        self.nav.setObjectName("nav")
        self.nav.setAccessibleName("Panels")
        self.nav.setIconSize(QSize(18, 18))
        self.nav.setSpacing(1)
        self.nav.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        for index, panel in enumerate(self.panels, start=1):
            item = QListWidgetItem(icons.glyph(panel.icon), panel.title)
            item.setToolTip(f"{panel.title} (Ctrl+{index})")
            item.setSizeHint(QSize(0, 34))
            self.nav.addItem(item)
        self.nav.currentRowChanged.connect(self._on_nav_current_row_changed)
        layout.addWidget(self.nav, 1)
        self.home_label = muted(QLabel())
        self.home_label.setFont(scaled_font(self.home_label, 0.85))
        home = str(self.channels.home).replace(str(Path.home()), "~", 1)
        self.home_label.setText(
            QFontMetrics(self.home_label.font()).elidedText(home, Qt.TextElideMode.ElideMiddle, 172)
        )
        self.home_label.setToolTip(f"Memory folder: {self.channels.home}")
        self.home_label.setContentsMargins(8, 0, 4, 0)
        layout.addWidget(self.home_label)
        return side

    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        bar.setSizeGripEnabled(False)
        self.status_widget = StatusBarIndicator(
            self.channels, self.indicator, with_menu=not self.has_tray
        )
        bar.addWidget(self.status_widget, 1)
        self.job_progress = QProgressBar()
        self.job_progress.setFixedWidth(160)
        self.job_progress.setMaximumHeight(12)
        self.job_progress.setTextVisible(False)
        self.job_progress.setAccessibleName("Job progress")
        self.job_progress.setVisible(False)
        self.status_widget.add_widget(self.job_progress)

    def _build_menus(self) -> None:
        menu = self.menuBar()
        memory = menu.addMenu("&Memory")
        self._add(memory, "Scan now", "Shift+F5", self.channels.scan_now, "scan")
        self._add(memory, "Scan a folder…", None, self._scan_folder, "folder")
        memory.addMenu(self._maintenance_menu())
        memory.addAction(self.indicator.pause_action)
        memory.addSeparator()
        self.quit_action = self._add(
            memory, "Quit", QKeySequence.StandardKey.Quit, self.quit_requested.emit
        )
        self.quit_action.setShortcuts([QKeySequence("Ctrl+Q")])
        view = menu.addMenu("&View")
        for index, panel in enumerate(self.panels, start=1):
            self._add(
                view,
                panel.title,
                f"Ctrl+{index}",
                lambda _checked=False, i=index - 1: self.show_panel(i),
                panel.icon,
            )
        view.addSeparator()
        self._add(view, "Refresh", "F5", self.refresh, "refresh")
        edit = menu.addMenu("&Edit")
        self._add(edit, "Filter branches", "Ctrl+F", self.focus_filter)
        self._add(edit, "Ask", "Ctrl+K", self.focus_ask, "ask")
        self._add(edit, "Edit branch memory", "Ctrl+E", self.edit_branch, "edit")
        self._add(edit, "Save", "Ctrl+S", self.save, "save")

    def _maintenance_menu(self) -> QMenu:
        sub = QMenu("Run maintenance", self)
        icons.set_glyph(sub, "maintenance")
        for action in self.indicator.maintenance_actions.values():
            sub.addAction(action)
        return sub

    def _add(
        self, menu: Any, text: str, shortcut: Any, slot: Any, icon: str | None = None
    ) -> QAction:
        action: QAction = menu.addAction(text)
        if icon:
            icons.set_glyph(action, icon)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.triggered.connect(slot)
        return action

    # -- navigation -----------------------------------------------------------------------
    @property
    def current_panel(self) -> Panel:
        """The visible panel."""
        widget = self.stack.currentWidget()
        assert isinstance(widget, Panel)
        return widget

    def show_panel(self, index: int) -> None:
        """Ctrl+1..6."""
        self.nav.setCurrentRow(index)

    def _on_nav_current_row_changed(self, row: int) -> None:
        if 0 <= row < len(self.panels):
            self.stack.setCurrentIndex(row)
            self.panels[row].activate()

    def open_item(self, branch: str, item_id: str) -> None:
        """Show one memory in its branch, with where it came from (an Ask result opened)."""
        self.show_panel(self.panels.index(self.browser))
        self.browser.show_item(branch, item_id)

    def refresh(self) -> None:
        """F5: reload the visible panel and the status."""
        self.channels.refresh()
        self.current_panel.refresh()

    def focus_filter(self) -> None:
        """Ctrl+F: the branch filter."""
        self.show_panel(1)
        self.browser.focus_filter()

    def focus_ask(self) -> None:
        """Ctrl+K: the question box."""
        self.show_panel(2)
        self.ask.focus_query()

    def edit_branch(self) -> None:
        """Ctrl+E: edit the branch open in the browser."""
        self.show_panel(1)
        self.browser.start_edit()

    def save(self) -> None:
        """Ctrl+S: save in the visible panel (branch editor or settings)."""
        panel = self.current_panel
        if panel is self.browser:
            self.browser.save()
        elif panel is self.settings:
            self.settings.save()

    def _scan_folder(self) -> None:
        self.show_panel(0)
        self.dashboard.folder_button.click()

    def bring_forward(self) -> None:
        """Show, un-minimize and raise the window (tray Open, second launch)."""
        if self.isMinimized():
            self.showNormal()
        self.show()
        self.raise_()
        self.activateWindow()

    # -- events ---------------------------------------------------------------------------
    def _on_review_count_changed(self, count: int) -> None:
        item = self.nav.item(3)
        if item is not None:
            item.setText(f"Review  ({count})" if count else "Review")

    def _on_channels_progress(self, _job: str, done: int, total: int) -> None:
        if total:
            self.job_progress.setRange(0, total)
            self.job_progress.setValue(done)

    def _on_channels_status_changed(self, status: dict[str, Any]) -> None:
        jobs = status.get("jobs") or []
        self.job_progress.setVisible(bool(jobs))
        if jobs and not jobs[0].get("total"):
            self.job_progress.setRange(0, 0)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt override
        """Redraw glyphs when the system switches between light and dark."""
        if event.type() == QEvent.Type.PaletteChange:
            icons.retint(self)
            icons.retint(self.indicator.menu)
            for index, panel in enumerate(self.panels):
                item = self.nav.item(index)
                if item is not None:
                    item.setIcon(icons.glyph(panel.icon))
        super().changeEvent(event)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt override
        """With a tray the app keeps running there; without one, closing quits."""
        if self.has_tray:
            event.ignore()
            self.hide()
            if not self._told_about_tray:
                self._told_about_tray = True
                self.indicator.notify(
                    "Puffin Memory is still running",
                    "It keeps memorizing in the background. Quit from the tray menu.",
                )
            return
        event.accept()
        self.quit_requested.emit()
