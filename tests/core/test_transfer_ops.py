"""Export, import, context, health, repair and conflict resolution, as documented in
docs/api.md (issue 16: every documented behaviour of the power-user operations tested)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.container import build_api
from app.core.api import MemoryApi
from app.core.format import parse, render
from app.core.models import BranchMemory, Category, Contradiction, MemoryItem

PREF = Category.CODING_PREFERENCES
CONV = Category.PROJECT_CONVENTIONS


def _item(
    item_id: str, title: str, content: str, category: Category = PREF, **extra: Any
) -> MemoryItem:
    return MemoryItem(
        id=item_id, category=category, title=title, content=content, sources=["t1"], **extra
    )


def _home_with(home: Path, *memories: BranchMemory) -> MemoryApi:
    api = build_api(home, engine_override="offline")
    for memory in memories:
        api.store.write_text(memory.branch_id, render(memory))
    return api


def _call(api: MemoryApi, channel: str, payload: dict[str, Any] | None = None) -> Any:
    return api.invoke(channel, payload or {})


def _web() -> BranchMemory:
    memory = BranchMemory(branch_id="web/main", summary="The web app.")
    memory.items[PREF] = [_item("pref-pnpm", "Use pnpm", "Use pnpm for every package.")]
    memory.items[CONV] = [_item("conv-lint", "Lint first", "Run make lint before pushing.", CONV)]
    return memory


def _api_branch() -> BranchMemory:
    memory = BranchMemory(branch_id="api/main", summary="The API.")
    memory.items[PREF] = [_item("pref-ruff", "Lint with ruff", "Lint Python with ruff.")]
    return memory


@pytest.mark.parametrize("fmt", ["json", "md"])
def test_an_export_imports_into_a_fresh_home_unchanged(
    home: Path, tmp_path: Path, fmt: str
) -> None:
    source = _home_with(home, _web(), _api_branch())
    exported = _call(source, "memory:export", {"format": fmt})
    assert exported["format"] == fmt and exported["branches"] == 2

    target = build_api(tmp_path / "other", engine_override="offline")
    imported = _call(target, "memory:import", {"content": exported["content"]})

    assert imported["added"] == 3, imported
    for branch in ("web/main", "api/main"):
        before = {i.id for i in source.store.read(branch).all_items()}  # type: ignore[union-attr]
        after = {i.id for i in target.store.read(branch).all_items()}  # type: ignore[union-attr]
        assert before == after


def test_importing_the_same_export_twice_changes_nothing(home: Path) -> None:
    api = _home_with(home, _web())
    content = _call(api, "memory:export")["content"]
    text = api.store.read_text("web/main")
    again = _call(api, "memory:import", {"content": content})
    assert again["added"] == 0
    assert api.store.read_text("web/main") == text


def test_a_single_branch_file_imports_under_the_branch_given(home: Path) -> None:
    api = build_api(home, engine_override="offline")
    answer = _call(api, "memory:import", {"content": render(_web()), "branch": "copy/main"})
    assert answer["added"] == 2
    assert api.store.read("copy/main") is not None


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ('{"branches": ', "not valid JSON"),
        ('{"hello": 1}', "not a puffin-memory export"),
        ('{"branches": [{"branch": "a/b"}]}', "has no content"),
        ("just some words", "Nothing to import"),
        ('{"branches": [{"branch": "../../etc", "content": "# x"}]}', ""),
    ],
)
def test_a_bad_import_is_a_clear_error_and_writes_nothing(
    home: Path, content: str, why: str
) -> None:
    api = _home_with(home, _web())
    before = api.store.read_text("web/main")
    answer = _call(api, "memory:import", {"content": content})
    assert answer["error"] and answer["code"] == "INVALID_INPUT", answer
    assert why in answer["message"]
    assert api.store.read_text("web/main") == before
    assert api.store.list_branches() == ["web/main"]


def test_an_unknown_export_format_is_refused(home: Path) -> None:
    answer = _call(_home_with(home, _web()), "memory:export", {"format": "xml"})
    assert answer["error"] and answer["code"] == "INVALID_INPUT"


def test_context_is_a_digest_of_every_branch_or_of_a_topic(home: Path) -> None:
    api = _home_with(home, _web(), _api_branch())
    whole = _call(api, "memory:context")["markdown"]
    assert "## web/main" in whole and "## api/main" in whole and "Use pnpm" in whole
    topic = _call(api, "memory:context", {"topic": "pnpm packages"})["markdown"]
    assert "Use pnpm" in topic and "web/main" in topic
    nothing = _call(api, "memory:context", {"topic": "kubernetes helm charts"})["markdown"]
    assert "No memories match" in nothing
    empty = _call(build_api(home / "empty", engine_override="offline"), "memory:context")
    assert "No memories yet" in empty["markdown"]


def test_health_reports_invalid_files_and_the_index(home: Path) -> None:
    api = _home_with(home, _web())
    assert _call(api, "memory:health")["healthy"] is True
    (home / "branches" / "broken.md").write_text("no header, no sections\n", encoding="utf-8")
    report = _call(api, "memory:health", {"index": True})
    assert report["healthy"] is False and report["branches"] == 2
    assert report["invalid"][0]["branch"] == "broken" and report["invalid"][0]["problems"]
    assert "index" in report


def test_repair_fixes_what_parses_keeps_a_version_and_reports_the_rest(home: Path) -> None:
    api = _home_with(home, _web())
    fixable = render(_api_branch()).replace("## Summary\n\nThe API.\n\n", "")
    (home / "branches" / "api+main.md").unlink(missing_ok=True)
    api.store.write_text("api/main", fixable)
    assert _call(api, "memory:health")["healthy"] is False
    (home / "branches" / "junk.md").write_text("nothing useful here\n", encoding="utf-8")
    tmp = home / "branches" / ".web+main.md.abc123.tmp"
    tmp.write_text("half a write", encoding="utf-8")
    import os

    os.utime(tmp, (1, 1))  # an old crash leftover

    report = _call(api, "memory:repair")

    assert [f["branch"] for f in report["fixed"]] == ["api/main"]
    assert [f["branch"] for f in report["unfixable"]] == ["junk"]
    assert report["tempFilesRemoved"] == 1 and not tmp.exists()
    repaired = api.store.read_text("api/main") or ""
    assert "## Summary" in repaired and "pref-ruff" in repaired
    assert api.store.list_versions("api/main")  # the text before the repair is kept


def _conflicted() -> BranchMemory:
    memory = _web()
    older = _item(
        "pref-npm",
        "Use npm",
        "Use npm for every package.",
        extracted=__import__("datetime").date(2025, 1, 1),
    )
    memory.contradictions = [
        Contradiction(
            id="conflict-1",
            title="Package manager",
            description="npm or pnpm?",
            status="open",
            refs=["pref-pnpm"],
            items=[older],
        )
    ]
    return memory


@pytest.mark.parametrize("action", ["keep-both", "keep-newer", "mark-outdated"])
def test_a_conflict_is_resolved_the_way_the_person_chose_and_loses_nothing(
    home: Path, action: str
) -> None:
    api = _home_with(home, _conflicted())
    answer = _call(
        api, "memory:resolve-conflict", {"id": "conflict-1", "action": action, "branch": "web/main"}
    )
    assert answer.get("success"), answer
    memory = parse(api.store.read_text("web/main") or "")
    entry = next(c for c in memory.contradictions if c.id == "conflict-1")
    assert entry.status == "resolved" and "Resolved by the user on" in entry.description
    everywhere = {i.id for i in memory.all_items()} | {i.id for i in entry.items}
    assert {"pref-npm", "pref-pnpm"} <= everywhere
    if action == "keep-both":
        assert memory.find("pref-npm") is not None and memory.find("pref-pnpm") is not None
    else:
        assert memory.find("pref-npm") is None and memory.find("pref-pnpm") is not None
    if action == "mark-outdated":
        assert "outdated" in entry.items[0].tags
    # The parse cache was not changed behind the store's back: the old version reads open.
    versions = api.store.list_versions("web/main")
    old = parse(api.store.read_version("web/main", versions[0].version))
    assert next(c for c in old.contradictions if c.id == "conflict-1").status == "open"


def test_resolving_an_unknown_conflict_is_not_found(home: Path) -> None:
    api = _home_with(home, _web())
    answer = _call(
        api, "memory:resolve-conflict", {"id": "nope", "action": "keep-both", "branch": "web/main"}
    )
    assert answer["error"] and answer["code"] == "NOT_FOUND"


def test_a_cross_branch_conflict_marks_the_older_item_in_its_own_file(home: Path) -> None:
    older = _web()
    newer = _api_branch()
    newer.items[PREF].append(_item("pref-yarn", "Use yarn", "Use yarn for every package."))
    api = _home_with(home, older, newer)
    answer = _call(
        api,
        "memory:resolve-conflict",
        {"id": "x", "action": "mark-outdated", "itemIds": ["pref-pnpm", "pref-yarn"]},
    )
    assert answer.get("success"), answer
    changed = [parse(api.store.read_text(b) or "") for b in ("web/main", "api/main")]
    held = [i for m in changed for c in m.contradictions for i in c.items]
    assert any("outdated" in i.tags for i in held)
    assert json.dumps(answer)
