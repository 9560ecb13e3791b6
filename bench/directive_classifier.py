"""Would a classifier over sentence embeddings find memorable statements better than rules?

Issue 11 asks to measure it. Every prose sentence of the labeled dialogue set
(tests/fixtures/dialogue) is a sample: positive when it holds every keyword of a required
item. Features: the all-MiniLM-L6-v2 embedding (the retrieval model) plus speaker, pasted,
first-in-turn, bullet, question mark and length. A logistic regression (numpy, class-weighted)
is scored by leave-one-conversation-out on dev, then trained on all of dev and scored once on
test. The rule engine's figures on the same splits come from bench/dialogue_quality.py.

Run: `.venv/bin/python bench/directive_classifier.py`
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core import embeddings  # noqa: E402
from app.core.redact import redact  # noqa: E402
from app.engines.offline.extract_items import skip_section  # noqa: E402
from app.engines.offline.extract_text import Speaker, read_statements, split_turns  # noqa: E402

DIALOGUE = ROOT / "tests" / "fixtures" / "dialogue"
Array = npt.NDArray[np.float64]


def samples(split: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for path in sorted((DIALOGUE / split).glob("*.txt")):
        labels_path = path.with_suffix(".expected.json")
        if not labels_path.is_file():
            continue
        labels = json.loads(labels_path.read_text(encoding="utf-8"))
        musts = [[k.lower() for k in e.get("keywords", [])] for e in labels.get("must", [])]
        reading = read_statements(
            split_turns(redact(path.read_text(encoding="utf-8"))), skip_section
        )
        for s in reading.statements:
            if s.speaker not in (Speaker.USER, Speaker.AGENT):
                continue
            low = s.text.lower()
            out.append(
                {
                    "conv": path.stem,
                    "text": s.text,
                    "user": s.speaker is Speaker.USER,
                    "pasted": s.pasted,
                    "first": s.first_in_turn,
                    "bullet": s.bullet,
                    "hits": [i for i, m in enumerate(musts) if m and all(k in low for k in m)],
                    "musts": len(musts),
                }
            )
    return out


def features(rows: list[dict[str, Any]]) -> Array:
    vectors = embeddings.embed([r["text"] for r in rows])
    assert vectors is not None
    extra = np.array(
        [
            [
                r["user"],
                r["pasted"],
                r["first"],
                r["bullet"],
                r["text"].rstrip().endswith("?"),
                min(len(r["text"]), 300) / 300,
            ]
            for r in rows
        ],
        dtype=np.float64,
    )
    return np.hstack([vectors.astype(np.float64), extra])


def fit(
    x: Array, y: Array, l2: float = 1.0, epochs: int = 400, rate: float = 0.5
) -> tuple[Array, float]:
    weights, bias = np.zeros(x.shape[1]), 0.0
    balance = np.where(y == 1, (len(y) - y.sum()) / max(1.0, y.sum()), 1.0)
    for _ in range(epochs):
        grad = (1 / (1 + np.exp(-(x @ weights + bias))) - y) * balance
        weights -= rate * (x.T @ grad / len(y) + l2 * weights / len(y))
        bias -= rate * float(grad.mean())
    return weights, bias


def predict(x: Array, model: tuple[Array, float]) -> Array:
    result: Array = 1 / (1 + np.exp(-(x @ model[0] + model[1])))
    return result


def score(name: str, prob: Array, rows: list[dict[str, Any]], threshold: float) -> None:
    picked = prob >= threshold
    good = sum(1 for r, p in zip(rows, picked, strict=True) if p and r["hits"])
    found = {(r["conv"], h) for r, p in zip(rows, picked, strict=True) if p for h in r["hits"]}
    total = sum({r["conv"]: r["musts"] for r in rows}.values())
    print(
        f"{name:<34} threshold {threshold:.2f}: {int(picked.sum()):>3} sentences, "
        f"precision {good / max(1, int(picked.sum())):.2f}, "
        f"required items found {len(found)}/{total} = {len(found) / total:.2f}"
    )


def main() -> None:
    if not embeddings.available():
        raise SystemExit("the embedding model is not installed (see docs/decisions.md)")
    dev, test = samples("dev"), samples("test")
    x_dev, x_test = features(dev), features(test)
    y_dev = np.array([bool(r["hits"]) for r in dev], dtype=np.float64)
    loo = np.zeros(len(dev))
    for conv in sorted({r["conv"] for r in dev}):
        held = np.array([r["conv"] == conv for r in dev])
        loo[held] = predict(x_dev[held], fit(x_dev[~held], y_dev[~held]))
    model = fit(x_dev, y_dev)
    for threshold in (0.5, 0.7):
        score("dev, leave one conversation out", loo, dev, threshold)
        score("test, trained on all of dev", predict(x_test, model), test, threshold)
    print(
        "rules (bench/dialogue_quality.py): dev precision 0.97 recall 0.71; "
        "test precision 0.59 recall 0.43"
    )


if __name__ == "__main__":
    main()
