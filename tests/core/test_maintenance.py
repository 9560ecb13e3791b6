"""Maintenance: weekly consolidation, monthly validation, start-up check, nothing deleted."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path

from app.container import build_api
from app.core.format import parse, render
from app.core.maintenance import MaintenanceLog
from app.core.models import BranchMemory, Category, MemoryItem, utc_now


def _crowded(branch: str, n: int) -> BranchMemory:
    items = [
        MemoryItem(
            category=Category.IMPLEMENTATION_NOTES,
            title=f"Note {i}",
            content=f"Distinct lesson number {i} about module m{i} and layer l{i}.",
            confidence=0.5 + (i % 40) / 100,
            sources=[f"t{i}"],
        )
        for i in range(n)
    ]
    dup = MemoryItem(
        category=Category.IMPLEMENTATION_NOTES,
        title="Note 0",
        content="Distinct lesson number 0 about module m0 and layer l0.",
        confidence=0.9,
        sources=["t-dup"],
        id="note-dupdupdu",
    )
    return BranchMemory(
        branch_id=branch, summary="s", items={Category.IMPLEMENTATION_NOTES: [*items, dup]}
    )


def test_weekly_merges_duplicates_and_caps_sections(home: Path) -> None:
    (home / "branches").mkdir(parents=True)
    (home / "branches" / "big.md").write_text(render(_crowded("big", 60)), encoding="utf-8")
    api = build_api(home, engine_override="offline")
    reply = api.invoke("memory:run-maintenance", {"type": "weekly"})
    assert reply["success"] is True, reply
    results = reply["results"]
    assert results["branchesConsolidated"] == 1
    assert results["itemsMerged"] >= 1
    assert results["itemsPruned"] >= 1
    after = parse((home / "branches" / "big.md").read_text(encoding="utf-8"), "big")
    assert len(after.items[Category.IMPLEMENTATION_NOTES]) <= 50
    # Pruned items stay recoverable in versions.
    versions = api.store.list_versions("big")
    assert len(versions) == 1
    old = parse(api.store.read_version("big", versions[0].version), "big")
    assert old.item_count() == 61


def test_monthly_reports_invalid_files_and_never_deletes_them(home: Path) -> None:
    (home / "branches").mkdir(parents=True)
    (home / "branches" / "broken.md").write_text("just some notes\n", encoding="utf-8")
    (home / "branches" / "good.md").write_text(render(_crowded("good", 2)), encoding="utf-8")
    api = build_api(home, engine_override="offline")
    reply = api.invoke("memory:run-maintenance", {"type": "monthly"})
    results = reply["results"]
    assert results["filesValid"] == 1
    assert results["filesInvalid"] == 1
    assert results["invalid"][0]["branch"] == "broken"
    assert (home / "branches" / "broken.md").read_text(encoding="utf-8") == "just some notes\n"


def test_check_and_run_runs_what_is_due_and_records_it(home: Path) -> None:
    api = build_api(home, engine_override="offline")
    ran = api.check_maintenance()
    assert set(ran) == {"weekly", "monthly"}
    log = json.loads((home / "maintenance-log.json").read_text(encoding="utf-8"))
    assert "lastWeeklyConsolidation" in log and "lastMonthlyReindex" in log
    assert api.check_maintenance() == {}


def test_due_follows_the_seed_intervals(tmp_path: Path) -> None:
    log = MaintenanceLog(tmp_path / "maintenance-log.json")
    now = utc_now()
    stamp = (now - timedelta(days=8)).strftime("%Y-%m-%dT%H:%M:%SZ")
    recent = (now - timedelta(days=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
    (tmp_path / "maintenance-log.json").write_text(
        json.dumps({"lastWeeklyConsolidation": stamp, "lastMonthlyReindex": recent}),
        encoding="utf-8",
    )
    assert log.due(now) == ["weekly"]


def test_broken_maintenance_log_is_moved_aside(tmp_path: Path) -> None:
    path = tmp_path / "maintenance-log.json"
    path.write_text("{oops", encoding="utf-8")
    log = MaintenanceLog(path)
    assert log.read() == {}
    assert log.warning and "moved to" in log.warning


def test_items_maintenance_takes_out_are_archived_searchable_and_restorable(home: Path) -> None:
    (home / "branches").mkdir(parents=True)
    (home / "branches" / "big.md").write_text(render(_crowded("big", 60)), encoding="utf-8")
    api = build_api(home, engine_override="offline")
    before = parse((home / "branches" / "big.md").read_text(encoding="utf-8"), "big")
    reply = api.invoke("memory:run-maintenance", {"type": "weekly"})
    after = parse((home / "branches" / "big.md").read_text(encoding="utf-8"), "big")
    listed = api.invoke("memory:archive-list", {"branch": "big"})
    archived = {i["id"]: i for i in listed["items"]}
    # Every item that left the file is in the archive, with the reason it left.
    gone = {i.id for i in before.all_items()} - {i.id for i in after.all_items()}
    assert gone and gone == set(archived)
    assert reply["results"]["itemsPruned"] == sum(
        "pruned" in i["reason"] for i in archived.values()
    )
    assert any("merged" in i["reason"] for i in archived.values())
    # The archive is readable Markdown beside the branches.
    text = Path(listed["path"]).read_text(encoding="utf-8")
    assert text.startswith("# Archive: big") and "## Note" in text
    # Searchable with the flag, invisible without it.
    victim = next(i for i in archived.values() if "pruned" in i["reason"])
    query = victim["content"]
    plain = api.invoke("memory:retrieve", {"query": query})
    assert "archived" not in plain
    found = api.invoke("memory:retrieve", {"query": query, "includeArchive": True})
    assert victim["id"] in [hit["id"] for hit in found["archived"]]
    # Restore puts it back in its section and out of the archive.
    done = api.invoke("memory:archive-restore", {"branch": "big", "id": victim["id"]})
    assert done["success"] is True and done["alreadyPresent"] is False
    back = parse((home / "branches" / "big.md").read_text(encoding="utf-8"), "big")
    assert back.find(victim["id"]) is not None
    again = api.invoke("memory:archive-list", {"branch": "big"})
    assert victim["id"] not in {i["id"] for i in again["items"]}
    missing = api.invoke("memory:archive-restore", {"branch": "big", "id": "nope"})
    assert missing["error"] is True and missing["code"] == "NOT_FOUND"


def test_maintenance_that_changes_nothing_saves_no_version(home: Path) -> None:
    (home / "branches").mkdir(parents=True)
    (home / "branches" / "small.md").write_text(render(_crowded("small", 3)), encoding="utf-8")
    api = build_api(home, engine_override="offline")
    api.invoke("memory:run-maintenance", {"type": "weekly"})
    first = len(api.store.list_versions("small"))
    api.invoke("memory:run-maintenance", {"type": "weekly"})
    api.invoke("memory:run-maintenance", {"type": "weekly"})
    assert len(api.store.list_versions("small")) == first


def test_memorizing_the_same_thread_again_changes_nothing(home: Path) -> None:
    api = build_api(home, engine_override="offline")
    conv = (
        "User: We use pnpm, not npm or yarn, in this repo. Always run make lint before "
        "pushing.\n\nAssistant: Noted."
    )
    payload = {"conversationText": conv, "branchId": "p/main", "source": "thread-1"}
    api.invoke("memory:memorize", payload)
    path = next((home / "branches").glob("*.md"))
    # Stamps from an earlier second, so the repeat runs at a later time than the file says
    # (a same-second run would hide a stamp-only write).
    text = re.sub(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "2026-01-02T03:04:05Z", path.read_text(encoding="utf-8")
    )
    path.write_text(text, encoding="utf-8")
    api.invoke("memory:memorize", payload)
    api.invoke("memory:memorize", payload)
    assert api.store.list_versions("p/main") == []
    assert next((home / "branches").glob("*.md")).read_text(encoding="utf-8") == text


def test_weeks_of_maintenance_lose_no_item() -> None:
    # A small run of bench/soak.py (10,000 items there): every item written is still in
    # the file, the archive or a version after weekly maintenance caps the sections.
    import importlib.util
    import sys

    bench = Path(__file__).resolve().parents[2] / "bench" / "soak.py"
    spec = importlib.util.spec_from_file_location("soak", bench)
    assert spec is not None and spec.loader is not None
    soak = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("soak", soak)
    spec.loader.exec_module(soak)
    figures = soak.run(600, 100)
    assert figures["written"] == 600
    assert figures["lost"] == 0
    assert figures["in archive"] > 0


def test_weekly_consolidation_skips_branches_unchanged_since_it_last_ran(home: Path) -> None:
    (home / "branches").mkdir(parents=True)
    (home / "branches" / "small.md").write_text(render(_crowded("small", 3)), encoding="utf-8")
    api = build_api(home, engine_override="offline")
    first = api.invoke("memory:run-maintenance", {"type": "weekly"})
    again = api.invoke("memory:run-maintenance", {"type": "weekly"})
    assert again["results"]["branchesUnchanged"] == 1, (first, again)
    # A change to the file makes it due again.
    path = home / "branches" / "small.md"
    path.write_text(
        path.read_text(encoding="utf-8").replace("Summary", "Summary", 1) + "\n", encoding="utf-8"
    )
    third = api.invoke("memory:run-maintenance", {"type": "weekly"})
    assert third["results"]["branchesUnchanged"] == 0


def test_a_thread_is_recorded_without_rewriting_the_log(tmp_path: Path) -> None:
    path = tmp_path / "maintenance-log.json"
    log = MaintenanceLog(path)
    log.consolidated({"a": "1" * 64, "b": "2" * 64})
    before = path.stat().st_mtime_ns, path.read_bytes()
    log.thread_processed("a")
    log.thread_processed("b")
    assert (path.stat().st_mtime_ns, path.read_bytes()) == before
    entry = log.read()["lastThreadProcessed"]
    assert entry["branchId"] == "b"
    assert log.last_memorized() == entry["timestamp"]
    assert log.consolidated_digest("a") == "1" * 64
    log.ran("weekly")  # a rewrite of the log keeps the latest thread
    assert MaintenanceLog(path).read()["lastThreadProcessed"]["branchId"] == "b"
