"""Rendering a thread as text for extraction.

The extractor reads speaker blocks: `User: ...` and `Assistant: ...`, separated by blank
lines (the offline extractor splits on those prefixes). An assistant block lists each tool
call on a `[tool] Name: gist` line. Text that neither speaker said is rendered as a bracketed
line inside the current block and never as `User:`: `[context summary] ...`, `[meta] ...`,
`[tool error] ...`, the pass summary of a command run (`[tool result] 12 passed in 0.88s`),
`[command] ...`, `[command output] ...`, `[interrupted by user]`, and
the checked dependency line of a manifest a tool read, `[manifest] ...`.
A side conversation appears where it happened as `[side conversation: title]` followed by
the manifests it read and its final report. Tool output bodies, thinking, images and base64
never reach the messages in the first place. Very long turns keep their head and tail.
"""

from __future__ import annotations

import re
from datetime import datetime

from app.sources.jsonl import clip
from app.sources.models import (
    ASSISTANT,
    COMMAND,
    COMMAND_OUTPUT,
    INTERRUPT,
    MANIFEST,
    META,
    SUMMARY,
    TOOL_ERROR,
    TOOL_OUTCOME,
    USER,
    Message,
    SideConversation,
    ThreadContent,
)

MAX_TURN_CHARS = 24_000
MAX_SIDE_CHARS = 2_000
_SYSTEM_LINES = {
    SUMMARY: ("[context summary] ", 1_200),
    META: ("[meta] ", 160),
    TOOL_ERROR: ("[tool error] ", 240),
    TOOL_OUTCOME: ("[tool result] ", 160),
    COMMAND: ("[command] ", 160),
    COMMAND_OUTPUT: ("[command output] ", 200),
    MANIFEST: ("[manifest] ", 1_000),
}
# A line inside a turn that starts like a speaker label would be read as a new turn.
_LABEL_RE = re.compile(r"^(User|Assistant):", re.MULTILINE)


def _body(text: str, limit: int = MAX_TURN_CHARS) -> str:
    if len(text) > limit:
        head = limit * 3 // 4
        tail = limit - head
        cut = len(text) - head - tail
        text = f"{text[:head]}\n[… {cut} characters cut …]\n{text[-tail:]}"
    if "User:" in text or "Assistant:" in text:
        text = _LABEL_RE.sub(r"| \1:", text)
    return text


def _system_line(message: Message) -> str:
    if message.kind == INTERRUPT:
        return "[interrupted by user]"
    prefix, limit = _SYSTEM_LINES.get(message.kind, ("[meta] ", 160))
    return prefix + clip(message.text, limit)


def _side_block(side: SideConversation) -> str:
    title = clip(side.title or side.id, 100)
    report = side.final_text()
    head = f"[side conversation: {title}]"
    # The manifests the subagent read are facts the parent never saw in full.
    read = dict.fromkeys(_system_line(m) for m in side.messages if m.kind == MANIFEST)
    lines = [head, *read]
    if report:
        lines.append(_body(report, MAX_SIDE_CHARS))
    return "\n".join(lines)


def render(content: ThreadContent, *, start: int = 0) -> str:
    """The thread (from message `start` on) as `User:`/`Assistant:` blocks."""
    messages = content.messages[start:]
    sides = _sides_after(content, start)
    blocks: list[list[str]] = []
    current: str | None = None  # role of the open block

    def open_block(role: str | None, first: str) -> None:
        nonlocal current
        blocks.append([first])
        current = role

    def add_line(line: str) -> None:
        if blocks:
            blocks[-1].append(line)
        else:
            open_block(None, line)

    side_index = 0
    for message in messages:
        while side_index < len(sides) and _before(sides[side_index].started, message.timestamp):
            open_block(None, _side_block(sides[side_index]))
            side_index += 1
        if message.role == USER and message.kind == "text":
            open_block(USER, "User: " + _body(message.text))
        elif message.role == ASSISTANT:
            lines = [f"[tool] {tool}" for tool in message.tools]
            if message.text:
                if current == ASSISTANT:
                    add_line(_body(message.text))
                else:
                    open_block(ASSISTANT, "Assistant: " + _body(message.text))
            elif lines and current != ASSISTANT:
                open_block(ASSISTANT, "Assistant: " + lines.pop(0))
            for line in lines:
                add_line(line)
        else:
            add_line(_system_line(message))
    for side in sides[side_index:]:
        open_block(None, _side_block(side))
    return "\n\n".join("\n".join(block) for block in blocks)


def _before(side_started: datetime | None, message_time: datetime | None) -> bool:
    """A side conversation goes before the first message that happened after it began."""
    return side_started is not None and message_time is not None and side_started < message_time


def _sides_after(content: ThreadContent, start: int) -> list[SideConversation]:
    """Side conversations that belong to the part of the thread from `start` on."""
    sides = sorted(
        content.side_conversations,
        key=lambda s: (s.started is None, s.started.timestamp() if s.started else 0.0),
    )
    if start <= 0:
        return sides
    previous = content.messages[start - 1].timestamp if start <= len(content.messages) else None
    if previous is None:
        return []
    return [s for s in sides if s.started is not None and s.started > previous]
