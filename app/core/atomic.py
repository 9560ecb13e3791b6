"""Atomic file writing and safe JSON documents.

Every file the app owns is written the same way: a unique temp file in the same folder,
flush, fsync, `os.replace`, then fsync of the folder, so a crash at any moment leaves either
the old bytes or the new bytes, never a mix. JSON documents go through one reader/writer pair
that turns unreadable files into a clear `StorageError` (or moves them aside when asked).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from app.core.errors import StorageError, describe_os_error
from app.core.models import utc_now


def fsync_dir(folder: Path) -> None:
    """Make a rename in `folder` durable (no-op where directories cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace `path` with `data` atomically (see module docstring).

    `durable=False` skips the fsyncs: still all-or-nothing, but a power cut may bring back the
    previous content. Only for informational files (activity, maintenance timestamps) whose
    loss costs nothing, because each fsync costs ~10 ms on a memorize path.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise StorageError(describe_os_error(exc, str(path))) from exc
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise StorageError(describe_os_error(exc, str(path))) from exc
    if durable:
        fsync_dir(path.parent)


# `.<name>.<random>.tmp`, as mkstemp above names them.
_TEMP_NAME = re.compile(r"^\..+\.[A-Za-z0-9_]{6,}\.tmp$")
TEMP_MAX_AGE_S = 3600.0


def sweep_temp_files(folders: list[Path], *, older_than_s: float = TEMP_MAX_AGE_S) -> int:
    """Remove temp files a crashed write left behind; returns how many went.

    Only names this module creates, only regular files, only older than `older_than_s`
    (a write in progress in another process is seconds old). Errors are ignored: this is
    tidying, never a reason to fail.
    """
    import time

    cutoff = time.time() - older_than_s
    removed = 0
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if not _TEMP_NAME.match(entry.name):
                continue
            with contextlib.suppress(OSError):
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(info.st_mode) and info.st_mtime < cutoff:
                    os.unlink(entry.path)
                    removed += 1
    return removed


@contextlib.contextmanager
def held_lock(path: Path, timeout: float, busy: str) -> Iterator[None]:
    """Hold the lock file `path` (created with its folder); StorageError(`busy`) on timeout."""
    from filelock import FileLock, Timeout  # deferred: costly import, CLI start-up matters

    lock = FileLock(str(path))
    try:
        lock.acquire(timeout=timeout)
    except Timeout as exc:
        raise StorageError(busy) from exc
    try:
        yield
    finally:
        lock.release()


def atomic_write_text(path: Path, text: str, *, durable: bool = True) -> None:
    """Replace `path` with UTF-8 `text` atomically."""
    atomic_write_bytes(path, text.encode("utf-8"), durable=durable)


def write_json(path: Path, data: Any, *, durable: bool = True) -> None:
    """Write a JSON document atomically, pretty-printed and stable."""
    text = json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False, default=str)
    atomic_write_text(path, text + "\n", durable=durable)


def read_json(path: Path, default: Any = None) -> Any:
    """Read a JSON document; a missing file gives `default`, a broken one a StorageError."""
    try:
        # Opened without blocking and checked to be a regular file: a FIFO or a folder put
        # where config.json belongs must give an error, not hang every command.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return default
    except OSError as exc:
        raise StorageError(f"Could not read {path}: {exc.strerror or exc}") from exc
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise StorageError(f"{path} is not a regular file; move it away.")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            raw = handle.read()
    except OSError as exc:
        raise StorageError(f"Could not read {path}: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise StorageError(f"{path.name} is not valid JSON: {exc}") from exc


def move_aside(path: Path, label: str = "broken") -> Path:
    """Rename an unreadable file to `<name>.<label>-<timestamp>` and return the new path."""
    stamp = utc_now().strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}.{label}-{stamp}")
    counter = 1
    while target.exists():
        target = path.with_name(f"{path.name}.{label}-{stamp}-{counter}")
        counter += 1
    os.replace(path, target)
    fsync_dir(path.parent)
    return target
