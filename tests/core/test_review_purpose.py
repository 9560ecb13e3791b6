"""The review queue has a purpose (issue 11, point 5): a few candidates per conversation,
each with why it waits and the lines it came from."""

from __future__ import annotations

import json
from pathlib import Path

from app.container import build_api
from app.core.models import Category, ExtractionResult, MemoryItem
from app.core.review import PER_THREAD, ReviewQueue

CONVERSATION = """User: the upload page times out for big files.
Assistant: I think the proxy body limit is 10 MB, maybe raise it to 100 MB?
User: hm, maybe. We could also stream uploads straight to the bucket.
Assistant: Streaming would avoid the proxy limit entirely.
User: and maybe thumbnails should be generated lazily too.
Assistant: Possibly, thumbnails could move to a queue worker.
User: the CSV export could be paginated someday.
Assistant: Pagination with a cursor would keep memory flat.
"""


def _candidate(title: str, content: str, confidence: float, tag: str) -> MemoryItem:
    return MemoryItem(
        category=Category.IMPLEMENTATION_NOTES,
        title=title,
        content=content,
        confidence=confidence,
        sources=["thread-7"],
        tags=[tag],
    )


def test_a_conversation_offers_a_few_candidates_with_reason_and_excerpt(home: Path) -> None:
    api = build_api(home, engine_override="offline")
    items = [
        _candidate(
            "Raise the proxy body limit",
            "Raise the proxy body limit to 100 MB.",
            0.55,
            "source:agent",
        ),
        _candidate(
            "Stream uploads to the bucket",
            "Stream uploads straight to the bucket.",
            0.7,
            "source:user",
        ),
        _candidate(
            "Generate thumbnails lazily",
            "Generate thumbnails lazily in a queue worker.",
            0.6,
            "source:user",
        ),
        _candidate(
            "Paginate the CSV export",
            "Paginate the CSV export with a cursor.",
            0.65,
            "source:agent",
        ),
        _candidate(
            "Thumbnail queue worker",
            "Thumbnails could move to a queue worker.",
            0.52,
            "source:agent",
        ),
    ]
    answer = api.writer.apply_extraction(
        ExtractionResult(items=items), "web/main", texts={"thread-7": CONVERSATION}
    )
    assert answer["queuedForReview"] == PER_THREAD == 3
    assert any("left out" in note for note in answer["notes"])
    listed = api.invoke("memory:review-list", {})["items"]
    # The strongest three stay; the two weakest were left out.
    assert sorted(e["confidence"] for e in listed) == [0.6, 0.65, 0.7]
    by_title = {e["title"]: e for e in listed}
    stream = by_title["Stream uploads to the bucket"]
    assert stream["reason"].startswith("Said once")
    assert "stream uploads straight to the bucket" in stream["excerpt"]
    assert by_title["Paginate the CSV export"]["reason"].startswith("The agent said it")
    api.index.close()


def test_a_queue_written_before_reasons_still_loads(home: Path) -> None:
    item = _candidate("Old entry", "An entry queued by an older version.", 0.6, "source:user")
    (home / "review-queue.json").write_text(
        json.dumps(
            [
                {
                    "branch": "web/main",
                    "item": item.model_dump(mode="json"),
                    "queued": "2026-01-01T00:00:00Z",
                }
            ]
        ),
        encoding="utf-8",
    )
    entries = ReviewQueue(home / "review-queue.json").entries()
    assert [e.item.title for e in entries] == ["Old entry"]
    assert entries[0].reason == "" and entries[0].excerpt == ""
