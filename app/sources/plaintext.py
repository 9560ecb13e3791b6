"""Plain text or Markdown conversations passed explicitly (`--path notes.md`).

The whole file is one thread. Lines that open with a speaker label (`User:`, `Human:`,
`You:`, `Assistant:`, `AI:`, `Claude:`, ... or a Markdown heading of one) split it into
turns; without any label the file is a single user message. The project is the repository
holding the file (else its folder), the branch its current git branch (else no branch).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from app.sources.gitinfo import current_branch, project_name
from app.sources.jsonl import clip, file_time, read_bounded
from app.sources.models import (
    ASSISTANT,
    NO_BRANCH,
    TEXT,
    USER,
    Message,
    ParsedThread,
    ReadStats,
    ThreadContent,
)

SOURCE = "file"
MAX_BYTES = 64 * 1024 * 1024

_USER_LABELS = frozenset({"user", "human", "you"})
# `User: text`, `**Assistant:** text`, `## User` (a heading alone on its line).
_SPEAKER_RE = re.compile(
    r"^(?:#{1,6}[ \t]*)?(?:\*\*)?(user|human|you|assistant|ai|claude|chatgpt)"
    r"(?:[ \t]*:(?:\*\*)?|(?:\*\*)?[ \t]*:|[ \t]*$)[ \t]?(.*)$",
    re.IGNORECASE | re.MULTILINE,
)


def read_text(paths: tuple[Path, ...], stats: ReadStats) -> list[ParsedThread]:
    """Read a text or Markdown file into one thread."""
    path = paths[0]
    data = read_bounded(path, stats, MAX_BYTES)
    if data is None:
        return []
    text = data.decode("utf-8", "replace")
    modified = file_time(path)
    messages: list[Message] = []
    matches = list(_SPEAKER_RE.finditer(text))
    if not matches:
        if text.strip():
            messages.append(Message(USER, text.strip(), modified, TEXT))
    else:
        preface = text[: matches[0].start()].strip()
        if preface:
            messages.append(Message(USER, preface, modified, TEXT))
        for i, match in enumerate(matches):
            label = match.group(1).lower()
            end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
            body = ((match.group(2) or "") + text[match.end() : end]).strip()
            if body:
                role = USER if label in _USER_LABELS else ASSISTANT
                messages.append(Message(role, body, modified, TEXT))
    if not messages:
        return []
    folder = path.parent.resolve()
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
    first_user = next((m.text for m in messages if m.role == USER), "")
    return [
        ParsedThread(
            id=digest,
            source=SOURCE,
            project=project_name(str(folder)),
            branch=current_branch(folder) or NO_BRANCH,
            content=ThreadContent(messages, []),
            ref=f"tx-{digest[:8]}",
            title=clip(first_user or path.name, 80),
            started=modified,
            ended=modified,
        )
    ]
