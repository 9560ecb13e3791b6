"""Building blocks shared by the panels: the panel base class, stat cards, empty states,
non-blocking confirmations, the app style sheet and human-friendly formatting.

Colours come from palette roles only (the style sheet uses `palette(...)`), so the window
follows the system's light or dark scheme; the one exception is the status dot.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from datetime import UTC, datetime
from typing import Any

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt, Signal
from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QAbstractSpinBox,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QMessageBox,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.service.channels import MemoryChannels
from app.ui import icons

SPACING = 12
MARGIN = 20

STYLE_SHEET = """
QFrame#card {
    background: palette(base);
    border: 1px solid palette(midlight);
    border-radius: 8px;
}
QListWidget#nav {
    background: palette(window);
    border: none;
    outline: none;
}
QListWidget#nav::item {
    padding-left: 8px;
    border-radius: 6px;
}
QListWidget#nav::item:hover:!selected {
    background: palette(midlight);
}
QListWidget#nav::item:selected {
    background: palette(highlight);
    color: palette(highlighted-text);
}
QListWidget#itemList::item {
    padding: 6px 6px;
    border-bottom: 1px solid palette(midlight);
}
QListWidget#itemList::item:selected {
    background: palette(highlight);
    color: palette(highlighted-text);
}
QFrame#banner {
    background: palette(alternate-base);
    border: 1px solid palette(mid);
    border-radius: 6px;
}
QFrame#resultCard {
    background: palette(base);
    border: 1px solid palette(midlight);
    border-radius: 6px;
}
"""


def muted(label: QLabel) -> QLabel:
    """Draw a label in the palette's secondary text colour."""
    label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
    return label


def scaled_font(widget: QWidget, factor: float, *, bold: bool = False) -> QFont:
    """The widget's font scaled by `factor` (sizes follow the user's font settings)."""
    font = QFont(widget.font())
    size = font.pointSizeF()
    if size > 0:
        font.setPointSizeF(size * factor)
    font.setBold(bold)
    return font


def heading(text: str, factor: float = 1.15) -> QLabel:
    """A bold section heading."""
    label = QLabel(text)
    label.setFont(scaled_font(label, factor, bold=True))
    return label


def icon_button(name: str, tooltip: str, *, text: str = "") -> QToolButton:
    """A tool button with a glyph; icon-only buttons get an accessible name."""
    button = QToolButton()
    icons.set_glyph(button, name)
    button.setToolTip(tooltip)
    button.setAccessibleName(tooltip)
    button.setAutoRaise(True)
    if text:
        button.setText(text)
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
    return button


def search_box(placeholder: str, name: str) -> QLineEdit:
    """A line edit with a clear button; the clear button gets an accessible name too."""
    edit = QLineEdit()
    edit.setPlaceholderText(placeholder)
    edit.setAccessibleName(name)
    edit.setClearButtonEnabled(True)
    for button in edit.findChildren(QToolButton):
        button.setAccessibleName(f"Clear {name.lower()}")
        button.setToolTip("Clear")
    return edit


def push_button(text: str, icon: str | None = None, *, tooltip: str = "") -> QPushButton:
    """A push button with an optional glyph."""
    button = QPushButton(text)
    if icon:
        icons.set_glyph(button, icon)
    if tooltip:
        button.setToolTip(tooltip)
    return button


def parse_time(value: object) -> datetime | None:
    """An ISO timestamp from the API as an aware datetime, or None."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def format_time(value: object, *, never: str = "Never", now: datetime | None = None) -> str:
    """'just now', '5 min ago', 'in 3 days', or a local date for anything far away."""
    moment = parse_time(value)
    if moment is None:
        return never
    now = now or datetime.now(UTC)
    seconds = (moment - now).total_seconds()
    future = seconds > 0
    span = abs(seconds)
    if span < 60:
        return "just now" if not future else "in a moment"
    for unit, size in (("min", 60), ("h", 3600), ("day", 86400)):
        if span < size * (60 if unit == "min" else 24 if unit == "h" else 14):
            count = int(span // size)
            word = unit if unit != "day" else ("day" if count == 1 else "days")
            return f"in {count} {word}" if future else f"{count} {word} ago"
    return moment.astimezone().strftime("%d %b %Y")


def format_tokens(value: object) -> str:
    """12,345 -> '12.3k'."""
    number = int(value) if isinstance(value, int | float) else 0
    if number >= 1_000_000:
        return f"{number / 1_000_000:.1f}M"
    if number >= 10_000:
        return f"{number / 1000:.1f}k"
    return f"{number:,}"


def confirm(
    parent: QWidget,
    title: str,
    text: str,
    on_yes: Callable[[], Any],
    *,
    yes_text: str = "OK",
    informative: str = "",
) -> QMessageBox:
    """Ask without blocking the event loop (window-modal); `on_yes` runs if confirmed."""
    box = QMessageBox(
        QMessageBox.Icon.Question, title, text, QMessageBox.StandardButton.Cancel, parent
    )
    box.setObjectName("confirmBox")
    if informative:
        box.setInformativeText(informative)
    yes = box.addButton(yes_text, QMessageBox.ButtonRole.AcceptRole)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)

    def finished(_result: int) -> None:
        if box.clickedButton() is yes:
            on_yes()

    box.finished.connect(finished)
    box.open()
    return box


class Panel(QWidget):
    """Base of every panel: holds MemoryChannels, runs its coroutines, has a header."""

    title = ""
    subtitle = ""
    icon = ""

    def __init__(self, channels: MemoryChannels, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.channels = channels
        self._outer = QVBoxLayout(self)
        self._outer.setContentsMargins(MARGIN, MARGIN, MARGIN, MARGIN)
        self._outer.setSpacing(SPACING)
        header = QHBoxLayout()
        header.setSpacing(SPACING)
        titles = QVBoxLayout()
        titles.setSpacing(2)
        self.title_label = QLabel(self.title)
        self.title_label.setFont(scaled_font(self.title_label, 1.5, bold=True))
        self.subtitle_label = muted(QLabel(self.subtitle))
        self.subtitle_label.setWordWrap(True)
        titles.addWidget(self.title_label)
        titles.addWidget(self.subtitle_label)
        header.addLayout(titles, 1)
        self.header_actions = QHBoxLayout()
        self.header_actions.setSpacing(8)
        header.addLayout(self.header_actions)
        self._outer.addLayout(header)

    @property
    def body(self) -> QVBoxLayout:
        """Layout under the header."""
        return self._outer

    def run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        """Run a coroutine for this panel (cancelled if the panel is destroyed)."""
        return self.channels.start(coro, owner=self)

    def refresh(self) -> None:
        """Reload what the panel shows (F5)."""

    def activate(self) -> None:
        """Called when the panel becomes visible."""
        self.refresh()


class Card(QFrame):
    """A dashboard figure: caption, big value, small detail line."""

    def __init__(self, caption: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("card")
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(14, 12, 14, 12)
        layout.setSpacing(2)
        self.caption = muted(QLabel(caption))
        self.value = QLabel("–")
        self.value.setFont(scaled_font(self.value, 1.7, bold=True))
        self.value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail = muted(QLabel(""))
        self.detail.setFont(scaled_font(self.detail, 0.9))
        layout.addWidget(self.caption)
        layout.addWidget(self.value)
        layout.addWidget(self.detail)
        self.setAccessibleName(caption)

    def set_value(self, value: str, detail: str = "") -> None:
        """Show a new figure."""
        self.value.setText(value)
        self.detail.setText(detail)
        self.setAccessibleDescription(f"{value} {detail}".strip())


class EmptyState(QWidget):
    """A friendly message where a list would be, with an optional action."""

    action_triggered = Signal()

    def __init__(
        self,
        headline: str,
        text: str = "",
        *,
        action: str = "",
        icon: str = "empty",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setSpacing(8)
        layout.addStretch(1)
        picture = QLabel()
        tint = self.palette().color(QPalette.ColorRole.PlaceholderText)
        picture.setPixmap(icons.glyph(icon, tint).pixmap(40, 40))
        picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.headline = QLabel(headline)
        self.headline.setFont(scaled_font(self.headline, 1.15, bold=True))
        self.headline.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.headline.setWordWrap(True)
        self.text = muted(QLabel(text))
        self.text.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.text.setWordWrap(True)
        self.text.setVisible(bool(text))
        layout.addWidget(picture)
        layout.addWidget(self.headline)
        layout.addWidget(self.text)
        self.button: QPushButton | None = None
        if action:
            self.button = QPushButton(action)
            self.button.clicked.connect(self.action_triggered)
            row = QHBoxLayout()
            row.addStretch(1)
            row.addWidget(self.button)
            row.addStretch(1)
            layout.addSpacing(4)
            layout.addLayout(row)
        layout.addStretch(2)

    def set_text(self, headline: str, text: str = "") -> None:
        """Change the message."""
        self.headline.setText(headline)
        self.text.setText(text)
        self.text.setVisible(bool(text))


class Banner(QFrame):
    """A one-line notice inside a panel (an error, a hint, a change on disk)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("banner")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 6, 6)
        self.dot = QLabel()
        self.label = QLabel()
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.action = QPushButton()
        self.action.setVisible(False)
        close = icon_button("close", "Dismiss")
        close.clicked.connect(self.hide)
        layout.addWidget(self.dot)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.action)
        layout.addWidget(close)
        self.hide()

    def show_message(self, text: str, *, level: str = "error", action: str = "") -> None:
        """Show `text`; `level` picks the status dot (error, ready, processing)."""
        state = {"error": "error", "info": "processing", "ok": "ready", "warning": "maintenance"}
        self.dot.setPixmap(icons.status_dot(state.get(level, "processing")))
        self.label.setText(text)
        self.action.setText(action)
        self.action.setVisible(bool(action))
        self.show()


class _WheelGuard(QObject):
    """Gives the mouse wheel to the page unless the spin or combo box has the focus.

    Scrolling a long form with the wheel must scroll the form: a box that happens to pass
    under the pointer would otherwise take the wheel and change a setting (the model or
    the daily budget) without the user noticing.
    """

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt API)
        if (
            event.type() == QEvent.Type.Wheel
            and isinstance(watched, QWidget)
            and not watched.hasFocus()
        ):
            # Straight to the enclosing scroll area: Qt 6 does not pass a forwarded
            # (non-spontaneous) wheel event on to parents by itself.
            area = watched.parentWidget()
            while area is not None and not isinstance(area, QAbstractScrollArea):
                area = area.parentWidget()
            if area is not None:
                QCoreApplication.sendEvent(area.viewport(), event)
            return True
        return False


_WHEEL_GUARD: _WheelGuard | None = None


def guard_wheel(*boxes: QAbstractSpinBox | QComboBox) -> None:
    """Let these boxes take the wheel only once clicked or tabbed into (see _WheelGuard)."""
    global _WHEEL_GUARD
    if _WHEEL_GUARD is None:
        _WHEEL_GUARD = _WheelGuard()
    for box in boxes:
        box.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        box.installEventFilter(_WHEEL_GUARD)


def select_row_with(view: QListWidget, role: int, value: object) -> None:
    """Select the row whose `role` data equals `value` (the first row when none does)."""
    row = next((i for i in range(view.count()) if view.item(i).data(role) == value), 0)
    view.setCurrentRow(row)


def current_data(view: QListWidget, role: int) -> str | None:
    """`role` data of the selected row, as text (None when nothing is selected)."""
    item = view.currentItem()
    return str(item.data(role)) if item is not None else None


# Who a source ref names, for reading (the refs themselves are thread ids: internal).
_AGENT_PREFIXES = {
    "cc": "Claude Code",
    "cx": "Codex",
    "ai": "Aider",
    "pf": "Puffin",
    "tx": "a transcript",
    "claude-code": "Claude Code",
    "codex": "Codex",
    "aider": "Aider",
    "puffin": "Puffin",
}
_PEOPLE = {"user": "you", "cli": "command line", "mcp": "an agent via MCP"}


def who_said(sources: str) -> str:
    """ "cc-1a2b3c4d, cc-9f8e7d6c, user" -> "Claude Code ×2, you"."""
    counts: dict[str, int] = {}
    for ref in (part.strip() for part in sources.split(",")):
        if not ref:
            continue
        name = (
            _PEOPLE.get(ref)
            or _AGENT_PREFIXES.get(ref.split(":", 1)[0])
            or _AGENT_PREFIXES.get(ref.split("-", 1)[0], "a conversation")
        )
        counts[name] = counts.get(name, 0) + 1
    return ", ".join(name if n == 1 else f"{name} ×{n}" for name, n in counts.items())
