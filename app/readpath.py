"""The cold read path: `retrieve` and `list` answered from the index without build_api.

A fresh process that only searches has no use for the composition root (pydantic models,
asyncio, the Markdown parser, the SDKs, every engine): importing them costs several times
the search. When the command line is a plain `[--home DIR] retrieve QUERY [--max-results N]
[--branch B] [--project P] [--mode fast]`, this module answers it from `index.sqlite`
(`app.core.indexread.open_current`: a query-only connection, trusted only when every branch
file's signature matches) with the same ranking and packing as `MemoryReader.retrieve`, and
prints the same JSON; a plain `list [--type T] [--branch B] [--limit N]` is listed from the
index's rows as `ops.LIST_ITEMS` lists it. Anything else returns None and the caller
takes the full path, which gives the same answer (or the error): another form of the
command line, a home or index that is missing or out of date, a config.json the full
loader must judge, semantic search that would run (the model and its vectors are present),
a SQLite without FTS5, an invalid argument. A running app for the home is asked first, as
the full path does.

Cross-branch conflicts are found and described with the core's rules
(`app.core.conflicts.conflict_groups`, which `find_conflicts` wraps), run on plain rows read
from each item's JSON: a conflict costs the cold path no model import either.
Reads never write: the returned items are noted in the index's access log, a side file
whose counts ranking adds to those the index holds, as the full path does.
tests/test_readpath.py compares answers with the full path on the same home.
"""

from __future__ import annotations

import json
import math
import sqlite3
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any, NamedTuple

from app.core import index as core_index
from app.core import indexread
from app.core import operations as ops
from app.core.errors import InvalidInput
from app.core.paths import project_of, resolve_home, validate_branch_id
from app.core.ranking import (
    CONFLICT_POOL,
    FAST_POOL,
    HEADINGS,
    MAX_RESULTS,
    NOTHING,
    Ranked,
    locality,
    pack,
    score,
)

# Mirrors of app.core.requests and app.core.config (tests/test_readpath.py keeps them equal);
# scoring and packing are app.core.ranking's, shared with MemoryReader.
MAX_QUERY_CHARS = 2000
CONFIG_DEFAULTS: dict[str, Any] = {
    "retrieval_token_budget": 2_000,
    "relevance_threshold": 0.05,
    "relevance_weight": 0.6,
    "confidence_weight": 0.3,
    "frequency_weight": 0.1,
    "semantic_search": True,
}
_OPTIONS = {
    "--max-results": "max_results",
    "--branch": "branch",
    "--project": "project",
    "--mode": "mode",
}


class Request(NamedTuple):
    """A plain `retrieve` command line."""

    home: str | None
    query: str
    max_results: int
    branch: str | None
    project: str | None


class _Hit(NamedTuple):
    id: str
    branch: str
    project: str
    category: str
    title: str
    content: str
    confidence: float
    access_count: int
    relevance: float
    item_json: str


def parse(argv: list[str]) -> Request | None:
    """The request of a plain `retrieve` command line, or None for any other form."""
    home: str | None = None
    rest = list(argv)
    if len(rest) >= 2 and rest[0] == "--home":
        home, rest = rest[1], rest[2:]
    if len(rest) < 2 or rest[0] != "retrieve" or rest[1].startswith("-"):
        return None
    query, rest = rest[1], rest[2:]
    values: dict[str, str] = {}
    while rest:
        if len(rest) < 2 or rest[0] not in _OPTIONS or rest[1].startswith("-"):
            return None  # flags, --opt=value, abbreviations, a second query: argparse's job
        values[_OPTIONS[rest[0]]] = rest[1]
        rest = rest[2:]
    if values.get("mode", "fast") != "fast":
        return None
    raw = values.get("max_results", "5")
    if not raw.isascii() or not raw.isdigit():
        return None
    return Request(home, query, int(raw), values.get("branch"), values.get("project"))


class ListRequest(NamedTuple):
    """A plain `list` command line (no --tags)."""

    home: str | None
    category: str | None
    branch: str | None
    limit: int | None


def parse_list(argv: list[str]) -> ListRequest | None:
    """The request of `[--home DIR] list [--type T] [--branch B] [--limit N]`, else None."""
    home: str | None = None
    rest = list(argv)
    if len(rest) >= 2 and rest[0] == "--home":
        home, rest = rest[1], rest[2:]
    if not rest or rest[0] != "list":
        return None
    rest = rest[1:]
    values: dict[str, str] = {}
    while rest:
        if (
            len(rest) < 2
            or rest[0] not in ("--type", "--branch", "--limit")
            or (rest[1].startswith("-"))
        ):
            return None
        values[rest[0]] = rest[1]
        rest = rest[2:]
    category = values.get("--type")
    if category is not None and category not in HEADINGS:
        return None
    raw = values.get("--limit")
    if raw is not None and not (raw.isascii() and raw.isdigit()):
        return None
    return ListRequest(
        home,
        category,
        values.get("--branch") or None,
        int(raw) or None if raw is not None else None,
    )


def main(argv: list[str]) -> int | None:
    """Answer a plain `retrieve` or `list` and return the exit code, or None (full path)."""
    listing = parse_list(argv)
    if listing is not None:
        return _main_list(listing)
    request = parse(argv)
    if request is None:
        return None
    try:
        home = resolve_home(request.home)
    except Exception:  # the full path names the problem
        return None
    payload: dict[str, Any] = {
        "query": request.query,
        "maxResults": request.max_results,
        "mode": "fast",
    }
    if request.branch:
        payload["branch"] = request.branch
    if request.project:
        payload["project"] = request.project
    if not home.is_dir():
        return None
    reply: dict[str, Any] | None = None
    if _app_may_run(home):
        from app.remote import invoke

        reply = invoke(home, ops.RETRIEVE.name, payload)
    if reply is None:
        reply = retrieve(home, request)
        if reply is None:
            return None
    sys.stdout.write(json.dumps(reply, indent=2, ensure_ascii=False, default=str) + "\n")
    if not reply.get("error"):
        return 0
    return 2 if reply.get("code") in {"INVALID_INPUT", "NOT_FOUND"} else 1


def _main_list(request: ListRequest) -> int | None:
    try:
        home = resolve_home(request.home)
    except Exception:  # the full path names the problem
        return None
    if not home.is_dir():
        return None
    payload: dict[str, Any] = {}
    if request.category:
        payload["type"] = request.category
    if request.branch:
        payload["branch"] = request.branch
    if request.limit:
        payload["limit"] = request.limit
    reply: dict[str, Any] | None = None
    if _app_may_run(home):
        from app.remote import invoke

        reply = invoke(home, ops.LIST_ITEMS.name, payload)
    if reply is None:
        reply = list_items(home, request)
        if reply is None:
            return None
    sys.stdout.write(json.dumps(reply, indent=2, ensure_ascii=False, default=str) + "\n")
    return 0 if not reply.get("error") else 1


def list_items(home: Path, request: ListRequest) -> dict[str, Any] | None:
    """`ops.LIST_ITEMS` without tags, as the API answers it from the index, or None."""
    if request.branch is not None:
        try:
            validate_branch_id(request.branch)
        except InvalidInput:
            return None
    conn = indexread.open_current(home / "index.sqlite", home / "branches")
    if conn is None:
        return None
    try:
        where, params = core_index.filter_clause(request.category, request.branch, None)
        rows = core_index.item_rows(conn, where, params, request.limit)
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    pending = core_index.pending_access(home / "index.sqlite") if rows else {}
    items = [
        {
            "id": row[0],
            "branch": row[1],
            "project": row[2],
            "category": row[3],
            "title": row[4],
            "content": row[5],
            "confidence": float(row[7]),
            "tags": [t for t in str(row[8]).split("|") if t],
            "pinned": bool(row[9]),
            "extracted": row[10],
            "accessCount": int(row[12]) + pending.get(str(row[0]), 0),
        }
        for row in rows
    ]
    return {"items": items, "count": len(items)}


def _app_may_run(home: Path) -> bool:
    """Whether the app's socket for this home exists (then `app.remote` asks it)."""
    from app.service.naming import socket_path

    path = socket_path(home)
    return path is not None and path.exists()


def retrieve(home: Path, request: Request) -> dict[str, Any] | None:
    """`ops.RETRIEVE` in fast mode as `MemoryReader.retrieve` answers it, or None."""
    start = time.perf_counter()
    text = request.query.strip()
    if not text or len(request.query) > MAX_QUERY_CHARS:
        return None
    if not 1 <= request.max_results <= MAX_RESULTS:
        return None
    branch, project = request.branch, request.project or None
    if branch is not None:
        try:
            validate_branch_id(branch)
        except InvalidInput:
            return None
    if project is None and branch is not None:
        project = project_of(branch) or None
    config = _config(home)
    if config is None or _semantic_would_run(home, config):
        return None
    conn = indexread.open_current(home / "index.sqlite", home / "branches")
    if conn is None:
        return None
    try:
        pool = max(FAST_POOL, request.max_results * 4)
        rows = core_index.search_rows(conn, text, pool)
    except sqlite3.Error:
        return None
    finally:
        conn.close()
    pending = core_index.pending_access(home / "index.sqlite") if rows else {}
    hits = [_hit(row, relevance, pending.get(str(row[0]), 0)) for row, relevance in rows]
    threshold = float(config["relevance_threshold"])
    scored = sorted(
        ((h, _score(h, config, branch, project)) for h in hits if h.relevance >= threshold),
        key=lambda s: (-s[1], -s[0].relevance, s[0].branch, s[0].id),
    )
    near = scored[: max(CONFLICT_POOL, 2 * request.max_results)]
    # (only items of different branches can conflict: one branch needs no check at all)
    conflicts = _conflicts(near, scored) if len({h.branch for h, _ in near}) > 1 else []
    packed_conflicts, memories, used = pack(
        conflicts,
        [
            Ranked(
                h.id,
                h.branch,
                h.project,
                h.category,
                h.title,
                h.content,
                h.confidence,
                h.relevance,
                value,
            )
            for h, value in scored
        ],
        request.max_results,
        int(config["retrieval_token_budget"]),
    )
    if memories:
        core_index.note_access(home / "index.sqlite", (m["id"] for m in memories))
    return {
        "memories": memories,
        "conflicts": packed_conflicts,
        "totalTokens": used,
        "retrievalTime": round((time.perf_counter() - start) * 1000, 3),
        "mode": "fast",
        **(NOTHING if not memories and not packed_conflicts else {}),
    }


# -- steps -------------------------------------------------------------------------------
def _config(home: Path) -> dict[str, Any] | None:
    """The settings retrieval uses; None when config.json needs the full loader's care."""
    path = home / "config.json"
    config = dict(CONFIG_DEFAULTS)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return config
    except OSError:
        return None
    try:
        given = json.loads(raw)
    except ValueError:
        return None  # the full loader moves it aside and says why
    if not isinstance(given, dict):
        return None
    for key in CONFIG_DEFAULTS:
        if key not in given:
            continue
        value = given[key]
        if isinstance(value, bool) != isinstance(CONFIG_DEFAULTS[key], bool):
            return None
        if not isinstance(value, int | float) or (
            isinstance(value, float) and not math.isfinite(value)
        ):
            return None
        config[key] = value
    budget, threshold = config["retrieval_token_budget"], config["relevance_threshold"]
    if isinstance(budget, float) or budget < 100 or not 0.0 <= threshold <= 1.0:
        return None  # out of range: the full loader decides what happens
    return config


def _semantic_would_run(home: Path, config: dict[str, Any]) -> bool:
    """Whether fast mode would fuse embeddings (then the full path, which loads the model).

    Conservative: with semantic search on and the model installed, any vectors file counts
    as "would run"; without vectors the full path searches lexically too.
    """
    if not config["semantic_search"]:
        return False
    from app.core import embeddings

    if not embeddings.available():
        return False
    return (home / "vectors.sqlite").exists()


def _hit(row: tuple[Any, ...], relevance: float, pending: int) -> _Hit:
    return _Hit(
        id=str(row[0]),
        branch=str(row[1]),
        project=str(row[2]),
        category=str(row[3]),
        title=str(row[4]),
        content=str(row[5]),
        confidence=float(row[7]),
        access_count=int(row[12]) + pending,
        relevance=relevance,
        item_json=str(row[11]),
    )


def _score(hit: _Hit, config: dict[str, Any], branch: str | None, project: str | None) -> float:
    weights = (
        float(config["relevance_weight"]),
        float(config["confidence_weight"]),
        float(config["frequency_weight"]),
    )
    near = locality(hit.branch, hit.project, branch, project)
    return score(hit.relevance, hit.confidence, hit.access_count, weights, near)


class _Said(NamedTuple):
    """What the conflict check reads of an item, from its row's JSON (no model import)."""

    id: str
    category: str
    title: str
    content: str
    sources: list[str]
    extracted: date


def _statement(hit: _Hit) -> _Said:
    data = json.loads(hit.item_json)
    return _Said(
        str(data["id"]),
        str(data["category"]),
        str(data["title"]),
        str(data["content"]),
        [str(s) for s in data.get("sources") or []],
        date.fromisoformat(str(data["extracted"])),
    )


def _conflicts(
    near: list[tuple[_Hit, float]], scored: list[tuple[_Hit, float]]
) -> list[dict[str, Any]]:
    """Cross-branch conflicts among the best candidates (the core's rules, on plain rows)."""
    from app.core.conflicts import conflict_groups

    detected = conflict_groups([(h.branch, _statement(h)) for h, _ in near])
    best: dict[str, float] = {}
    for hit, value in scored:
        best.setdefault(hit.id, value)
    merged: list[dict[str, Any]] = []
    seen: set[frozenset[str]] = set()
    for conflict in detected:
        ids = [i for i in conflict.item_ids if i in best]
        if len(ids) < 2 or frozenset(ids) in seen:
            continue
        seen.add(frozenset(ids))
        merged.append(
            {
                "category": conflict.category,
                "description": conflict.description,
                "itemIds": ids,
                "branches": list(conflict.branches),
            }
        )
    merged.sort(key=lambda c: -max(best[i] for i in c["itemIds"]))
    return merged
