"""How far a second careful reader agrees with the dialogue set's labels, beside the engine.

tests/fixtures/dialogue/agreement/<split>/<name>.items.json holds a second annotator's items
for conversations of the test split, held-out batches 2 and 14, and dev batch 10: written from
the conversations and LABELING.md alone, without the project's labels, the engine or its
output (docs/decisions.md, twenty-second part). Each item has one category, a text in the
conversation's own names and 1–3 keywords.

Printed per set, all scored as bench/dialogue_quality.py scores the engine (an item is
right when it holds every keyword of a required item and its category is one the label
allows; must-not: an item holding every word of a `must_not` group):
- the second annotator's items against the project's labels: what a person reaches on the
  measure the engine's floors use;
- the project's labels (meaning and keywords, first category) against the second
  annotator's items, taken as labels: the same agreement from the other side;
- the engine's committed items against the project's labels, and against the second
  annotator's;
- the engine once more: an item is right when either reader kept it, and recall counts
  only the project's items the second reader kept too (what two readers agree on).

Run: `.venv/bin/python bench/annotator_agreement.py`.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.core.models import Category, MemoryItem  # noqa: E402
from bench.dialogue_quality import DIALOGUE, Entry, _entry, evaluate  # noqa: E402

AGREEMENT = DIALOGUE / "agreement"


@dataclass
class Pool:
    """Items scored against labels, summed over conversations."""

    items: int = 0
    right: int = 0
    right_any: int = 0
    labels: int = 0
    found: int = 0
    found_any: int = 0
    must_not: int = 0

    def add(
        self, items: list[MemoryItem], labels: list[Entry], must_not: list[tuple[str, ...]]
    ) -> None:
        loose = [Entry((), e.keywords) for e in labels]
        self.items += len(items)
        self.labels += len(labels)
        self.right += sum(any(e.matches(i) for e in labels) for i in items)
        self.right_any += sum(any(e.matches(i) for e in loose) for i in items)
        self.found += sum(any(e.matches(i) for i in items) for e in labels)
        self.found_any += sum(any(e.matches(i) for i in items) for e in loose)
        self.must_not += sum(
            all(w.lower() in i.text.lower() for w in group) for i in items for group in must_not
        )

    def line(self) -> str:
        def share(n: int, d: int) -> str:
            return f"{n / d:.2f}" if d else "  - "

        return (
            f"{self.items:4d} items, {self.labels:4d} labels   precision "
            f"{share(self.right, self.items)} recall {share(self.found, self.labels)}   "
            f"any category: {share(self.right_any, self.items)} / "
            f"{share(self.found_any, self.labels)}   must-not {self.must_not}"
        )


def _item(category: str, text: str) -> MemoryItem:
    return MemoryItem(
        category=Category(category),
        title=" ".join(text.split()[:6]) or "item",
        content=text,
        confidence=0.9,
    )


def compare(split: str) -> dict[str, Pool]:
    """The four comparisons over the conversations of `split` the second annotator labeled."""
    pools = {name: Pool() for name, _ in ROWS}
    files = sorted((AGREEMENT / split).glob("*.items.json"))
    if not files:
        return pools
    engine = {c.name: c for c in evaluate(split).conversations}
    for path in files:
        name = path.name.removesuffix(".items.json")
        labels = json.loads((DIALOGUE / split / f"{name}.expected.json").read_text("utf-8"))
        project = [_entry(e) for e in labels.get("must", [])]
        must_not = [tuple(g) for g in labels.get("must_not", [])]
        second = json.loads(path.read_text("utf-8")).get("items", [])
        # A reviewer's item is its text; its keywords are the names it is written around.
        second_items = [
            _item(x["category"], f"{x['text']} {' '.join(x['keywords'])}") for x in second
        ]
        second_labels = [Entry((Category(x["category"]),), tuple(x["keywords"])) for x in second]
        project_items = []
        for entry in labels.get("must", []):
            listed = entry["category"]
            first = listed if isinstance(listed, str) else listed[0]
            words = " ".join(entry["keywords"])
            project_items.append(_item(first, f"{entry.get('meaning', '')} {words}"))
        committed = engine[name].committed()
        pools["second"].add(second_items, project, must_not)
        pools["project"].add(project_items, second_labels, [])
        pools["engine"].add(committed, project, must_not)
        pools["engine-second"].add(committed, second_labels, [])
        # Either reader's item counts as right; recall over what both readers kept.
        both = [e for e in project if any(e.matches(i) for i in second_items)]
        consensus = Pool()
        consensus.add(committed, both, [])
        pools["engine-either"].items += len(committed)
        pools["engine-either"].right += sum(
            any(e.matches(i) for e in project + second_labels) for i in committed
        )
        pools["engine-either"].right_any += sum(
            any(Entry((), e.keywords).matches(i) for e in project + second_labels)
            for i in committed
        )
        pools["engine-either"].labels += consensus.labels
        pools["engine-either"].found += consensus.found
        pools["engine-either"].found_any += consensus.found_any
    return pools


ROWS = (
    ("second", "second annotator against the project's labels"),
    ("project", "project's labels against the second annotator"),
    ("engine", "engine against the project's labels"),
    ("engine-second", "engine against the second annotator"),
    # precision: right when either reader kept it; recall: of the items both kept
    ("engine-either", "engine, either reader's item / items both kept"),
)


def main() -> int:
    splits = sorted(p.name for p in AGREEMENT.iterdir() if p.is_dir()) if AGREEMENT.is_dir() else []
    if not splits:
        print(f"no second annotator's labels under {AGREEMENT}")
        return 1
    total = {name: Pool() for name, _ in ROWS}  # over the splits nothing is tuned on
    for split in splits:
        pools = compare(split)
        count = len(list((AGREEMENT / split).glob("*.items.json")))
        print(f"[{split}] {count} conversations")
        for name, label in ROWS:
            print(f"  {label:<48} {pools[name].line()}")
            if split == "dev":
                continue
            for field in Pool.__dataclass_fields__:
                setattr(
                    total[name], field, getattr(total[name], field) + getattr(pools[name], field)
                )
    print("[test and held-out, together]")
    for name, label in ROWS:
        print(f"  {label:<48} {total[name].line()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
