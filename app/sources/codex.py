"""Codex CLI rollouts: `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`, one thread each.

Each line is `{timestamp, type, payload}`. `session_meta` gives the session id, working
directory and `git.branch`; `response_item` lines are the conversation (messages, function
calls and their output, reasoning). Developer messages and reasoning are dropped; user-role
items that Codex injects (environment context, AGENTS.md instructions) are marked as meta:
a user item is the user's own words when an `event_msg` `user_message` confirms it (or, in
older rollouts without those events, when it is not an injected `<tag>` block). The
pre-2025-09 layout (a bare first line with `id`/`git`, then bare response items) is read too.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from app.sources.gitinfo import last_component, project_name
from app.sources.jsonl import (
    BAD_RECORDS,
    RECORD_ERRORS,
    UNKNOWN_TYPES,
    clip,
    iter_lines,
    loads,
    may_hold_summary,
    parse_time,
    run_summary,
    tool_line,
)
from app.sources.models import (
    ASSISTANT,
    META,
    NO_BRANCH,
    SUMMARY,
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

SOURCE = "codex"

_KNOWN_TYPES = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
)
_ITEM_TYPES = frozenset(
    {
        "message",
        "function_call",
        "function_call_output",
        "reasoning",
        "local_shell_call",
        "custom_tool_call",
        "custom_tool_call_output",
        "web_search_call",
    }
)
_INJECTED_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md",
    "<user_shell_command>",
    "<turn_aborted>",
    "<INSTRUCTIONS>",
)


class _Rollout:
    def __init__(self, path: Path, stats: ReadStats) -> None:
        self.path = path
        self.stats = stats
        self.session_id = ""
        self.cwd = ""
        self.branch: str | None = None
        self.repo_name = ""
        self.started: datetime | None = None
        self.ended: datetime | None = None
        self.messages: list[Message] = []
        # User items awaiting confirmation by an `event_msg` `user_message`.
        self.pending: list[Message] = []
        self.confirmed: set[int] = set()
        self.saw_user_events = False
        self.confirm_next = 0

    def add(self, record: dict[str, Any]) -> None:
        ts = parse_time(record.get("timestamp"))
        if ts is not None:
            self.started = ts if self.started is None or ts < self.started else self.started
            self.ended = ts if self.ended is None or ts > self.ended else self.ended
        kind = record.get("type")
        payload = record.get("payload")
        if kind is not None and not isinstance(kind, str):
            self.stats.skip(UNKNOWN_TYPES)
            return
        if kind is None and "record_type" in record:
            return
        if kind is None and "id" in record and not self.session_id:
            self._meta(record)
            return
        if kind in _ITEM_TYPES:
            self._item(record, ts)
            return
        if kind not in _KNOWN_TYPES:
            self.stats.skip(UNKNOWN_TYPES)
            return
        if not isinstance(payload, dict):
            return
        if kind == "session_meta":
            self._meta(payload)
        elif kind == "response_item":
            self._item(payload, ts)
        elif kind == "event_msg" and payload.get("type") == "user_message":
            self._confirm(str(payload.get("message") or ""))
        elif kind == "turn_context" and not self.cwd and isinstance(payload.get("cwd"), str):
            self.cwd = payload["cwd"]
        elif kind == "compacted" and isinstance(payload.get("message"), str):
            self.messages.append(Message(SYSTEM, payload["message"], ts, SUMMARY))

    def _meta(self, payload: dict[str, Any]) -> None:
        if not self.session_id and isinstance(payload.get("id"), str):
            self.session_id = payload["id"]
        if isinstance(payload.get("cwd"), str):
            self.cwd = payload["cwd"]
        git = payload.get("git")
        if isinstance(git, dict):
            if isinstance(git.get("branch"), str) and git["branch"]:
                self.branch = git["branch"]
            url = git.get("repository_url")
            if isinstance(url, str) and url:
                self.repo_name = last_component(url.rstrip("/")).removesuffix(".git")
        started = parse_time(payload.get("timestamp"))
        if started is not None and (self.started is None or started < self.started):
            self.started = started

    def _item(self, item: dict[str, Any], ts: datetime | None) -> None:
        kind = item.get("type")
        if kind == "message":
            role = item.get("role")
            text = _content_text(item.get("content"))
            if not text:
                return
            if role == "assistant":
                self.messages.append(Message(ASSISTANT, text, ts, TEXT))
            elif role == "user":
                message = Message(USER, text, ts, TEXT)
                self.messages.append(message)
                self.pending.append(message)
                if self.confirm_next:
                    self.confirm_next -= 1
                    self.confirmed.add(id(message))
        elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
            name = str(item.get("name") or ("shell" if kind == "local_shell_call" else "tool"))
            raw = item.get("arguments", item.get("input", item.get("action")))
            args: object = raw
            if isinstance(raw, str) and raw[:1] in "{[":
                try:
                    args = json.loads(raw)
                except ValueError:
                    args = raw
            line = tool_line(name, args)
            last = self.messages[-1] if self.messages else None
            if last is not None and last.role == ASSISTANT and last.kind == TEXT:
                last.tools.append(line)
            else:
                self.messages.append(Message(ASSISTANT, "", ts, TEXT, [line]))
        elif kind in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            error = _tool_error(output)
            if error:
                self.messages.append(Message(SYSTEM, clip(error, 300), ts, TOOL_ERROR))
            elif summary := run_summary(_output_text(output)):
                self.messages.append(Message(SYSTEM, summary, ts, TOOL_OUTCOME))

    def _confirm(self, text: str) -> None:
        self.saw_user_events = True
        wanted = text.strip()
        for message in reversed(self.pending):
            if id(message) not in self.confirmed and message.text.strip() == wanted:
                self.confirmed.add(id(message))
                return
        # Texts differ (attachments, redacted copies): the latest unconfirmed user item is it.
        latest = next((m for m in reversed(self.pending) if id(m) not in self.confirmed), None)
        if latest is not None and self.messages and self.messages[-1] is latest:
            self.confirmed.add(id(latest))
        else:
            self.confirm_next += 1

    def thread(self) -> ParsedThread | None:
        for message in self.pending:
            injected = (
                id(message) not in self.confirmed
                if self.saw_user_events
                else message.text.lstrip().startswith(_INJECTED_PREFIXES)
            )
            if injected:
                message.role, message.kind = SYSTEM, META
        if not self.messages:
            return None
        session_id = self.session_id or self.path.stem
        first_user = next((m.text for m in self.messages if m.role == USER), "")
        project = project_name(self.cwd) if self.cwd else (self.repo_name or "(unknown project)")
        return ParsedThread(
            id=session_id,
            source=SOURCE,
            project=project,
            branch=self.branch or NO_BRANCH,
            content=ThreadContent(self.messages, []),
            ref=f"cx-{session_id.replace('-', '')[-8:]}",
            title=clip(first_user, 80),
            started=self.started,
            ended=self.ended,
        )


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content.strip()
    if not isinstance(content, list):
        return ""
    parts = []
    for block in content:
        if isinstance(block, dict) and block.get("type") in ("input_text", "output_text", "text"):
            text = block.get("text")
            if isinstance(text, str) and text.strip():
                parts.append(text.strip())
    return "\n\n".join(parts)


def _output_text(output: object) -> str:
    """The text of a call's output: plain, after an `Exit code:` header, or JSON's `output`."""
    if isinstance(output, dict):
        content = output.get("content")
        return content if isinstance(content, str) else ""
    if not isinstance(output, str):
        return ""
    if output.startswith("{"):
        try:
            parsed = json.loads(output)
        except ValueError:
            return output
        inner = parsed.get("output") if isinstance(parsed, dict) else None
        return inner if isinstance(inner, str) else ""
    return output


def _tool_error(output: object) -> str:
    """The output of a failed call (non-zero exit code or an explicit failure), else ''."""
    if isinstance(output, dict):
        if output.get("success") is False:
            return str(output.get("content") or "tool call failed")
        return ""
    if isinstance(output, str) and output.startswith("Exit code: "):
        status = output[len("Exit code: ") :].split("\n", 1)[0].strip()
        return "" if status == "0" else output
    if not isinstance(output, str) or not output.startswith("{"):
        return ""
    try:
        parsed = json.loads(output)
    except ValueError:
        return ""
    if not isinstance(parsed, dict):
        return ""
    metadata = parsed.get("metadata")
    code = metadata.get("exit_code") if isinstance(metadata, dict) else None
    if isinstance(code, int) and code != 0:
        return f"exit {code}: {parsed.get('output', '')}"
    return ""


def _noise(head: bytes, line: bytes, rollout: _Rollout) -> bool:
    """Lines known from their first bytes to add nothing: parsing them is most of the cost."""
    if b'"type":"event_msg"' in head:
        return b'"type":"user_message"' not in head
    if b'"type":"turn_context"' in head:
        return bool(rollout.cwd)
    if b'"type":"reasoning"' in head:
        return True
    if b'"type":"function_call_output"' in head or b'"type":"custom_tool_call_output"' in head:
        succeeded = b'exit_code\\":0' in line or b"Exit code: 0" in head
        # A successful run is skipped unless its tail may hold a pass summary.
        return succeeded and b'"success":false' not in line and not may_hold_summary(line)
    return False


def read_rollout(paths: tuple[Path, ...], stats: ReadStats) -> list[ParsedThread]:
    """Read one rollout file into (at most) one thread."""
    rollout = _Rollout(paths[0], stats)
    for line in iter_lines(paths[0], stats):
        if _noise(line[:512], line, rollout):
            continue
        record = loads(line, stats)
        if record is None:
            continue
        try:
            rollout.add(record)
        except RECORD_ERRORS:
            stats.skip(BAD_RECORDS)
    thread = rollout.thread()
    return [thread] if thread is not None else []


def find_rollouts(folder: Path) -> list[tuple[Path, ...]]:
    """Rollout files anywhere under a sessions folder."""
    try:
        return [(p,) for p in sorted(folder.rglob("rollout-*.jsonl")) if p.is_file()]
    except OSError:
        return []
