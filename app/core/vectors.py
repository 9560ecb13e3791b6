"""Item embedding vectors: a small SQLite file (`vectors.sqlite` beside the index) we own.

Rows are keyed by item id and a hash of the text that was embedded; a row whose hash no
longer matches the item's current text is stale and recomputed, so hand edits and
rewrites never serve an old vector. Vectors are stored as float16 blobs (768 bytes per
item) and kept in memory as one float32 matrix for fast cosine scoring. The FTS schema in
index.py is left untouched: this file can be deleted at any time and is rebuilt lazily.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from app.core import embeddings

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS vectors ("
    "item_id TEXT PRIMARY KEY, hash TEXT NOT NULL, model TEXT NOT NULL, vec BLOB NOT NULL)"
)


def text_hash(text: str) -> str:
    """Hash of the embedded text; a changed item gets a new hash and a new vector."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=12).hexdigest()


class VectorStore:
    """Vectors for indexed items, computed on demand and cached in memory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.RLock()
        self._cache: dict[str, tuple[str, npt.NDArray[np.float32]]] = {}
        self._loaded = False
        self._model = ""
        # Vectors the last `ensure` left uncomputed because of its limit.
        self.missing = 0

    def _conn(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=5.0)
        conn.execute(_SCHEMA)
        return conn

    def _load(self) -> None:
        import numpy as np

        if self._loaded and self._model == embeddings.model_id():
            return
        # Another model was chosen: vectors of the old one do not compare with its own.
        self._cache.clear()
        self._model = embeddings.model_id()
        self._loaded = True
        if not self.path.exists():
            return
        conn = self._conn()
        try:
            rows = conn.execute(
                "SELECT item_id, hash, vec FROM vectors WHERE model = ?",
                (embeddings.model_id(),),
            ).fetchall()
        finally:
            conn.close()
        for item_id, digest, blob in rows:
            self._cache[item_id] = (digest, np.frombuffer(blob, np.float16).astype(np.float32))

    def ensure(
        self,
        texts: Sequence[tuple[str, str]],
        progress: Callable[[int, int], None] | None = None,
        *,
        limit: int | None = None,
    ) -> npt.NDArray[np.float32] | None:
        """Matrix of unit vectors for `(item_id, text)` pairs, computing missing/stale ones.

        Returns None when no embedding model is installed. `progress(done, total)` is
        called after each computed batch (for backfills of existing items). With `limit`,
        at most that many vectors are computed in this call and the rows still missing are
        zero vectors (no semantic similarity; their lexical score still counts): a query
        must not wait for the backfill of a large memory (about 15 ms an item).
        """
        import numpy as np

        with self._lock:
            self._load()
            todo = [
                (item_id, text, text_hash(text))
                for item_id, text in texts
                if self._cache.get(item_id, ("", None))[0] != text_hash(text)
            ]
            self.missing = max(0, len(todo) - limit) if limit is not None else 0
            if limit is not None:
                todo = todo[:limit]
            # The model is loaded only when there is something to compute.
            embedder = embeddings.get_embedder() if todo else None
            if todo and embedder is None:
                return None
            step = 64
            for start in range(0, len(todo), step):
                if embedder is None:
                    break
                chunk = todo[start : start + step]
                vecs = embedder.embed([t for _, t, _ in chunk])
                rows = []
                for (item_id, _, digest), vec in zip(chunk, vecs, strict=True):
                    self._cache[item_id] = (digest, vec)
                    rows.append(
                        (item_id, digest, embeddings.model_id(), vec.astype(np.float16).tobytes())
                    )
                conn = self._conn()
                try:
                    with conn:
                        conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", rows)
                finally:
                    conn.close()
                if progress is not None:
                    progress(min(start + step, len(todo)), len(todo))
            width = next((v.shape[0] for _, v in self._cache.values()), embeddings.DIM)
            if not texts:
                return np.zeros((0, width), dtype=np.float32)
            zero = np.zeros(width, dtype=np.float32)
            return np.stack(
                [
                    self._cache[item_id][1] if item_id in self._cache else zero
                    for item_id, _ in texts
                ]
            )
