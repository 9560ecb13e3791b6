"""The review queue: medium-confidence items wait, and repetitions across threads add up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.container import build_api
from app.core.api import MemoryApi
from app.core.models import Category, ExtractionResult, MemoryItem
from app.core.review import ReviewQueue


def _remark(source: str, confidence: float = 0.6) -> MemoryItem:
    return MemoryItem(
        category=Category.ARCHITECTURAL_DECISIONS,
        title="SAM pattern",
        content="The architecture follows the SAM pattern for state.",
        confidence=confidence,
        sources=[source],
    )


def test_the_same_thread_twice_is_no_new_evidence(tmp_path: Path) -> None:
    queue = ReviewQueue(tmp_path / "review-queue.json")
    assert queue.offer("b", [_remark("t1")], threshold=0.8, promote_at=0.75) == (1, [])
    assert queue.offer("b", [_remark("t1")], threshold=0.8, promote_at=0.75) == (0, [])
    assert [e.item.confidence for e in queue.entries()] == [0.6]


def test_the_same_thread_again_neither_rewrites_the_queue_nor_reads_excerpts(
    tmp_path: Path,
) -> None:
    path = tmp_path / "review-queue.json"
    queue = ReviewQueue(path)
    asked: list[str] = []

    def lines_of(item: MemoryItem) -> str:
        asked.append(item.id)
        return "User: we follow the SAM pattern"

    queue.offer("b", [_remark("t1")], threshold=0.8, promote_at=0.75, excerpts=lines_of)
    assert [e.excerpt for e in queue.entries()] == ["User: we follow the SAM pattern"]
    written = path.read_bytes()
    path.write_bytes(written + b" ")  # a rewrite would show: the trailing space would go
    assert queue.offer("b", [_remark("t1")], threshold=0.8, promote_at=0.75, excerpts=lines_of) == (
        0,
        [],
    )
    assert path.read_bytes() == written + b" "
    assert len(asked) == 1


def test_a_remark_repeated_in_three_threads_is_promoted(tmp_path: Path) -> None:
    queue = ReviewQueue(tmp_path / "review-queue.json")
    queue.offer("b", [_remark("t1")], threshold=0.8, promote_at=0.75)
    queued, promoted = queue.offer("b", [_remark("t2")], threshold=0.8, promote_at=0.75)
    assert (queued, promoted) == (0, [])
    assert queue.entries()[0].item.confidence == 0.7
    queued, promoted = queue.offer("b", [_remark("t3")], threshold=0.8, promote_at=0.75)
    assert queued == 0
    assert [i.sources for i in promoted] == [["t1", "t2", "t3"]]
    assert promoted[0].confidence >= 0.75
    assert queue.entries() == []


def test_other_branches_do_not_reinforce_each_other(tmp_path: Path) -> None:
    queue = ReviewQueue(tmp_path / "review-queue.json")
    queue.offer("a", [_remark("t1")], threshold=0.8, promote_at=0.75)
    assert queue.offer("b", [_remark("t2")], threshold=0.8, promote_at=0.75) == (1, [])


def test_memorize_commits_a_promoted_item(home: Path) -> None:
    api = build_api(home, engine_override="offline")
    api.review.offer("demo", [_remark("t1")], threshold=0.8, promote_at=0.75)
    api.review.offer("demo", [_remark("t2")], threshold=0.8, promote_at=0.75)
    reply = api.writer.apply_extraction(ExtractionResult(items=[_remark("t3")]), "demo")
    assert (reply["itemsExtracted"], reply["promotedFromReview"]) == (1, 1)
    text = (home / "branches" / "demo.md").read_text(encoding="utf-8")
    assert "SAM pattern" in text and "t1, t2, t3" in text


def test_a_damaged_queue_is_set_aside_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "review-queue.json"
    path.write_text("[{broken", encoding="utf-8")
    queue = ReviewQueue(path)
    assert queue.entries() == []
    assert queue.warning and "moved to" in queue.warning
    assert list(tmp_path.glob("review-queue.json.broken-*"))


def _queued(api: object, n: int, branch: str = "web/main") -> list[str]:
    items = [
        MemoryItem(
            category=Category.PROJECT_CONVENTIONS,
            title=f"Rule {k}",
            content=f"Distinct rule number {k} about module m{k}.",
            confidence=0.6,
            sources=[f"t{k}"],
        )
        for k in range(n)
    ]
    api.review.offer(branch, items, threshold=0.8, promote_at=0.99)  # type: ignore[attr-defined]
    return [e.item.id for e in api.review.entries()]  # type: ignore[attr-defined]


def test_bulk_approve_writes_every_item_and_empties_the_queue(home: Path) -> None:
    api = build_api(home, engine_override="offline")
    ids = _queued(api, 30)
    reply = api.invoke("memory:review-bulk", {"action": "approve", "ids": [*ids, "nope"]})
    assert reply["success"] is True and len(reply["done"]) == 30
    assert reply["missing"] == ["nope"]
    assert api.review.entries() == []
    text = api.store.read_text("web/main") or ""
    assert all(f"Rule {k}" in text for k in range(30))


def test_bulk_reject_then_requeue_restores_the_queue(home: Path) -> None:
    api = build_api(home, engine_override="offline")
    ids = _queued(api, 5)
    reply = api.invoke("memory:review-bulk", {"action": "reject", "ids": ids})
    assert len(reply["done"]) == 5 and api.review.entries() == []
    assert api.store.read_text("web/main") is None  # rejected: nothing written
    entries = [d["entry"] for d in reply["done"]]
    back = api.invoke("memory:review-requeue", {"entries": entries})
    assert sorted(back["requeued"]) == sorted(ids)
    again = api.invoke("memory:review-requeue", {"entries": entries})
    assert again["requeued"] == [] and sorted(again["alreadyQueued"]) == sorted(ids)


def test_a_failed_bulk_write_puts_the_items_back(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.core.errors import StorageError

    api = build_api(home, engine_override="offline")
    ids = _queued(api, 3)

    def broken(*_args: object, **_kwargs: object) -> object:
        raise StorageError("disk full")

    monkeypatch.setattr(api.writer, "integrate", broken)
    reply = api.invoke("memory:review-bulk", {"action": "approve", "ids": ids})
    assert reply["success"] is False and len(reply["failed"]) == 3
    assert sorted(e.item.id for e in api.review.entries()) == sorted(ids)


# -- a later thread settles what it replaced ---------------------------------------------


def _held_choice(source: str = "t1") -> MemoryItem:
    return MemoryItem(
        category=Category.ARCHITECTURAL_DECISIONS,
        title="Winston for logging",
        content="Logging goes through winston in every service, json format.",
        confidence=0.6,
        sources=[source],
    )


def _replacement(source: str = "t2") -> MemoryItem:
    return MemoryItem(
        category=Category.ARCHITECTURAL_DECISIONS,
        title="Pino for logging",
        content="We dropped winston, logging goes through pino from now on.",
        confidence=0.85,
        sources=[source],
        tags=["replaces:winston"],
    )


def test_a_candidate_a_later_thread_replaces_leaves_the_queue_as_superseded(home: Path) -> None:
    api = build_api(home, engine_override="offline")
    api.writer.apply_extraction(ExtractionResult(items=[_held_choice()]), "web/main")
    assert [e.item.title for e in api.review.entries()] == ["Winston for logging"]

    reply = api.writer.apply_extraction(ExtractionResult(items=[_replacement()]), "web/main")

    assert reply["settledFromReview"] == 1 and reply["stats"]["settled"] == 1
    assert api.review.entries() == []
    memory = api.store.read("web/main")
    assert [i.title for i in memory.all_items()] == ["Pino for logging"]
    [entry] = memory.contradictions
    assert entry.status == "superseded" and entry.items[0].title == "Winston for logging"
    assert entry.refs == [memory.all_items()[0].id]


def test_a_later_thread_settles_only_its_own_branch(home: Path) -> None:
    api = build_api(home, engine_override="offline")
    api.writer.apply_extraction(ExtractionResult(items=[_held_choice()]), "api/main")
    reply = api.writer.apply_extraction(ExtractionResult(items=[_replacement()]), "web/main")
    assert "settledFromReview" not in reply
    assert [e.branch for e in api.review.entries()] == ["api/main"]


def test_a_candidate_nothing_replaces_keeps_waiting(home: Path) -> None:
    api = build_api(home, engine_override="offline")
    api.writer.apply_extraction(ExtractionResult(items=[_held_choice()]), "web/main")
    other = _replacement().model_copy(
        update={"title": "Vitest", "content": "Tests run on vitest.", "tags": []}
    )
    reply = api.writer.apply_extraction(ExtractionResult(items=[other]), "web/main")
    assert "settledFromReview" not in reply
    assert len(api.review.entries()) == 1
    assert api.store.read("web/main").contradictions == []


def test_a_failed_write_leaves_the_candidate_queued(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = build_api(home, engine_override="offline")
    api.writer.apply_extraction(ExtractionResult(items=[_held_choice()]), "web/main")
    monkeypatch.setattr(api.store, "write_if_unchanged", lambda *a, **k: False)
    with pytest.raises(Exception, match="kept changing"):
        api.writer.apply_extraction(ExtractionResult(items=[_replacement()]), "web/main")
    assert [e.item.title for e in api.review.entries()] == ["Winston for logging"]


# -- a held change of a choice the branch holds is committed ------------------------------


def _said(text: str) -> str:
    return f"User: {text}\n\nAssistant: OK.\n"


def _memorize(api: MemoryApi, text: str, source: str) -> dict[str, Any]:
    return api.invoke(
        "memory:memorize", {"conversationText": text, "branchId": "web/main", "source": source}
    )


def test_a_held_change_of_a_choice_in_force_is_committed(home: Path) -> None:
    api = build_api(home, engine_override="offline")
    _memorize(api, _said("For the message broker we use RabbitMQ, it has been solid for us."), "t1")

    # Alone, "switch X from A to B" may be a task for the session: the engine holds it.
    reply = _memorize(api, _said("Switch the message broker from RabbitMQ to NATS."), "t2")

    assert reply["itemsExtracted"] == 1 and reply["queuedForReview"] == 0
    assert any("NATS instead of RabbitMQ" in n for n in reply["notes"])
    memory = api.store.read("web/main")
    assert [i.content for i in memory.all_items()] == [
        "Switch the message broker from RabbitMQ to NATS."
    ]
    [entry] = memory.contradictions
    assert entry.status == "superseded" and "RabbitMQ" in entry.items[0].content
    assert api.review.entries() == []


def test_a_held_change_of_nothing_in_force_waits_for_review(home: Path) -> None:
    api = build_api(home, engine_override="offline")
    reply = _memorize(api, _said("Switch the login page from tabs to a stepper."), "t1")
    assert reply["itemsExtracted"] == 0 and reply["queuedForReview"] == 1
    assert api.store.read("web/main") is None
    [entry] = api.review.entries()
    assert entry.reason.startswith("Reads as a change away from tabs, which this branch")
    # the name as the statement wrote it
    reply = _memorize(api, _said("Switch the message broker from RabbitMQ to NATS."), "t2")
    assert any("change away from RabbitMQ," in e.reason for e in api.review.entries())


@pytest.mark.parametrize(
    "change",
    [
        "Let's move logging to structlog since loguru keeps eating our context vars.",
        "Going to swap loguru out for structlog in the services.",
        "Heads up: the services now log through structlog, not loguru.",
        "The services should log through structlog now, not loguru.",
        "Change the service logging from loguru to structlog.",
    ],
)
def test_a_change_said_as_a_task_changes_the_choice_in_force(home: Path, change: str) -> None:
    api = build_api(home, engine_override="offline")
    _memorize(api, _said("Logging goes through loguru in every service."), "t1")
    reply = _memorize(api, _said(change), "t2")
    assert reply["itemsExtracted"] == 1
    memory = api.store.read("web/main")
    [active] = memory.all_items()
    assert active.title == "Structlog instead of loguru"
    assert "loguru in every service" in memory.contradictions[0].items[0].content


def test_a_held_change_of_a_choice_the_same_conversation_made_is_committed(home: Path) -> None:
    api = build_api(home, engine_override="offline")
    text = (
        "User: For the message broker we use RabbitMQ, it has been solid for us.\n\n"
        "Assistant: Noted.\n\n"
        "User: Let's move the message broker to NATS since RabbitMQ keeps dropping messages.\n\n"
        "Assistant: OK.\n"
    )
    reply = _memorize(api, text, "t1")
    assert reply["queuedForReview"] == 0
    memory = api.store.read("web/main")
    assert [i.title for i in memory.all_items()] == ["NATS instead of RabbitMQ"]
    assert "solid for us" in memory.contradictions[0].items[0].content
