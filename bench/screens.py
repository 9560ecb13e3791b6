"""Screenshots of every panel at 800x600 and 1440x900, light and dark, for a person to review.

With `--scale 2` the same panels are shot at 1920x1080 logical pixels on a 200 % screen
(3840x2160 device pixels: a 4K monitor with the usual scaling).

Builds a memory home with the GUI test fixtures (two branches, a review queue, an archive
entry), starts the real window offscreen over the real service, and saves one PNG per
panel, size and colour scheme under `screenshots/` (or `--out`). It also prints, per shot,
any visible control that is cut off by the window or overlaps a sibling, so layout problems
show up without opening the images.

Run: `.venv/bin/python bench/screens.py [--out screenshots] [--scale 2]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import qasync  # noqa: E402
from PySide6.QtCore import QRect, Qt  # noqa: E402
from PySide6.QtGui import QColor, QPalette  # noqa: E402
from PySide6.QtWidgets import (  # noqa: E402
    QAbstractButton,
    QAbstractScrollArea,
    QApplication,
    QComboBox,
    QLineEdit,
    QWidget,
)

FIXTURES = REPO / "tests" / "fixtures" / "gui"
SIZES = ((800, 600), (1440, 900))
PANELS = ("dashboard", "branches", "ask", "review", "conflicts", "settings")


def seed(home: Path) -> None:
    from app.core.archive import Archive
    from app.core.models import Category, MemoryItem
    from app.core.review import ReviewQueue
    from app.core.store import MemoryStore

    store = MemoryStore(home)
    store.ensure()
    shutil.copyfile(FIXTURES / "spotter__main.md", store.branch_file("spotter/main"))
    shutil.copyfile(FIXTURES / "todo__ui.md", store.branch_file("puffin-todo-list/ui"))
    (home / "config.json").write_text(
        json.dumps(
            {
                "scan_on_start": False,
                "maintenance_on_start": False,
                "auto_memorize": False,
                "sources": {"claude_code": False, "codex": False, "puffin": False, "aider": False},
            }
        ),
        encoding="utf-8",
    )
    queue = ReviewQueue(store.review_queue_path)
    queue.offer(
        "spotter/main",
        [
            MemoryItem(
                category=Category.ARCHITECTURAL_DECISIONS,
                title="SAM pattern for state",
                content="The todo app follows the SAM pattern: Model, Actions, State render.",
                confidence=0.62,
                sources=["thread-2025-02-14"],
            )
        ],
        threshold=0.8,
        promote_at=0.99,
    )
    Archive(home).add(
        "spotter/main",
        [
            (
                MemoryItem(
                    category=Category.PROJECT_CONVENTIONS,
                    title="Yarn workspaces",
                    content="Use yarn workspaces for every package.",
                    confidence=0.8,
                    sources=["thread-2025-01-02"],
                ),
                "merged into a near-duplicate by weekly maintenance",
            )
        ],
    )


def _dark_palette() -> QPalette:
    palette = QPalette()
    roles = {
        QPalette.ColorRole.Window: "#202124",
        QPalette.ColorRole.WindowText: "#e8eaed",
        QPalette.ColorRole.Base: "#17181a",
        QPalette.ColorRole.AlternateBase: "#26282b",
        QPalette.ColorRole.Text: "#e8eaed",
        QPalette.ColorRole.Button: "#2d2f33",
        QPalette.ColorRole.ButtonText: "#e8eaed",
        QPalette.ColorRole.Highlight: "#4c8bf5",
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.ToolTipBase: "#2d2f33",
        QPalette.ColorRole.ToolTipText: "#e8eaed",
        QPalette.ColorRole.PlaceholderText: "#9aa0a6",
        QPalette.ColorRole.Mid: "#3c4043",
        QPalette.ColorRole.Light: "#3c4043",
        QPalette.ColorRole.Dark: "#111213",
        QPalette.ColorRole.Link: "#8ab4f8",
    }
    for role, colour in roles.items():
        palette.setColor(role, QColor(colour))
    return palette


def problems(window: QWidget) -> list[str]:
    """Visible controls clipped by the window or overlapping a sibling control."""
    found: list[str] = []
    bounds = window.rect()

    def scrolled(widget: QWidget) -> bool:
        parent = widget.parentWidget()
        while parent is not None:
            if isinstance(parent, QAbstractScrollArea):
                return True  # a scrolling page: out of view is not cut off
            parent = parent.parentWidget()
        return False

    controls = [
        w
        for w in window.findChildren(QWidget)
        if isinstance(w, QAbstractButton | QLineEdit | QComboBox)
        and w.isVisible()
        and not scrolled(w)
    ]
    rects: list[tuple[QWidget, QRect]] = []
    for widget in controls:
        top_left = widget.mapTo(window, widget.rect().topLeft())
        rect = QRect(top_left, widget.size())
        if not bounds.contains(rect):
            name = widget.accessibleName() or widget.objectName() or type(widget).__name__
            found.append(f"cut off: {name}")
        rects.append((widget, rect))
    for i, (a, ra) in enumerate(rects):
        for b, rb in rects[i + 1 :]:
            if a.parent() is b.parent() and ra.intersects(rb):
                inter = ra.intersected(rb)
                if inter.width() > 2 and inter.height() > 2:
                    found.append(
                        f"overlap: {a.accessibleName() or type(a).__name__} / "
                        f"{b.accessibleName() or type(b).__name__}"
                    )
    return found


async def shoot(out: Path, sizes: tuple[tuple[int, int], ...] = SIZES, scale: float = 1.0) -> int:
    from app.service.channels import MemoryChannels
    from app.service.host import MemoryHost
    from app.ui.main_window import MainWindow
    from app.ui.tray import StatusIndicator

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    bad = 0
    with tempfile.TemporaryDirectory(prefix="puffin-screens-") as tmp:
        home = Path(tmp) / "home"
        seed(home)
        channels = MemoryChannels(MemoryHost(home, engine_override="offline"))
        ready = asyncio.Event()
        channels.stats_changed.connect(lambda _stats: ready.set())
        channels.start_service()
        await ready.wait()
        light = app.palette()
        for scheme in ("light", "dark"):
            # Offscreen Qt has no system scheme to follow: give it the palette a dark
            # desktop would, before the window is built (as at a real start-up).
            app.styleHints().setColorScheme(
                Qt.ColorScheme.Dark if scheme == "dark" else Qt.ColorScheme.Light
            )
            app.setPalette(_dark_palette() if scheme == "dark" else light)
            indicator = StatusIndicator(channels, use_tray=False)
            window = MainWindow(channels, indicator)
            window.show()
            for width, height in sizes:
                window.resize(width, height)
                for index, name in enumerate(PANELS):
                    window.show_panel(index)
                    if name == "branches":
                        window.browser.select_branch("spotter/main")
                    for _ in range(20):
                        await asyncio.sleep(0.05)
                    suffix = f"@{scale:g}x" if scale != 1 else ""
                    shot = out / f"{name}-{width}x{height}{suffix}-{scheme}.png"
                    window.grab().save(str(shot))
                    issues = problems(window)
                    bad += bool(issues)
                    note = "; ".join(issues[:4]) if issues else "ok"
                    print(f"{shot.name:38} {window.width()}x{window.height()}  {note}")
            window.hide()
            window.deleteLater()
        await channels.shutdown()
    return bad


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, default=REPO / "screenshots")
    parser.add_argument(
        "--scale", type=float, default=1.0, help="device pixel ratio (2: a 4K screen at 200 %%)"
    )
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.scale != 1:
        os.environ["QT_SCALE_FACTOR"] = f"{args.scale:g}"
    app = QApplication(sys.argv[:1])
    sizes = SIZES if args.scale == 1 else ((1920, 1080),)
    with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
        bad = runner.run(shoot(args.out, sizes, args.scale))
    print(f"{bad} shot(s) with clipped or overlapping controls; images in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
