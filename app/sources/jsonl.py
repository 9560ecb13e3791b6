"""Input helpers shared by the readers: bounded lines, tolerant JSON, times, one-line gists.

Transcripts are read line by line in binary, never whole. A line longer than `MAX_LINE` is
drained without being kept and counted as oversized, so one pathological line cannot take
the memory. Lines that are not JSON are counted as malformed; invalid UTF-8 is repaired
(replacement characters) rather than losing the line. Timestamps come as ISO strings or
epoch seconds/milliseconds and are all turned into aware UTC datetimes.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from app.sources.models import ReadStats

# Parsing a line costs about four times its size (bytes, text, parsed strings, duplicates
# such as `toolUseResult`), so this cap keeps one line well under the 300 MB budget.
MAX_LINE = 32 * 1024 * 1024
_CHUNK = 1024 * 1024
_DECODER = json.JSONDecoder()
# Lines above this size get cheap checks before a full parse (see the Claude reader).
BIG_LINE = 512 * 1024

MALFORMED = "malformed lines"
OVERSIZED = "oversized lines"
INVALID_UTF8 = "invalid UTF-8 lines (repaired)"
UNKNOWN_TYPES = "unknown record types"
BAD_RECORDS = "malformed records (unexpected shapes)"

# What a record of an unexpected shape raises while a reader walks it (`{"type": []}` is
# unhashable, `{"message": 5}` has no `.get`, ...). A reader catches these per record, counts
# the record and goes on with the next one.
RECORD_ERRORS: tuple[type[Exception], ...] = (
    TypeError,
    ValueError,
    AttributeError,
    KeyError,
    IndexError,
    RecursionError,
    OverflowError,
)

_TOOL_KEYS = (
    "command",
    "cmd",
    "file_path",
    "notebook_path",
    "path",
    "pattern",
    "query",
    "url",
    "description",
    "prompt",
    "skill",
    "subagent_type",
)
_BASE64_RE = re.compile(
    rb'"(data|base64|image_url|url)":\s?"(?:data:[\w/+.-]{1,40};base64,)?[A-Za-z0-9+/=\\]{2000,}"'
)


def _not_regular(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "is a folder, not a file"
    if stat.S_ISFIFO(mode):
        return "is a named pipe (FIFO), not a file"
    if stat.S_ISSOCK(mode):
        return "is a socket, not a file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device, not a file"
    return "is not a regular file"


def open_regular(path: Path, stats: ReadStats | None = None) -> BinaryIO | None:
    """Open a regular file for binary reading; None (with a readable error) for anything else.

    Opened with O_NONBLOCK and checked with fstat before any read: opening a FIFO for
    reading blocks until a writer appears, so a FIFO placed where a transcript (or
    `.git/HEAD`) was expected would hang a scan or a hook forever. Checking the opened
    descriptor, not the path, also covers a file swapped for a FIFO between listing and
    reading.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        _report(stats, f"{path}: disappeared before it could be read (deleted or moved)")
        return None
    except PermissionError:
        _report(stats, f"{path}: permission denied")
        return None
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        _report(stats, f"{path}: cannot be read ({reason})")
        return None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            os.close(fd)
            _report(stats, f"{path}: {_not_regular(mode)}; skipped")
            return None
        return os.fdopen(fd, "rb")
    except OSError as exc:
        os.close(fd)
        _report(stats, f"{path}: cannot be read ({exc.strerror or exc})")
        return None


def _report(stats: ReadStats | None, message: str) -> None:
    if stats is not None:
        stats.error(message)


def read_head(path: Path, size: int) -> bytes | None:
    """The first `size` bytes of a regular file (None for a FIFO, folder or unreadable file)."""
    handle = open_regular(path)
    if handle is None:
        return None
    try:
        with handle:
            return handle.read(size)
    except OSError:
        return None


def read_bounded(path: Path, stats: ReadStats, limit: int) -> bytes | None:
    """A whole regular file of at most `limit` bytes; None (and an error) otherwise."""
    handle = open_regular(path, stats)
    if handle is None:
        return None
    try:
        with handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        stats.error(f"{path}: read failed ({exc.strerror or exc})")
        return None
    if len(data) > limit:
        stats.error(f"{path}: larger than {limit // (1024 * 1024)} MB; too large to read")
        return None
    return data


def iter_lines(path: Path, stats: ReadStats, max_line: int = MAX_LINE) -> Iterator[bytes]:
    """Yield the non-blank lines of a file (without line ends).

    Reads 1 MB chunks and splits them in C, which is several times cheaper than a
    `readline` call per line. A line longer than `max_line` is dropped as it is read (its
    parts are not kept) and counted, so memory stays bounded whatever the file holds.
    Anything but a regular file (a folder, a FIFO) is reported and yields nothing.
    """
    handle = open_regular(path, stats)
    if handle is None:
        return
    parts: list[bytes] = []
    pending = 0
    dropping = False
    with handle:
        while True:
            try:
                chunk = handle.read(_CHUNK)
            except OSError as exc:
                stats.error(f"{path}: read failed ({exc.strerror or exc})")
                return
            if not chunk:
                break
            pieces = chunk.split(b"\n")
            tail = pieces.pop()
            for index, piece in enumerate(pieces):
                line = piece
                if index == 0 and (parts or dropping):
                    if dropping:
                        dropping = False
                        stats.skip(OVERSIZED)
                        continue
                    parts.append(piece)
                    line = b"".join(parts)
                    parts = []
                    pending = 0
                if len(line) > max_line:
                    stats.skip(OVERSIZED)
                elif line and not line.isspace():
                    yield line
            if dropping:
                continue
            if tail:
                pending += len(tail)
                if pending > max_line:
                    parts = []
                    pending = 0
                    dropping = True
                else:
                    parts.append(tail)
    if dropping:
        stats.skip(OVERSIZED)
    elif parts:
        line = b"".join(parts)
        if len(line) > max_line:
            stats.skip(OVERSIZED)
        elif not line.isspace():
            yield line


def loads(line: bytes, stats: ReadStats) -> dict[str, Any] | None:
    """Parse one JSON object line; count and drop anything else."""
    try:
        value = _DECODER.raw_decode(line.decode("utf-8"))[0]
    except UnicodeDecodeError:
        stats.skip(INVALID_UTF8)
        try:
            value = json.loads(line.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            stats.skip(MALFORMED)
            return None
    except ValueError:
        # raw_decode refuses leading whitespace; json.loads is the strict judge.
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            stats.skip(MALFORMED)
            return None
    except RecursionError:
        # Nesting deeper than the parser's recursion limit: not a transcript record.
        stats.skip(MALFORMED)
        return None
    if not isinstance(value, dict):
        stats.skip(MALFORMED)
        return None
    return value


_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def valid_text(text: str) -> str:
    """`text` with every lone surrogate (a JSON `\\ud800` escape alone) replaced by U+FFFD.

    JSON may escape half of a surrogate pair; Python keeps it as a lone surrogate, which no
    UTF-8 file, database or API request accepts, so one such character would fail the whole
    thread later. ASCII text (nearly all of it) is recognised at C speed and returned as is.
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE_RE.sub("\ufffd", text)
    return text


def strip_base64(line: bytes) -> bytes:
    """Blank out inline base64 payloads (images, documents) before parsing a huge line."""
    return _BASE64_RE.sub(rb'"\1":""', line)


def parse_time(value: object) -> datetime | None:
    """ISO string, or epoch seconds / milliseconds, to an aware UTC datetime."""
    if isinstance(value, str):
        if not value:
            return None
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            if value.isdigit():
                return parse_time(int(value))
            return None
        if parsed.tzinfo is None:
            return parsed.replace(tzinfo=UTC)
        return parsed.astimezone(UTC)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    seconds = float(value)
    # Anything past the year 5000 in seconds is milliseconds.
    if seconds > 1e11:
        seconds /= 1000.0
    try:
        return datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def file_time(path: Path) -> datetime | None:
    """A file's modification time, aware UTC (None when it cannot be read)."""
    try:
        return datetime.fromtimestamp(path.stat().st_mtime, UTC)
    except OSError:
        return None


def clip(text: str, limit: int) -> str:
    """One line of at most `limit` characters."""
    # Only the head matters; splitting a multi-megabyte text to keep 200 characters would not.
    head = text[: limit * 4 + 64]
    flat = " ".join(head.split())
    if len(flat) <= limit and len(head) == len(text):
        return flat
    return flat[: max(limit - 1, 1)].rstrip() + "…"


# The line a test, lint or build run prints when it passes: "12 passed in 0.88s" (pytest),
# "Tests: 12 passed, 12 total" (jest), "test result: ok. 3 passed" (cargo), "ok  pkg 0.4s"
# and "PASS" (go), "✓ src/a.test.ts (4 tests)" (vitest), "OK" (unittest), "BUILD
# SUCCESSFUL", "** TEST SUCCEEDED **", "Success: no issues found" (mypy), "All checks
# passed!" (ruff). One short line is all a successful run's output leaves in a transcript:
# it tells that the agent's change was verified, and nothing longer gets through (a file's
# content, a listing, a paragraph that could carry an instruction).
_RUN_SUMMARY_RE = re.compile(
    r"(?i)(?:\bpass(?:ed|ing)?\b|\bsucce(?:ss|ssful|ssfully|eded)\b|\btest result: ok\b|"
    r"^ok\b|^[✓✔√]|\bno issues found\b|\bcompiled successfully\b)"
)
_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_RUN_TAIL = 4000
_SUMMARY_MAX = 160


# Words a pass summary holds: a raw record line without any is skipped unparsed.
_SUMMARY_HINT_RE = re.compile(
    rb"(?i)pass|\bok\b|succe|no issues found|\xe2\x9c[\x93\x94]|\xe2\x88\x9a|\\u27(?:13|14)"
)


def may_hold_summary(line: bytes) -> bool:
    """Whether a raw record line's tail may hold a run's pass summary (cheap, bytes)."""
    return _SUMMARY_HINT_RE.search(line, max(len(line) - 2 * _RUN_TAIL, 0)) is not None


def run_summary(output: str) -> str:
    """The pass summary a successful run's output ends with ("12 passed in 0.88s"), or ''."""
    for raw in reversed(output[-_RUN_TAIL:].splitlines()):
        line = _ANSI_RE.sub("", raw).strip().strip("=-_* ")
        if line and len(line) <= _SUMMARY_MAX and _RUN_SUMMARY_RE.search(line):
            return clip(line, 160)
    return ""


def tool_line(name: str, tool_input: object) -> str:
    """One short line for a tool call: its name and the gist of its input."""
    gist = ""
    if isinstance(tool_input, dict):
        for key in _TOOL_KEYS:
            value = tool_input.get(key)
            if isinstance(value, str) and value.strip():
                gist = value
                break
            if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
                gist = " ".join(value)
                break
        else:
            gist = next((v for v in tool_input.values() if isinstance(v, str) and v.strip()), "")
    elif isinstance(tool_input, str):
        gist = tool_input
    return clip(f"{name}: {gist}" if gist else name, 160)
