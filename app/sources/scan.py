"""Discovery, planning and memorization of agent threads: what the CLI and the service call.

`discover` finds transcripts (from the settings, or one `--path` whose kind it detects),
reads them into `Thread`s and keeps only their metadata. `plan` applies the ledger and the
completion rule (a newer thread on the same branch id, or idle longer than `idle_minutes`).
`memorize_pending` renders each complete, unprocessed thread (only its new part when it
grew), redacts it, hands it to the memorize callback and records it in the ledger when the
reply has no error. `dry_run_report` and `sources_report` are the JSON the CLI prints.
Everything here is synchronous: in the app it runs on the core's worker thread, and the
progress callback it calls at each thread lets waiting searches run in between.
Every reader runs behind `_guarded`: whatever one transcript holds, the worst it can do is
be named in the scan's errors; the other transcripts are still read and memorized.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import stat
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from app.core.config import SourceSettings
from app.core.errors import InvalidInput, PuffinError, StorageError
from app.core.redact import redact
from app.sources import aider, claude_code, codex, plaintext, puffin
from app.sources.jsonl import file_time, read_head, valid_text
from app.sources.ledger import Ledger, LedgerEntry
from app.sources.models import (
    Discovery,
    ParsedThread,
    PlannedThread,
    Reader,
    ReadStats,
    Thread,
    content_hash,
)
from app.sources.render import render

_log = logging.getLogger(__name__)


def _guarded(reader: Reader) -> Reader:
    """The reader, turning anything it raises into one readable error naming the file.

    Readers skip and count bad records themselves; this is the net for what they did not
    foresee, so that one transcript can never abort a scan (or a thread's reload).
    """

    @functools.wraps(reader)
    def read(paths: tuple[Path, ...], stats: ReadStats) -> list[ParsedThread]:
        try:
            return valid_threads(reader(paths, stats))
        except RecursionError:
            stats.error(f"{paths[0]}: nested too deeply to read; skipped")
        except MemoryError:
            stats.error(f"{paths[0]}: too large to read into memory; skipped")
        except OSError as exc:
            stats.error(f"{paths[0]}: cannot be read ({exc.strerror or exc}); skipped")
        except Exception as exc:
            _log.warning("reader failed path=%s", paths[0], exc_info=True)
            stats.error(f"{paths[0]}: unexpected content, not read ({type(exc).__name__}: {exc})")
        return []

    return read


def valid_threads(threads: list[ParsedThread]) -> list[ParsedThread]:
    """Threads whose every string is valid UTF-8 (lone surrogates replaced).

    Done once per transcript, here, so discovery, the reload before memorizing and
    `Thread.load` all see the same ids and text.
    """
    for thread in threads:
        thread.id, thread.project = valid_text(thread.id), valid_text(thread.project)
        thread.branch, thread.title = valid_text(thread.branch), valid_text(thread.title)
        conversations = [thread.content.messages]
        for side in thread.content.side_conversations:
            side.id, side.title = valid_text(side.id), valid_text(side.title)
            side.report = valid_text(side.report)
            conversations.append(side.messages)
        for messages in conversations:
            for message in messages:
                message.text = valid_text(message.text)
                if message.tools:
                    message.tools = [valid_text(t) for t in message.tools]
    return threads


SOURCES: tuple[str, ...] = ("claude-code", "puffin", "codex", "aider")
READERS: dict[str, Reader] = {
    claude_code.SOURCE: _guarded(claude_code.read_session),
    puffin.SOURCE: _guarded(puffin.read_history),
    codex.SOURCE: _guarded(codex.read_rollout),
    aider.SOURCE: _guarded(aider.read_history),
    plaintext.SOURCE: _guarded(plaintext.read_text),
}
_ENABLED = {
    "claude-code": "claude_code",
    "puffin": "puffin",
    "codex": "codex",
    "aider": "aider",
}
_PARSE_CACHE = 8
_SAVE_EVERY_S = 2.0

Memorize = Callable[[str, str, str], dict[str, Any]]
Progress = Callable[[int, int, str], None]


@dataclass(slots=True, frozen=True)
class _Unit:
    """One transcript to read: which reader, which files (main file first)."""

    kind: str
    paths: tuple[Path, ...]


# -- discovery ------------------------------------------------------------------------------


def expand_path(value: str | Path, home: Path | None = None) -> Path:
    """`~` against `home` (default: the user's home), environment variables expanded."""
    text = os.path.expandvars(str(value))
    if home is not None and (text == "~" or text.startswith(("~/", "~\\"))):
        return home / text[2:] if len(text) > 1 else home
    return Path(text).expanduser()


def _check_source(source: str | None) -> None:
    if source is not None and source not in SOURCES:
        raise InvalidInput(
            f"Unknown source {source!r}; use one of {', '.join(SOURCES)}",
            context={"source": source},
        )


def _configured_units(
    settings: SourceSettings, source: str | None, home: Path, stats: ReadStats
) -> list[_Unit]:
    wanted = [source] if source else [s for s in SOURCES if getattr(settings, _ENABLED[s])]
    units: list[_Unit] = []
    if "claude-code" in wanted:
        folder = expand_path(settings.claude_projects_dir, home)
        if folder.is_dir():
            sessions = claude_code.find_sessions(folder, stats)
            units += [_Unit(claude_code.SOURCE, p) for p in sessions]
    if "puffin" in wanted:
        seen: set[Path] = set()
        folders = [expand_path(p, home) for p in settings.puffin_projects]
        folders += puffin.recent_projects(home, stats)
        for folder in folders:
            history = puffin.history_path(folder)
            if history is not None and history.resolve() not in seen:
                seen.add(history.resolve())
                units.append(_Unit(puffin.SOURCE, (history,)))
    if "codex" in wanted:
        folder = expand_path(settings.codex_sessions_dir, home)
        if folder.is_dir():
            units += [_Unit(codex.SOURCE, p) for p in codex.find_rollouts(folder)]
    if "aider" in wanted:
        for value in settings.aider_projects:
            folder = expand_path(value, home)
            found = folder if folder.name == aider.HISTORY_NAME else aider.find_history(folder)
            if found is not None and found.is_file():
                units.append(_Unit(aider.SOURCE, (found,)))
    return units


def _sniff_jsonl(path: Path) -> str:
    """`codex` or `claude-code`, from the file name or its first line."""
    if path.name.startswith("rollout-"):
        return codex.SOURCE
    head = (read_head(path, 65536) or b"").split(b"\n", 1)[0]
    if b'"payload"' in head or b'"session_meta"' in head:
        return codex.SOURCE
    return claude_code.SOURCE


def _claude_unit(path: Path, stats: ReadStats) -> list[_Unit]:
    if path.name.startswith("agent-"):
        # A subagent transcript is read as part of its parent session, never on its own.
        parent = claude_code.parent_session(path)
        if parent is None:
            stats.skip(claude_code.ORPHAN_SUBAGENTS)
            return []
        path = parent
    return [_Unit(claude_code.SOURCE, (path, *claude_code.beside_subagents(path)))]


def _file_units(path: Path, source: str | None, stats: ReadStats) -> list[_Unit]:
    if source == claude_code.SOURCE:
        return _claude_unit(path, stats)
    if source is not None:
        return [_Unit(source, (path,))]
    if path.name.endswith(aider.HISTORY_NAME):
        return [_Unit(aider.SOURCE, (path,))]
    if path.suffix == ".json":
        return [_Unit(puffin.SOURCE, (path,))]
    if path.suffix == ".jsonl":
        if _sniff_jsonl(path) == codex.SOURCE:
            return [_Unit(codex.SOURCE, (path,))]
        return _claude_unit(path, stats)
    return [_Unit(plaintext.SOURCE, (path,))]


# How a copied history announces itself: Aider opens every session with this header, and a
# Puffin history is one JSON object with a `branches` object near its start.
_AIDER_HEAD = b"# aider chat started at"
_PUFFIN_HEAD = b'"branches"'
_HEAD_BYTES = 4096


def _collected_units(folder: Path, stats: ReadStats) -> list[_Unit]:
    """The transcripts of a folder that is no project: Claude Code projects, or histories
    collected under other names (`repo__.puffin__history.json`, `repo__codex__rollout-….jsonl`,
    `repo__.aider.chat.history.md`), in the folder and its direct subfolders.

    Each file's kind is read from its first bytes, as for a file given alone: a Codex
    rollout is not a Claude session, a `.json` is a Puffin history only when it holds a
    `branches` object, and a Markdown file only when Aider wrote it.
    """
    units: list[_Unit] = []
    for paths in claude_code.find_sessions(folder, stats):
        if _sniff_jsonl(paths[0]) == codex.SOURCE:
            units.append(_Unit(codex.SOURCE, paths[:1]))
        else:
            units.append(_Unit(claude_code.SOURCE, paths))
    try:
        places = [folder, *sorted(p for p in folder.iterdir() if p.is_dir())]
    except OSError:
        return units  # (find_sessions named the folder it could not list)
    for place in places:
        try:
            files = sorted(p for p in place.iterdir() if p.suffix in (".json", ".md"))
        except OSError:
            continue
        for file in files:
            head = (read_head(file, _HEAD_BYTES) or b"").lstrip()
            if file.suffix == ".json" and head.startswith(b"{") and _PUFFIN_HEAD in head:
                units.append(_Unit(puffin.SOURCE, (file,)))
            elif file.suffix == ".md" and head.startswith(_AIDER_HEAD):
                units.append(_Unit(aider.SOURCE, (file,)))
    return units


def _path_units(path: Path, source: str | None, stats: ReadStats) -> list[_Unit]:
    try:
        mode = path.stat().st_mode
    except FileNotFoundError as exc:
        raise InvalidInput(f"{path} does not exist", context={"path": str(path)}) from exc
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"{path} cannot be read ({exc})", context={"path": str(path)}) from exc
    if stat.S_ISREG(mode):
        return _file_units(path, source, stats)
    if not stat.S_ISDIR(mode):
        stats.error(f"{path}: not a transcript file or folder (a pipe, socket or device)")
        return []
    units: list[_Unit] = []
    if source in (None, "puffin"):
        history = puffin.history_path(path)
        if history is not None:
            units.append(_Unit(puffin.SOURCE, (history,)))
    if source in (None, "aider"):
        history = aider.find_history(path)
        if history is not None:
            units.append(_Unit(aider.SOURCE, (history,)))
    if source in (None, "codex"):
        units += [_Unit(codex.SOURCE, p) for p in codex.find_rollouts(path)]
    # A folder that is a Puffin/Aider project or a Codex sessions folder is not also read as
    # Claude Code projects: stray .jsonl files there are not Claude transcripts.
    if source == "claude-code":
        units += [_Unit(claude_code.SOURCE, p) for p in claude_code.find_sessions(path, stats)]
    elif source is None and not units:
        units += _collected_units(path, stats)
    if not units:
        stats.error(f"{path}: no transcripts recognised in this folder")
    return units


def _unit_time(unit: _Unit) -> datetime | None:
    times = [t for t in (file_time(p) for p in unit.paths) if t is not None]
    return max(times) if times else None


def _unit_size(unit: _Unit) -> int:
    total = 0
    for path in unit.paths:
        with contextlib.suppress(OSError):
            total += path.stat().st_size
    return total


def _to_thread(parsed: ParsedThread, unit: _Unit, fallback: datetime) -> Thread:
    started = parsed.started or parsed.ended or fallback
    ended = parsed.ended or started
    messages = parsed.content.messages
    return Thread(
        id=parsed.id,
        source=parsed.source,
        project=parsed.project,
        branch=parsed.branch,
        started=started,
        ended=max(ended, started),
        message_count=len(messages),
        content_hash=content_hash(messages),
        ref=parsed.ref,
        paths=unit.paths,
        title=parsed.title,
        side_count=len(parsed.content.side_conversations),
        rendered_bytes=len(render(parsed.content).encode("utf-8", "surrogatepass")),
        reader=READERS[unit.kind],
    )


def _read_unit(unit: _Unit, stats: ReadStats, since: datetime | None) -> tuple[list[Thread], int]:
    modified = _unit_time(unit)
    if since is not None and modified is not None and modified < since:
        return [], 0
    parsed = READERS[unit.kind](unit.paths, stats)
    fallback = modified or datetime.now(UTC)
    try:
        threads = [_to_thread(p, unit, fallback) for p in parsed]
    except Exception as exc:  # same net as `_guarded`, for rendering what was read
        _log.warning("thread summary failed path=%s", unit.paths[0], exc_info=True)
        stats.error(f"{unit.paths[0]}: unexpected content, not read ({type(exc).__name__})")
        return [], 0
    if since is not None:
        threads = [t for t in threads if t.ended >= since]
    return threads, _unit_size(unit)


def discover(
    settings: SourceSettings,
    *,
    source: str | None = None,
    path: Path | None = None,
    since: datetime | None = None,
    home: Path | None = None,
    settled: Mapping[tuple[str, ...], tuple[tuple[int, int], ...]] | None = None,
) -> Discovery:
    """Find and read threads from the configured sources, or from one explicit path.

    `home` is the user's home folder used for `~` (default: the real one). Missing
    configured folders find nothing and are not errors; a `path` that does not exist is.
    `settled` maps transcripts (by their paths) to the file signatures they had when all
    their threads were memorized; a transcript still matching is not read again, which
    keeps the app's periodic scans cheap on a large history.
    """
    _check_source(source)
    user_home = home if home is not None else Path.home()
    if since is not None and since.tzinfo is None:
        since = since.replace(tzinfo=UTC)
    stats = ReadStats()
    if path is not None:
        units = _path_units(expand_path(path, user_home), source, stats)
    else:
        units = _configured_units(settings, source, user_home, stats)
    discovery = Discovery()
    for unit in units:
        key = tuple(str(p) for p in unit.paths)
        signature = unit_signature(unit.paths)
        if settled is not None and signature is not None and settled.get(key) == signature:
            discovery.unchanged += 1
            continue
        if signature is not None:
            discovery.signatures[key] = signature
        threads, size = _read_unit(unit, stats, since)
        if size:
            discovery.files += len(unit.paths)
            discovery.raw_bytes += size
        discovery.threads.extend(threads)
    discovery.threads.sort(key=lambda t: (t.started, t.source, t.id))
    discovery.rendered_bytes = sum(t.rendered_bytes for t in discovery.threads)
    discovery.errors = stats.errors
    discovery.skipped = dict(stats.skipped)
    with_threads = {t.branch_id for t in discovery.threads}
    discovery.empty_branches = sorted(stats.declared_branches - with_threads)
    return discovery


def unit_signature(paths: tuple[Path, ...]) -> tuple[tuple[int, int], ...] | None:
    """(mtime_ns, size) of each file of a transcript; None when one cannot be read."""
    try:
        return tuple((st.st_mtime_ns, st.st_size) for st in (p.stat() for p in paths))
    except OSError:
        return None


def settled_transcripts(
    discovery: Discovery, planned: list[PlannedThread], ledger: Ledger
) -> dict[tuple[str, ...], tuple[tuple[int, int], ...]]:
    """Transcripts whose every thread is complete and memorized up to its last message."""
    done: dict[tuple[str, ...], bool] = {}
    for item in planned:
        key = tuple(str(p) for p in item.thread.paths)
        entry = ledger.get(item.thread.key)
        memorized = entry is not None and entry.messages >= item.thread.message_count
        done[key] = done.get(key, True) and item.complete and memorized
    return {
        key: discovery.signatures[key]
        for key, ok in done.items()
        if ok and key in discovery.signatures
    }


# -- planning -------------------------------------------------------------------------------


def plan(
    discovery: Discovery,
    ledger: Ledger,
    *,
    idle_minutes: float,
    now: datetime | None = None,
) -> list[PlannedThread]:
    """Each thread with `complete` (newer thread on its branch id, or idle) and `processed`."""
    moment = now if now is not None else datetime.now(UTC)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    idle = timedelta(minutes=idle_minutes)
    latest: dict[str, datetime] = {}
    for thread in discovery.threads:
        known = latest.get(thread.branch_id)
        if known is None or thread.started > known:
            latest[thread.branch_id] = thread.started
    planned: list[PlannedThread] = []
    for thread in discovery.threads:
        newer = latest[thread.branch_id] > thread.started
        complete = newer or moment - thread.ended > idle
        entry = ledger.get(thread.key)
        if entry is None:
            planned.append(PlannedThread(thread, complete, processed=False, start=0))
        elif entry.messages >= thread.message_count:
            # Same count with a different hash means edited text, not new conversation:
            # it is not memorized again.
            planned.append(PlannedThread(thread, complete, True, thread.message_count))
        else:
            planned.append(PlannedThread(thread, complete, False, entry.messages))
    return planned


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def dry_run_report(
    discovery: Discovery, planned: list[PlannedThread], *, include_size: bool = False
) -> dict[str, Any]:
    """What a scan would memorize, as JSON-ready data.

    With `include_size`, a `size` object adds raw transcript bytes, rendered bytes and how
    much smaller the rendered text is.
    """
    report: dict[str, Any] = {
        "threads": [
            {
                "id": p.thread.id,
                "source": p.thread.source,
                "project": p.thread.project,
                "branch": p.thread.branch,
                "branchId": p.thread.branch_id,
                "messages": p.thread.message_count,
                "started": _iso(p.thread.started),
                "ended": _iso(p.thread.ended),
                "complete": p.complete,
                "processed": p.processed,
            }
            for p in planned
        ],
        "errors": list(discovery.errors),
        "skipped": dict(discovery.skipped),
    }
    if include_size:
        report["size"] = size_summary(discovery)
    return report


def size_summary(discovery: Discovery) -> dict[str, Any]:
    """Raw transcript bytes read, rendered bytes, and the reduction in percent."""
    raw = discovery.raw_bytes
    rendered = discovery.rendered_bytes
    reduction = round(100.0 * (1 - rendered / raw), 1) if raw else 0.0
    return {
        "files": discovery.files,
        "rawBytes": raw,
        "renderedBytes": rendered,
        "reductionPercent": reduction,
    }


# -- memorizing -----------------------------------------------------------------------------


def _prepare(
    thread: Thread, start: int, parsed: dict[str, ParsedThread]
) -> tuple[str, int, str] | str:
    """(redacted text of the new part, message count, content hash), or an error message."""
    found = parsed.get(thread.id)
    if found is None:
        return f"{thread.ref}: thread {thread.id} is no longer in {thread.path}"
    messages = found.content.messages
    if len(messages) <= start:
        return "", len(messages), content_hash(messages)
    text = render(found.content, start=start)
    return redact(text), len(messages), content_hash(messages)


def _parse_unit(thread: Thread) -> dict[str, ParsedThread]:
    if thread.reader is None:
        return {}
    return {p.id: p for p in thread.reader(thread.paths, ReadStats())}


def memorize_pending(
    planned: list[PlannedThread],
    ledger: Ledger,
    memorize: Memorize,
    *,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Memorize every complete, unprocessed thread (only the new part of a grown one).

    Calls `memorize(text, branch_id, source_ref)` with redacted text; a thread is
    recorded in the ledger only when the reply has no `"error"` key, so failures are retried
    on the next scan. Threads whose text is empty are recorded without a call. Returns
    `{"memorized", "failed", "skipped", "errors"}`.
    """
    todo = [p for p in planned if p.complete and not p.processed]
    result: dict[str, Any] = {
        "memorized": 0,
        "failed": 0,
        "skipped": len(planned) - len(todo),
        "errors": [],
        # What the memorized threads gave, and how many threads of each agent were read:
        # the counts the scan's summary sentence is made of.
        "itemsAdded": 0,
        "queuedForReview": 0,
        "read": {},
    }
    cache: OrderedDict[tuple[Path, ...], dict[str, ParsedThread]] = OrderedDict()
    saver = _LedgerSaver(ledger)
    try:
        _memorize_all(todo, ledger, memorize, progress, cache, saver, result)
    finally:
        try:
            saver.flush()
        except StorageError as exc:
            result["errors"].append(f"ledger not saved: {exc.message}")
    return result


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


_AGENT_NAMES = {
    "claude-code": ("Claude Code session", "Claude Code sessions"),
    "puffin": ("Puffin thread", "Puffin threads"),
    "codex": ("Codex session", "Codex sessions"),
    "aider": ("Aider chat", "Aider chats"),
}


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _still_going(count: int, idle: object) -> str:
    """Why threads were left for later: they changed too recently to be finished."""
    minutes = idle if isinstance(idle, int | float) and not isinstance(idle, bool) else None
    span = f"in the last {minutes:g} minutes" if minutes is not None else "too recently"
    noun = "conversation is" if count == 1 else "conversations are"
    return (
        f"{count} {noun} still going (changed {span}); "
        f"{'it is' if count == 1 else 'they are'} read once idle that long."
    )


def describe_scan(result: dict[str, Any]) -> str:
    """One sentence a user reads after a scan: what was read, what it gave, and why not more.

    A scan that memorizes nothing says why: nothing new, files that failed, or conversations
    in which the engine found nothing it trusts (with the candidates waiting in Review).
    """
    read = result.get("read") or {}
    parts = [
        _plural(int(count), *_AGENT_NAMES.get(str(source), ("thread", "threads")))
        for source, count in sorted(read.items())
    ]
    failed = _count(result.get("failed"))
    errors = [str(e) for e in result.get("errors") or []]
    added, queued = _count(result.get("itemsAdded")), _count(result.get("queuedForReview"))
    if not parts and not failed and not errors:
        if not result.get("threads"):
            return (
                "No agent conversations found: check the folders under Sources in "
                "Settings, or scan a folder."
            )
        waiting = _count(result.get("inProgress"))
        if waiting:
            return "Nothing read yet: " + _still_going(waiting, result.get("idleMinutes"))
        return "Nothing new to read: every finished conversation was memorized before."
    sentence = (", ".join(parts) + " read") if parts else "No conversation read"
    if parts:
        sentence += f", {_plural(added, 'item', 'items')} remembered"
        if not added:
            engines = [str(e) for e in result.get("engines") or ["offline"]]
            offline = all(e.startswith("offline") for e in engines)
            who = "the offline engine" if offline else "the engine"
            sentence += f": {who} found no statement it trusts enough to keep"
        if queued:
            sentence += f"; {_plural(queued, 'candidate is', 'candidates are')} in Review"
    sentence += "."
    waiting = _count(result.get("inProgress"))
    if waiting:
        sentence += " " + _still_going(waiting, result.get("idleMinutes"))
    if failed or errors:
        shown = "; ".join(errors[:3]) + ("; …" if len(errors) > 3 else "")
        count = max(failed, len(errors))
        sentence += f" {_plural(count, 'problem', 'problems')}: {shown}"
    return sentence


class _LedgerSaver:
    """Saves the ledger at most every `_SAVE_EVERY_S` seconds, and once at the end.

    Saving after every thread rewrites the whole file each time, which is quadratic over a
    large backlog memorized by the fast offline engine; a crash between saves only means a
    few threads are memorized again (the writer folds duplicates).
    """

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.dirty = False
        self.last = time.monotonic()

    def mark(self) -> None:
        self.dirty = True
        if time.monotonic() - self.last >= _SAVE_EVERY_S:
            self.flush()

    def flush(self) -> None:
        if self.dirty:
            self.dirty = False
            self.last = time.monotonic()
            self.ledger.save()


def _memorize_all(
    todo: list[PlannedThread],
    ledger: Ledger,
    memorize: Memorize,
    progress: Progress | None,
    cache: OrderedDict[tuple[Path, ...], dict[str, ParsedThread]],
    saver: _LedgerSaver,
    result: dict[str, Any],
) -> None:
    represented = {
        (e.branch_id, e.hash): (key, e.ref or e.thread_id)
        for key, e in ledger.entries.items()
        if e.hash
    }
    for index, item in enumerate(todo, start=1):
        thread = item.thread
        parsed = cache.get(thread.paths)
        if parsed is None:
            parsed = _parse_unit(thread)
            cache[thread.paths] = parsed
            if len(cache) > _PARSE_CACHE:
                cache.popitem(last=False)
        else:
            cache.move_to_end(thread.paths)
        prepared = _prepare(thread, item.start, parsed)
        if progress is not None:
            progress(index, len(todo), f"{thread.branch_id} {thread.ref}")
        if isinstance(prepared, str):
            result["failed"] += 1
            result["errors"].append(prepared)
            continue
        text, count, digest = prepared
        engine = ""
        twin = represented.get((thread.branch_id, digest))
        if twin is not None and twin[0] != thread.key and item.start == 0:
            # The same conversation, already memorized under another name (a copied or
            # re-exported transcript): nothing new to read, nothing to pay for.
            result.setdefault("duplicates", []).append(f"{thread.ref}: same as {twin[1]}")
            text = ""
        if text.strip():
            try:
                reply = memorize(text, thread.branch_id, thread.ref)
            except PuffinError as exc:
                result["failed"] += 1
                result["errors"].append(f"{thread.ref}: {exc.message}")
                continue
            if "error" in reply:
                result["failed"] += 1
                detail = reply.get("message") or reply.get("code") or "memorize failed"
                result["errors"].append(f"{thread.ref}: {detail}")
                continue
            result["memorized"] += 1
            engine = str(reply.get("path") or reply.get("engine") or "")
            result["read"][thread.source] = result["read"].get(thread.source, 0) + 1
            result["itemsAdded"] += _count(reply.get("itemsExtracted"))
            result["queuedForReview"] += _count(reply.get("queuedForReview"))
            if isinstance(reply.get("engine"), str):
                engines = result.setdefault("engines", [])
                if reply["engine"] not in engines:
                    engines.append(reply["engine"])
        else:
            result["skipped"] += 1
        previous = ledger.get(thread.key)
        ledger.record(
            thread.key,
            source=thread.source,
            thread_id=thread.id,
            branch_id=thread.branch_id,
            ref=thread.ref,
            content_hash=digest,
            messages=count,
            path=str(thread.path),
            engine=engine or (previous.engine if previous is not None else ""),
            conversed=thread.ended,
            save=False,
        )
        represented.setdefault((thread.branch_id, digest), (thread.key, thread.ref))
        try:
            saver.mark()
        except StorageError as exc:
            # Going on would memorize threads that the next scan memorizes again.
            result["errors"].append(f"ledger not saved, stopping: {exc.message}")
            return


# -- re-distilling with an LLM ---------------------------------------------------------------

# Memorize paths that mean an LLM read the thread; anything else (offline, a fallback, the
# budget) can be improved later.
LLM_PATHS = frozenset({"anthropic", "local"})


def improvable(ledger: Ledger, branch: str) -> list[LedgerEntry]:
    """Threads of `branch` memorized without an LLM whose transcript path is known."""
    return [
        e
        for e in ledger.entries.values()
        if e.branch_id == branch and e.engine not in LLM_PATHS and e.path
    ]


def thread_text(entry: LedgerEntry) -> str:
    """The whole redacted conversation of a ledger entry, read again from its transcript.

    Raises InvalidInput when the transcript is gone or no longer holds the thread.
    """
    stats = ReadStats()
    for unit in _path_units(Path(entry.path), entry.source, stats):
        for parsed in READERS[unit.kind](unit.paths, stats):
            if parsed.id == entry.thread_id:
                return redact(render(parsed.content))
    raise InvalidInput(
        f"{entry.ref or entry.thread_id}: the thread is no longer in {entry.path}",
        context={"path": entry.path},
    )


def improve_threads(
    entries: list[LedgerEntry],
    ledger: Ledger,
    memorize: Memorize,
    *,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Memorize each entry's whole thread again through `memorize` (the LLM engine); an
    entry the LLM read is marked in the ledger, so it is not improved twice."""
    result: dict[str, Any] = {
        "threads": len(entries),
        "improved": 0,
        "failed": 0,
        "skipped": 0,
        "itemsAdded": 0,
        "errors": [],
        "notes": [],
    }
    for index, entry in enumerate(entries, start=1):
        if progress is not None:
            progress(index, len(entries), f"{entry.branch_id} {entry.ref}")
        try:
            text = thread_text(entry)
            if not text.strip():
                result["skipped"] += 1
                continue
            reply = memorize(text, entry.branch_id, entry.ref or entry.thread_id)
        except PuffinError as exc:
            result["failed"] += 1
            result["errors"].append(exc.message)
            continue
        path = str(reply.get("path") or "")
        if "error" in reply or path not in LLM_PATHS:
            result["failed"] += 1
            why = reply.get("message") or "; ".join(str(n) for n in reply.get("notes", [])[-1:])
            result["errors"].append(f"{entry.ref}: {why or 'the LLM did not read it'}")
            continue
        result["improved"] += 1
        result["itemsAdded"] += _count(reply.get("itemsExtracted"))
        result["notes"].extend(
            str(n) for n in reply.get("notes", []) if str(n).startswith("refused")
        )
        ledger.record(
            f"{entry.source}:{entry.thread_id}",
            source=entry.source,
            thread_id=entry.thread_id,
            branch_id=entry.branch_id,
            ref=entry.ref,
            content_hash=entry.hash,
            messages=entry.messages,
            path=entry.path,
            engine=path,
            conversed=entry.conversed,
            save=False,
        )
    ledger.save()
    return result


# -- sources report -------------------------------------------------------------------------


def _locations(settings: SourceSettings, source: str, home: Path) -> list[Path]:
    if source == "claude-code":
        return [expand_path(settings.claude_projects_dir, home)]
    if source == "codex":
        return [expand_path(settings.codex_sessions_dir, home)]
    if source == "puffin":
        stats = ReadStats()
        return [expand_path(p, home) for p in settings.puffin_projects] + puffin.recent_projects(
            home, stats
        )
    return [expand_path(p, home) for p in settings.aider_projects]


def sources_report(settings: SourceSettings, home: Path | None = None) -> dict[str, Any]:
    """Each configured source: where it reads, and the projects, branches, threads found.

    `home` is the user's home folder for `~` (default: the real one).
    """
    user_home = home if home is not None else Path.home()
    sources: list[dict[str, Any]] = []
    errors: list[str] = []
    skipped: dict[str, int] = {}
    for source in SOURCES:
        enabled = bool(getattr(settings, _ENABLED[source]))
        locations = [
            {"path": str(p), "exists": p.exists()} for p in _locations(settings, source, user_home)
        ]
        entry: dict[str, Any] = {
            "source": source,
            "enabled": enabled,
            "locations": locations,
            "threads": 0,
            "projects": [],
        }
        sources.append(entry)
        if not enabled:
            continue
        found = discover(settings, source=source, home=user_home)
        errors += found.errors
        for key, count in found.skipped.items():
            skipped[key] = skipped.get(key, 0) + count
        tree: dict[str, dict[str, int]] = {}
        for thread in found.threads:
            branches = tree.setdefault(thread.project, {})
            branches[thread.branch] = branches.get(thread.branch, 0) + 1
        for branch_id in found.empty_branches:
            project, _, branch = branch_id.partition("/")
            tree.setdefault(project, {}).setdefault(branch, 0)
        entry["threads"] = len(found.threads)
        entry["projects"] = [
            {
                "project": project,
                "branches": [{"branch": b, "threads": n} for b, n in sorted(branches.items())],
            }
            for project, branches in sorted(tree.items())
        ]
    return {"sources": sources, "errors": errors, "skipped": skipped}
