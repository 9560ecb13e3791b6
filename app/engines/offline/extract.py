"""Rule-based extraction of solution-wide knowledge from one conversation (no network).

This module owns the public entry point of the offline engine's extraction, `extract`: it
validates its input, reads the conversation into statements (`extract_text.py`), judges them
with the pattern tables (`extract_rules.py`, applied by `extract_items.py`), merges and titles
the results (`extract_merge.py`) and returns an
`ExtractionResult` of `MemoryItem`s in seed 001's five categories, each with a confidence the
writer routes on (>= 0.75 committed, 0.5-0.75 review queue, below 0.5 dropped; nothing below
`MIN_CONFIDENCE` is returned at all). It is pure and deterministic: the same text, source and
date always give the same items.
"""

from __future__ import annotations

from datetime import date

from app.core.errors import InvalidInput
from app.core.models import ExtractionResult, MemoryItem, clean_token, utc_now
from app.engines.offline.extract_items import Candidate, find_candidates, skip_section
from app.engines.offline.extract_merge import finalize
from app.engines.offline.extract_text import Speaker, read_statements, split_turns

__all__ = ["MAX_ITEMS", "MIN_CONFIDENCE", "extract"]

# Items below this would be dropped by the writer anyway (seed 001 routes < 0.5 nowhere).
MIN_CONFIDENCE = 0.5
# One conversation rarely holds more solution-wide facts than this; a flood means the rules
# are reading something that is not a conversation, so only the strongest are kept.
MAX_ITEMS = 40


def _item(candidate: Candidate, source: str, today: date) -> MemoryItem:
    speaker_tag = "source:user" if Speaker.USER in candidate.speakers else "source:agent"
    return MemoryItem(
        category=candidate.category,
        title=candidate.title,
        content=candidate.content,
        confidence=candidate.confidence,
        sources=[source],
        extracted=today,
        tags=[*candidate.topic_tags, speaker_tag],
        rationale=candidate.rationale,
        trade_offs=candidate.trade_offs,
        scope=candidate.scope,
        root_cause=candidate.root_cause,
        fix=candidate.fix,
        occurrences=candidate.occurrences,
        approach=candidate.approach,
        lessons=candidate.lessons,
    )


def extract(conversation: str, *, source: str, today: date | None = None) -> ExtractionResult:
    """Find coding preferences, decisions, conventions, bug patterns and notes in a conversation.

    `conversation` is plain text with speaker turns (`User:` / `Assistant:` and similar; text
    without speaker marks counts as the user's). `source` names the thread the items came
    from (it becomes each item's `sources`); `today` is the extraction date (UTC today when
    omitted). Returns `ExtractionResult(no_content_to_extract=True)` when nothing qualifies.

    Raises:
        InvalidInput: `conversation` is not text, or `source` is empty.
    """
    if not isinstance(conversation, str):
        raise InvalidInput(
            f"conversation must be text, not {type(conversation).__name__}",
            context={"field": "conversation"},
        )
    if not clean_token(source if isinstance(source, str) else ""):
        raise InvalidInput(
            "source must name the conversation's thread", context={"field": "source"}
        )
    day = today or utc_now().date()
    text = conversation.replace("\x00", " ").replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        return ExtractionResult(no_content_to_extract=True, engine="offline")

    reading = read_statements(split_turns(text), skip_section)
    found, notes = find_candidates(reading)
    candidates = finalize(found, reading.statements)
    kept = [c for c in candidates if c.confidence >= MIN_CONFIDENCE]
    if len(kept) > MAX_ITEMS:
        notes.append(f"kept the {MAX_ITEMS} strongest of {len(kept)} items")
        kept = sorted(kept, key=lambda c: (-c.confidence, c.index))[:MAX_ITEMS]
    kept.sort(key=lambda c: c.index)
    items = [_item(c, source, day) for c in kept]
    return ExtractionResult(
        items=items, no_content_to_extract=not items, engine="offline", notes=notes
    )
