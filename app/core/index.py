"""MemoryIndex: the derived SQLite index (`index.sqlite`) over every item of every branch file.

Branch files are the truth; this index only makes search fast. It holds one row per item
(with an FTS5 table over title, full text, category, branch, project and tags), the file
signature (mtime_ns, size) each branch was indexed from, and access counts keyed by item id
that survive rebuilds. `sync(store)` brings it in line with the files: a missing, corrupt or
outdated index is rebuilt, and branches whose file changed behind its back (a hand edit, a
new or deleted file) are re-indexed one by one. When SQLite lacks FTS5 the same API works by
scanning items in Python.

Relevance: FTS5's bm25 (lower is better) is scaled per query as `rank / best_rank`, so the
best hit of a query has relevance 1.0 and an item half as good 0.5. The figure says how an
item compares with the best match of *this* query, not how good that match is in absolute
terms; bm25 magnitudes depend on corpus size and are not comparable across queries anyway.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import sqlite3
import threading
import time
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from app.core.errors import InvalidInput, PuffinError, StorageError
from app.core.indexread import BUSY_TIMEOUT_MS, SCHEMA_VERSION
from app.core.paths import project_of
from app.core.peritem import PerItem
from app.core.words import STOP_WORDS

if TYPE_CHECKING:
    # Imported where used: a cold read (app/readpath.py) opens the index without pydantic.
    from app.core.models import BranchMemory, Category, MemoryItem

MAX_QUERY_TERMS = 32
# A prefix term shorter than this would match a large part of the vocabulary.
MIN_PREFIX_CHARS = 3
# bm25 column weights, in FTS column order (title, body, category, branch, project, tags):
# a hit in the title or a tag says more about an item than one in its long text; category
# headings, branch and project names are shared by many items, so they only nudge.
COLUMN_WEIGHTS: tuple[float, ...] = (2.0, 1.0, 0.25, 0.3, 0.3, 1.5)
# Git-flow words in branch ids say nothing about content; indexed, "feature flags" would
# match every item of every `*/feature/*` branch (and cost a bm25 score for each).
BRANCH_NOISE = frozenset(
    {
        "feature",
        "features",
        "feat",
        "fix",
        "fixes",
        "bugfix",
        "hotfix",
        "release",
        "releases",
        "chore",
        "main",
        "master",
        "develop",
        "dev",
        "refs",
        "heads",
        "origin",
        "wip",
        "branch",
    }
)
# porter: "patterns" finds "pattern"; remove_diacritics: "cafe" finds "café".
TOKENIZER = "porter unicode61 remove_diacritics 2"
_NO_SIGNATURE = (-1, -1)


_WORD_RE = re.compile(r"\w")
_SPLIT_RE = re.compile(r"[\W_]+")
_FIELD_SEP = "\n"
_EDGE_PUNCT = "\"'`.,;:!?()[]{}<>"


class BranchSource(Protocol):
    """What the index needs from the store (`app.core.store.MemoryStore` provides it)."""

    def read(self, branch: str) -> BranchMemory | None:
        """The parsed branch file, or None when it does not exist."""
        ...

    def signatures(self) -> dict[str, tuple[int, int]]:
        """Branch -> (mtime_ns, size) of its file, for every branch file."""
        ...


class CorruptIndexError(StorageError):
    """The index file turned out to be damaged; it was reset and the next `sync` rebuilds it."""


@dataclass(frozen=True, slots=True)
class IndexedItem:
    """An item as the index knows it, with where it lives and how often it was returned."""

    id: str
    branch: str
    project: str
    category: Category
    title: str
    content: str
    text: str
    confidence: float
    tags: tuple[str, ...]
    pinned: bool
    extracted: str
    access_count: int = 0
    # 0..1 for search hits (the best hit of a query is 1.0); 0.0 in plain listings.
    relevance: float = 0.0
    item_json: str = field(default="", repr=False, compare=False)

    def memory_item(self) -> MemoryItem:
        """The full item as it was indexed (with its category-specific fields)."""
        from app.core.models import MemoryItem

        return MemoryItem.model_validate_json(self.item_json)

    def to_dict(self) -> dict[str, Any]:
        """API shape (camelCase keys, like the rest of the memory:* replies)."""
        return {
            "id": self.id,
            "branch": self.branch,
            "project": self.project,
            "category": self.category.value,
            "title": self.title,
            "content": self.content,
            "confidence": self.confidence,
            "tags": list(self.tags),
            "pinned": self.pinned,
            "extracted": self.extracted,
            "accessCount": self.access_count,
        }


# -- query text --------------------------------------------------------------------------
def query_terms(text: str) -> list[str]:
    """Search terms of free user text: deduplicated, stop words dropped when others remain."""
    terms: list[str] = []
    seen: set[str] = set()
    for raw in text.split():
        term = raw.strip(_EDGE_PUNCT)
        if not _WORD_RE.search(term):
            continue  # only punctuation: a tokenizer would keep nothing of it
        key = term.casefold()
        if key in seen:
            continue
        seen.add(key)
        terms.append(term)
        if len(terms) >= MAX_QUERY_TERMS:
            break
    meaningful = [t for t in terms if t.casefold() not in STOP_WORDS]
    return meaningful or terms


def fts_query(text: str, *, prefix_last: bool = True) -> str:
    """An FTS5 MATCH expression in which any user text is safe.

    Each term becomes a quoted string (inner quotes doubled), so `foo-bar`, `c++`, `AND`,
    `NEAR(` or a stray quote are plain text, never syntax; terms are OR-joined so any of them
    can match, and bm25 ranks items matching more and rarer terms first. The last term also
    matches as a prefix (`"asyn"*` finds "async") unless the text ends with a space, the way
    a search box treats a word still being typed. Returns "" when nothing is left to search.
    """
    terms = query_terms(text)
    if not terms:
        return ""
    parts = ['"' + t.replace('"', '""') + '"' for t in terms]
    last = terms[-1]
    if (
        prefix_last
        and not text[-1:].isspace()
        and len(last) >= MIN_PREFIX_CHARS
        and (last.isalnum())
    ):
        parts[-1] += "*"
    return " OR ".join(parts)


def branch_words(branch: str) -> str:
    """The searchable words of a branch id: without its project and git-flow words."""
    words = _SPLIT_RE.split(branch)
    if "/" in branch:
        words = words[1:]  # the project has a column of its own
    return " ".join(w for w in words if w and w.casefold() not in BRANCH_NOISE)


def fts5_available() -> bool:
    """Whether this Python's SQLite has FTS5 (some distributions build it without)."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE probe USING fts5(body)")
    except sqlite3.DatabaseError:
        return False
    finally:
        conn.close()
    return True


# -- schema ------------------------------------------------------------------------------
_SELECT_ITEM = (
    "SELECT i.item_id, i.branch, i.project, i.category, i.title, i.content, i.body, "
    "i.confidence, i.tags, i.pinned, i.extracted, i.data, COALESCE(a.count, 0)"
)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS access(
    item_id TEXT PRIMARY KEY, count INTEGER NOT NULL, last_access REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS files(
    branch TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS items(
    rowid INTEGER PRIMARY KEY,
    item_id TEXT NOT NULL,
    branch TEXT NOT NULL,
    project TEXT NOT NULL,
    category TEXT NOT NULL,
    title TEXT NOT NULL,
    content TEXT NOT NULL,
    body TEXT NOT NULL,
    confidence REAL NOT NULL,
    tags TEXT NOT NULL,
    pinned INTEGER NOT NULL,
    extracted TEXT NOT NULL,
    position INTEGER NOT NULL,
    data TEXT NOT NULL,
    folded TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS items_branch ON items(branch, position);
CREATE INDEX IF NOT EXISTS items_item_id ON items(item_id);
CREATE INDEX IF NOT EXISTS items_category ON items(category);
"""
_FTS_TABLE = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS items_fts USING fts5("
    f"title, body, category, branch, project, tags, tokenize='{TOKENIZER}')"
)
_FTS_RANK = (
    "INSERT INTO items_fts(items_fts, rank) "
    f"VALUES('rank', 'bm25({', '.join(str(w) for w in COLUMN_WEIGHTS)})')"
)


_INSERT_ITEM = (
    "INSERT INTO items(item_id, branch, project, category, title, content, body, "
    "confidence, tags, pinned, extracted, position, data, folded) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _fts_fill(rows: str = "branch = ?") -> str:
    """The FTS copy of a branch's rows (or of one row), with the category's heading."""
    from app.core.models import CATEGORY_HEADINGS

    return (
        "INSERT INTO items_fts(rowid, title, body, category, branch, project, tags) "
        "SELECT rowid, title, body, CASE category "
        + " ".join(f"WHEN '{c.value}' THEN '{h}'" for c, h in CATEGORY_HEADINGS.items())
        + " ELSE category END, ?, project, trim(replace(tags, '|', ' ')) "
        f"FROM items WHERE {rows}"
    )


def search_rows(
    conn: sqlite3.Connection,
    query: str,
    limit: int,
    where: str = "",
    params: Sequence[Any] = (),
) -> list[tuple[tuple[Any, ...], float]]:
    """FTS5 search: `(row, relevance)` pairs, best first; rows hold the `_SELECT_ITEM` columns.

    The one query behind `MemoryIndex.search` and the cold read path (app/readpath.py),
    which calls it on a connection of its own without building `IndexedItem`s.
    """
    match = fts_query(query)
    if not match:
        return []
    sql = (
        f"{_SELECT_ITEM}, items_fts.rank FROM items_fts "
        "JOIN items i ON i.rowid = items_fts.rowid "
        "LEFT JOIN access a ON a.item_id = i.item_id "
        # Equal ranks keep file order, however the rows were written.
        f"WHERE items_fts MATCH ? {where} ORDER BY items_fts.rank, i.branch, i.position LIMIT ?"
    )
    rows = conn.execute(sql, [match, *params, limit]).fetchall()
    if not rows:
        return []
    best = float(rows[0][-1])
    return [(tuple(row), _ratio(float(row[-1]), best)) for row in rows]


def item_rows(
    conn: sqlite3.Connection,
    where: str = "",
    params: Sequence[Any] = (),
    limit: int | None = None,
) -> list[tuple[Any, ...]]:
    """Rows (`_SELECT_ITEM` columns) in branch and file order: `MemoryIndex.items`' query,
    also run by the cold read path on its own connection."""
    return [
        tuple(row)
        for row in conn.execute(
            f"{_SELECT_ITEM} FROM items i LEFT JOIN access a ON a.item_id = i.item_id "
            f"WHERE 1 = 1 {where} ORDER BY i.branch, i.position LIMIT ?",
            [*params, -1 if limit is None else max(0, limit)],
        ).fetchall()
    ]


# -- access counts -----------------------------------------------------------------------
# Reads never write the index: each retrieve appends one line (time, then the ids it
# returned) to this file beside the index, with one O_APPEND write. Searches and listings
# add the counts still in the log to those of the `access` table (ranking sees a use at
# once), and the index folds the log into the table whenever it writes anyway (a sync that
# changed something, a branch update, a rebuild), which keeps the log short.
ACCESS_LOG = "access.log"


STALE_FOLD_S = 120.0


def _age_s(path: Path) -> float:
    try:
        return time.time() - path.stat().st_mtime
    except OSError:
        return 0.0


def note_access(index_path: Path, item_ids: Iterable[str]) -> None:
    """Record that these items were returned, in the side file (one append, no fsync).

    Failures (a read-only home, a full disk) are ignored: counts are a ranking hint.
    """
    ids = sorted({i for i in item_ids if i and not any(c.isspace() for c in i)})
    if not ids:
        return
    line = f"{time.time():.3f} {' '.join(ids)}\n".encode()
    with contextlib.suppress(OSError):
        fd = os.open(
            index_path.parent / ACCESS_LOG,
            os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_BINARY", 0),
            0o600,
        )
        try:
            os.write(fd, line)
        finally:
            os.close(fd)


def pending_access(index_path: Path) -> dict[str, int]:
    """Uses noted in the access log and not yet folded into the index: item id -> count."""
    return {i: c for i, (c, _w) in _read_access_log(index_path.parent / ACCESS_LOG).items()}


def _read_access_log(path: Path) -> dict[str, tuple[int, float]]:
    """Item id -> (times returned, last time) from a log; a torn or garbled line is skipped."""
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    return _parse_access(data)


def _parse_access(data: bytes) -> dict[str, tuple[int, float]]:
    counts: dict[str, tuple[int, float]] = {}
    for raw in data.split(b"\n"):
        parts = raw.decode("utf-8", errors="replace").split()
        if len(parts) < 2:
            continue
        try:
            when = float(parts[0])
        except ValueError:
            continue
        for item_id in parts[1:]:
            count, _last = counts.get(item_id, (0, 0.0))
            counts[item_id] = (count + 1, when)
    return counts


def _tags_cell(tags: Sequence[str]) -> str:
    # `|a|b|` lets one `instr(tags, '|a|')` test membership without LIKE escaping.
    return "|" + "|".join(tags) + "|" if tags else ""


class MemoryIndex:
    """The SQLite index in the memory home; safe to call from several threads.

    One connection (`check_same_thread=False`) is shared and every use holds an RLock, which
    for an index this size is as fast as a pool and much simpler. Other processes (the CLI,
    hooks) open their own connection; WAL mode and a busy timeout let them coexist.
    """

    def __init__(self, path: Path, *, use_fts5: bool | None = None) -> None:
        """Open or create the index at `path`; `use_fts5=False` forces the plain scan."""
        self.path = path
        self.fts5 = fts5_available() if use_fts5 is None else (use_fts5 and fts5_available())
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._file_id: tuple[int, int] | None = None
        # True when the file could not be opened (read-only or full disk): searches use an
        # index built in memory from the branch files.
        self._in_memory = False
        # Why the next sync must rebuild everything ("missing", "corrupt", ...), or None.
        self._rebuild_reason: str | None = None
        # Counts of the access log not yet folded, keyed by the log's (inode, mtime, size).
        # (inode, bytes consumed, counts): a grown log is read from where the last read
        # stopped, so a long session of queries without writes stays cheap.
        self._pending: tuple[tuple[int, bytes], int, dict[str, int]] | None = None
        with self._lock:
            self._open()

    @property
    def mode(self) -> str:
        """ "fts5", or "scan" when searching by a Python scan."""
        return "fts5" if self.fts5 else "scan"

    @property
    def pending_rebuild(self) -> str | None:
        """Why the next `sync` will rebuild everything, or None."""
        return self._rebuild_reason

    def close(self) -> None:
        """Close the connection (the index reopens itself on next use)."""
        with self._lock:
            if self._conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._conn.close()
                self._conn = None

    def __enter__(self) -> MemoryIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- keeping in line with the files ------------------------------------------------
    def sync(self, store: BranchSource) -> dict[str, Any]:
        """Bring the index in line with the branch files (see module docstring).

        When nothing changed this costs one stat of the index file, the store's one stat
        per branch file and one query of the stored signatures. Returns what was done:
        `rebuilt`, `reason`, `updated`, `removed`, `failed` (branch -> message), `elapsedMs`.
        """
        start = time.perf_counter()
        with self._lock:
            try:
                self._check_file()
                if self._rebuild_reason is not None:
                    return self._rebuild(store, self._rebuild_reason, start)
                current = store.signatures()
                with self._guard("read"):
                    stored = {
                        row[0]: (row[1], row[2])
                        for row in self._db().execute("SELECT branch, mtime_ns, size FROM files")
                    }
                stale = sorted(b for b, sig in current.items() if stored.get(b) != sig)
                removed = sorted(b for b in stored if b not in current)
                updated: list[str] = []
                failed: dict[str, str] = {}
                for branch in removed:
                    self.remove_branch(branch)
                for branch in stale:
                    error = self._reindex(store, branch, current[branch])
                    if error is None:
                        updated.append(branch)
                    else:
                        failed[branch] = error
            except CorruptIndexError:
                return self._rebuild(store, "corrupt", start)
            if updated or removed:
                self._fold_quietly()
        return _report(False, None, updated, removed, failed, start)

    def rebuild(self, store: BranchSource) -> dict[str, Any]:
        """Re-index every branch file from scratch (access counts are kept)."""
        with self._lock:
            return self._rebuild(store, "requested", time.perf_counter())

    def update_branch(
        self, branch: str, memory: BranchMemory, signature: tuple[int, int] | None
    ) -> None:
        """Replace a branch's items; `signature` is its file's (mtime_ns, size) when read.

        A None signature (unknown) makes the next `sync` read the file again.
        """
        with self._lock, self._write() as conn:
            self._replace_rows(conn, branch, memory)
            conn.execute(
                "INSERT OR REPLACE INTO files(branch, mtime_ns, size) VALUES (?, ?, ?)",
                (branch, *(signature or _NO_SIGNATURE)),
            )
        self._fold_quietly()

    def remove_branch(self, branch: str) -> None:
        """Forget a branch's items and signature (its file is gone)."""
        with self._lock, self._write() as conn:
            self._delete_branch(conn, branch)
            conn.execute("DELETE FROM files WHERE branch = ?", (branch,))

    def _reindex(self, store: BranchSource, branch: str, signature: tuple[int, int]) -> str | None:
        """Index one branch from its file; a message when the file cannot be used."""
        try:
            memory = store.read(branch)
        except StorageError as exc:
            # Likely passing (permissions, a file being replaced): keep the old rows and
            # leave the signature stale so the next sync tries again.
            return exc.message
        except (PuffinError, ValueError) as exc:
            # The file does not parse (a hand edit in progress): its items leave the index
            # until it is fixed, and the signature is kept so it is not re-read every query.
            with self._write() as conn:
                self._delete_branch(conn, branch)
                conn.execute(
                    "INSERT OR REPLACE INTO files(branch, mtime_ns, size) VALUES (?, ?, ?)",
                    (branch, *signature),
                )
            return exc.message if isinstance(exc, PuffinError) else str(exc)
        if memory is None:
            self.remove_branch(branch)
        else:
            self.update_branch(branch, memory, signature)
        return None

    def _rebuild(self, store: BranchSource, reason: str, start: float) -> dict[str, Any]:
        # Signatures are taken before reading, so a file changed meanwhile looks stale to
        # the next sync instead of being marked fresh with old content.
        current = store.signatures()
        memories: dict[str, BranchMemory | None] = {}
        failed: dict[str, str] = {}
        retry: set[str] = set()
        for branch in sorted(current):
            memories[branch] = None
            try:
                memories[branch] = store.read(branch)
            except StorageError as exc:
                failed[branch] = exc.message
                retry.add(branch)  # no signature stored: the next sync reads it again
            except (PuffinError, ValueError) as exc:
                failed[branch] = exc.message if isinstance(exc, PuffinError) else str(exc)

        def fill(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM items")
            if self.fts5:
                conn.execute("DELETE FROM items_fts")
            conn.execute("DELETE FROM files")
            for branch, memory in memories.items():
                if memory is not None:
                    self._insert_branch(conn, branch, memory)
                if branch not in retry:
                    conn.execute(
                        "INSERT INTO files(branch, mtime_ns, size) VALUES (?, ?, ?)",
                        (branch, *current[branch]),
                    )

        try:
            with self._write() as conn:
                fill(conn)
        except CorruptIndexError:
            # Damaged while rebuilding: the file was reset to an empty one; fill that.
            with self._write() as conn:
                fill(conn)
        self._rebuild_reason = None
        self._fold_quietly()
        updated = [b for b, m in memories.items() if m is not None]
        return _report(True, reason, updated, [], failed, start)

    # -- searching ---------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        limit: int = 50,
        category: Category | str | None = None,
        branch: str | None = None,
        tags: Sequence[str] | None = None,
    ) -> list[IndexedItem]:
        """Items matching any term of `query`, best first, with relevance 0..1.

        Text that holds no searchable term (empty, only punctuation) gives no results.
        """
        if limit < 1:
            return []
        where, params = _filters(category, branch, tags)
        with self._lock:
            if self.fts5:
                return self._search_fts(query, limit, where, params)
            return self._search_scan(query, limit, where, params)

    def _search_fts(
        self, query: str, limit: int, where: str, params: list[Any]
    ) -> list[IndexedItem]:
        with self._guard("search"):
            found = search_rows(self._db(), query, limit, where, params)
        pending = self._pending_counts()
        return [_item(row, relevance, pending) for row, relevance in found]

    def _search_scan(
        self, query: str, limit: int, where: str, params: list[Any]
    ) -> list[IndexedItem]:
        """The no-FTS5 fallback: word-start matching per column, idf-weighted, in Python."""
        terms = [_fold(t) for t in query_terms(query)]
        if not terms:
            return []
        patterns = [re.compile(r"(?<!\w)" + re.escape(t)) for t in terms]
        # instr() on the pre-folded text drops most rows in SQLite; the word-start match
        # and scoring then run in Python on the few left.
        anywhere = " OR ".join("instr(i.folded, ?) > 0" for _ in terms)
        sql = (
            f"{_SELECT_ITEM}, i.folded FROM items i "
            "LEFT JOIN access a ON a.item_id = i.item_id "
            f"WHERE ({anywhere}) {where} ORDER BY i.branch, i.position"
        )
        with self._guard("search"):
            conn = self._db()
            rows = conn.execute(sql, [*terms, *params]).fetchall()
            total = conn.execute(
                f"SELECT count(*) FROM items i WHERE 1 = 1 {where}", params
            ).fetchone()[0]
        hits: list[tuple[Any, dict[int, float]]] = []
        df: Counter[int] = Counter()
        for row in rows:
            folded = str(row[-1]).split(_FIELD_SEP)
            matched: dict[int, float] = {}
            for n, pattern in enumerate(patterns):
                weight = sum(
                    w for w, col in zip(COLUMN_WEIGHTS, folded, strict=True) if pattern.search(col)
                )
                if weight:
                    matched[n] = weight
            if matched:
                hits.append((row, matched))
                df.update(matched.keys())
        scored = [
            (sum(w * math.log(1 + total / df[n]) for n, w in matched.items()), row)
            for row, matched in hits
        ]
        scored.sort(key=lambda pair: -pair[0])
        scored = scored[:limit]
        if not scored:
            return []
        best = scored[0][0]
        pending = self._pending_counts()
        return [_item(row, score / best if best > 0 else 1.0, pending) for score, row in scored]

    # -- listing and access counts -----------------------------------------------------
    def get(self, item_id: str) -> IndexedItem | None:
        """The item with this id (the first branch holding it), or None."""
        with self._lock, self._guard("read"):
            row = (
                self._db()
                .execute(
                    f"{_SELECT_ITEM} FROM items i LEFT JOIN access a ON a.item_id = i.item_id "
                    "WHERE i.item_id = ? ORDER BY i.branch LIMIT 1",
                    (item_id,),
                )
                .fetchone()
            )
        return None if row is None else _item(row, 0.0, self._pending_counts())

    def items(
        self,
        *,
        category: Category | str | None = None,
        branch: str | None = None,
        tags: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[IndexedItem]:
        """Indexed items in branch and file order; `tags` keeps items carrying all of them."""
        where, params = _filters(category, branch, tags)
        with self._lock, self._guard("read"):
            rows = item_rows(self._db(), where, params, limit)
        pending = self._pending_counts()
        return [_item(row, 0.0, pending) for row in rows]

    def record_access(self, item_ids: Iterable[str]) -> None:
        """Count one more use of each item (they were returned to someone)."""
        ids = sorted(set(item_ids))
        if not ids:
            return
        now = time.time()
        with self._lock, self._write() as conn:
            conn.executemany(
                "INSERT INTO access(item_id, count, last_access) VALUES (?, 1, ?) "
                "ON CONFLICT(item_id) DO UPDATE SET count = count + 1, "
                "last_access = excluded.last_access",
                [(i, now) for i in ids],
            )

    def access_count(self, item_id: str) -> int:
        """How often an item was returned so far (folded and still in the log)."""
        with self._lock, self._guard("read"):
            row = (
                self._db()
                .execute("SELECT count FROM access WHERE item_id = ?", (item_id,))
                .fetchone()
            )
        return (0 if row is None else int(row[0])) + self._pending_counts().get(item_id, 0)

    def _pending_counts(self) -> dict[str, int]:
        """`pending_access` of this index; only the lines appended since the last call are read.

        A log of another inode (folded and started afresh) or shorter than what was read is
        read from its start. A last line without its newline is left for the next call.
        """
        path = self.path.parent / ACCESS_LOG
        try:
            with open(path, "rb") as handle:
                st = os.fstat(handle.fileno())
                # The inode and the first line's start (a time to the millisecond) name this
                # log: a new log that reused the inode of a folded one is read afresh.
                ident = (st.st_ino, handle.read(32))
                cached = self._pending
                if cached is not None and cached[0] == ident and cached[1] <= st.st_size:
                    _ident, offset, counts = cached
                    if offset == st.st_size:
                        return counts
                    counts = dict(counts)
                else:
                    offset, counts = 0, {}
                handle.seek(offset)
                data = handle.read()
        except OSError:
            self._pending = None
            return {}
        complete = data.rfind(b"\n") + 1
        for item_id, (count, _when) in _parse_access(data[:complete]).items():
            counts[item_id] = counts.get(item_id, 0) + count
        self._pending = (ident, offset + complete, counts)
        return counts

    def fold_access(self) -> int:
        """Move the counts of `ACCESS_LOG` into the `access` table; how many uses were folded.

        The log is renamed first, so appends that race with the fold land in a fresh file;
        a rename left by a fold that was cut short is picked up once it is `STALE_FOLD_S` old.
        """
        log_path = self.path.parent / ACCESS_LOG
        # A fold cut short leaves its renamed log; one that young may be another process's
        # fold under way, which must not be counted twice.
        pending = [
            p
            for p in sorted(self.path.parent.glob(f"{ACCESS_LOG}.folding-*"))
            if _age_s(p) > STALE_FOLD_S
        ]
        if log_path.exists():
            target = log_path.with_name(f"{ACCESS_LOG}.folding-{os.getpid()}-{time.time_ns()}")
            try:
                os.replace(log_path, target)
            except OSError:
                return 0
            pending.append(target)
        if not pending:
            return 0
        totals: dict[str, tuple[int, float]] = {}
        for path in pending:
            for item_id, (count, when) in _read_access_log(path).items():
                before = totals.get(item_id, (0, 0.0))
                totals[item_id] = (before[0] + count, max(before[1], when))
        if totals:
            with self._lock, self._write() as conn:
                conn.executemany(
                    "INSERT INTO access(item_id, count, last_access) VALUES (?, ?, ?) "
                    "ON CONFLICT(item_id) DO UPDATE SET count = count + excluded.count, "
                    "last_access = max(last_access, excluded.last_access)",
                    [(i, c, w) for i, (c, w) in sorted(totals.items())],
                )
        for path in pending:
            with contextlib.suppress(OSError):
                path.unlink()
        self._pending = None
        return sum(c for c, _w in totals.values())

    def _fold_quietly(self) -> None:
        """Fold the access log as part of another write; a failure only delays the counts."""
        if self._in_memory:
            return
        with contextlib.suppress(PuffinError, OSError, sqlite3.Error):
            self.fold_access()

    def health(self) -> dict[str, Any]:
        """Counts, search mode and an integrity check (reports; repairs nothing)."""
        report: dict[str, Any] = {
            "path": str(self.path),
            "fts5": self.fts5,
            "mode": self.mode,
            "items": None,
            "branches": None,
            "accessRecords": None,
            "sizeBytes": _size(self.path),
            "pendingRebuild": self._rebuild_reason,
            "integrity": "ok",
        }
        with self._lock:
            try:
                conn = self._db()
                report["items"] = conn.execute("SELECT count(*) FROM items").fetchone()[0]
                report["branches"] = conn.execute("SELECT count(*) FROM files").fetchone()[0]
                report["accessRecords"] = conn.execute("SELECT count(*) FROM access").fetchone()[0]
                problems = [
                    str(r[0]) for r in conn.execute("PRAGMA quick_check").fetchall() if r[0] != "ok"
                ]
                if self.fts5:
                    conn.execute("INSERT INTO items_fts(items_fts) VALUES('integrity-check')")
                if problems:
                    report["integrity"] = "; ".join(problems[:5])
            except sqlite3.Error as exc:
                report["integrity"] = f"{type(exc).__name__}: {exc}"
        return report

    # -- rows ----------------------------------------------------------------------------
    def _replace_rows(self, conn: sqlite3.Connection, branch: str, memory: BranchMemory) -> None:
        """Make a branch's rows match `memory`, touching only the items that changed.

        A memorize adds a few items to a branch of thousands: rewriting every row (and its
        FTS copy) made the cost grow with the branch. Rows whose item is unchanged stay;
        a moved item only gets its new position. Duplicate ids fall back to a full rewrite.
        """
        placed = _placed(memory)
        items = [item for _position, item in placed]
        replaced = _replaced_text(memory)
        old: dict[str, tuple[int, int, str, str]] = {}
        for rowid, item_id, position, data, body in conn.execute(
            "SELECT rowid, item_id, position, data, body FROM items WHERE branch = ?", (branch,)
        ):
            if item_id in old:
                old = {}
                break
            old[item_id] = (rowid, position, data, body)
        ids = {item.id for item in items}
        if not old or len(ids) != len(items):
            self._delete_branch(conn, branch)
            self._insert_branch(conn, branch, memory)
            return
        moved: list[tuple[int, int]] = []
        fresh: list[tuple[int, MemoryItem]] = []
        stale = [row[0] for item_id, row in old.items() if item_id not in ids]
        for position, item in placed:
            row = old.get(item.id)
            # (the body too: what an item replaced is searchable with it)
            if row is not None and row[2] == _item_json(item) and row[3] == _body(item, replaced):
                if row[1] != position:
                    moved.append((position, row[0]))
                continue
            if row is not None:
                stale.append(row[0])
            fresh.append((position, item))
        if len(stale) + len(fresh) > len(items) // 2:
            self._delete_branch(conn, branch)
            self._insert_branch(conn, branch, memory)
            return
        if stale:
            holes = [(rowid,) for rowid in stale]
            if self.fts5:
                conn.executemany("DELETE FROM items_fts WHERE rowid = ?", holes)
            conn.executemany("DELETE FROM items WHERE rowid = ?", holes)
        conn.executemany("UPDATE items SET position = ? WHERE rowid = ?", moved)
        added = [
            self._insert_item(conn, branch, position, item, replaced).lastrowid
            for position, item in fresh
        ]
        if self.fts5 and added:
            conn.executemany(_fts_fill("rowid = ?"), [(branch_words(branch), r) for r in added])

    def _insert_item(
        self,
        conn: sqlite3.Connection,
        branch: str,
        position: int,
        item: MemoryItem,
        replaced: dict[str, str] | None = None,
    ) -> sqlite3.Cursor:
        return conn.execute(_INSERT_ITEM, self._row(branch, position, item, replaced))

    def _row(
        self, branch: str, position: int, item: MemoryItem, replaced: dict[str, str] | None = None
    ) -> tuple[Any, ...]:
        body = _body(item, replaced)
        return (
            item.id,
            branch,
            project_of(branch),
            item.category.value,
            item.title,
            item.content,
            body,
            item.confidence,
            _tags_cell(item.tags),
            int(item.pinned),
            item.extracted.isoformat(),
            position,
            _item_json(item),
            self._folded(branch, item, body),
        )

    def _folded(self, branch: str, item: MemoryItem, body: str) -> str:
        """The searchable columns, folded, in FTS order; only the scan fallback reads them."""
        if self.fts5:
            return ""
        columns = (
            item.title,
            body,
            item.category.heading,
            branch_words(branch),
            project_of(branch),
            " ".join(item.tags),
        )
        return _FIELD_SEP.join(_fold(c.replace(_FIELD_SEP, " ")) for c in columns)

    def _insert_branch(self, conn: sqlite3.Connection, branch: str, memory: BranchMemory) -> None:
        replaced = _replaced_text(memory)
        conn.executemany(
            _INSERT_ITEM,
            [self._row(branch, position, item, replaced) for position, item in _placed(memory)],
        )
        if self.fts5:
            conn.execute(_fts_fill(), (branch_words(branch), branch))

    def _delete_branch(self, conn: sqlite3.Connection, branch: str) -> None:
        if self.fts5:
            conn.execute(
                "DELETE FROM items_fts WHERE rowid IN (SELECT rowid FROM items WHERE branch = ?)",
                (branch,),
            )
        conn.execute("DELETE FROM items WHERE branch = ?", (branch,))

    # -- connection, schema, damage ----------------------------------------------------
    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self._open()
        assert self._conn is not None
        return self._conn

    @contextlib.contextmanager
    def _guard(self, action: str) -> Iterator[None]:
        """Turn SQLite failures into StorageError; damage resets the file (CorruptIndexError)."""
        try:
            yield
        except sqlite3.OperationalError as exc:
            # Busy beyond the timeout, disk full, read-only: the index itself is fine.
            raise StorageError(f"The search index could not {action}: {exc}") from exc
        except sqlite3.DatabaseError as exc:
            self._reset("corrupt")
            raise CorruptIndexError(
                f"The search index was damaged ({exc}); it was reset and is rebuilt from the "
                "branch files on the next search."
            ) from exc

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._guard("write"):
            conn = self._db()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def _open(self) -> None:
        self._move_aside_if_not_a_file()
        existed = self.path.exists()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = self._connect()
        except OSError as exc:
            raise StorageError(f"Cannot create the folder of {self.path}: {exc}") from exc
        except sqlite3.OperationalError as exc:
            # A read-only or full disk: the index is derived, so searches still work from an
            # index built in memory from the branch files (slower to start, never wrong).
            import logging  # deferred: the hook path opens the index and never gets here

            logging.getLogger(__name__).warning(
                "search index %s unusable (%s): using one in memory", self.path, exc
            )
            self._open_in_memory()
            return
        except sqlite3.DatabaseError:
            # "file is not a database" and the like: it is only an index, so start afresh.
            self._reset("corrupt")
            return
        self._conn = conn
        try:
            version = self._meta("schema")
            if version != self._schema_tag():
                self._create_schema(drop=version is not None)
                if self._rebuild_reason is None:
                    self._rebuild_reason = "missing" if not existed or version is None else "schema"
        except CorruptIndexError:
            return  # the file was already reset to an empty index
        except sqlite3.DatabaseError:
            self._reset("corrupt")  # the header was fine, the pages behind it are not
            return
        self._file_id = _file_id(self.path)

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path,
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            check_same_thread=False,
        )
        try:
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA journal_mode=WAL")
            # Derived data: losing the last commits in a power cut only costs a re-sync.
            conn.execute("PRAGMA synchronous=NORMAL")
            # Reading the schema catches garbage files. Page-level damage surfaces as a
            # DatabaseError on use and is handled there; a full quick_check on every CLI
            # start would cost more than the search it serves (health() runs one).
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error:
            conn.close()
            raise
        return conn

    def _schema_tag(self) -> str:
        return f"{SCHEMA_VERSION}-{self.mode}"

    def _meta(self, key: str) -> str | None:
        try:
            row = self._db().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        except sqlite3.OperationalError:
            return None  # no meta table yet
        return None if row is None else str(row[0])

    def _create_schema(self, *, drop: bool) -> None:
        conn = self._db()
        with self._guard("create its tables"):
            if drop:
                # An older layout or the other search mode: item tables go, access stays.
                for table in ("items_fts", "items", "files"):
                    with contextlib.suppress(sqlite3.OperationalError):
                        conn.execute(f"DROP TABLE IF EXISTS {table}")
            conn.executescript(_SCHEMA)
            if self.fts5:
                conn.execute(_FTS_TABLE)
                conn.execute(_FTS_RANK)
            conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES ('schema', ?)",
                (self._schema_tag(),),
            )

    def _open_in_memory(self) -> None:
        self._conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        self._in_memory = True
        self._create_schema(drop=False)
        self._rebuild_reason = "unwritable"

    def _check_file(self) -> None:
        """Reopen when the file was deleted or replaced (another process rebuilt it)."""
        if self._in_memory and self._conn is not None:
            return
        current = _file_id(self.path)
        if current is not None and current == self._file_id and self._conn is not None:
            return
        self.close()
        self._open()

    def _move_aside_if_not_a_file(self) -> None:
        """A folder (or pipe, device) where the index belongs is renamed, never deleted.

        The index is derived and rebuilt from the branch files; what a user or a tool put in
        its place is kept beside it as `index.sqlite.not-an-index-<time>`.
        """
        import stat

        try:
            mode = os.lstat(self.path).st_mode
        except OSError:
            return
        if stat.S_ISREG(mode):
            return
        aside = self.path.with_name(
            f"{self.path.name}.not-an-index-{time.strftime('%Y%m%dT%H%M%S')}"
        )
        try:
            os.replace(self.path, aside)
        except OSError as exc:
            raise StorageError(
                f"{self.path} is not a file and cannot be moved aside: {exc.strerror or exc}"
            ) from exc
        self._rebuild_reason = "corrupt"

    def _reset(self, reason: str) -> None:
        """Replace a damaged index file by an empty one, keeping access counts if readable."""
        counts = self._salvage_access()
        self.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            target = Path(f"{self.path}{suffix}")
            try:
                target.unlink(missing_ok=True)
            except OSError as exc:
                raise StorageError(
                    f"The search index {self.path} is damaged and cannot be removed: {exc}"
                ) from exc
        try:
            self._conn = self._connect()
        except sqlite3.Error as exc:
            raise StorageError(f"Cannot create the search index {self.path}: {exc}") from exc
        self._create_schema(drop=False)
        if counts:
            with self._write() as conn:
                conn.executemany(
                    "INSERT OR REPLACE INTO access(item_id, count, last_access) VALUES (?, ?, ?)",
                    counts,
                )
        self._file_id = _file_id(self.path)
        self._rebuild_reason = reason

    def _salvage_access(self) -> list[tuple[str, int, float]]:
        try:
            conn = self._conn or sqlite3.connect(self.path, check_same_thread=False)
            try:
                rows = conn.execute("SELECT item_id, count, last_access FROM access").fetchall()
            finally:
                if conn is not self._conn:
                    conn.close()
        except sqlite3.Error:
            return []
        return [(str(r[0]), int(r[1]), float(r[2])) for r in rows]


# -- helpers -----------------------------------------------------------------------------
def _filters(
    category: Category | str | None, branch: str | None, tags: Sequence[str] | None
) -> tuple[str, list[Any]]:
    from app.core.models import Category

    value: str | None = None
    if category is not None:
        try:
            value = Category(category).value
        except ValueError as exc:
            raise InvalidInput(
                f"Unknown category {category!r}; use one of: "
                + ", ".join(c.value for c in Category)
            ) from exc
    return filter_clause(value, branch, tags)


def filter_clause(
    category: str | None, branch: str | None, tags: Sequence[str] | None
) -> tuple[str, list[Any]]:
    """SQL conditions (` AND ...`) and parameters for a category value, branch and tags."""
    where: list[str] = []
    params: list[Any] = []
    if category is not None:
        params.append(category)
        where.append("i.category = ?")
    if branch is not None:
        where.append("i.branch = ?")
        params.append(branch)
    for tag in tags or ():
        where.append("instr(i.tags, ?) > 0")
        params.append(f"|{tag}|")
    return "".join(f" AND {w}" for w in where), params


def _item(
    row: Sequence[Any], relevance: float, pending: dict[str, int] | None = None
) -> IndexedItem:
    from app.core.models import Category

    return IndexedItem(
        id=row[0],
        branch=row[1],
        project=row[2],
        category=Category(row[3]),
        title=row[4],
        content=row[5],
        text=row[6].split(_REPLACED_MARK, 1)[0],
        confidence=float(row[7]),
        tags=tuple(t for t in str(row[8]).split("|") if t),
        pinned=bool(row[9]),
        extracted=row[10],
        item_json=row[11],
        access_count=int(row[12]) + (pending.get(row[0], 0) if pending else 0),
        relevance=relevance,
    )


def _ratio(rank: float, best: float) -> float:
    # bm25 ranks are negative, best most negative; a degenerate best (>= 0) only happens
    # when every hit scores the same, so every hit is as good as the best.
    if best >= 0:
        return 1.0
    return max(0.0, min(1.0, rank / best))


def _fold(text: str) -> str:
    """Case- and accent-insensitive form (the scan's match of FTS5's remove_diacritics)."""
    text = text.casefold()
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def _file_id(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _report(
    rebuilt: bool,
    reason: str | None,
    updated: list[str],
    removed: list[str],
    failed: dict[str, str],
    start: float,
) -> dict[str, Any]:
    return {
        "rebuilt": rebuilt,
        "reason": reason,
        "updated": updated,
        "removed": removed,
        "failed": failed,
        "elapsedMs": round((time.perf_counter() - start) * 1000, 3),
    }


# Each item's row data, by the item object (`PerItem`): a memorize into a branch of
# thousands compares every row with its item, and only the new items need serializing.
_item_json: PerItem[str] = PerItem(lambda item: item.model_dump_json(), 8_192)


# Room for each section's items in `position`: an item added to one section leaves the rows
# of the sections after it where they are (a memorize into a branch of thousands moved them
# all, one UPDATE each).
_SECTION_SPAN = 1 << 20


def _replaced_text(memory: BranchMemory) -> dict[str, str]:
    """Item id -> the words of what it superseded.

    "We're not doing Celery anymore, Dramatiq instead" does not say for what; the item it
    replaced does ("For background jobs we use Celery …"). Searching "background jobs" finds
    the choice in force through what it replaced, not nothing.
    """
    found: dict[str, list[str]] = {}
    for entry in memory.contradictions:
        if entry.status != "superseded":
            continue
        words = " ".join(f"{old.title} {old.content}" for old in entry.items)
        for ref in entry.refs:
            found.setdefault(ref, []).append(words)
    return {ref: " ".join(parts) for ref, parts in found.items()}


def _body(item: MemoryItem, replaced: dict[str, str] | None) -> str:
    """The searchable text of an item: its own, then what it replaced."""
    extra = replaced.get(item.id) if replaced else None
    return f"{item.text}{_REPLACED_MARK}{extra}" if extra else item.text


# Between an item's own text and what it replaced in the body column (search reads both;
# results carry only the item's own).
_REPLACED_MARK = "\n\u2063replaced:\u2063 "


def _placed(memory: BranchMemory) -> list[tuple[int, MemoryItem]]:
    """Every section item with its `position`: file order, numbered per section."""
    from app.core.models import Category  # (loaded already: `memory` is one of its models)

    return [
        (rank * _SECTION_SPAN + index, item)
        for rank, category in enumerate(Category)
        for index, item in enumerate(memory.items[category])
    ]
