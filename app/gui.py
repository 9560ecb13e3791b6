"""The desktop app entry: `run_app(home, argv)` opens Puffin Memory.

One qasync loop drives Qt and asyncio. The window (or the tray) appears first; the core is
built and everything slow runs after, in the background. A second launch for the same home
brings the running window forward and exits. Every way of quitting — the Quit action, closing
the window without a tray, SIGTERM/SIGINT, the session ending — goes through
`QApplication.quit()`, whose Quit event is turned into a graceful asynchronous shutdown: jobs
are cancelled, the core thread is stopped, then the loop ends.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Any

import qasync  # type: ignore[import-untyped]
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication

log = logging.getLogger(__name__)
SHUTDOWN_TIMEOUT_S = 4.5
SIGNAL_TICK_MS = 200


def _options(argv: list[str]) -> argparse.Namespace:
    """The few options the app reads itself (the CLI has parsed the rest)."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--engine", choices=["auto", "offline", "anthropic", "local"])
    parser.add_argument(
        "--hidden", action="store_true", help="start in the tray without showing the window"
    )
    options, _rest = parser.parse_known_args(argv[1:])
    return options


class _QuitInterceptor(QObject):
    """Turns the application's Quit event into a request for a graceful shutdown."""

    def __init__(self, requested: asyncio.Event) -> None:
        super().__init__()
        self._requested = requested

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        """Swallow QEvent.Quit: the main coroutine ends the loop once shutdown is done."""
        if event.type() == QEvent.Type.Quit and isinstance(watched, QApplication):
            self._requested.set()
            return True
        return False


async def _answer_remote(
    host: Any, instance: Any, client: object, channel: str, payload: dict[str, Any]
) -> None:
    """Answer a command-line request (`app/remote.py`) with the running core."""
    from app.remote import REMOTE_CHANNELS

    if channel not in REMOTE_CHANNELS:
        reply = {
            "error": True,
            "code": "INVALID_INPUT",
            "message": f"{channel} is not answered for the command line",
        }
    else:
        reply = await host.invoke(channel, payload)
    instance.answer(client, reply)


# What Qt's xcb platform plugin links against beyond libX11/libxcb, as (library, Debian
# package); desktops often lack the first few, and Qt then aborts with a cryptic message.
_XCB_LIBRARIES: tuple[tuple[str, str], ...] = (
    ("xcb-cursor", "libxcb-cursor0"),
    ("xcb-icccm", "libxcb-icccm4"),
    ("xcb-keysyms", "libxcb-keysyms1"),
    ("xcb-image", "libxcb-image0"),
    ("xcb-render-util", "libxcb-render-util0"),
    ("xkbcommon-x11", "libxkbcommon-x11-0"),
    ("xcb-randr", "libxcb-randr0"),
    ("xcb-shape", "libxcb-shape0"),
    ("xcb-xkb", "libxcb-xkb1"),
)


def display_problem(
    env: dict[str, str] | None = None, platform: str = sys.platform, find_library: Any = None
) -> str | None:
    """Why Qt could not open a window here, said before Qt aborts the process over it.

    Qt's xcb plugin (X11) needs the system library libxcb-cursor0, which some desktops do
    not install; without it, or without any display, Qt prints a warning and aborts.
    """
    env = dict(os.environ) if env is None else env
    if platform != "linux" or env.get("QT_QPA_PLATFORM") or env.get("WAYLAND_DISPLAY"):
        return None
    if not env.get("DISPLAY"):
        return (
            "no display was found (DISPLAY and WAYLAND_DISPLAY are not set). Start it "
            "from a desktop session, or set QT_QPA_PLATFORM=offscreen to run headless; "
            "the command line (puffin-memory status, scan, retrieve ...) needs no display."
        )
    if find_library is None:
        from ctypes.util import find_library
    missing = [package for library, package in _XCB_LIBRARIES if find_library(library) is None]
    if missing:
        return (
            "Qt needs these system libraries to open windows on X11: "
            f"{' '.join(missing)}. Install them (Debian/Ubuntu: sudo apt install "
            f"{' '.join(missing)}) and start it again."
        )
    return None


def run_app(home: Path | None, argv: list[str]) -> int:
    """Open the desktop app for `home` (default: PUFFIN_MEMORY_HOME or ~/.puffin/memory)."""
    from app.core.paths import resolve_home
    from app.service.instance import SingleInstance
    from app.ui import icons

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    options = _options(argv)
    resolved = resolve_home(home)
    from app.logsetup import configure

    configure(resolved, "app")
    problem = None if QApplication.instance() else display_problem()
    if problem:
        sys.stderr.write(f"Puffin Memory cannot open its window: {problem}\n")
        return 1
    app = QApplication.instance() or QApplication(argv)
    assert isinstance(app, QApplication)
    app.setApplicationName("Puffin Memory")
    app.setOrganizationName("Puffin")
    app.setDesktopFileName("puffin-memory")
    app.setWindowIcon(icons.app_icon())
    app.setQuitOnLastWindowClosed(False)

    instance = SingleInstance(resolved)
    if instance.notify_running():
        sys.stderr.write(
            f"Puffin Memory is already running for {resolved}; brought its window forward.\n"
        )
        return 0
    if not instance.listen():
        log.warning("could not listen on %s; a second launch will not find this one", instance.name)
    try:
        with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
            return runner.run(_main(app, resolved, options, instance))
    finally:
        instance.close()


async def _main(
    app: QApplication, home: Path, options: argparse.Namespace, instance: object
) -> int:
    from app.service.channels import MemoryChannels
    from app.service.host import MemoryHost
    from app.service.instance import SingleInstance
    from app.ui.main_window import MainWindow
    from app.ui.tray import StatusIndicator

    assert isinstance(instance, SingleInstance)
    quit_requested = asyncio.Event()
    interceptor = _QuitInterceptor(quit_requested)
    app.installEventFilter(interceptor)
    app.aboutToQuit.connect(quit_requested.set)
    _install_signal_handlers(app)
    tick = QTimer()
    tick.start(SIGNAL_TICK_MS)  # lets Python run its signal handlers while Qt waits
    tick.timeout.connect(lambda: None)

    host = MemoryHost(home, engine_override=options.engine)
    channels = MemoryChannels(host)
    indicator = StatusIndicator(channels)
    window = MainWindow(channels, indicator)
    indicator.open_requested.connect(window.bring_forward)
    indicator.quit_requested.connect(app.quit)
    window.quit_requested.connect(app.quit)
    instance.activated.connect(window.bring_forward)
    instance.invoke_requested.connect(
        lambda client, channel, payload: host.spawn(
            _answer_remote(host, instance, client, channel, payload)
        )
    )
    instance.activated.connect(lambda: log.info("another launch asked for the window"))
    indicator.show()
    if not (options.hidden and indicator.tray is not None):
        window.show()
    # The window paints first; the core is built on its own thread after that.
    QTimer.singleShot(0, channels.start_service)
    log.info("Puffin Memory is running for %s (pid %d)", home, os.getpid())

    await quit_requested.wait()
    log.info("Puffin Memory is quitting")
    # Every way of quitting ends here (menu, tray, Ctrl+Q, SIGTERM, closing without a tray).
    window.browser.keep_unsaved_edits()
    tick.stop()
    window.hide()
    indicator.close()
    try:
        await asyncio.wait_for(channels.shutdown(), SHUTDOWN_TIMEOUT_S)
    except TimeoutError:
        log.warning("shutdown took longer than %.1f s; leaving anyway", SHUTDOWN_TIMEOUT_S)
    app.removeEventFilter(interceptor)
    window.deleteLater()
    return 0


def _install_signal_handlers(app: QApplication) -> None:
    def handle(_signum: int, _frame: FrameType | None) -> None:
        app.quit()

    for name in ("SIGTERM", "SIGINT", "SIGHUP"):
        number = getattr(signal, name, None)
        if number is not None:
            signal.signal(number, handle)


def gui_main() -> int:
    """The `puffin-memory-app` GUI entry point (no console window on Windows).

    Takes the same `--home DIR`, `--engine` and `--hidden` options as `puffin-memory`.
    """
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--home")
    options, _rest = parser.parse_known_args(sys.argv[1:])
    return run_app(Path(options.home).expanduser() if options.home else None, sys.argv)
