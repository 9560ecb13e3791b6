"""A raw agent transcript handed over as text rather than found by a scan.

`puffin-memory memorize --file ~/.claude/projects/…/session.jsonl` (or the same text given to
the memorize operation by any client) is a Claude Code or Codex transcript: JSON lines, not a
conversation. The same goes for a Puffin `.puffin/history.json` (one JSON document of topic
branches) and an Aider `.aider.chat.history.md` (markdown whose `####` lines are the user's).
Read as prose they give items made of JSON keys, or of the user's words taken for the
agent's; read here, each goes through the same reader and renderer as a scanned file, so it
is memorized as the scan would memorize it.
"""

from __future__ import annotations

import json
import re
import tempfile
from datetime import UTC, date
from pathlib import Path

from app.core.errors import InvalidInput

# Keys one of the first lines of a Claude Code or Codex transcript has.
_TRANSCRIPT_KEYS = frozenset({"sessionId", "parentUuid", "payload", "uuid"})
_LOOKED_AT = 5
# Aider opens every session of its chat history with this line.
_AIDER_START = re.compile(r"\A# aider chat started at ")


def rendered_transcript(text: str) -> tuple[str, date | None] | None:
    """The transcript in `text` rendered as the scan renders it, with the day (UTC) of its
    last message; None when `text` is not an agent transcript (Claude Code or Codex JSON
    lines, a Puffin history, an Aider chat history). Raises InvalidInput for one no
    conversation can be read from."""
    body = text.lstrip()
    if _AIDER_START.match(body):
        return _rendered(body, ".aider.chat.history.md", "aider", "an Aider chat history")
    if not body.startswith("{"):
        return None
    if any(_names_a_transcript(line) for line in body.split("\n", _LOOKED_AT)[:_LOOKED_AT]):
        return _rendered(
            body, "transcript.jsonl", None, "a JSON-lines transcript", "Claude Code or Codex "
        )
    if _is_puffin_history(body):
        return _rendered(body, "history.json", "puffin", "a Puffin history")
    return None


def _rendered(
    body: str, name: str, source: str | None, what: str, whose: str = ""
) -> tuple[str, date | None]:
    from app.core.config import SourceSettings
    from app.sources.jsonl import file_time
    from app.sources.render import render
    from app.sources.scan import discover

    with tempfile.TemporaryDirectory(prefix="puffin-memory-transcript-") as folder:
        path = Path(folder) / name
        path.write_text(body, encoding="utf-8")
        written = file_time(path)
        found = discover(SourceSettings(), source=source, path=path)
        rendered = [render(thread.load()) for thread in found.threads]
    kept = [r for r in rendered if r.strip()]
    if not kept:
        raise InvalidInput(f"This is {what}, but no {whose}conversation could be read from it.")
    # The conversation's own times; a reader falls back on the file's time (an Aider
    # history's last session ends when the file was last written), which here is now.
    said = [t for th in found.threads for t in (th.ended, th.started) if t != written]
    ended = max(said, default=None)
    return "\n\n".join(kept), ended.astimezone(UTC).date() if ended is not None else None


def _names_a_transcript(line: str) -> bool:
    try:
        record = json.loads(line)
    except ValueError:
        return False
    return isinstance(record, dict) and bool(_TRANSCRIPT_KEYS & record.keys())


def _is_puffin_history(body: str) -> bool:
    """One JSON document whose `branches` map Puffin's topic branches to their prompts."""
    try:
        data = json.loads(body)
    except ValueError:
        return False
    branches = data.get("branches") if isinstance(data, dict) else None
    return isinstance(branches, dict) and any(
        isinstance(b, dict) and "prompts" in b for b in branches.values()
    )
