"""Retrieval quality on the labeled set in tests/fixtures/retrieval (issue 17).

Builds a temporary memory home holding the 302 items of `items.txt` (real branch files
written through `MemoryStore.write_text` + `format.render`, indexed by `MemoryIndex`),
asks the questions of a split through `MemoryReader.retrieve` (fast mode) and prints, per
question kind, hit@1, hit@5 and MRR, plus how many unanswerable questions still got an
answer, for three rankers in the same run: hybrid (embeddings + bm25, absolute threshold),
lexical (retrieve without the model) and plain BM25 (the index's own order, no threshold).
Tune on dev only; the test split is scored by tests/core/test_retrieval_quality.py.

    .venv/bin/python bench/retrieval_quality.py [--split dev|test|both] [--sweep]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.core.config import Config  # noqa: E402
from app.core.format import render  # noqa: E402
from app.core.index import MemoryIndex  # noqa: E402
from app.core.models import BranchMemory, Category, MemoryItem  # noqa: E402
from app.core.reader import MemoryReader  # noqa: E402
from app.core.store import MemoryStore  # noqa: E402

FIXTURES = REPO / "tests" / "fixtures" / "retrieval"
CATEGORIES = {
    "p": Category.CODING_PREFERENCES,
    "a": Category.ARCHITECTURAL_DECISIONS,
    "c": Category.PROJECT_CONVENTIONS,
    "b": Category.BUG_PATTERNS,
    "i": Category.IMPLEMENTATION_NOTES,
}
KINDS = ("shared-word", "paraphrase", "cross-branch", "unanswerable")


@dataclass(frozen=True)
class Question:
    kind: str
    branch: str
    answers: frozenset[str]
    text: str


def _rows(path: Path) -> list[list[str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.split("|", 3) for line in lines if line.strip() and not line.startswith("#")]


def load_items() -> list[tuple[str, str, Category, str]]:
    """(key, branch, category, content) of every labeled item."""
    return [(k, b, CATEGORIES[c], text) for k, b, c, text in _rows(FIXTURES / "items.txt")]


def load_questions(split: str) -> list[Question]:
    return [
        Question(kind, branch, frozenset(a for a in answers.split(",") if a), text)
        for kind, branch, answers, text in _rows(FIXTURES / split / "questions.txt")
    ]


def build_home(home: Path) -> tuple[MemoryStore, MemoryIndex, dict[str, str]]:
    """Write the items as branch files; returns store, index and content -> key."""
    store = MemoryStore(home)
    store.ensure()
    by_branch: dict[str, dict[Category, list[MemoryItem]]] = defaultdict(
        lambda: {c: [] for c in Category}
    )
    keys: dict[str, str] = {}
    for key, branch, category, content in load_items():
        extra: dict[str, Any] = {}
        if category is Category.ARCHITECTURAL_DECISIONS:
            extra = {"rationale": "", "trade_offs": ""}
        by_branch[branch][category].append(
            MemoryItem(
                category=category,
                title="",
                content=content,
                confidence=0.9,
                sources=["labeled-set"],
                extracted=date(2025, 1, 1),
                tags=[],
                **extra,
            )
        )
        keys[content] = key
    for branch, items in by_branch.items():
        store.write_text(branch, render(BranchMemory(branch_id=branch, items=items, summary="")))
    index = MemoryIndex(store.index_path)
    index.sync(store)
    return store, index, keys


class _NoEngine:
    name = "none"


def rankings(
    store: MemoryStore,
    index: MemoryIndex,
    keys: dict[str, str],
    questions: list[Question],
    *,
    semantic: bool,
    config: Config,
) -> list[list[str]]:
    reader = MemoryReader(store, index, _NoEngine(), config, semantic=semantic)  # type: ignore[arg-type]
    reader.backfill_vectors()  # as the app does after a scan
    out: list[list[str]] = []
    for q in questions:
        reply = reader.retrieve(q.text, 5, branch=q.branch)
        out.append([keys.get(m["content"], "?") for m in reply["memories"]])
    return out


def bm25_rankings(
    index: MemoryIndex, keys: dict[str, str], questions: list[Question]
) -> list[list[str]]:
    return [[keys.get(h.content, "?") for h in index.search(q.text, limit=5)] for q in questions]


def score(questions: list[Question], ranked: list[list[str]]) -> dict[str, dict[str, float]]:
    """Per kind: hit1, hit5, mrr, n; for unanswerable: answered (count) and n."""
    acc: dict[str, dict[str, float]] = {k: defaultdict(float) for k in KINDS}  # type: ignore[misc]
    for q, keys in zip(questions, ranked, strict=True):
        row = acc[q.kind]
        row["n"] += 1
        if q.kind == "unanswerable":
            row["answered"] += 1 if keys else 0
            continue
        rank = next((i for i, k in enumerate(keys) if k in q.answers), None)
        row["hit1"] += rank == 0
        row["hit5"] += rank is not None and rank < 5
        row["mrr"] += 0.0 if rank is None else 1.0 / (rank + 1)
    for kind, row in acc.items():
        if kind != "unanswerable" and row["n"]:
            for m in ("hit1", "hit5", "mrr"):
                row[m] /= row["n"]
    return {k: dict(v) for k, v in acc.items()}


def evaluate(split: str, config: Config | None = None) -> dict[str, dict[str, dict[str, float]]]:
    """Scores of hybrid, lexical and bm25 on `split` (hybrid only when the model exists)."""
    from app.core import embeddings

    config = config or Config()
    questions = load_questions(split)
    with tempfile.TemporaryDirectory() as tmp:
        store, index, keys = build_home(Path(tmp))
        try:
            result = {
                "lexical": score(
                    questions,
                    rankings(store, index, keys, questions, semantic=False, config=config),
                ),
                "bm25": score(questions, bm25_rankings(index, keys, questions)),
            }
            if embeddings.available():
                result["hybrid"] = score(
                    questions, rankings(store, index, keys, questions, semantic=True, config=config)
                )
        finally:
            index.close()
    return result


def _print(split: str, result: dict[str, dict[str, dict[str, float]]]) -> None:
    print(f"\n== {split} ==")
    print(f"{'ranker':8} {'kind':13} {'n':>3} {'hit@1':>6} {'hit@5':>6} {'MRR':>6}")
    for ranker, kinds in result.items():
        for kind, row in kinds.items():
            if kind == "unanswerable":
                print(
                    f"{ranker:8} {kind:13} {int(row['n']):3d} answered "
                    f"{int(row['answered'])} of {int(row['n'])}"
                )
            else:
                print(
                    f"{ranker:8} {kind:13} {int(row['n']):3d} {row['hit1']:6.2f} "
                    f"{row['hit5']:6.2f} {row['mrr']:6.2f}"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="both", choices=["dev", "test", "both"])
    parser.add_argument("--min-relevance", type=float, default=None)
    parser.add_argument("--sweep", action="store_true", help="threshold sweep on dev")
    parser.add_argument("--speed", action="store_true", help="p95 over 10,000 items")
    args = parser.parse_args()
    base = Config()
    if args.speed:
        speed()
        return
    if args.sweep:
        for t in (0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60):
            r = evaluate("dev", base.model_copy(update={"min_relevance": t}))["hybrid"]
            print(
                f"min_relevance {t:.2f}: paraphrase hit@5 {r['paraphrase']['hit5']:.2f} "
                f"shared hit@1 {r['shared-word']['hit1']:.2f} cross hit@1 "
                f"{r['cross-branch']['hit1']:.2f} unanswerable answered "
                f"{int(r['unanswerable']['answered'])}/{int(r['unanswerable']['n'])}"
            )
        return
    if args.min_relevance is not None:
        base = base.model_copy(update={"min_relevance": args.min_relevance})
    for split in ["dev", "test"] if args.split == "both" else [args.split]:
        start = time.perf_counter()
        _print(split, evaluate(split, base))
        print(f"({time.perf_counter() - start:.1f} s)")


def speed(branches: int = 200, per_branch: int = 50, runs: int = 200) -> None:
    """Retrieve p50/p95 over branches x per_branch items, hybrid beside lexical."""
    import os
    import statistics

    sys.path.insert(0, str(REPO / "bench"))
    from retrieval import QUERIES  # type: ignore[import-not-found]
    from retrieval import build_home as build_big

    with tempfile.TemporaryDirectory() as tmp:
        store = build_big(Path(tmp), branches, per_branch)
        index = MemoryIndex(store.index_path)
        index.sync(store)
        n = len(index.items())
        for semantic in (False, True):
            reader = MemoryReader(
                store,
                index,
                _NoEngine(),
                Config(),  # type: ignore[arg-type]
                semantic=semantic,
            )
            start = time.perf_counter()
            reader.backfill_vectors()
            reader.retrieve("warm up", 5)
            first = time.perf_counter() - start
            times = []
            for i in range(runs):
                t0 = time.perf_counter()
                reader.retrieve(QUERIES[i % len(QUERIES)], 5)
                times.append((time.perf_counter() - t0) * 1000)
            times.sort()
            label = "hybrid " if semantic else "lexical"
            print(
                f"{label} {n} items: first call {first:.1f} s, p50 "
                f"{statistics.median(times):.1f} ms, p95 {times[int(0.95 * runs)]:.1f} ms "
                "(target p95 <= 20 ms)"
            )
        vec = Path(tmp) / "vectors.sqlite"
        if vec.exists():
            size = os.path.getsize(vec)
            print(
                f"vectors.sqlite {size / 1e6:.1f} MB = {size / n * 1000 / 1e6:.2f} MB per "
                f"1,000 items; index {os.path.getsize(store.index_path) / 1e6:.1f} MB"
            )
        index.close()


if __name__ == "__main__":
    main()
