"""The session-end inbox: transcripts waiting to be memorized, and the run that drains it.

A session-end (or Stop / PreCompact) hook must return at once, so it only drops a small
JSON record - transcript path, session id, cwd, event, time - into `<home>/inbox/` (one
file per record, written atomically) and starts a detached `hook process-inbox` unless one
is already running. Draining reads each transcript with the `app.sources` readers, treats
the session's threads as complete (the session ended, or is about to be compacted) and
memorizes what the ledger has not seen through `ops.MEMORIZE`. A record whose work fails
stays for the next run with its attempt count raised; after `MAX_ATTEMPTS` it moves to
`inbox/failed/` with the reason in the hook log. One drain runs at a time per home (a
lock file under `.locks/`); the desktop app may drain too, through `drain_inbox`.

The spooling half (`spool`, `drainer_busy`, `spawn_drainer`) runs inside the hook and
imports only the standard library; the draining half imports the core and sources lazily.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.core import operations as ops
from app.integrations.hookio import hook_log, log_path, write_atomic

if TYPE_CHECKING:
    from collections.abc import Callable

    from app.core.api import MemoryApi

INBOX = "inbox"
FAILED = "failed"
LOCK_NAME = "inbox.lock"
MAX_ATTEMPTS = 5
RECORD_VERSION = 1
# Records written while a drain runs are picked up by the same process, a bounded number of
# times, so a hook firing in a loop cannot keep one drain alive forever.
MAX_ROUNDS = 20


def inbox_dir(home: Path) -> Path:
    """`<home>/inbox`."""
    return home / INBOX


def lock_path(home: Path) -> Path:
    """The lock file held by the running drain (`<home>/.locks/inbox.lock`)."""
    return home / ".locks" / LOCK_NAME


# -- the hook's half: spool and start -------------------------------------------------------
def spool(home: Path, *, transcript_path: str, session_id: str, cwd: str, event: str) -> Path:
    """Write one record into the inbox (atomically) and return its file."""
    now = time.time()
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f"{int(now % 1 * 1e6):06d}Z"
    short = "".join(c for c in session_id if c.isalnum())[:8] or "session"
    path = inbox_dir(home) / f"{stamp}-{short}-{secrets.token_hex(3)}.json"
    record = {
        "version": RECORD_VERSION,
        "transcript_path": transcript_path,
        "session_id": session_id,
        "cwd": cwd,
        "event": event,
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
        "attempts": 0,
    }
    write_atomic(path, (json.dumps(record, indent=2) + "\n").encode("utf-8"))
    return path


def drainer_busy(home: Path) -> bool:
    """Whether a drain holds the inbox lock right now (a non-blocking probe).

    filelock locks with `fcntl.flock` on POSIX, so probing the same way sees its lock
    without paying for importing it in the hook. Windows has no cheap probe here: it says
    "not busy" and the started drain exits at once when the lock is taken.
    """
    if os.name == "nt":
        return False
    import fcntl

    path = lock_path(home)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def app_root() -> Path:
    """The folder holding the `app` package (put on the drain's PYTHONPATH)."""
    return Path(__file__).resolve().parents[2]


def drainer_command(home: Path | None, engine: str | None = None) -> list[str]:
    """argv of a `hook process-inbox` run with this interpreter (or this frozen binary).

    From source it runs `-m app.integrations` (the hook commands alone) rather than
    `-m app`: it starts faster and does not depend on the main command line's parser.
    """
    frozen = getattr(sys, "frozen", False)
    base = [sys.executable] if frozen else [sys.executable, "-m", "app.integrations"]
    if home is not None:
        base += ["--home", str(home.resolve())]
    if engine:
        base += ["--engine", engine]
    return [*base, "hook", "process-inbox"]


def spawn_drainer(home: Path, *, pass_home: bool, engine: str | None = None) -> int:
    """Start a detached drain; returns its pid. Its stderr goes to the hook log."""
    import subprocess

    env = dict(os.environ)
    if not getattr(sys, "frozen", False):
        root = str(app_root())
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    kwargs: dict[str, Any] = {}
    if sys.platform == "win32":
        kwargs["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP | subprocess.DETACHED_PROCESS
    else:
        kwargs["start_new_session"] = True
    log = log_path(home)
    stderr: Any = subprocess.DEVNULL
    with contextlib.suppress(OSError):
        log.parent.mkdir(parents=True, exist_ok=True)
        stderr = log.open("ab")
    try:
        process = subprocess.Popen(
            drainer_command(home if pass_home else None, engine),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            close_fds=True,
            env=env,
            cwd=str(home),
            **kwargs,
        )
    finally:
        if stderr is not subprocess.DEVNULL:
            stderr.close()
    return process.pid


# -- the drain ----------------------------------------------------------------------------
class _Record:
    """One inbox file and its parsed content."""

    __slots__ = ("data", "path")

    def __init__(self, path: Path, data: dict[str, Any]) -> None:
        self.path = path
        self.data = data

    @property
    def transcript(self) -> str:
        value = self.data.get("transcript_path")
        return value if isinstance(value, str) else ""

    @property
    def attempts(self) -> int:
        value = self.data.get("attempts", 0)
        return value if isinstance(value, int) and value >= 0 else 0


def _give_up(home: Path, path: Path, why: str) -> None:
    target = inbox_dir(home) / FAILED / path.name
    with contextlib.suppress(OSError):
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(path, target)
    hook_log(home, "process-inbox", f"gave up on {path.name}: {why}")


def pending(home: Path) -> list[_Record]:
    """Readable records in the inbox, oldest first; unreadable ones are set aside."""
    folder = inbox_dir(home)
    try:
        names = sorted(
            p
            for p in folder.iterdir()
            if p.suffix == ".json" and not p.name.startswith(".") and p.is_file()
        )
    except OSError:
        return []
    records: list[_Record] = []
    for path in names:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue  # drained by someone else meanwhile
        except (OSError, ValueError) as exc:
            _give_up(home, path, f"unreadable record ({exc})")
            continue
        if not isinstance(data, dict):
            _give_up(home, path, "the record is not a JSON object")
            continue
        records.append(_Record(path, data))
    return records


def _failed(home: Path, records: list[_Record], why: str, report: dict[str, Any]) -> None:
    for record in records:
        attempts = record.attempts + 1
        if attempts >= MAX_ATTEMPTS:
            _give_up(home, record.path, f"{why} (after {attempts} attempts)")
            report["gaveUp"].append({"record": record.path.name, "reason": why})
            continue
        record.data["attempts"] = attempts
        record.data["lastError"] = why
        with contextlib.suppress(OSError):
            write_atomic(record.path, (json.dumps(record.data, indent=2) + "\n").encode())
        report["failed"].append({"record": record.path.name, "reason": why, "attempts": attempts})


def _done(records: list[_Record]) -> None:
    for record in records:
        with contextlib.suppress(FileNotFoundError):
            record.path.unlink()


def _memorize_transcript(api: MemoryApi, home: Path, transcript: str) -> dict[str, Any]:
    """Memorize the unprocessed part of one session's threads; raise PuffinError on failure."""
    from app.core.errors import StorageError
    from app.sources.ledger import Ledger
    from app.sources.scan import discover, memorize_pending, plan

    config = api.config

    def read() -> tuple[Any, Any, Any]:
        discovery = discover(config.sources, source="claude-code", path=Path(transcript))
        ledger = Ledger.open(home)
        return discovery, ledger, plan(discovery, ledger, idle_minutes=config.idle_minutes)

    discovery, ledger, planned = read()
    if discovery.errors and not discovery.threads:
        raise StorageError("; ".join(discovery.errors[:3]))
    for item in planned:
        item.complete = True  # the session ended (or is being compacted): nothing will follow

    def memorize(text: str, branch_id: str, ref: str) -> dict[str, Any]:
        return api.invoke(
            ops.MEMORIZE.name, {"conversationText": text, "branchId": branch_id, "source": ref}
        )

    result = memorize_pending(planned, ledger, memorize)
    if result["errors"]:
        raise StorageError("; ".join(str(e) for e in result["errors"][:3]))
    result["threads"] = [
        {"branchId": p.thread.branch_id, "ref": p.thread.ref, "messages": p.thread.message_count}
        for p in planned
    ]
    return result


def drain_inbox(home: Path | str, api: MemoryApi | Callable[[], MemoryApi]) -> dict[str, Any]:
    """Drain the inbox once (see module docstring) through `api`, or through the api that
    `api()` builds, only once a record is there (the composition root passes it in: this
    module never builds one).

    Returns `{"busy", "records", "memorized", "transcripts", "failed", "gaveUp",
    "remaining"}`; `busy` is true (and nothing is done) when another drain holds the lock.
    """
    from filelock import FileLock, Timeout

    from app.core.api import MemoryApi
    from app.core.errors import PuffinError

    home = Path(home).expanduser()
    report: dict[str, Any] = {
        "busy": False,
        "records": 0,
        "memorized": 0,
        "transcripts": [],
        "failed": [],
        "gaveUp": [],
        "remaining": 0,
    }
    lock = FileLock(str(lock_path(home)))
    attempted: set[str] = set()
    for round_no in range(MAX_ROUNDS):
        try:
            lock_path(home).parent.mkdir(parents=True, exist_ok=True)
            lock.acquire(timeout=0)
        except Timeout:
            report["busy"] = round_no == 0
            break
        try:
            records = [r for r in pending(home) if r.path.name not in attempted]
            attempted.update(r.path.name for r in records)
            groups: dict[str, list[_Record]] = {}
            for record in records:
                if not record.transcript:
                    _give_up(home, record.path, "the record names no transcript")
                    report["gaveUp"].append(
                        {"record": record.path.name, "reason": "no transcript_path"}
                    )
                    continue
                groups.setdefault(record.transcript, []).append(record)
            for transcript, group in groups.items():
                if not isinstance(api, MemoryApi):
                    api = api()
                report["records"] += len(group)
                try:
                    result = _memorize_transcript(api, home, transcript)
                except PuffinError as exc:
                    _failed(home, group, exc.message, report)
                    hook_log(home, "process-inbox", f"{transcript}: failed: {exc.message}")
                    continue
                except Exception as exc:  # a bug must not wedge the inbox: count an attempt
                    _failed(home, group, f"{type(exc).__name__}: {exc}", report)
                    hook_log(home, "process-inbox", f"{transcript}: crashed: {exc!r}")
                    continue
                _done(group)
                report["memorized"] += result["memorized"]
                report["transcripts"].append({"path": transcript, **result})
                hook_log(
                    home,
                    "process-inbox",
                    f"{transcript}: memorized {result['memorized']} thread(s), "
                    f"skipped {result['skipped']}",
                )
        finally:
            lock.release()
        # A record spooled after the listing above, while the lock was held, saw the lock
        # and started no drain: look again now that the lock is free.
        if not any(r.path.name not in attempted for r in pending(home)):
            break
    report["remaining"] = len(pending(home))
    return report
