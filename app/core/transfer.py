"""Export, import (seed 000's smart merge), context digests, health and repair.

These are the power-user operations of seed 002's memory CLI, done on our files: an export is
every branch file in one JSON or Markdown bundle; an import merges a bundle into the current
memories without ever dropping what is there (user items always kept, near-duplicates
skipped, a version kept before any change); `repair` fixes what can be fixed and reports the
rest.
"""

from __future__ import annotations

import json
import re
from typing import Any

from app.core.errors import InvalidInput
from app.core.format import parse, render, validate
from app.core.index import MemoryIndex
from app.core.models import BranchMemory, Category, Contradiction, MemoryItem, utc_now
from app.core.paths import project_of, validate_branch_id
from app.core.similarity import item_similarity
from app.core.store import MemoryStore

EXPORT_VERSION = 1
_MD_MARKER = re.compile(r"^<!-- puffin-memory branch: (.+?) -->\s*$", re.MULTILINE)


def effective_tags(branch: str, item: MemoryItem) -> set[str]:
    """Free tags plus the structural ones every item carries implicitly."""
    tags = set(item.tags)
    tags.add(f"category:{item.category.value}")
    tags.add(f"branch:{branch}")
    project = project_of(branch)
    if project:
        tags.add(f"project:{project}")
    tags.add("source:user" if item.pinned else "source:agent")
    return tags


def export_bundle(store: MemoryStore, fmt: str) -> str:
    """Every branch file as one JSON document or one Markdown bundle."""
    branches = store.list_branches()
    if fmt == "md":
        parts = []
        for branch in branches:
            text = store.read_text(branch) or ""
            parts.append(f"<!-- puffin-memory branch: {branch} -->\n{text.rstrip()}\n")
        return "\n".join(parts)
    if fmt != "json":
        raise InvalidInput(f"Unknown export format {fmt!r}: use json or md.")
    payload = {
        "format": "puffin-memory-export",
        "version": EXPORT_VERSION,
        "exported": utc_now().strftime("%Y-%m-%dT%H:%M:%SZ"),
        "branches": [{"branch": b, "content": store.read_text(b) or ""} for b in branches],
    }
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def read_bundle(text: str, default_branch: str | None = None) -> list[tuple[str, BranchMemory]]:
    """Branch memories from an export (JSON or Markdown bundle) or a single branch file."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"The import file is not valid JSON: {exc}") from exc
        if not isinstance(data, dict) or not isinstance(data.get("branches"), list):
            raise InvalidInput("The import file is not a puffin-memory export.")
        out = []
        for entry in data["branches"]:
            if not isinstance(entry, dict) or not isinstance(entry.get("content"), str):
                raise InvalidInput("An entry of the export has no content.")
            branch = validate_branch_id(entry.get("branch"))
            out.append((branch, parse(entry["content"], branch)))
        return out
    marks = list(_MD_MARKER.finditer(text))
    if marks:
        out = []
        for n, mark in enumerate(marks):
            end = marks[n + 1].start() if n + 1 < len(marks) else len(text)
            branch = validate_branch_id(mark.group(1))
            out.append((branch, parse(text[mark.end() : end], branch)))
        return out
    memory = parse(text, default_branch)
    branch = default_branch or memory.branch_id
    if not branch or branch == "unknown" or not memory.item_count():
        raise InvalidInput("Nothing to import: give an export file or a branch memory file.")
    return [(validate_branch_id(branch), memory)]


def _same_text(a: MemoryItem, b: MemoryItem) -> bool:
    def norm(item: MemoryItem) -> str:
        return " ".join(f"{item.title} {item.content}".casefold().split())

    return norm(a) == norm(b)


def _with_sources(local: MemoryItem, incoming: MemoryItem) -> MemoryItem:
    """The local item, also crediting the imported copy's sources and tags."""
    sources = list(dict.fromkeys([*local.sources, *incoming.sources]))
    tags = list(dict.fromkeys([*local.tags, *incoming.tags]))
    if sources == local.sources and tags == local.tags:
        return local
    return local.model_copy(update={"sources": sources, "tags": tags})


def _kept_apart(local: MemoryItem, incoming: MemoryItem, why: str) -> Contradiction:
    """An open conflict holding the incoming copy whole, so a person can choose."""
    return Contradiction(
        title=f"Imported version of {local.title!r} differs",
        description=f'{why}: here "{local.content}"; imported "{incoming.content}". '
        "Both kept until you choose.",
        status="open",
        refs=[local.id],
        items=[incoming],
    )


def merge_import(
    current: BranchMemory | None, incoming: BranchMemory, threshold: float
) -> tuple[BranchMemory | None, dict[str, int]]:
    """Seed 000's smart merge, losing nothing the other machine had.

    New items are added. An item already here with the same text (same id, or a near
    duplicate) only reinforces it: sources and tags merged. The same id with other text (the
    item was edited on the other machine), or a near duplicate that differs in a detail,
    becomes an open conflict that holds the imported copy whole; the local item stays.
    """
    stats = {"added": 0, "skipped": 0, "reinforced": 0, "conflicts": 0}
    if current is None:
        merged = incoming.model_copy(deep=True)
        stats["added"] = merged.item_count()
        return merged, stats
    merged = current.model_copy(deep=True)
    held = {i.id for c in merged.contradictions for i in c.items}
    changed = False
    for item in incoming.all_items():
        section = merged.items[item.category]
        local = merged.find(item.id)
        why = "edited on the other machine"
        if local is None:
            near = [e for e in section if item_similarity(e, item) > threshold]
            local = max(near, key=lambda e: item_similarity(e, item)) if near else None
            why = "a near duplicate that differs"
        if local is None:
            section.append(item)
            stats["added"] += 1
            changed = True
            continue
        if _same_text(local, item):
            stronger = _with_sources(local, item)
            if stronger != local:
                items = merged.items[local.category]
                items[items.index(local)] = stronger
                changed = True
            stats["reinforced" if stronger != local else "skipped"] += 1
            continue
        if item.id in held or any(
            _same_text(item, i) for c in merged.contradictions for i in c.items
        ):
            stats["skipped"] += 1  # imported before: already kept as a conflict
            continue
        merged.contradictions.append(_kept_apart(local, item, why))
        held.add(item.id)
        stats["conflicts"] += 1
        changed = True
    known = {c.id for c in merged.contradictions}
    for entry in incoming.contradictions:
        if entry.id not in known:
            merged.contradictions.append(entry)
            changed = True
    if not changed:
        return None, stats
    merged.last_updated = utc_now()
    return merged, stats


def context_digest(
    store: MemoryStore, topic_hits: list[dict[str, Any]] | None, limit: int = 40
) -> str:
    """A Markdown digest: the hits for a topic, or every branch's summary and key items."""
    lines = ["# Memory context", ""]
    if topic_hits is not None:
        if not topic_hits:
            lines.append("_No memories match this topic._")
        for hit in topic_hits[:limit]:
            heading = Category(hit["category"]).heading
            lines.append(
                f"- **{hit['title']}** ({heading}, {hit['branch']}, "
                f"confidence {hit['confidence']:.2f}): {hit['content']}"
            )
        return "\n".join(lines) + "\n"
    branches = store.list_branches()
    if not branches:
        return "# Memory context\n\n_No memories yet._\n"
    for branch in branches:
        memory = store.read(branch)
        if memory is None:
            continue
        lines += [f"## {branch}", ""]
        if memory.summary:
            lines += [memory.summary, ""]
        strongest = sorted(memory.all_items(), key=lambda i: -i.confidence)[:5]
        lines += [f"- **{i.title}**: {i.content}" for i in strongest]
        lines.append("")
    return "\n".join(lines)


def health_report(store: MemoryStore, index: MemoryIndex, *, with_index: bool) -> dict[str, Any]:
    """Files valid or not, and (optionally) the index's own health."""
    files = []
    for branch in store.list_branches():
        problems = validate(store.read_text(branch) or "")
        files.append(
            {"branch": branch, "valid": not problems, "problems": [p.message for p in problems]}
        )
    report: dict[str, Any] = {
        "healthy": all(f["valid"] for f in files),
        "branches": len(files),
        "invalid": [f for f in files if not f["valid"]],
    }
    if with_index:
        index.sync(store)
        report["index"] = index.health()
    return report


def repair(store: MemoryStore, index: MemoryIndex) -> dict[str, Any]:
    """Rebuild the index; re-render files that parse but do not validate; report the rest."""
    fixed, unfixable = [], []
    for branch in store.list_branches():
        text = store.read_text(branch) or ""
        problems = validate(text)
        if not problems:
            continue
        memory = parse(text, branch)
        memory.branch_id = branch
        rendered = render(memory)
        if memory.item_count() and not validate(rendered):
            store.write_text(branch, rendered)  # the old text is kept as a version
            fixed.append({"branch": branch, "problems": [p.message for p in problems]})
        else:
            unfixable.append({"branch": branch, "problems": [p.message for p in problems]})
    rebuilt = index.rebuild(store)
    from app.core.atomic import sweep_temp_files

    folders = [store.home, store.branches_dir, store.home / "archive", store.versions_dir]
    if store.versions_dir.is_dir():
        folders += [p for p in store.versions_dir.iterdir() if p.is_dir()]
    swept = sweep_temp_files(folders)
    return {"fixed": fixed, "unfixable": unfixable, "index": rebuilt, "tempFilesRemoved": swept}
