"""Icons from `resources/icons/*.svg`, found relative to the package so PyInstaller can bundle them.

Status and app icons keep their own colours (status dots are the one place colour carries
meaning). Glyph icons are drawn with `currentColor`, which is replaced here by the palette's
text colour, so they follow the system's light or dark scheme.
"""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path

from PySide6.QtCore import QByteArray, QObject, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPalette, QPixmap
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QApplication

STATUS_COLORS: dict[str, str] = {
    "ready": "#2e9d57",
    "processing": "#2f74d0",
    "maintenance": "#d98a00",
    "error": "#d0342c",
    "warning": "#d98a00",
    "starting": "#8a8f98",
}


def resources_dir() -> Path:
    """`resources/` next to the `app` package (or inside a PyInstaller bundle)."""
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        return Path(bundle) / "resources"
    return Path(__file__).resolve().parents[2] / "resources"


def icon_path(name: str) -> Path:
    """Path of `resources/icons/<name>.svg`."""
    return resources_dir() / "icons" / f"{name}.svg"


@cache
def app_icon() -> QIcon:
    """The application icon."""
    return QIcon(str(icon_path("app")))


@cache
def status_icon(state: str) -> QIcon:
    """Tray icon for ready / processing / error / warning / maintenance (others look ready)."""
    known = {"ready", "processing", "error", "warning", "maintenance"}
    name = state if state in known else "ready"
    return QIcon(str(icon_path(f"tray-{name}")))


def glyph(name: str, color: QColor | None = None) -> QIcon:
    """A stroke icon in `color` (default: the palette's button text colour; selected items
    get the highlighted text colour)."""
    app = QApplication.instance()
    palette = app.palette() if isinstance(app, QApplication) else QPalette()
    normal = color or palette.color(QPalette.ColorRole.ButtonText)
    selected = palette.color(QPalette.ColorRole.HighlightedText)
    window = palette.color(QPalette.ColorRole.Window)
    return _glyph(name, _opaque(normal, window).name(), _opaque(selected, window).name())


GLYPH_PROPERTY = "puffinGlyph"


def set_glyph(target: QObject, name: str) -> None:
    """Give a button or action a glyph, remembered so `retint` can redraw it."""
    target.setProperty(GLYPH_PROPERTY, name)
    target.setIcon(glyph(name))  # type: ignore[attr-defined]


def retint(root: QObject) -> None:
    """Redraw every glyph under `root` in the current palette (the scheme changed)."""
    for child in [root, *root.findChildren(QObject)]:
        name = child.property(GLYPH_PROPERTY)
        if isinstance(name, str) and hasattr(child, "setIcon"):
            child.setIcon(glyph(name))


def _opaque(color: QColor, background: QColor) -> QColor:
    """Blend a translucent colour (PlaceholderText is) onto the background: SVG tints
    are written as #rrggbb."""
    alpha = color.alphaF()
    if alpha >= 1.0:
        return color
    return QColor.fromRgbF(
        color.redF() * alpha + background.redF() * (1 - alpha),
        color.greenF() * alpha + background.greenF() * (1 - alpha),
        color.blueF() * alpha + background.blueF() * (1 - alpha),
    )


@cache
def _glyph(name: str, color: str, selected: str) -> QIcon:
    source = icon_path(name).read_text(encoding="utf-8")
    icon = QIcon()
    for mode, tint in ((QIcon.Mode.Normal, color), (QIcon.Mode.Selected, selected)):
        svg = source.replace("currentColor", tint)
        renderer = QSvgRenderer(QByteArray(svg.encode("utf-8")))
        for size in (16, 20, 24, 32, 48):
            icon.addPixmap(_render(renderer, size, 1.0), mode)
            icon.addPixmap(_render(renderer, size, 2.0), mode)
    return icon


def _render(renderer: QSvgRenderer, size: int, ratio: float) -> QPixmap:
    side = int(size * ratio)
    pixmap = QPixmap(QSize(side, side))
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter, QRectF(0, 0, side, side))
    painter.end()
    pixmap.setDevicePixelRatio(ratio)
    return pixmap


def status_dot(state: str, diameter: int = 10) -> QPixmap:
    """A filled circle in the status colour, for the status bar and lists."""
    ratio = 2.0
    side = int(diameter * ratio)
    pixmap = QPixmap(QSize(side, side))
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setPen(Qt.PenStyle.NoPen)
    painter.setBrush(QColor(STATUS_COLORS.get(state, STATUS_COLORS["starting"])))
    painter.drawEllipse(QRectF(1, 1, side - 2, side - 2))
    painter.end()
    pixmap.setDevicePixelRatio(ratio)
    return pixmap
