"""Measure a judge over sentence embeddings against the rules (issue 11, point 6).

The deferred question of docs/decisions.md ("a classifier over sentence embeddings … would
need a labeled set ten times larger"): with the dev split now at 375 conversations, does a
logistic regression over each candidate's MiniLM embedding (plus who said it and how the
rules built it) pick the items reviewers keep better than the rules alone?

Samples are the candidates `read_candidates(plain=True)` builds: the rules' candidates and
every plain statement they passed over. A sample is positive when its item holds every
keyword of a required item. The thresholds (`add` for plain statements, `veto` for the
rules' candidates) are chosen on out-of-fold scores of the training conversations; the
model trained on all of them is then scored once on the held-back batch (`--held`, a dev
batch left out of training), side by side with the rules alone. Only dev is read.

Run: `.venv/bin/python bench/embedding_judge.py [--held 'dev9*']`. Takes a few minutes
(every candidate is embedded once).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.embeddings import embed  # noqa: E402
from app.engines.offline.extract_text import Speaker  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from train_judge import DEV, best_thresholds, labeled_candidates  # noqa: E402

COMMIT = 0.75
FAMILIES = ("directive", "preference", "decision", "convention", "bug", "lesson", "section")
Array = npt.NDArray[np.float64]


class Rows:
    """Dense samples of many conversations."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.side: list[list[float]] = []
        self.conv: list[int] = []
        self.plain: list[bool] = []
        self.confidence: list[float] = []
        self.keeps: list[bool] = []
        self.good: list[frozenset[int]] = []
        self.musts: list[int] = []
        self.x: Array = np.zeros((0, 0))

    def add(self, paths: list[Path]) -> None:
        for path in paths:
            n = len(self.musts)
            count, _context, found = labeled_candidates(path)
            self.musts.append(count)
            for c, hit, good in found:
                self.texts.append(c.content)
                self.side.append(
                    [
                        1.0,
                        float(c.plain),
                        c.confidence,
                        float(c.speaker is Speaker.USER),
                        *(float(c.family.value == f) for f in FAMILIES),
                    ]
                )
                self.conv.append(n)
                self.plain.append(c.plain)
                self.confidence.append(c.confidence)
                self.keeps.append(hit)
                self.good.append(good)

    def embed(self) -> None:
        vectors = embed(self.texts)
        if vectors is None:
            raise SystemExit("the embedding model is not installed")
        self.x = np.hstack([vectors.astype(np.float64), np.array(self.side)])


def fit(x: Array, y: Array, l2: float, epochs: int = 300, rate: float = 0.5) -> Array:
    balance = np.where(y == 1, (len(y) - y.sum()) / max(1.0, y.sum()), 1.0)
    w = np.zeros(x.shape[1])
    for _ in range(epochs):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -30, 30)))
        grad = x.T @ ((p - y) * balance) / len(y) + l2 * w / len(y)
        w -= rate * grad
    return w


def predict(x: Array, w: Array) -> Array:
    result: Array = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -30, 30)))
    return result


def measure(
    rows: Rows, idx: npt.NDArray[np.int64], s: Array, add: float, veto: float
) -> tuple[float, float]:
    kept = [
        int(i)
        for i, score in zip(idx, s, strict=True)
        if (score >= add if rows.plain[i] else (score >= veto and rows.confidence[i] >= COMMIT))
    ]
    found = {(rows.conv[i], g) for i in kept for g in rows.good[i]}
    convs = {rows.conv[int(i)] for i in idx}
    precision = sum(bool(rows.good[i]) for i in kept) / len(kept) if kept else 1.0
    return precision, len(found) / max(1, sum(rows.musts[c] for c in convs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--held", default="dev9*", help="dev batch left out of training")
    parser.add_argument("--beta", type=float, default=1.0)
    args = parser.parse_args()
    labeled = [p for p in sorted(DEV.glob("*.txt")) if p.with_suffix(".expected.json").is_file()]
    held = sorted(DEV.glob(args.held))
    train_paths = [p for p in labeled if p not in held]
    held_paths = [p for p in labeled if p in held]
    rows = Rows()
    rows.add(train_paths)
    first_held = len(rows.texts)
    rows.add(held_paths)
    print(f"{len(train_paths)} training conversations, {len(held_paths)} held back")
    print(f"{len(rows.texts)} candidates; embedding them …", flush=True)
    rows.embed()
    y = np.array(rows.keeps, dtype=np.float64)
    train = np.arange(first_held)
    test = np.arange(first_held, len(rows.texts))
    ones = np.ones(len(test))
    p, r = measure(rows, test, ones, 2.0, 0.0)
    print(f"held back, rules alone: precision {p:.2f} recall {r:.2f}")
    p, r = measure(rows, train, np.ones(len(train)), 2.0, 0.0)
    print(f"training set, rules alone: precision {p:.2f} recall {r:.2f}")
    beta2 = args.beta**2
    folds = 6
    convs = np.array(rows.conv)
    best: tuple[float, float, float, float, float, float] | None = None
    for l2 in (1.0, 10.0, 100.0):
        oof = np.zeros(len(train))
        for k in range(folds):
            mask = convs[train] % folds == k
            w = fit(rows.x[train][~mask], y[train][~mask], l2)
            oof[mask] = predict(rows.x[train][mask], w)
        best = best_thresholds(
            lambda a, v, s=oof: measure(rows, train, s, a, v), beta2, 0.91, l2, best
        )
        print(f"l2 {l2}: best out of fold so far {best[4]:.2f} / {best[5]:.2f}", flush=True)
    assert best is not None
    _f, l2, add, veto, p, r = best
    print(f"chosen l2 {l2} add {add:.2f} veto {veto:.2f}: out of fold {p:.2f} / {r:.2f}")
    w = fit(rows.x[train], y[train], l2)
    s = predict(rows.x[test], w)
    for a, v in ((add, veto), (add + 0.05, veto), (add, veto + 0.1), (2.0, veto)):
        p, r = measure(rows, test, s, a, v)
        print(f"held back, judged (add {a:.2f} veto {v:.2f}): precision {p:.2f} recall {r:.2f}")


if __name__ == "__main__":
    main()
