"""Improve with Claude: threads only the offline engine read are re-read by the LLM engine,
through change lists, once (issue 12)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import httpx2
import pytest

from app.container import build_api
from app.sources.ledger import Ledger
from tests.fixtures.anthropic.fake_api import FakeAPI, asked_for, fast_retries, reply

FIXTURES = Path(__file__).resolve().parent / "fixtures"
PUFFIN_HISTORY = FIXTURES / "sources" / "puffin" / "history.json"
BRANCH = "todo-app/architecture"
MODELS = {
    "extraction": "claude-haiku-4-5",
    "evolution": "claude-sonnet-4-6",
    "consolidation": "claude-sonnet-4-6",
    "retrieval": "claude-haiku-4-5",
}


@pytest.fixture(autouse=True)
def _fast(monkeypatch: pytest.MonkeyPatch) -> None:
    fast_retries(monkeypatch)


def _answer(request: httpx2.Request) -> httpx2.Response:
    """Extraction gets the recorded reply; a change list adds every new item."""
    body = json.loads(request.content)
    if asked_for(body) == "record_memories":
        return reply("extraction_reply.json")
    text = body["messages"][0]["content"][0]["text"]
    keys = [
        json.loads(line)["key"]
        for line in text.split("<new_items>\n", 1)[1].split("\n</new_items>", 1)[0].splitlines()
    ]
    ops = [{"op": "add", "new": k, "ids": [], "title": "", "text": "", "reason": ""} for k in keys]
    return httpx2.Response(
        200,
        json={
            "id": "msg_x",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": [{"type": "text", "text": json.dumps({"ops": ops, "notes": []})}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 10},
        },
    )


def _scanned_offline(home: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "todo-app"
    (folder / ".puffin").mkdir(parents=True)
    shutil.copy(PUFFIN_HISTORY, folder / ".puffin" / "history.json")
    (home / "config.json").write_text(
        json.dumps({"idle_minutes": 0, "models": MODELS}), encoding="utf-8"
    )
    outcome = build_api(home, engine_override="offline").invoke(
        "memory:scan", {"path": str(folder)}
    )
    assert outcome["memorized"] >= 1, outcome
    return folder


def test_offline_threads_are_re_read_by_claude_once(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _scanned_offline(home, tmp_path)
    ledger = Ledger.open(home)
    offline = [e for e in ledger.entries.values() if e.branch_id == BRANCH]
    assert offline and all(e.engine.startswith("offline") for e in offline)

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-" + "x" * 40)
    fake = FakeAPI([_answer] * 40)
    api = build_api(home, http_client=fake.client(), engine_override="anthropic")
    result = api.invoke("memory:improve", {"branch": BRANCH})

    assert "error" not in result, result
    assert result["improved"] == len(offline) and result["failed"] == 0
    assert result["itemsAdded"] >= 1
    text = api.store.read_text(BRANCH) or ""
    assert "One shared HTTP client" in text  # what Claude found is in the file
    assert all(
        e.engine == "anthropic" for e in Ledger.open(home).entries.values() if e.branch_id == BRANCH
    )
    sent = len(fake.requests)
    again = api.invoke("memory:improve", {"branch": BRANCH})
    assert again["threads"] == 0 and "Nothing to improve" in again["summary"]
    assert len(fake.requests) == sent


def test_improving_needs_an_llm_engine(home: Path, tmp_path: Path) -> None:
    _scanned_offline(home, tmp_path)
    answer = build_api(home, engine_override="offline").invoke("memory:improve", {"branch": BRANCH})
    assert answer["error"] and answer["code"] == "INVALID_INPUT"
    assert "API key" in answer["message"]


def test_a_vanished_transcript_is_named_not_a_traceback(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _scanned_offline(home, tmp_path)
    shutil.rmtree(folder)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-" + "x" * 40)
    api = build_api(home, http_client=FakeAPI([]).client(), engine_override="anthropic")
    result = api.invoke("memory:improve", {"branch": BRANCH})
    assert result["improved"] == 0 and result["failed"] == result["threads"] >= 1
    assert all("does not exist" in e or "no longer" in e for e in result["errors"])


def test_a_copied_transcript_is_not_memorized_twice(home: Path, tmp_path: Path) -> None:
    folder = _scanned_offline(home, tmp_path)
    copy = tmp_path / "copy" / "todo-app"
    shutil.copytree(folder, copy)
    history = json.loads((copy / ".puffin" / "history.json").read_text(encoding="utf-8"))
    # Same conversations under other ids: a re-export, not new knowledge.
    text = json.dumps(history)
    for old in ("r1", "r2", "o1"):
        text = text.replace(f'"{old}"', f'"{old}-copy"')
    (copy / ".puffin" / "history.json").write_text(text, encoding="utf-8")
    outcome = build_api(home, engine_override="offline").invoke("memory:scan", {"path": str(copy)})
    assert outcome["memorized"] == 0, outcome
    assert len(outcome["duplicates"]) >= 1
