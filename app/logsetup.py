"""The operational log: one rotating file per memory home, configured in one place.

`<home>/logs/puffin-memory.log` (1 MB, 3 old files kept) gets one line per event with its
context as key=value pairs: every `memory:*` operation with its outcome and duration (from
`MemoryApi.invoke`), warnings and errors of every module, and uncaught exceptions of the
main thread, worker threads and the event loop. The desktop app, the MCP server and the
command line's writing commands turn it on; reads and hooks do not (a read must not write,
and the hooks keep their own `hooks.log`). `puffin-memory logs` prints the tail, `logs
--path` only the file's path, so "nothing was memorized" comes with something to attach.
"""

from __future__ import annotations

import logging
import logging.handlers
import sys
import threading
from pathlib import Path
from types import TracebackType

LOG_NAME = "puffin-memory.log"
MAX_BYTES = 1_000_000
BACKUPS = 3
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_configured: set[Path] = set()


def log_file(home: Path) -> Path:
    """Where the operational log of a memory home lives."""
    return home / "logs" / LOG_NAME


class _UTCFormatter(logging.Formatter):
    converter = staticmethod(__import__("time").gmtime)

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:  # noqa: N802
        return super().formatTime(record, "%Y-%m-%dT%H:%M:%SZ")


def configure(home: Path, component: str) -> Path | None:
    """Send INFO and above to the home's log file; route uncaught exceptions there too.

    Returns the file, or None when it cannot be opened (a read-only home): logging then
    stays on stderr and nothing fails because of it.
    """
    path = log_file(home)
    root = logging.getLogger()
    if path in _configured:
        return path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.handlers.RotatingFileHandler(
            path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8"
        )
    except OSError:
        return None
    handler.setFormatter(_UTCFormatter(FORMAT))
    handler.setLevel(logging.INFO)
    # Handlers already there (stderr) keep showing what they showed: the file gets INFO
    # without making the terminal or an MCP client's log any chattier.
    shown = root.level or logging.WARNING
    for existing in root.handlers:
        if existing.level == logging.NOTSET:
            existing.setLevel(shown)
    root.addHandler(handler)
    if root.level > logging.INFO or root.level == logging.NOTSET:
        root.setLevel(logging.INFO)
    _configured.add(path)
    logging.getLogger("puffin").info(
        "start component=%s pid=%s", component, __import__("os").getpid()
    )
    _route_uncaught()
    return path


def _route_uncaught() -> None:
    previous = sys.excepthook

    def main_hook(
        kind: type[BaseException], value: BaseException, tb: TracebackType | None
    ) -> None:
        if not issubclass(kind, KeyboardInterrupt):
            logging.getLogger("puffin").critical("uncaught exception", exc_info=(kind, value, tb))
        previous(kind, value, tb)

    def thread_hook(args: threading.ExceptHookArgs) -> None:
        if args.exc_type is not SystemExit and args.exc_value is not None:
            logging.getLogger("puffin").critical(
                "uncaught exception in thread %s",
                args.thread.name if args.thread else "?",
                exc_info=(args.exc_type, args.exc_value, args.exc_traceback),
            )

    sys.excepthook = main_hook
    threading.excepthook = thread_hook


def tail(home: Path, lines: int = 50) -> str:
    """The last `lines` lines of the log (empty when there is none yet)."""
    path = log_file(home)
    try:
        with path.open("rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - 200 * lines))
            data = handle.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(data.splitlines()[-lines:])
