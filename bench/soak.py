"""Soak: many distinct items over many weeks of maintenance; is every one still findable?

Memorizes `--items` distinct items into one branch, `--per-week` at a time (each batch is one
"thread" integrated by the writer, as a scan does), and runs weekly maintenance after every
batch (section cap 50: most items are pruned out of the file). Then it looks for every item
it wrote in the branch file, the branch's archive and its saved versions, and prints how many
were found where, and how many were lost. Issue 13's bar: none lost.

Not part of `make test` (it takes a minute or two); tests/core/test_maintenance.py runs a
small version. Run: `.venv/bin/python bench/soak.py [--items 10000] [--per-week 100]`.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.container import build_api  # noqa: E402
from app.core.format import parse  # noqa: E402
from app.core.models import Category, MemoryItem  # noqa: E402

CATEGORIES = [
    Category.CODING_PREFERENCES,
    Category.ARCHITECTURAL_DECISIONS,
    Category.PROJECT_CONVENTIONS,
    Category.IMPLEMENTATION_NOTES,
]
WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
    "uniform",
    "victor",
    "whiskey",
    "xray",
]


def _item(n: int) -> MemoryItem:
    """A distinct statement: its words spell the number, so no two are near-duplicates."""
    digits = [WORDS[(int(d) + (i % 3) * 8) % len(WORDS)] for i, d in enumerate(f"{n:05d}")]
    return MemoryItem(
        category=CATEGORIES[n % len(CATEGORIES)],
        title=f"Rule {n}",
        content=f"Module {' '.join(digits)} uses setting s{n} with limit {n * 7 % 997}.",
        confidence=0.5 + (n % 50) / 100,
        sources=[f"thread-{n // 100}"],
    )


def run(items: int, per_week: int) -> dict[str, int]:
    with tempfile.TemporaryDirectory(prefix="puffin-soak-") as tmp:
        home = Path(tmp) / "home"
        api = build_api(home, engine_override="offline")
        written: dict[str, int] = {}
        for start in range(0, items, per_week):
            batch = [_item(n) for n in range(start, min(items, start + per_week))]
            result = api.writer.integrate("soak/main", batch)
            for n, item in zip(range(start, start + len(batch)), batch, strict=True):
                stored = result.memory.find(item.id)
                written[stored.id if stored else item.id] = n
            api.invoke("memory:run-maintenance", {"type": "weekly"})
        memory = api.store.read("soak/main")
        in_file = {i.id for i in memory.all_items()} if memory else set()
        in_file |= {i.id for c in (memory.contradictions if memory else []) for i in c.items}
        archived = api.archive.ids("soak/main")
        rest = set(written) - in_file - archived
        in_versions: set[str] = set()
        for version in api.store.list_versions("soak/main"):
            if not rest - in_versions:
                break
            old = parse(api.store.read_version("soak/main", version.version), "soak/main")
            in_versions |= {i.id for i in old.all_items()} & rest
        return {
            "written": len(written),
            "in file": len(set(written) & in_file),
            "in archive": len(set(written) & archived - in_file),
            "only in versions": len(in_versions),
            "lost": len(rest - in_versions),
            "versions": len(api.store.list_versions("soak/main")),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--per-week", type=int, default=100)
    args = parser.parse_args()
    started = time.perf_counter()
    figures = run(args.items, args.per_week)
    print(
        f"{args.items} items, {args.per_week} a week, weekly maintenance after each batch "
        f"({time.perf_counter() - started:.0f} s)"
    )
    for name, value in figures.items():
        print(f"  {name:18} {value}")
    print("  result            " + ("nothing lost" if figures["lost"] == 0 else "ITEMS LOST"))


if __name__ == "__main__":
    main()
