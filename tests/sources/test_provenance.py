"""Where an item came from (issue 15): agent, conversation date, transcript, excerpt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.container import build_api
from app.core.api import MemoryApi

RULES = (
    "We always run make lint before pushing; never push a red build. All services log "
    "JSON lines through structlog, never print()."
)


def _puffin_project(folder: Path, *, secret: str = "") -> Path:
    (folder / ".puffin").mkdir(parents=True)
    prompts = [
        {
            "id": "p1",
            "parentId": None,
            "content": f"{RULES} {secret}".strip(),
            "timestamp": 1767261600000,
            "children": [],
            "response": {"content": "Noted, I will follow that.", "timestamp": 1767261630000},
        }
    ]
    history = {
        "branches": {"main": {"id": "main", "name": "Main", "prompts": prompts}},
        "activeBranch": "main",
    }
    (folder / ".puffin" / "history.json").write_text(json.dumps(history), encoding="utf-8")
    return folder


def _call(api: MemoryApi, channel: str, payload: dict[str, Any]) -> Any:
    return api.invoke(channel, payload)


def _scanned(home: Path, folder: Path) -> tuple[MemoryApi, list[dict[str, Any]]]:
    (home / "config.json").write_text('{"idle_minutes": 0}', encoding="utf-8")
    api = build_api(home, engine_override="offline")
    assert _call(api, "memory:scan", {"path": str(folder)})["memorized"] == 1
    items = _call(api, "memory:list-items", {})["items"]
    assert items
    return api, items


def test_an_item_names_its_agent_date_transcript_and_excerpt(home: Path, tmp_path: Path) -> None:
    folder = _puffin_project(tmp_path / "shop")
    api, items = _scanned(home, folder)
    logging_item = next(i for i in items if "structlog" in i["content"])

    answer = _call(api, "memory:provenance", {"id": logging_item["id"]})

    assert answer["branch"] == "shop/main"
    [source] = answer["sources"]
    assert source["agent"] == "Puffin" and source["date"] == "2026-01-01"
    assert source["exists"] and Path(source["path"]) == folder / ".puffin" / "history.json"
    assert "structlog" in source["excerpt"] and "Noted" in source["excerpt"]


def test_a_moved_transcript_is_said_so(home: Path, tmp_path: Path) -> None:
    folder = _puffin_project(tmp_path / "shop")
    api, items = _scanned(home, folder)
    (folder / ".puffin" / "history.json").unlink()
    answer = _call(api, "memory:provenance", {"id": items[0]["id"]})
    [source] = answer["sources"]
    assert not source["exists"] and "no longer where it was read" in source["note"]


def test_excerpts_are_redacted(home: Path, tmp_path: Path) -> None:
    secret = "ghp_ovm4gfnvE0rGRV3XM4Z4U2htVAZDVxGm5frK"
    folder = _puffin_project(tmp_path / "shop", secret=f"My token is {secret}.")
    api, items = _scanned(home, folder)
    answer = _call(api, "memory:provenance", {"id": items[0]["id"]})
    assert secret not in json.dumps(answer)


def test_a_hand_written_item_and_an_unknown_id(home: Path) -> None:
    api = build_api(home, engine_override="offline")
    made = _call(
        api, "memory:remember", {"branch": "p/main", "text": "Releases are cut on Tuesdays."}
    )
    answer = _call(api, "memory:provenance", {"id": made["id"]})
    assert answer["sources"][0]["agent"] == "You (written by hand)"
    missing = _call(api, "memory:provenance", {"id": "pref-nope"})
    assert missing["error"] and missing["code"] == "NOT_FOUND"
