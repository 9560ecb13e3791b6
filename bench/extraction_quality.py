"""Extraction quality and speed of the offline engine, measured on tests/fixtures/extraction.

Each fixture `<name>.txt` is a conversation; `<name>.expected.json` says what a careful reader
would extract from it: `{"must": [{"category": ..., "keywords": [...]}], "must_not":
[[keyword, ...], ...]}`. A `category` may list several when the statement honestly fits more
than one of seed 001's categories. Scoring (items with confidence >= 0.5 only):

- an extracted item is a true positive when it matches a `must` entry: one of its categories,
  and every keyword found (case-insensitive) in the item's title, content or fields;
- any other extracted item is a false positive;
- recall is the share of `must` entries matched by at least one item;
- a `must_not` entry is violated when one item contains all of its keywords.

Run `python bench/extraction_quality.py` (add `-v` for every item and miss). It prints
precision and recall per category and overall, then the time to extract a ~100 KB and a ~1 MB
conversation. tests/engines/test_extraction_quality.py imports `evaluate` from here.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.core.models import Category, MemoryItem  # noqa: E402
from app.engines.offline.extract import extract  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "extraction"
COUNTED = 0.5
TODAY = date(2025, 1, 15)


@dataclass
class Expectation:
    """One `must` entry: acceptable categories (the first is its home) and keywords."""

    categories: tuple[Category, ...]
    keywords: tuple[str, ...]

    def matches(self, item: MemoryItem) -> bool:
        """Same category and every keyword in the item's text."""
        return item.category in self.categories and contains_all(item, self.keywords)


@dataclass
class FixtureResult:
    """What one fixture produced and how it scored."""

    name: str
    items: list[MemoryItem]
    must: list[Expectation]
    matched: list[bool]
    true_positive: list[bool]
    violations: list[tuple[MemoryItem, tuple[str, ...]]]
    redundant: int


@dataclass
class Report:
    """Scores over all fixtures, overall and per category."""

    fixtures: list[FixtureResult] = field(default_factory=list)

    def counts(self, category: Category | None = None) -> tuple[int, int, int, int]:
        """(true positives, extracted, must entries matched, must entries) for a category."""
        tp = extracted = hit = total = 0
        for fixture in self.fixtures:
            for item, good in zip(fixture.items, fixture.true_positive, strict=True):
                if category is None or item.category == category:
                    extracted += 1
                    tp += good
            for entry, found in zip(fixture.must, fixture.matched, strict=True):
                if category is None or entry.categories[0] == category:
                    total += 1
                    hit += found
        return tp, extracted, hit, total

    def precision(self, category: Category | None = None) -> float:
        """True positives over extracted items (1.0 when nothing was extracted)."""
        tp, extracted, _, _ = self.counts(category)
        return tp / extracted if extracted else 1.0

    def recall(self, category: Category | None = None) -> float:
        """Matched `must` entries over all `must` entries (1.0 when none are expected)."""
        _, _, hit, total = self.counts(category)
        return hit / total if total else 1.0

    def violations(self) -> list[tuple[str, MemoryItem, tuple[str, ...]]]:
        """Every `must_not` entry some item matched."""
        return [(f.name, item, words) for f in self.fixtures for item, words in f.violations]


def item_text(item: MemoryItem) -> str:
    """Everything an item says, lower-cased, for keyword matching."""
    return item.text.lower()


def contains_all(item: MemoryItem, keywords: tuple[str, ...]) -> bool:
    """Whether every keyword occurs in the item's text (case-insensitive)."""
    text = item_text(item)
    return all(word.lower() in text for word in keywords)


def _load_expected(path: Path) -> tuple[list[Expectation], list[tuple[str, ...]]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    must = []
    for entry in data.get("must", []):
        raw = entry["category"]
        names = [raw] if isinstance(raw, str) else list(raw)
        must.append(Expectation(tuple(Category(n) for n in names), tuple(entry["keywords"])))
    must_not = [tuple(words) for words in data.get("must_not", [])]
    return must, must_not


def score_fixture(
    name: str, text: str, must: list[Expectation], must_not: list[tuple[str, ...]]
) -> FixtureResult:
    """Extract from one conversation and score the items with confidence >= 0.5."""
    result = extract(text, source=name, today=TODAY)
    items = [i for i in result.items if i.confidence >= COUNTED]
    matched = [any(entry.matches(i) for i in items) for entry in must]
    true_positive = [any(entry.matches(i) for entry in must) for i in items]
    violations = [(i, words) for i in items for words in must_not if contains_all(i, words)]
    # Items matching a must entry another item already matched: duplicates that merging missed.
    redundant = sum(max(0, sum(entry.matches(i) for i in items) - 1) for entry in must)
    return FixtureResult(name, items, must, matched, true_positive, violations, redundant)


def evaluate(fixtures: Path = FIXTURES) -> Report:
    """Score every fixture that has a sidecar expectation file."""
    report = Report()
    for path in sorted(fixtures.glob("*.txt")):
        expected = path.with_name(path.stem + ".expected.json")
        if not expected.exists():
            continue
        must, must_not = _load_expected(expected)
        text = path.read_text(encoding="utf-8")
        report.fixtures.append(score_fixture(path.stem, text, must, must_not))
    return report


def _timing(text: str, runs: int) -> tuple[float, float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        extract(text, source="bench", today=TODAY)
        samples.append((time.perf_counter() - start) * 1000)
    return min(samples), statistics.median(samples)


def _corpus_of_size(fixtures: Path, size: int) -> str:
    texts = [p.read_text(encoding="utf-8") for p in sorted(fixtures.glob("*.txt"))]
    out: list[str] = []
    total = 0
    while total < size:
        for text in texts:
            out.append(text)
            total += len(text)
            if total >= size:
                break
    return "\n\n".join(out)[:size]


def _print_report(report: Report, verbose: bool) -> None:
    print(f"{'category':<26}{'precision':>10}{'recall':>8}{'tp/extracted':>14}{'hit/must':>10}")
    for category in Category:
        tp, extracted, hit, total = report.counts(category)
        print(
            f"{category.value:<26}{report.precision(category):>10.2f}"
            f"{report.recall(category):>8.2f}{f'{tp}/{extracted}':>14}{f'{hit}/{total}':>10}"
        )
    tp, extracted, hit, total = report.counts()
    print(
        f"{'overall':<26}{report.precision():>10.2f}{report.recall():>8.2f}"
        f"{f'{tp}/{extracted}':>14}{f'{hit}/{total}':>10}"
    )
    redundant = sum(f.redundant for f in report.fixtures)
    print(
        f"fixtures: {len(report.fixtures)}; must_not violations: {len(report.violations())}; "
        f"duplicate matches: {redundant}"
    )
    for name, item, words in report.violations():
        print(f"  VIOLATION {name}: {list(words)} in {item.title!r}: {item.content}")
    if not verbose:
        return
    for fixture in report.fixtures:
        print(f"\n== {fixture.name}")
        for item, good in zip(fixture.items, fixture.true_positive, strict=True):
            mark = "TP" if good else "FP"
            print(
                f"  {mark} [{item.category.value}] {item.confidence:.2f} "
                f"{item.title}: {item.content}"
            )
        for entry, found in zip(fixture.must, fixture.matched, strict=True):
            if not found:
                print(
                    f"  MISS [{'/'.join(c.value for c in entry.categories)}] {list(entry.keywords)}"
                )


def main(argv: list[str] | None = None) -> int:
    """Print quality and timing figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="list items and misses")
    parser.add_argument("--runs", type=int, default=15, help="timing repetitions")
    args = parser.parse_args(argv)
    report = evaluate()
    _print_report(report, args.verbose)

    print("\ntiming (best / median of runs, wall clock):")
    hundred_kb = (FIXTURES / "corpus_puffin_fullstack.txt").read_text(encoding="utf-8")
    for label, text, runs in (
        (f"real 100 KB thread ({len(hundred_kb) // 1000} KB)", hundred_kb, args.runs),
        ("100 KB of mixed fixtures", _corpus_of_size(FIXTURES, 100_000), args.runs),
        ("1 MB of mixed fixtures", _corpus_of_size(FIXTURES, 1_000_000), max(3, args.runs // 5)),
    ):
        best, median = _timing(text, runs)
        print(f"  {label:<36} {best:7.1f} ms / {median:7.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
