"""The status indicator: a tray icon where the desktop has a system tray, and the same
indicator in the window's status bar (dot, text, the tray's menu) where it has none.

Icon and tooltip follow the service status (ready, processing, error, maintenance) and name
the last error. The menu offers Open, Scan now, Run maintenance (weekly, monthly, full),
Pause automatic memorization and Quit.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMenu,
    QSystemTrayIcon,
    QToolButton,
    QWidget,
)

from app.service.channels import MemoryChannels
from app.ui import icons

STATE_TEXT = {
    "ready": "Ready",
    "processing": "Memorizing…",
    "maintenance": "Maintenance…",
    "error": "Error",
    "warning": "Needs attention",
    "starting": "Starting…",
}


def describe(status: dict[str, Any]) -> tuple[str, str]:
    """(short text, tooltip) for a status."""
    state = str(status.get("status", "starting"))
    text = STATE_TEXT.get(state, state.capitalize())
    jobs = status.get("jobs") or []
    if jobs:
        job = jobs[0]
        text = str(job.get("name", text))
        if job.get("total"):
            text += f" ({job.get('done', 0)}/{job['total']})"
    lines = [f"Puffin Memory — {text}"]
    if status.get("engine"):
        lines.append(f"Engine: {status['engine']}")
    if status.get("paused"):
        lines.append("Automatic memorization is paused")
    if len(jobs) > 1:
        lines.append(f"{len(jobs) - 1} more job(s) queued")
    if status.get("lastError"):
        lines.append(f"Last error: {status['lastError']}")
    lines.extend(str(n) for n in (status.get("notes") or [])[:3])
    return text, "\n".join(lines)


class StatusIndicator(QObject):
    """Owns the status menu, and the tray icon when the system has a tray."""

    open_requested = Signal()
    quit_requested = Signal()

    def __init__(
        self,
        channels: MemoryChannels,
        parent: QObject | None = None,
        *,
        use_tray: bool | None = None,
    ) -> None:
        super().__init__(parent)
        self._channels = channels
        self.state = "starting"
        self.text = STATE_TEXT["starting"]
        self.tooltip = "Puffin Memory"
        self.menu = QMenu()
        self.menu.setTitle("Puffin Memory")
        self.open_action = self._action("Open Puffin Memory", self.open_requested.emit)
        self.menu.addSeparator()
        self.scan_action = self._action("Scan now", channels.scan_now)
        icons.set_glyph(self.scan_action, "scan")
        maintenance = self.menu.addMenu("Run maintenance")
        icons.set_glyph(maintenance, "maintenance")
        self.maintenance_actions: dict[str, QAction] = {}
        for kind, label in (("weekly", "Weekly"), ("monthly", "Monthly"), ("full", "Full")):
            action = maintenance.addAction(label)
            action.triggered.connect(lambda _checked=False, k=kind: channels.start_maintenance(k))
            self.maintenance_actions[kind] = action
        self.pause_action = self._action("Pause automatic memorization", None)
        self.pause_action.setCheckable(True)
        self.pause_action.toggled.connect(channels.set_paused)
        self.menu.addSeparator()
        self.quit_action = self._action("Quit", self.quit_requested.emit)
        self.tray: QSystemTrayIcon | None = None
        if use_tray is None:
            use_tray = QSystemTrayIcon.isSystemTrayAvailable()
        if use_tray:
            # The icon is set before the tray is shown: Qt warns about an icon-less tray.
            self.tray = QSystemTrayIcon(icons.status_icon("ready"), self)
            self.tray.setToolTip("Puffin Memory")
            self.tray.setContextMenu(self.menu)
            self.tray.activated.connect(self._on_tray_activated)
        channels.watch_status(self._on_channels_status_changed)
        channels.job_finished.connect(self._on_channels_job_finished)

    def _action(self, text: str, slot: Any) -> QAction:
        action = self.menu.addAction(text)
        if slot is not None:
            action.triggered.connect(slot)
        return action

    def show(self) -> None:
        """Show the tray icon (no-op without a tray)."""
        if self.tray is not None:
            self.tray.show()

    def close(self) -> None:
        """Hide the tray icon and free the menu."""
        if self.tray is not None:
            self.tray.hide()
        self.menu.deleteLater()

    def notify(self, title: str, message: str) -> None:
        """A tray balloon, where there is a tray."""
        if self.tray is not None and self.tray.isVisible():
            self.tray.showMessage(title, message, icons.app_icon(), 4000)

    def _on_channels_job_finished(self, name: str, _kind: str, reply: dict[str, Any]) -> None:
        if reply.get("error"):
            self.notify(f"{name} failed", str(reply.get("message", "")))

    def _on_tray_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (
            QSystemTrayIcon.ActivationReason.Trigger,
            QSystemTrayIcon.ActivationReason.DoubleClick,
        ):
            self.open_requested.emit()

    def _on_channels_status_changed(self, status: dict[str, Any]) -> None:
        self.state = str(status.get("status", "starting"))
        text, tooltip = describe(status)
        self.pause_action.blockSignals(True)
        self.pause_action.setChecked(bool(status.get("paused")))
        self.pause_action.blockSignals(False)
        jobs = status.get("jobs") or []
        self.scan_action.setEnabled(not any(j.get("kind") == "scan" for j in jobs))
        if self.tray is not None:
            self.tray.setIcon(icons.status_icon(self.state))
            self.tray.setToolTip(tooltip)
        self.tooltip = tooltip
        self.text = text


class StatusBarIndicator(QWidget):
    """The indicator inside the window: a status dot, the status text and, without a tray,
    a button opening the tray's menu."""

    def __init__(
        self,
        channels: MemoryChannels,
        indicator: StatusIndicator,
        parent: QWidget | None = None,
        *,
        with_menu: bool,
    ) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 0, 6, 0)
        layout.setSpacing(6)
        self.dot = QLabel()
        self.dot.setAccessibleName("Status")
        self.label = QLabel(STATE_TEXT["starting"])
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.dot)
        layout.addWidget(self.label)
        layout.addStretch(1)
        self._layout = layout
        self.menu_button: QToolButton | None = None
        if with_menu:
            button = QToolButton()
            icons.set_glyph(button, "menu")
            button.setAutoRaise(True)
            button.setToolTip("Puffin menu: scan, maintenance, pause, quit")
            button.setAccessibleName("Puffin menu")
            button.setMenu(indicator.menu)
            button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
            layout.addWidget(button)
            self.menu_button = button
        channels.watch_status(self._on_channels_status_changed)

    def add_widget(self, widget: QWidget) -> None:
        """Put a widget (the job progress) between the status text and the menu button."""
        index = self._layout.count() - (1 if self.menu_button is not None else 0)
        self._layout.insertWidget(index, widget)

    def _on_channels_status_changed(self, status: dict[str, Any]) -> None:
        state = str(status.get("status", "starting"))
        text, tooltip = describe(status)
        self.dot.setPixmap(icons.status_dot(state))
        if state == "error" and status.get("lastError"):
            text = f"Error: {status['lastError']}"
        elif state == "warning" and status.get("problems"):
            text = f"Needs attention: {status['problems'][0]}"
        if len(text) > 90:
            text = text[:89] + "…"
        self.label.setText(text)
        self.setToolTip(tooltip)
        self.dot.setAccessibleDescription(text)
