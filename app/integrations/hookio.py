"""Low-level plumbing shared by the Claude Code hooks: home folder, hook log, stdin, files.

Hooks run inside the agent's session start and end, so this module imports only the
standard library (no pydantic, no SQLite, no Qt) and never raises out of its helpers: a
memory problem must never break the agent. It owns where the memory home is (`--home`,
else `PUFFIN_MEMORY_HOME`, else `~/.puffin/memory`, the same rule as `app.core.store`), the
small rotating hook log (`<home>/logs/hooks.log`, or a file in the temp folder when the home
cannot be written), reading the hook's JSON from stdin without hanging when the agent
never closes it, the hard time limit of a whole hook run (`arm_deadline`), and atomic
writes of small files.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

LOG_NAME = "hooks.log"
FALLBACK_LOG = "puffin-memory-hooks.log"
# Small on purpose: the log explains the last few hook runs, it is not an archive.
LOG_MAX_BYTES = 256 * 1024
LOG_BACKUPS = 2

STDIN_LIMIT = 1024 * 1024
STDIN_TIMEOUT_S = 2.0
# Whole-run limit of a hook: stdin (up to STDIN_TIMEOUT_S) plus the work. Whatever blocks
# past it (a slow network folder, a file system that hangs), the agent is not kept waiting.
HOOK_DEADLINE_S = 3.0
DEADLINE_EXIT = 0

_deadline_lock = threading.Lock()
_deadline_timer: list[threading.Timer] = []


def arm_deadline(home: Path | None, event: str, seconds: float = HOOK_DEADLINE_S) -> None:
    """End this process (exit 0, nothing printed) if the hook is still running in `seconds`.

    A daemon timer calls `os._exit`: a thread stuck in a blocking system call cannot be
    interrupted any other way, and a hook must never hang the agent's session. The reply is
    written only after `disarm_deadline`, so the timer never cuts an answer in half.
    """

    def expire() -> None:
        with _deadline_lock:
            if not _deadline_timer:
                return
            _deadline_timer.clear()
            hook_log(home, event, f"gave up after the {seconds:g} s hook time limit")
            with contextlib.suppress(Exception):
                sys.stderr.flush()
            os._exit(DEADLINE_EXIT)

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    with _deadline_lock:
        for old in _deadline_timer:
            old.cancel()
        _deadline_timer[:] = [timer]
    timer.start()


def disarm_deadline() -> None:
    """Stop the hook's timer before it writes its reply.

    Holding the lock means the timer either already ended the process or never will.
    """
    with _deadline_lock:
        for timer in _deadline_timer:
            timer.cancel()
        _deadline_timer.clear()


def log_path(home: Path) -> Path:
    """Where the hook log of a memory home lives."""
    return home / "logs" / LOG_NAME


def _rotate(path: Path) -> None:
    try:
        if path.stat().st_size < LOG_MAX_BYTES:
            return
    except OSError:
        return
    for n in range(LOG_BACKUPS, 0, -1):
        source = path if n == 1 else path.with_name(f"{path.name}.{n - 1}")
        with contextlib.suppress(OSError):
            os.replace(source, path.with_name(f"{path.name}.{n}"))


def _append(path: Path, line: str) -> bool:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _rotate(path)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(line)
    except OSError:
        return False
    return True


def hook_log(home: Path | None, event: str, message: str) -> Path | None:
    """Append one line to the hook log; returns the file written, None when none could be.

    The home's log is used when the home exists (a hook must not create a memory home just
    to complain about it); otherwise, or when it cannot be written, a file in the temp
    folder, so that "the hook did nothing" always has a reason somewhere.
    """
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
    line = f"{stamp}Z pid={os.getpid()} {event}: {' '.join(message.split())}\n"
    targets: list[Path] = []
    if home is not None:
        with contextlib.suppress(OSError):
            if home.is_dir():
                targets.append(log_path(home))
    for target in targets:
        if _append(target, line):
            return target
    import tempfile  # only when the home's log could not be used

    fallback = Path(tempfile.gettempdir()) / FALLBACK_LOG
    return fallback if _append(fallback, line) else None


def read_stdin_json(timeout: float = STDIN_TIMEOUT_S) -> dict[str, Any]:
    """The hook input: one JSON object on stdin.

    Stops as soon as the bytes read so far form a complete object, so an agent that keeps
    stdin open does not make the hook hang; gives up after `timeout` seconds. Raises
    ValueError (with a readable reason) for no input, a terminal, or anything but an object.
    """
    stream = sys.stdin
    if stream is None:
        raise ValueError("no stdin")
    with contextlib.suppress(AttributeError, ValueError, OSError):
        if stream.isatty():
            raise ValueError("stdin is a terminal, not hook input")
    try:
        fd = stream.fileno()
    except (AttributeError, ValueError, OSError):
        data = stream.read(STDIN_LIMIT)
        return _decode(data.encode("utf-8") if isinstance(data, str) else data)
    return _decode(_read_fd(fd, timeout))


def _read_fd(fd: int, timeout: float) -> bytes:
    if os.name == "nt":
        return _read_fd_thread(fd, timeout)
    import select  # POSIX only

    deadline = time.monotonic() + timeout
    chunks: list[bytes] = []
    size = 0
    while size < STDIN_LIMIT:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        try:
            ready, _, _ = select.select([fd], [], [], left)
        except (OSError, ValueError):
            break
        if not ready:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if _complete(b"".join(chunks)):
            break
    return b"".join(chunks)


def _read_fd_thread(fd: int, timeout: float) -> bytes:
    """Windows pipes cannot be polled with select: read in a daemon thread instead."""
    import threading

    box: list[bytes] = []

    def reader() -> None:
        chunks: list[bytes] = []
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
            box[:] = [b"".join(chunks)]
            if _complete(box[0]) or len(box[0]) >= STDIN_LIMIT:
                break

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    thread.join(timeout)
    return box[0] if box else b""


def _complete(data: bytes) -> bool:
    text = data.strip()
    if not text.endswith(b"}"):
        return False
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _decode(data: bytes) -> dict[str, Any]:
    text = data.decode("utf-8", errors="replace").strip()
    if not text:
        raise ValueError("no hook input on stdin")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"hook input is not JSON ({exc.msg} at char {exc.pos})") from exc
    if not isinstance(value, dict):
        raise ValueError(f"hook input is a JSON {type(value).__name__}, not an object")
    return value


def text_field(data: dict[str, Any], key: str) -> str:
    """A string field of the hook input ('' when missing or not a string)."""
    value = data.get(key)
    return value if isinstance(value, str) else ""


def write_atomic(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Replace `path` with `data`: temp file in the same folder, fsync, rename.

    `mode` sets the permission bits of the new file (the temp file starts as 0600).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = _temp_file(path)
    try:
        if mode is not None:
            os.chmod(tmp_name, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise


_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
_TEMP_FLAGS |= getattr(os, "O_NOINHERIT", 0) | getattr(os, "O_CLOEXEC", 0)


def _temp_file(path: Path) -> tuple[int, str]:
    """A new file `.<name>.<random>.tmp` beside `path`, mode 0600, open for writing.

    What `tempfile.mkstemp` does, without importing tempfile (and random, shutil and the
    compression modules behind it), which cost the session-start hook more than its write.
    """
    for _ in range(100):
        name = str(path.parent / f".{path.name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(name, _TEMP_FLAGS, 0o600), name
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {path}")


def source_stamp(name: str) -> str:
    """`<mtime_ns>-<size>` of the source file `app/core/<name>`; '' when it cannot be read.

    Stamps what the hooks remember about a text (it passed the screen, redaction left it
    unchanged) with the rules that judged it, so changed rules judge anew. An install
    without the source files has no stamp, and remembers nothing.
    """
    try:
        info = os.stat(Path(__file__).resolve().parents[1] / "core" / name)
    except (OSError, ValueError):
        return ""
    return f"{info.st_mtime_ns}-{info.st_size}"


def write_cache(path: Path, text: str) -> bool:
    """Replace the cache file `path` with `text`; False when it could not be written.

    No fsync: a torn cache file is only a miss the next time (its readers compare what it
    holds, exactly, before trusting it).
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        part = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        part.write_text(text, encoding="utf-8")
        os.replace(part, path)
    except (OSError, ValueError):
        return False
    return True
