"""A backlog of short threads of one branch costs one extraction call and one change list
(issue 12: per-branch grouping), and a failed shared call costs no thread its items."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx2
import pytest

from app.container import build_api
from app.core.format import render
from app.core.models import BranchMemory, Category, MemoryItem
from app.core.store import MemoryStore
from app.sources.ledger import Ledger
from tests.fixtures.anthropic.fake_api import (
    MODELS,
    FakeAPI,
    asked_for,
    fast_retries,
    json_reply,
    make_engine,
    user_text,
)

_FENCE = re.compile(r'<conversation id="(\d+)">\n(.*?)\n</conversation>', re.DOTALL)
_TOOL = re.compile(r"\btool(\d+)\b")
BRANCH = "proj/main"


@pytest.fixture(autouse=True)
def _fast(monkeypatch: pytest.MonkeyPatch) -> None:
    fast_retries(monkeypatch)


def _empty_categories() -> dict[str, Any]:
    return {c.value: [] for c in Category}


def _entry(number: int, text: str) -> dict[str, Any]:
    """What a model would record for one conversation: the tool it names, as a preference."""
    found = _TOOL.search(text)
    entry: dict[str, Any] = {
        "conversation": number,
        "no_content_to_extract": found is None,
        **_empty_categories(),
    }
    if found:
        k = found.group(1)
        entry["coding_preferences"] = [
            {
                "title": f"Use tool{k} for thing{k}",
                "content": f"Always use tool{k} for thing{k}; it is faster.",
                "confidence": 0.95,
                "tags": [],
            }
        ]
    return entry


class Model:
    """A stand-in that answers every shape the way a careful model would."""

    def __init__(self, *, skip: set[int] | None = None) -> None:
        self.skip = skip or set()
        self.asked: list[str] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        shape = asked_for(body)
        self.asked.append(shape)
        text = user_text(body)
        if shape == "record_memories_by_conversation":
            entries = [
                _entry(int(n), chunk)
                for n, chunk in _FENCE.findall(text)
                if int(n) not in self.skip
            ]
            return json_reply({"conversations": entries})
        if shape == "record_memories":
            entry = _entry(0, text)
            entry.pop("conversation")
            return json_reply(entry)
        new = text.split("<new_items>", 1)[-1].split("</new_items>", 1)[0]
        keys = [json.loads(line)["key"] for line in new.splitlines() if line.startswith("{")]
        ops = [
            {"op": "add", "new": k, "ids": [], "title": "", "text": "", "reason": ""} for k in keys
        ]
        return json_reply({"ops": ops, "notes": []})


def _conversation(k: int) -> str:
    return (
        f"User: We decided to always use tool{k} for thing{k} because it is faster. Keep it "
        f"as a rule for the project.\nAssistant: Noted: tool{k} for thing{k} from now on.\n"
    )


def test_short_conversations_share_one_call_and_keep_their_own_sources(home: Path) -> None:
    model = Model(skip={2})
    api = FakeAPI([model] * 4)
    engine = make_engine(api, home)
    conversations = [(_conversation(k), f"thread-{k}") for k in (1, 2, 3)]

    results = engine.extract_group(conversations)

    # One shared call for the three, then the one the reply left out, alone.
    assert model.asked == ["record_memories_by_conversation", "record_memories"]
    shared = user_text(api.body(0))
    assert len(_FENCE.findall(shared)) == 3
    for k, result in zip((1, 2, 3), results, strict=True):
        assert not isinstance(result, Exception), result
        assert [i.title for i in result.items] == [f"Use tool{k} for thing{k}"]
        assert result.items[0].sources == [f"thread-{k}"]
    assert "other conversation" in " ".join(results[0].notes)


def test_a_conversation_too_long_to_share_goes_alone(home: Path) -> None:
    model = Model()
    api = FakeAPI([model] * 8)
    engine = make_engine(api, home)
    long = _conversation(7) + "Assistant: " + "filler words here. " * 2_000
    conversations = [(_conversation(1), "a"), (long, "b"), (_conversation(3), "c")]
    config = engine.config.model_copy(update={"chunk_tokens": 4_000})
    engine.config = config
    engine.caller.config = config

    results = engine.extract_group(conversations)

    # The two short ones shared a call; the long one went alone (in parts).
    assert model.asked[0] == "record_memories_by_conversation"
    assert set(model.asked[1:]) == {"record_memories"}
    assert len(_FENCE.findall(user_text(api.body(0)))) == 2
    assert all(not isinstance(r, Exception) and r.items for r in results)


def _project(folder: Path, threads: int) -> None:
    prompts = [
        {
            "id": f"r{k}",
            "parentId": None,
            "content": _conversation(k).split("\n")[0].removeprefix("User: "),
            "timestamp": 1767261600000 + k * 1000,
            "children": [],
            "response": {
                "content": f"Noted: tool{k} for thing{k} from now on.",
                "timestamp": 1767261660000 + k * 1000,
            },
        }
        for k in range(1, threads + 1)
    ]
    (folder / ".puffin").mkdir(parents=True)
    (folder / ".puffin" / "history.json").write_text(
        json.dumps({"branches": {"main": {"id": "main", "name": "Main", "prompts": prompts}}}),
        encoding="utf-8",
    )


def _seed(home: Path) -> None:
    items = {c: [] for c in Category}
    items[Category.CODING_PREFERENCES] = [
        MemoryItem(
            category=Category.CODING_PREFERENCES,
            title="Use tool9 for thing1 reports",
            content="Reports about thing1 go through tool9.",
            confidence=0.9,
            sources=["older"],
        )
    ]
    store = MemoryStore(home)
    store.ensure()
    store.write_text(BRANCH, render(BranchMemory(branch_id=BRANCH, summary="", items=items)))


def _claude_config(home: Path) -> None:
    (home / "config.json").write_text(
        json.dumps(
            {
                "engine": "anthropic",
                "idle_minutes": 0,
                "models": MODELS.model_dump(),
                "sources": {"claude_code": False, "codex": False, "aider": False},
            }
        ),
        encoding="utf-8",
    )


def test_a_scan_memorizes_a_branch_backlog_in_one_extraction_and_one_change_list(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-" + "x" * 40)
    _claude_config(home)
    _seed(home)
    folder = tmp_path / "proj"
    _project(folder, 4)
    model = Model()
    fake = FakeAPI([model] * 10)
    api = build_api(home, http_client=fake.client())

    answer = api.invoke("memory:scan", {"path": str(folder)})

    assert "error" not in answer, answer
    assert answer["memorized"] == 4 and answer["failed"] == 0, answer
    assert model.asked == ["record_memories_by_conversation", "change_list"]
    memory = MemoryStore(home).parse_bytes(BRANCH, MemoryStore(home).read_bytes(BRANCH) or b"")
    sources = {s for i in memory.all_items() for s in i.sources}
    assert {f"r{k}" for k in range(1, 5)} <= {s.rsplit("-", 1)[-1] for s in sources}
    assert answer["itemsAdded"] == 4
    # Every thread is in the ledger: a second scan has nothing to send.
    again = api.invoke("memory:scan", {"path": str(folder)})
    assert again["memorized"] == 0 and len(fake.requests) == 2, again
    assert Ledger.open(home).warning is None


def test_a_failed_shared_call_sends_each_thread_offline_and_counts_once(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-" + "x" * 40)
    _claude_config(home)
    folder = tmp_path / "proj"
    _project(folder, 3)
    broken = json_reply({"conversations": "none"})
    fake = FakeAPI([broken, broken])
    api = build_api(home, http_client=fake.client())

    answer = api.invoke("memory:scan", {"path": str(folder)})

    assert "error" not in answer, answer
    # Two attempts at the shared call (the second asks again after an invalid reply), then
    # the offline engine: every thread memorized, none lost, and the scan says Claude failed.
    assert len(fake.requests) == 2
    assert answer["memorized"] == 3 and answer["failed"] == 0, answer
    assert answer["fallbacks"] == 3
    status = api.invoke("memory:get-status", {})
    assert "times in a row" not in json.dumps(status)  # one failure, not three
