"""Import never drops what the other machine had: edits and near-duplicates are kept."""

from __future__ import annotations

import json
from pathlib import Path

from app.container import build_api
from app.core.format import parse, render
from app.core.models import BranchMemory, Category, MemoryItem

CONV = Category.PROJECT_CONVENTIONS


def _branch(*items: MemoryItem) -> BranchMemory:
    memory = BranchMemory(branch_id="web/main")
    for item in items:
        memory.items[item.category].append(item)
    return memory


def _import(home: Path, memory: BranchMemory) -> dict:
    api = build_api(home, engine_override="offline")
    bundle = json.dumps(
        {
            "format": "puffin-memory-export",
            "version": 1,
            "branches": [{"branch": "web/main", "content": render(memory)}],
        }
    )
    return api.invoke("memory:import", {"content": bundle})


def _seed(home: Path, *items: MemoryItem) -> None:
    (home / "branches").mkdir(parents=True, exist_ok=True)
    build_api(home, engine_override="offline").store.write_text("web/main", render(_branch(*items)))


def _now(home: Path) -> BranchMemory:
    api = build_api(home, engine_override="offline")
    return parse(api.store.read_text("web/main") or "", "web/main")


def test_an_item_edited_on_the_other_machine_is_kept_as_a_conflict(home: Path) -> None:
    local = MemoryItem(
        id="conv-11111111",
        category=CONV,
        title="Node version",
        content="Use Node 18 for every service.",
        sources=["t1"],
    )
    _seed(home, local)
    edited = local.model_copy(update={"content": "Use Node 20 for every service."})
    reply = _import(home, _branch(edited))
    assert reply.get("error") is not True, reply
    after = _now(home)
    assert after.find("conv-11111111").content == "Use Node 18 for every service."
    held = [i.content for c in after.contradictions if c.status == "open" for i in c.items]
    assert "Use Node 20 for every service." in held
    # Importing the same bundle again adds nothing more.
    _import(home, _branch(edited))
    assert len(_now(home).contradictions) == len(after.contradictions)


def test_a_near_duplicate_that_differs_in_a_detail_is_not_discarded(home: Path) -> None:
    _seed(
        home,
        MemoryItem(
            category=CONV,
            title="Retries",
            content="HTTP clients retry 3 times with exponential backoff.",
        ),
    )
    other = MemoryItem(
        category=CONV,
        title="Retries",
        content="HTTP clients retry 5 times with exponential backoff.",
    )
    _import(home, _branch(other))
    text = render(_now(home))
    assert "retry 3 times" in text and "retry 5 times" in text


def test_the_same_item_only_gains_sources(home: Path) -> None:
    local = MemoryItem(
        id="conv-22222222",
        category=CONV,
        title="Package manager",
        content="Use pnpm, never npm.",
        sources=["t1"],
    )
    _seed(home, local)
    _import(home, _branch(local.model_copy(update={"sources": ["t9"]})))
    after = _now(home)
    assert after.find("conv-22222222").sources == ["t1", "t9"]
    assert not after.contradictions


def test_secrets_in_an_import_are_redacted_even_json_escaped(home: Path) -> None:
    memory = _branch(
        MemoryItem(
            category=CONV,
            title="Staging database",
            content='Staging DSN is "postgres://app:Sup3rS3cretPw@db:5432/app".',
        )
    )
    _import(home, memory)
    text = render(_now(home))
    assert "Sup3rS3cretPw" not in text


def test_a_late_index_update_never_hides_another_writers_items(home: Path) -> None:
    # App and CLI memorize the same branch: the app's index update comes after the CLI's
    # write. The index must follow the file, not the app's older copy.
    api = build_api(home, engine_override="offline")
    mine = _branch(MemoryItem(category=CONV, title="Mine", content="Use pnpm."))
    mine_text = render(mine)
    api.store.write_text("web/main", mine_text)
    other = build_api(home, engine_override="offline")
    theirs = _branch(
        MemoryItem(category=CONV, title="Mine", content="Use pnpm."),
        MemoryItem(category=CONV, title="Theirs", content="Lint before push."),
    )
    other.store.write_text("web/main", render(theirs))
    api.writer.refresh_index("web/main", mine, mine_text)
    titles = {hit.title for hit in api.index.items() if hit.branch == "web/main"}
    assert titles == {"Mine", "Theirs"}
