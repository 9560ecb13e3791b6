"""Reading `index.sqlite` from a cold process: the one place that trusts the index without
syncing it, and the item queries of the cold paths (the command line's `retrieve` and
`list`, the session-start and per-prompt hooks).

A connection is handed out only when the index was built, in this schema, from exactly the
branch files now on disk (each file's mtime_ns and size): anything else returns None, and
the caller takes its slow path, which syncs. The connection is `query_only`: reads never
write. Standard library only, and nothing but `sqlite3`, `os` and the path encoding: a hook
imports this module on a cold start, and `app.core.index` (which syncs and writes) builds on
it.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from app.core.errors import InvalidInput
from app.core.paths import encode_branch

# 4: an item's searchable body holds what it superseded (index.py `_replaced_text`).
SCHEMA_VERSION = 4
BUSY_TIMEOUT_MS = 5_000

# The columns the hooks read: id, branch, project, category, title, content, confidence,
# pinned, extracted, the JSON of the other fields, the use count the index holds, and the
# searchable text (the item's own, then what it superseded).
HOOK_COLUMNS = (
    "i.item_id, i.branch, i.project, i.category, i.title, i.content, i.confidence, "
    "i.pinned, i.extracted, i.data, COALESCE(a.count, 0), i.body"
)
_FROM = "FROM items i LEFT JOIN access a ON a.item_id = i.item_id"


def open_current(
    path: Path, branches_dir: Path, *, fts: bool = True, timeout_s: float = BUSY_TIMEOUT_MS / 1000
) -> sqlite3.Connection | None:
    """A query-only connection to an index built from exactly the files on disk, or None.

    `timeout_s`: how long to wait for a writer holding the database (a hook has a deadline).
    None when the index is missing, of another schema (or, with `fts`, not the FTS5 search
    mode), damaged, or when any branch file's (mtime_ns, size) differs from what it was
    indexed from. Nothing is written: the connection is `query_only` and access counts go
    to the side log (`app.core.index.note_access`).
    """
    if not path.is_file():
        return None  # connecting would create an empty file
    try:
        conn = sqlite3.connect(path, timeout=timeout_s, isolation_level=None)
    except sqlite3.Error:
        return None
    try:
        conn.execute("PRAGMA query_only=ON")
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        schema = str(row[0]) if row is not None else ""
        version, _, mode = schema.partition("-")
        if version != str(SCHEMA_VERSION) or (fts and mode != "fts5"):
            conn.close()
            return None
        indexed = {
            str(branch): (int(mtime_ns), int(size))
            for branch, mtime_ns, size in conn.execute("SELECT branch, mtime_ns, size FROM files")
        }
    except sqlite3.Error:
        conn.close()
        return None
    if not files_match(indexed, branches_dir):
        conn.close()
        return None
    return conn


def files_match(indexed: dict[str, tuple[int, int]], branches_dir: Path) -> bool:
    """Whether the branch files on disk are exactly those `indexed` (the store's listing)."""
    expected: dict[str, tuple[int, int]] = {}
    try:
        for branch, signature in indexed.items():
            expected[f"{encode_branch(branch)}.md"] = signature
    except InvalidInput:
        return False
    try:
        with os.scandir(branches_dir) as entries:
            for entry in entries:
                name = entry.name
                if not name.endswith(".md") or (name.startswith(".") and "%" not in name):
                    continue  # temp files of atomic writes, hidden files
                st = entry.stat()
                if expected.pop(name, None) != (st.st_mtime_ns, st.st_size):
                    return False
    except FileNotFoundError:
        pass
    except OSError:
        return False
    return not expected


def branch_rows(conn: sqlite3.Connection, branch: str) -> list[tuple[Any, ...]]:
    """The `HOOK_COLUMNS` of one branch's items, in file order."""
    return conn.execute(
        f"SELECT {HOOK_COLUMNS} {_FROM} WHERE i.branch = ? ORDER BY i.position", (branch,)
    ).fetchall()


def constraint_rows(
    conn: sqlite3.Connection,
    project: str,
    exclude: Sequence[str],
    categories: Sequence[str],
    best: int | None = None,
) -> tuple[list[tuple[Any, ...]], tuple[tuple[str, str], ...]]:
    """Items of `project`'s other branches in `categories`, best ranked first: category in
    the given order, then newest (`extracted`, an ISO date, sorts as text), pinned,
    confidence, use, file order. With `best`, the `HOOK_COLUMNS` of only that many are read
    and the rest come back as (category, id) pairs, for the note of what was left out.
    """
    marks = ", ".join("?" for _ in exclude)
    kinds = ", ".join("?" for _ in categories)
    where = f"i.project = ? AND i.branch NOT IN ({marks}) AND i.category IN ({kinds})"
    rank = (
        "CASE i.category "
        + " ".join(f"WHEN ? THEN {n}" for n in range(len(categories)))
        + f" ELSE {len(categories)} END, i.extracted DESC, i.pinned DESC, "
        "i.confidence DESC, COALESCE(a.count, 0) DESC, i.branch, i.position"
    )
    params = (project, *exclude, *categories, *categories)
    if best is None:
        rows = conn.execute(
            f"SELECT {HOOK_COLUMNS} {_FROM} WHERE {where} ORDER BY {rank}", params
        ).fetchall()
        return rows, ()
    ranked = conn.execute(
        f"SELECT i.rowid, i.category, i.item_id {_FROM} WHERE {where} ORDER BY {rank}", params
    ).fetchall()
    head = [row[0] for row in ranked[:best]]
    places = ", ".join("?" for _ in head)
    found = {
        row[0]: row[1:]
        for row in conn.execute(
            f"SELECT i.rowid, {HOOK_COLUMNS} {_FROM} WHERE i.rowid IN ({places})", head
        )
    }
    rest = tuple((str(category), str(item_id)) for _, category, item_id in ranked[best:])
    return [found[rowid] for rowid in head], rest


def matching_rows(
    conn: sqlite3.Connection, terms: Sequence[str], project: str | None, limit: int
) -> list[tuple[Any, ...]]:
    """The `HOOK_COLUMNS` of items holding any of `terms` (each quoted for FTS5), best
    matching first, within `project` when given."""
    match = " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
    scope = "AND i.project = ?" if project else ""
    return conn.execute(
        f"SELECT {HOOK_COLUMNS} {_FROM} JOIN items_fts f ON f.rowid = i.rowid "
        f"WHERE items_fts MATCH ? {scope} ORDER BY f.rank LIMIT ?",
        (match, project, limit) if project else (match, limit),
    ).fetchall()
