"""Items are dated by the day their conversation took place, not the day it was read: a
history scanned at once keeps its order, and a reversal shows both dates."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from app.container import build_api
from app.core.models import MemoryItem, utc_now


def _session(path: Path, day: str, turns: list[tuple[str, str]]) -> None:
    lines = []
    for n, (role, text) in enumerate(turns):
        message: dict[str, object] = {"role": role, "content": text}
        if role == "assistant":
            message = {"id": f"m{n}", "role": role, "content": [{"type": "text", "text": text}]}
        record = {
            "parentUuid": None,
            "isSidechain": False,
            "cwd": "/home/u/shop",
            "gitBranch": "main",
            "sessionId": path.stem,
            "type": role,
            "uuid": f"{path.stem[:8]}-{n}",
            "timestamp": f"{day}T10:00:{n:02d}Z",
            "message": message,
        }
        lines.append(json.dumps(record))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_a_scanned_history_keeps_the_days_it_was_said_on(home: Path, tmp_path: Path) -> None:
    folder = tmp_path / "claude" / "projects" / "-home-u-shop"
    _session(
        folder / "11111111-0000-4000-8000-000000000001.jsonl",
        "2026-03-02",
        [
            ("user", "we need background jobs for the welcome emails"),
            ("assistant", "I'd suggest Celery with Redis as the broker."),
            ("user", "no celery, too heavy. use dramatiq with redis as the broker"),
            ("assistant", "Dramatiq with Redis it is."),
        ],
    )
    _session(
        folder / "22222222-0000-4000-8000-000000000002.jsonl",
        "2026-03-09",
        [
            (
                "user",
                "jobs got lost when redis restarted. we're moving the dramatiq broker off "
                "redis to rabbitmq, redis stays only as the cache",
            ),
            ("assistant", "Switched the broker to RabbitMQ."),
        ],
    )
    api = build_api(home, engine_override="offline")

    outcome = api.invoke("memory:scan", {"path": str(folder.parent)})

    assert outcome["memorized"] == 2, outcome
    (branch,) = api.store.list_branches()
    memory = api.store.read(branch)
    assert memory is not None
    days = {i.title: i.extracted.isoformat() for i in memory.all_items()}
    assert "2026-03-09" in days.values(), days
    (superseded,) = [c for c in memory.contradictions if c.status == "superseded"]
    assert "(2026-03-09," in superseded.description, superseded.description
    assert "(2026-03-02," in superseded.description, superseded.description


def _items(api: Any, branch: str) -> list[MemoryItem]:
    memory = api.store.read(branch)
    assert memory is not None
    return memory.all_items()


def test_a_conversation_date_dates_the_items_and_never_lies_ahead(home: Path) -> None:
    api = build_api(home, engine_override="offline")
    text = "User: from now on every endpoint returns problem+json errors, never plain text"

    api.invoke(
        "memory:memorize",
        {"conversationText": text, "branchId": "a/main", "conversationDate": "2026-03-02"},
    )
    later = (utc_now().date() + timedelta(days=30)).isoformat()
    api.invoke(
        "memory:memorize",
        {
            "conversationText": text.replace("every", "each"),
            "branchId": "b/main",
            "conversationDate": later,
        },
    )
    bad = api.invoke(
        "memory:memorize",
        {"conversationText": text, "branchId": "c/main", "conversationDate": "2026-13-01"},
    )

    dated = _items(api, "a/main")
    assert [i.extracted for i in dated] == [date(2026, 3, 2)]
    ahead = _items(api, "b/main")
    assert [i.extracted for i in ahead] == [utc_now().date()]
    assert bad["code"] == "INVALID_INPUT" and "conversationDate" in bad["message"]
