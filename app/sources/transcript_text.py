"""A raw agent transcript handed over as text rather than found by a scan.

`puffin-memory memorize --file ~/.claude/projects/…/session.jsonl` (or the same text given to
the memorize operation by any client) is a Claude Code or Codex transcript: JSON lines, not a
conversation. Read as prose it gives items made of JSON keys; read here, it goes through the
same reader and renderer as a scanned file, so it is memorized as the scan would memorize it.
"""

from __future__ import annotations

import json
import tempfile
from datetime import UTC, date
from pathlib import Path

from app.core.errors import InvalidInput

# Keys one of the first lines of a Claude Code or Codex transcript has.
_TRANSCRIPT_KEYS = frozenset({"sessionId", "parentUuid", "payload", "uuid"})
_LOOKED_AT = 5


def rendered_transcript(text: str) -> tuple[str, date | None] | None:
    """The transcript in `text` rendered as the scan renders it, with the day (UTC) of its
    last message; None when `text` is not a JSON-lines agent transcript. Raises
    InvalidInput for one no conversation can be read from."""
    body = text.lstrip()
    if not body.startswith("{"):
        return None
    if not any(_names_a_transcript(line) for line in body.split("\n", _LOOKED_AT)[:_LOOKED_AT]):
        return None
    from app.core.config import SourceSettings
    from app.sources.render import render
    from app.sources.scan import discover

    with tempfile.TemporaryDirectory(prefix="puffin-memory-transcript-") as folder:
        path = Path(folder) / "transcript.jsonl"
        path.write_text(body, encoding="utf-8")
        found = discover(SourceSettings(), path=path)
        rendered = [render(thread.load()) for thread in found.threads]
    kept = [r for r in rendered if r.strip()]
    if not kept:
        raise InvalidInput(
            "This is a JSON-lines transcript, but no Claude Code or Codex conversation could "
            "be read from it."
        )
    ended = max((t.ended for t in found.threads), default=None)
    return "\n\n".join(kept), ended.astimezone(UTC).date() if ended is not None else None


def _names_a_transcript(line: str) -> bool:
    try:
        record = json.loads(line)
    except ValueError:
        return False
    return isinstance(record, dict) and bool(_TRANSCRIPT_KEYS & record.keys())
