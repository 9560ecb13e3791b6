"""Which of the five categories a statement's wording belongs to: a small naive Bayes model.

Owns the trained word model in `data/category_model.json` (built by
`bench/train_category.py` from the retrieval set's labeled items and the dialogue set's dev
labels, never from a test split) and scoring a statement against it. The extractor's rules
decide *whether* a sentence is worth keeping and its family (decision, rule, bug); this
decides between categories where the wording, not a keyword table, tells a team rule
("every terraform change goes through a PR") from a code preference ("no force unwraps").
"""

from __future__ import annotations

import itertools
import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from app.core.models import Category

MODEL = Path(__file__).resolve().parent / "data" / "category_model.json"
_TOKEN = re.compile(r"[a-z0-9][a-z0-9_+#.-]*[a-z0-9]|[a-z0-9]")


def features(text: str) -> list[str]:
    """Lower-cased words and adjacent word pairs."""
    words = _TOKEN.findall(text.lower())
    return words + [f"{a} {b}" for a, b in itertools.pairwise(words)]


class Classifier:
    """Scores text against a trained model (a dict as written by the training script)."""

    def __init__(self, model: dict[str, Any]) -> None:
        self._model = model["categories"]

    def scores(self, text: str) -> dict[str, float]:
        """Log posterior (up to a constant) per category name."""
        found = features(text)
        out: dict[str, float] = {}
        for name, table in self._model.items():
            words = table["words"]
            unseen = table["unseen"]
            out[name] = table["prior"] + sum(words.get(w, unseen) for w in found)
        return out

    def best(self, text: str, among: tuple[str, ...] | None = None) -> str:
        """The most likely category (optionally restricted to `among`)."""
        scores = self.scores(text)
        names = among or tuple(scores)
        return max(names, key=lambda n: scores[n])


@lru_cache(maxsize=1)
def _classifier() -> Classifier | None:
    try:
        return Classifier(json.loads(MODEL.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError):
        return None


def choose(text: str, among: tuple[Category, ...]) -> Category | None:
    """The likeliest of `among` for this wording; None when the model is missing."""
    model = _classifier()
    if model is None:
        return None
    return Category(model.best(text, tuple(c.value for c in among)))
