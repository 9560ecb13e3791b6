"""Would a classifier over sentence embeddings, used as a veto on the rules' items, help?

The rules (app/engines/offline) propose items; a logistic regression over the item's
all-MiniLM-L6-v2 embedding and a few shape features (bench/directive_classifier.py: trained
on the labeled dialogue set's sentences, positive when a sentence holds every keyword of a
required item) says how much each item looks like what reviewers keep. Items below a
threshold are dropped. Scored by leave-one-conversation-out on dev (the model never sees
the conversation whose items it judges), for several thresholds, against the rules alone.
Bug patterns are left to the rules (their items join several sentences).

Run: `.venv/bin/python bench/item_veto.py [--split holdout]` (a split other than dev is
scored with the model trained on all of dev, at the threshold given by --threshold).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import dialogue_quality as dq  # noqa: E402
import directive_classifier as dc  # noqa: E402

from app.core import embeddings  # noqa: E402
from app.core.models import Category, MemoryItem  # noqa: E402


def item_rows(items: list[MemoryItem], conv: str) -> list[dict[str, Any]]:
    return [
        {
            "conv": conv,
            "text": i.content,
            "user": "source:user" in i.tags,
            "pasted": False,
            "first": False,
            "bullet": False,
            "hits": [],
            "musts": 0,
        }
        for i in items
    ]


def evaluate(
    convs: list[dq.Conversation], probs: dict[str, list[float]], threshold: float
) -> tuple[float, float, int]:
    kept_total = good = hits = musts = 0
    for c in convs:
        kept = [
            i
            for i, p in zip(c.committed(), probs[c.name], strict=True)
            if i.category is Category.BUG_PATTERNS or p >= threshold
        ]
        kept_total += len(kept)
        good += sum(c.good(i) for i in kept)
        hits += sum(c.matched(kept))
        musts += len(c.must)
    return good / max(1, kept_total), hits / max(1, musts), kept_total


def conversations(split: str) -> list[dq.Conversation]:
    folder = dq.DIALOGUE / split
    return [
        dq.score_conversation(p)[0]
        for p in sorted(folder.glob("*.txt"))
        if p.with_suffix(".expected.json").is_file()
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--split", default="dev")
    parser.add_argument("--threshold", type=float, default=0.3)
    args = parser.parse_args()
    if not embeddings.available():
        raise SystemExit("the embedding model is not installed")
    dev_rows = dc.samples("dev")
    x_dev = dc.features(dev_rows)
    y_dev = np.array([bool(r["hits"]) for r in dev_rows], dtype=np.float64)
    if args.split == "dev":
        convs = conversations("dev")
        probs: dict[str, list[float]] = {}
        for c in convs:
            rows = item_rows(c.committed(), c.name)
            if not rows:
                probs[c.name] = []
                continue
            held = np.array([r["conv"] == c.name for r in dev_rows])
            model = dc.fit(x_dev[~held], y_dev[~held])
            probs[c.name] = dc.predict(dc.features(rows), model).tolist()
        for threshold in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6):
            p, r, n = evaluate(convs, probs, threshold)
            label = "rules alone" if threshold == 0 else f"veto below {threshold:.1f}"
            print(
                f"dev, leave one conversation out, {label:<16} precision {p:.2f} "
                f"recall {r:.2f} ({n} items)"
            )
        return
    model = dc.fit(x_dev, y_dev)
    convs = conversations(args.split)
    probs = {
        c.name: (
            dc.predict(dc.features(item_rows(c.committed(), c.name)), model).tolist()
            if c.committed()
            else []
        )
        for c in convs
    }
    for threshold in (0.0, args.threshold):
        p, r, n = evaluate(convs, probs, threshold)
        label = "rules alone" if threshold == 0 else f"veto below {threshold:.1f}"
        print(
            f"{args.split}, trained on all of dev, {label:<16} precision {p:.2f} "
            f"recall {r:.2f} ({n} items)"
        )


if __name__ == "__main__":
    main()
