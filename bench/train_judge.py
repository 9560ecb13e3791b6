"""Train the offline engine's learned judge (app/engines/offline/judge.py) on dev data.

Every candidate `read_candidates` builds for a dev conversation is a sample: positive when
the item it becomes holds every keyword of one of the conversation's required items
(whatever its category: the judge decides whether to keep, not how to file). A logistic
regression over the judge's sparse features is fitted with numpy. The two thresholds (`add`
for plain statements, `veto` for the rules' candidates) are chosen on out-of-fold scores
(conversations split into folds, each scored by a model that never saw it), by the bench's
own measure: precision and recall of committed items against the labels, category included.
`--agent-veto` and `--agent-veto-unsure` are written as given: they were chosen by running
the engine over dev (see docs/decisions.md, thirteenth part). Only dev and the held-out
batches retired to training (3 to 5, `RETIRED`) are read; the test split and the held-out
batches still only scored are never seen here.

`--hold-only` trains the second model the judge carries instead, the hold model: the
user's rule candidates of the same conversations, with the items the sequences of dev and
the retired batches keep active or record as superseded as more positives; it reports
its out-of-fold AUC and how often each score band holds a required item, and with
--write adds `hold` (as given) and `hold_weights` to the shipped file, the judge's own
weights untouched (docs/decisions.md, twentieth part).

Run: `.venv/bin/python bench/train_judge.py [--write]` (without --write it only reports).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.core.models import Category  # noqa: E402
from app.core.redact import redact  # noqa: E402
from app.engines.offline import judge as judge_module  # noqa: E402
from app.engines.offline.extract import (  # noqa: E402
    _EMPHATIC,
    _VERDICT_NAMED,
    DISPUTES,
    REPLACES,
    _item,
    read_candidates,
)
from app.engines.offline.extract_items import Candidate  # noqa: E402
from app.engines.offline.extract_text import Speaker  # noqa: E402
from app.engines.offline.judge import Context  # noqa: E402

DEV = ROOT / "tests" / "fixtures" / "dialogue" / "dev"
# Held-out batches retired to training once their unseen scores were recorded (docs/
# decisions.md, fourteenth part): the judge learns from more annotators than dev's.
RETIRED = tuple(DEV.parent / b for b in ("holdout3", "holdout4", "holdout5"))
COMMIT = 0.75
Array = npt.NDArray[np.float64]


@dataclass
class Sample:
    conv: int
    plain: bool
    confidence: float
    keeps: bool  # holds a required item's keywords (any category)
    good: frozenset[int]  # required items it matches, category included
    feats: dict[int, float]


def _labels(path: Path) -> list[tuple[tuple[Category, ...], tuple[str, ...]]]:
    data = json.loads(path.with_suffix(".expected.json").read_text(encoding="utf-8"))
    out = []
    for entry in data.get("must", []):
        raw = entry.get("category", [])
        names = [raw] if isinstance(raw, str) else list(raw)
        out.append((tuple(Category(n) for n in names), tuple(k.lower() for k in entry["keywords"])))
    return out


def labeled_candidates(
    path: Path,
) -> tuple[int, Context, list[tuple[Candidate, bool, frozenset[int]]]]:
    """A conversation's count of required items, its context, and each candidate with
    whether it holds a required item's keywords and which required items it matches
    (category included)."""
    labels = _labels(path)
    candidates, context, _notes = read_candidates(
        redact(path.read_text(encoding="utf-8")), plain=True
    )
    out = []
    for c in candidates:
        text = _item(c, "x", date(2026, 1, 1)).text.lower()
        hit = [i for i, (_cats, words) in enumerate(labels) if all(w in text for w in words)]
        good = frozenset(i for i in hit if not labels[i][0] or c.category in labels[i][0])
        out.append((c, bool(hit), good))
    return len(labels), context, out


def samples(paths: list[Path], rules: bool = True) -> tuple[list[Sample], list[int]]:
    """Samples of every conversation, and each conversation's count of required items."""
    rows: list[Sample] = []
    musts: list[int] = []
    for n, path in enumerate(paths):
        count, context, found = labeled_candidates(path)
        musts.append(count)
        for c, hit, good in found:
            rows.append(
                Sample(
                    n,
                    c.plain,
                    c.confidence,
                    hit,
                    good,
                    judge_module.features(c, context, extra=c.plain, rules=rules),
                )
            )
    return rows, musts


def _matrix(rows: list[Sample]) -> tuple[npt.NDArray[np.int64], Array, npt.NDArray[np.int64]]:
    cols = [np.fromiter(r.feats.keys(), dtype=np.int64) for r in rows]
    vals = [np.fromiter(r.feats.values(), dtype=np.float64) for r in rows]
    which = np.concatenate([np.full(len(c), i, dtype=np.int64) for i, c in enumerate(cols)])
    return np.concatenate(cols), np.concatenate(vals), which


def fit(rows: list[Sample], l2: float, epochs: int = 400, rate: float = 1.0) -> Array:
    """Class-balanced logistic regression on sparse rows (weights per bucket)."""
    cols, vals, which = _matrix(rows)
    y = np.array([r.keeps for r in rows], dtype=np.float64)
    balance = np.where(y == 1, (len(y) - y.sum()) / max(1.0, y.sum()), 1.0)
    w = np.zeros(judge_module.BUCKETS)
    for _ in range(epochs):
        z = np.bincount(which, weights=vals * w[cols], minlength=len(rows))
        g = (1.0 / (1.0 + np.exp(-z)) - y) * balance
        grad = np.bincount(cols, weights=vals * g[which], minlength=len(w)) / len(rows)
        w -= rate * (grad + l2 * w / len(rows))
    return w


def predict(rows: list[Sample], w: Array) -> Array:
    cols, vals, which = _matrix(rows)
    z = np.bincount(which, weights=vals * w[cols], minlength=len(rows))
    result: Array = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
    return result


def measure(
    rows: list[Sample], musts: list[int], scores: Array, add: float, veto: float
) -> tuple[float, float]:
    """Precision and recall of committed items, as bench/dialogue_quality.py counts them."""
    kept = [
        r
        for r, s in zip(rows, scores, strict=True)
        if (s >= add if r.plain else (s >= veto and r.confidence >= COMMIT))
    ]
    found = {(r.conv, i) for r in kept for i in r.good}
    precision = sum(bool(r.good) for r in kept) / len(kept) if kept else 1.0
    return precision, len(found) / max(1, sum(musts))


def out_of_fold(rows: list[Sample], convs: int, l2: float, folds: int = 8) -> Array:
    scores = np.zeros(len(rows))
    fold_of = np.array([r.conv % folds for r in rows])
    for k in range(folds):
        train = [r for r, f in zip(rows, fold_of, strict=True) if f != k]
        held = [i for i, f in enumerate(fold_of) if f == k]
        w = fit(train, l2)
        scores[held] = predict([rows[i] for i in held], w)
    return scores


Best = tuple[float, float, float, float, float, float]  # F, l2, add, veto, precision, recall


def best_thresholds(
    measure_at: Callable[[float, float], tuple[float, float]],
    beta2: float,
    max_veto: float,
    l2: float,
    best: Best | None,
) -> Best:
    """The (add, veto) pair with the highest F-beta so far, over the usual grid."""
    for add in np.arange(0.5, 0.96, 0.05):
        for veto in np.arange(0.0, max_veto, 0.05):
            p, r = measure_at(float(add), float(veto))
            f = (1 + beta2) * p * r / (beta2 * p + r) if p + r else 0.0
            if best is None or f > best[0]:
                best = (f, l2, float(add), float(veto), p, r)
    assert best is not None
    return best


def _user_rule(c: Candidate) -> bool:
    """A candidate the hold model judges: a rule candidate the user said, committed by the
    rules, that replaces or disputes nothing (`extract._doubted` and `_held_for_review`)."""
    speakers = c.speakers or {c.speaker}
    return (
        not c.plain
        and c.confidence >= COMMIT
        and Speaker.USER in speakers
        and not any(t.startswith((REPLACES, DISPUTES)) for t in c.topic_tags)
    )


def hold_samples(paths: list[Path]) -> tuple[list[Sample], list[str], int]:
    """The hold model's samples, their texts, and how many come from sequences.

    Each conversation's user rule candidates, positive when they hold a required item's
    keywords; then, from the sequences of dev and the retired batches, each thread's user
    rule candidates that hold an item the sequence keeps active or records as superseded
    (positives only: a sequence labels what evolves, not everything a thread should keep).
    """
    rows: list[Sample] = []
    texts: list[str] = []
    for n, path in enumerate(paths):
        _count, context, found = labeled_candidates(path)
        for c, hit, _good in found:
            if _user_rule(c):
                feats = judge_module.features(c, context, extra=False, rules=True)
                rows.append(Sample(n, False, c.confidence, hit, frozenset(), feats))
                texts.append(c.content)
    folders = [d for root in (DEV, *RETIRED) for d in sorted((root / "sequences").glob("*"))]
    from_sequences = 0
    for m, folder in enumerate(d for d in folders if (d / "expected.json").is_file()):
        labels = json.loads((folder / "expected.json").read_text(encoding="utf-8"))
        kept = [
            [k.lower() for k in entry["keywords"]]
            for key in ("active", "superseded")
            for entry in labels.get(key, [])
        ]
        for thread in sorted(folder.glob("*.txt")):
            candidates, context, _notes = read_candidates(
                redact(thread.read_text(encoding="utf-8")), plain=True
            )
            for c in candidates:
                text = _item(c, "x", date(2026, 1, 1)).text.lower()
                if _user_rule(c) and any(all(w in text for w in words) for words in kept):
                    feats = judge_module.features(c, context, extra=False, rules=True)
                    rows.append(
                        Sample(len(paths) + m, False, c.confidence, True, frozenset(), feats)
                    )
                    texts.append(c.content)
                    from_sequences += 1
    return rows, texts, from_sequences


def _exempt(text: str) -> bool:
    """What the engine never holds: a verdict on something named, a rule for every case."""
    return bool(_VERDICT_NAMED.search(text) or _EMPHATIC.search(text))


def _auc(labels: list[bool], scores: Array) -> float:
    order = np.argsort(scores)
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(len(scores))
    pos = np.array(labels)
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    return float((ranks[pos].sum() - n_pos * (n_pos - 1) / 2) / max(1, n_pos * n_neg))


def train_hold(paths: list[Path], hold: float, l2: float, write: bool) -> None:
    """Train the hold model, report it out of fold, and write it beside the judge's weights."""
    rows, texts, from_sequences = hold_samples(paths)
    print(
        f"hold model: {len(rows)} user rule candidates ({from_sequences} kept by sequences), "
        f"{sum(r.keeps for r in rows)} keep"
    )
    scores = out_of_fold(rows, len(paths), l2)
    print(f"out of fold (l2 {l2}): AUC {_auc([r.keeps for r in rows], scores):.3f}")
    own = [
        (r.keeps, float(s))
        for r, s, text in zip(rows, scores, texts, strict=True)
        if r.conv < len(paths) and not _exempt(text)
    ]
    for low, high in ((0.0, 0.2), (0.2, 0.25), (0.25, 0.3), (0.3, 0.35), (0.35, 0.4)):
        band = [keeps for keeps, s in own if low <= s < high]
        kept = sum(
            1
            for r, s, text in zip(rows, scores, texts, strict=True)
            if r.conv >= len(paths) and low <= s < high and not _exempt(text)
        )
        print(
            f"  scored {low:.2f}-{high:.2f}: {len(band)} conversation candidates, "
            f"{sum(band)} hold a required item; {kept} sequence-kept items"
        )
    if write:
        w = fit(rows, l2)
        model = json.loads(judge_module.MODEL_FILE.read_text(encoding="utf-8"))
        model["hold"] = hold
        model["hold_trained_on"] = (
            f"{len(paths)} conversations and the sequences of dev and held-out 3-5, "
            f"{len(rows)} user rule candidates, l2 {l2}"
        )
        model["hold_weights"] = {
            str(i): round(float(v), 4) for i, v in enumerate(w) if abs(v) >= 1e-4
        }
        judge_module.MODEL_FILE.write_text(json.dumps(model, indent=0) + "\n", encoding="utf-8")
        print(
            f"wrote the hold model (hold {hold}) into {judge_module.MODEL_FILE.relative_to(ROOT)}"
        )


def _paths(globs: str) -> list[Path]:
    """Labeled dev and retired held-out conversations matching any of the globs."""
    found = {p for g in globs.split(",") for folder in (DEV, *RETIRED) for p in folder.glob(g)}
    return [p for p in sorted(found) if p.with_suffix(".expected.json").is_file()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--write", action="store_true", help="write the model the app ships")
    parser.add_argument("--glob", default="*.txt", help="dev conversations to train on")
    parser.add_argument("--l2", type=float, default=0.0, help="fix the L2 weight (0: choose)")
    parser.add_argument(
        "--statement-only",
        action="store_true",
        help="leave out how the rules built each candidate (family, confidence)",
    )
    parser.add_argument("--score", default="", help="after training, score these dev files")
    parser.add_argument(
        "--exclude", default="", help="comma-separated name prefixes left out of training"
    )
    parser.add_argument(
        "--beta", type=float, default=1.0, help="choose thresholds by F-beta (0.5: precision)"
    )
    parser.add_argument(
        "--no-veto",
        action="store_true",
        help="the judge only adds plain statements; the rules' candidates all stay",
    )
    parser.add_argument(
        "--agent-veto",
        type=float,
        default=0.0,
        help="written as given: rule candidates only the agent said leave below it",
    )
    parser.add_argument(
        "--agent-veto-unsure",
        type=float,
        default=0.0,
        help="written as given: the same for candidates the rules gave less than 0.75",
    )
    parser.add_argument(
        "--hold-only",
        action="store_true",
        help="train only the hold model and write it into the shipped file (judge unchanged)",
    )
    parser.add_argument(
        "--hold", type=float, default=0.3, help="written as given: the hold model's threshold"
    )
    parser.add_argument("--hold-l2", type=float, default=1.0, help="the hold model's L2 weight")
    args = parser.parse_args()
    skip = tuple(x for x in args.exclude.split(",") if x)
    paths = [p for p in _paths(args.glob) if not (skip and p.name.startswith(skip))]
    if args.hold_only:
        train_hold(paths, args.hold, args.hold_l2, args.write)
        return
    beta2 = args.beta**2
    rules = not args.statement_only
    rows, musts = samples(paths, rules)
    positives = sum(r.keeps for r in rows)
    print(
        f"dev and retired batches: {len(paths)} conversations, {len(rows)} candidates, "
        f"{positives} keep"
    )
    ones = np.ones(len(rows))
    p, r = measure(rows, musts, ones, 2.0, 0.0)
    print(f"rules alone (no plain candidates, no veto): precision {p:.2f} recall {r:.2f}")
    best: tuple[float, float, float, float, float, float] | None = None
    for l2 in [args.l2] if args.l2 else [1.0, 4.0, 16.0]:
        scores = out_of_fold(rows, len(paths), l2)
        best = best_thresholds(
            lambda a, v, s=scores: measure(rows, musts, s, a, v),
            beta2,
            0.01 if args.no_veto else 0.51,
            l2,
            best,
        )
        f, _l2, add, veto = best[0], best[1], best[2], best[3]
        print(f"l2 {l2:>4}: best so far out of fold: F {f:.2f} at add {add:.2f} veto {veto:.2f}")
    assert best is not None
    f, l2, add, veto, p, r = best
    print(
        f"chosen: l2 {l2}, add {add:.2f}, veto {veto:.2f}: out-of-fold precision {p:.2f} "
        f"recall {r:.2f} (F{args.beta:g} {f:.2f})"
    )
    w = fit(rows, l2)
    if args.score:
        held = [
            p for p in sorted(DEV.glob(args.score)) if p.with_suffix(".expected.json").is_file()
        ]
        other, other_musts = samples(held, rules)
        ones = np.ones(len(other))
        p, r = measure(other, other_musts, ones, 2.0, 0.0)
        print(f"{args.score}: rules alone precision {p:.2f} recall {r:.2f}")
        scores = predict(other, w)
        for a, v in ((add, veto), (add + 0.05, veto), (add - 0.05, veto), (add, veto + 0.1)):
            p, r = measure(other, other_musts, scores, a, v)
            print(
                f"{args.score}: judged (add {a:.2f} veto {v:.2f}) precision {p:.2f} recall {r:.2f}"
            )
    if args.write:
        weights = {str(i): round(float(v), 4) for i, v in enumerate(w) if abs(v) >= 1e-4}
        model = {
            "about": "Learned judge of the offline engine; bench/train_judge.py writes it.",
            "trained_on": f"{len(paths)} conversations (dev, held-out 3-5), {len(rows)} candidates",
            "l2": l2,
            "add": round(add, 2),
            "veto": round(veto, 2),
            "agent_veto": args.agent_veto,
            "agent_veto_unsure": args.agent_veto_unsure,
            "rules": rules,
            "weights": weights,
        }
        # The hold model is trained apart (--hold-only): rewriting the judge keeps it.
        shipped = json.loads(judge_module.MODEL_FILE.read_text(encoding="utf-8"))
        for key in ("hold", "hold_trained_on", "hold_weights"):
            if key in shipped:
                model[key] = shipped[key]
        judge_module.MODEL_FILE.write_text(json.dumps(model, indent=0) + "\n", encoding="utf-8")
        print(f"wrote {judge_module.MODEL_FILE.relative_to(ROOT)} ({len(weights)} weights)")


if __name__ == "__main__":
    main()
