"""Aider chat histories: `.aider.chat.history.md` in a project folder.

Every `# aider chat started at <local time>` line opens a session, and each session is a
thread. In a session, `#### ` lines are the user's input (Aider ends each of them with two
spaces, which tells them apart from `####` headings in a reply), `> ` lines are tool output
(dropped, except lines reporting an error), and everything else is the assistant's reply
(`<think>` blocks dropped). Slash commands are marked as commands; `/code x` or `/ask x`
followed by the same `x` as a prompt keep only the prompt. The branch is the repository's
current branch read from `.git/HEAD`, or `aider` when there is none.
"""

from __future__ import annotations

import hashlib
import io
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

from app.sources.gitinfo import current_branch, project_name
from app.sources.jsonl import clip, file_time, open_regular, run_summary
from app.sources.models import (
    ASSISTANT,
    COMMAND,
    SYSTEM,
    TEXT,
    TOOL_ERROR,
    TOOL_OUTCOME,
    USER,
    Message,
    ParsedThread,
    ReadStats,
    ThreadContent,
)

SOURCE = "aider"
HISTORY_NAME = ".aider.chat.history.md"
DEFAULT_BRANCH = "aider"

_HEADER_RE = re.compile(r"^# aider chat started at (.+?)\s*$")
# Longer than any one run of aider lasts: a history written later than this after its last
# session began was written by something else.
LONGEST = timedelta(days=1)
_THINK_RE = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL)
# A SEARCH/REPLACE edit block (file name inside or just above the fence): the edit body is
# the equivalent of a tool call's input and is reduced to one line.
_EDIT_RE = re.compile(
    r"(?:^([^\n`]{1,300})\n)?```[^\n]*\n(?:([^\n]{1,300})\n)?"
    r"<<<<<<< SEARCH\n.*?>>>>>>> REPLACE[^\n]*\n?(?:```)?",
    re.DOTALL | re.MULTILINE,
)
_ERROR_RE = re.compile(r"error|traceback|failed|exception", re.IGNORECASE)
# A test runner's line for a check that passed ("✔ cli: unknown tag prints friendly error",
# TAP's "ok 3 - …", "PASS src/x.test.ts"): its words are the test's name, not a failure.
_PASSED_CHECK_RE = re.compile(r"^(?:[✔✓√]|ok\s+\d|PASS(?:ED)?\b)")
_REPEATING_COMMANDS = ("/code ", "/ask ", "/architect ", "/context ", "/help ")


def _parse_start(text: str) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    # Aider writes local time without a zone; astimezone() takes a naive time as local.
    return parsed.astimezone(UTC)


class _Session:
    __slots__ = ("assistant", "last_command", "messages", "started", "user")

    def __init__(self, started: datetime | None) -> None:
        self.started = started
        self.messages: list[Message] = []
        self.user: list[str] = []
        self.assistant: list[str] = []
        self.last_command = ""

    def flush_user(self) -> None:
        if not self.user:
            return
        text = "\n".join(self.user).strip()
        self.user = []
        if not text:
            return
        if text.startswith("/"):
            self.messages.append(Message(SYSTEM, clip(text, 300), None, COMMAND))
            self.last_command = text
            return
        previous = self.messages[-1] if self.messages else None
        if (
            previous is not None
            and previous.kind == COMMAND
            and self.last_command.startswith(_REPEATING_COMMANDS)
            and self.last_command.split(" ", 1)[1].strip() == text
        ):
            self.messages.pop()
        self.messages.append(Message(USER, text, None, TEXT))

    def flush_assistant(self) -> None:
        if not self.assistant:
            return
        # Lines keep their own line ends.
        text = "".join(self.assistant)
        self.assistant = []
        if "<think>" in text:
            text = _THINK_RE.sub("", text)
        tools: list[str] = []
        if "<<<<<<< SEARCH" in text:

            def edit_line(match: re.Match[str]) -> str:
                name = (match.group(2) or match.group(1) or "").strip()
                line = clip(f"edit: {name}" if name else "edit", 160)
                if line not in tools:
                    tools.append(line)
                return ""

            text = _EDIT_RE.sub(edit_line, text)
            text = re.sub(r"\n{3,}", "\n\n", text)
        text = text.strip()
        if text or tools:
            self.messages.append(Message(ASSISTANT, text, None, TEXT, tools))

    def flush(self) -> None:
        self.flush_user()
        self.flush_assistant()


def read_history(paths: tuple[Path, ...], stats: ReadStats) -> list[ParsedThread]:
    """Read an Aider chat history into one thread per session."""
    path = paths[0]
    folder = path.parent
    project = project_name(str(folder.resolve())) if folder.exists() else folder.name
    branch = current_branch(folder) or DEFAULT_BRANCH
    sessions: list[_Session] = []
    binary = open_regular(path, stats)
    if binary is None:
        return []
    handle = io.TextIOWrapper(binary, encoding="utf-8", errors="replace", newline=None)
    try:
        with handle:
            _read_lines(handle, sessions)
    except OSError as exc:
        stats.error(f"{path}: read failed ({exc.strerror or exc})")
        return []
    return _threads(path, project, branch, sessions)


def _read_lines(handle: io.TextIOWrapper, sessions: list[_Session]) -> None:
    """Split the history into sessions of messages (appended to `sessions`)."""
    current: _Session | None = None
    in_user = False
    for raw in handle:
        first = raw[:1]
        # Most lines are reply text: decide that from the first character alone.
        if first not in ("#", ">") and not in_user:
            if current is None:
                current = _Session(None)
                sessions.append(current)
            current.assistant.append(raw)
            continue
        line = raw.rstrip("\n")
        header = _HEADER_RE.match(line) if line.startswith("# aider chat") else None
        if header is not None:
            if current is not None:
                current.flush()
            current = _Session(_parse_start(header.group(1)))
            sessions.append(current)
            in_user = False
            continue
        if current is None:
            # Text before the first header (a hand-edited file): its own session.
            current = _Session(None)
            sessions.append(current)
        if line.startswith("####") and (line.endswith("  ") or line == "####" or in_user):
            current.flush_assistant()
            current.user.append(line[5:].rstrip() if len(line) > 4 else "")
            in_user = True
            continue
        if first == ">" and line[1:2] in ("", " "):
            current.flush()
            in_user = False
            body = line[2:].strip()
            if body and _ERROR_RE.search(body) and not _PASSED_CHECK_RE.match(body):
                current.messages.append(Message(SYSTEM, clip(body, 300), None, TOOL_ERROR))
            elif body and (summary := run_summary(body)):
                # "/test" or "/run pytest" passed: the one line of its output kept
                current.messages.append(Message(SYSTEM, summary, None, TOOL_OUTCOME))
            continue
        in_user = False
        current.flush_user()
        if line.strip():
            current.assistant.append(raw)
    if current is not None:
        current.flush()


def _threads(path: Path, project: str, branch: str, sessions: list[_Session]) -> list[ParsedThread]:
    modified = file_time(path)
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:8]
    threads: list[ParsedThread] = []
    used: set[str] = set()
    for index, session in enumerate(sessions):
        if not session.messages:
            continue
        nxt = next((s.started for s in sessions[index + 1 :] if s.started), None)
        started = session.started or modified
        ended = nxt or modified or started
        if nxt is None and session.started and modified and modified - session.started > LONGEST:
            # The last session ends when the file was last written, unless that was long after
            # it began: a copy or a checkout (git dates what it writes now) wrote the file, and
            # the session's own day is the one it started on.
            ended = session.started
        stamp = started.strftime("%Y%m%dT%H%M%S") if started else f"s{index}"
        thread_id = f"{digest}@{stamp}"
        if thread_id in used:
            thread_id = f"{thread_id}-{index}"
        used.add(thread_id)
        first_user = next((m.text for m in session.messages if m.role == USER), "")
        threads.append(
            ParsedThread(
                id=thread_id,
                source=SOURCE,
                project=project,
                branch=branch,
                content=ThreadContent(session.messages, []),
                ref=f"ai-{thread_id.split('@', 1)[1]}",
                title=clip(first_user, 80),
                started=started,
                ended=ended,
            )
        )
    return threads


def find_history(folder: Path) -> Path | None:
    """The Aider history in a project folder, if any."""
    candidate = folder / HISTORY_NAME
    return candidate if candidate.is_file() else None
