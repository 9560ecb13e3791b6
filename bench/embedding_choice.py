"""Which embedding model: the bundled MiniLM (numpy) against wordllama, dense ranking only.

Ranks the 302 labeled items of tests/fixtures/retrieval for every question of a split by
cosine similarity alone (no lexical fusion, no threshold) with each model that can be
loaded here, and prints hit@1 / hit@5 per question kind, load time, time per query and
the installed size, side by side. The app's choice is recorded in docs/decisions.md.

wordllama is not a dependency of the app. To measure it, install it somewhere else and put
it on the path: `pip install --target /tmp/wl wordllama`, then
`PYTHONPATH=/tmp/wl .venv/bin/python bench/embedding_choice.py [--split test]`.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import numpy as np  # noqa: E402
from retrieval_quality import KINDS, load_items, load_questions  # noqa: E402

Encoder = Callable[[list[str]], np.ndarray]


def _size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def minilm() -> tuple[Encoder, float, float] | None:
    from app.core import embeddings

    folder = embeddings.model_dir()
    if folder is None:
        return None
    start = time.perf_counter()
    model = embeddings.Embedder(folder)
    return model.embed, time.perf_counter() - start, _size_mb(folder)


def wordllama() -> tuple[Encoder, float, float] | None:
    spec = importlib.util.find_spec("wordllama")
    if spec is None or spec.origin is None:
        return None
    from wordllama import WordLlama

    package = Path(spec.origin).parent
    start = time.perf_counter()
    model = WordLlama.load(cache_dir=package, disable_download=True)
    loaded = time.perf_counter() - start

    def encode(texts: list[str]) -> np.ndarray:
        vecs = np.asarray(model.embed(texts), dtype=np.float32)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        return vecs / np.maximum(norms, 1e-12)

    return encode, loaded, _size_mb(package)


def measure(name: str, encoder: Encoder, split: str) -> dict[str, dict[str, float]]:
    items = load_items()
    keys = [k for k, *_ in items]
    matrix = encoder([content for *_, content in items])
    questions = load_questions(split)
    start = time.perf_counter()
    scores: dict[str, dict[str, float]] = {k: {"n": 0, "hit1": 0, "hit5": 0} for k in KINDS}
    for q in questions:
        sims = matrix @ encoder([q.text])[0]
        order = [keys[i] for i in np.argsort(-sims)[:5]]
        row = scores[q.kind]
        row["n"] += 1
        if q.kind == "unanswerable":
            row["top"] = row.get("top", 0.0) + float(sims.max())
            continue
        row["hit1"] += order[0] in q.answers
        row["hit5"] += any(k in q.answers for k in order)
    per_query = (time.perf_counter() - start) / max(1, len(questions)) * 1000
    scores["_"] = {"ms": per_query}
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--split", choices=["dev", "test"], default="test")
    args = parser.parse_args()
    print(f"{'model':10} {'kind':13} {'n':>3} {'hit@1':>6} {'hit@5':>6}")
    for name, loader in (("minilm", minilm), ("wordllama", wordllama)):
        loaded = loader()
        if loaded is None:
            print(f"{name:10} (not installed here)")
            continue
        encoder, load_s, size = loaded
        result = measure(name, encoder, args.split)
        for kind in KINDS:
            row = result[kind]
            n = int(row["n"])
            if kind == "unanswerable":
                print(
                    f"{name:10} {kind:13} {n:3d} mean top cosine "
                    f"{row.get('top', 0.0) / max(1, n):.2f}"
                )
            else:
                print(f"{name:10} {kind:13} {n:3d} {row['hit1'] / n:6.2f} {row['hit5'] / n:6.2f}")
        print(
            f"{name:10} load {load_s:.2f} s, {result['_']['ms']:.1f} ms a query, "
            f"{size:.0f} MB on disk"
        )


if __name__ == "__main__":
    main()
