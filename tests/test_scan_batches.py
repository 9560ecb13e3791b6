"""A large backlog goes to the Message Batches API when `use_batches` is on (issue 5)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import httpx2
import pytest

from app.container import build_api
from tests.fixtures.anthropic.fake_api import HERE, FakeAPI, fast_retries, load, reply

FIXTURES = Path(__file__).resolve().parent / "fixtures"
PUFFIN_HISTORY = FIXTURES / "sources" / "puffin" / "history.json"


@pytest.fixture(autouse=True)
def _fast(monkeypatch: pytest.MonkeyPatch) -> None:
    fast_retries(monkeypatch)


def _puffin_project(folder: Path) -> None:
    (folder / ".puffin").mkdir(parents=True)
    shutil.copy(PUFFIN_HISTORY, folder / ".puffin" / "history.json")


def test_scan_sends_the_backlog_as_one_batch(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-" + "x" * 40)
    (home / "config.json").write_text(
        json.dumps(
            {
                "engine": "anthropic",
                "use_batches": True,
                "batch_backlog_threshold": 1,
                "idle_minutes": 0,
                "models": {
                    "extraction": "claude-haiku-4-5",
                    "evolution": "claude-sonnet-4-6",
                    "consolidation": "claude-sonnet-4-6",
                    "retrieval": "claude-haiku-4-5",
                },
            }
        ),
        encoding="utf-8",
    )
    folder = tmp_path / "todo-app"
    _puffin_project(folder)
    dry = build_api(home, engine_override="offline").invoke(
        "memory:scan", {"path": str(folder), "dryRun": True}
    )
    pending = [t for t in dry["threads"] if t["complete"] and not t["processed"]]
    assert len(pending) >= 2
    ended = httpx2.Response(200, json=load("batch_ended.json"))
    results = httpx2.Response(
        200,
        content=(HERE / "batch_results.jsonl").read_bytes(),
        headers={"content-type": "application/binary"},
    )
    # After the batch, each thread's items are integrated by an evolution call.
    fake = FakeAPI([ended, ended, results, *(reply("evolution_reply.json") for _ in range(3))])
    api = build_api(home, http_client=fake.client())
    outcome = api.invoke("memory:scan", {"path": str(folder)})
    assert "error" not in outcome, outcome
    assert outcome["memorized"] >= 1
    assert not any("connect" in e for e in outcome["errors"])
    paths = [r.url.path for r in fake.requests]
    assert paths[0] == "/v1/messages/batches"
    assert len(fake.body(0)["requests"]) >= len(pending)
    # Extraction went out as one batch: no thread was extracted again one by one.
    assert not any(
        r.url.path == "/v1/messages" and "no_content_to_extract" in r.content.decode()
        for r in fake.requests
    )


def test_a_scan_reports_the_semantic_backfill_as_progress(home: Path, tmp_path: Path) -> None:
    from app.core import embeddings

    if not embeddings.available():
        pytest.skip("embedding model not installed")
    from app.core.format import render
    from app.core.models import BranchMemory, Category, MemoryItem

    folder = tmp_path / "todo-app"
    _puffin_project(folder)
    api = build_api(home, engine_override="offline")
    # Items written before semantic search existed get their vectors during the scan.
    older = BranchMemory(branch_id="todo-app/main")
    older.items[Category.PROJECT_CONVENTIONS].append(
        MemoryItem(
            category=Category.PROJECT_CONVENTIONS, title="Package manager", content="Use pnpm."
        )
    )
    api.store.write_text("todo-app/main", render(older))
    seen: list[tuple[int, int, str]] = []
    api.progress = lambda done, total, label: seen.append((done, total, label))
    outcome = api.invoke("memory:scan", {"path": str(folder)})
    assert "error" not in outcome, outcome
    vectors = [s for s in seen if s[2].startswith("Preparing semantic search")]
    assert vectors and vectors[-1][0] == vectors[-1][1]
