"""Offline memorize of a 100 KB conversation into a branch that already holds 50 items.

Target (issue 3): <= 50 ms per memorize, in process, offline engine. Prints p50/p95 over
repeated runs on a fresh copy of the branch each time, and the share spent extracting.
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from app.container import build_api
from app.core.format import render
from app.core.models import BranchMemory, Category, MemoryItem

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "extraction"
RUNS = 30


def _branch() -> BranchMemory:
    items = {
        cat: [
            MemoryItem(
                category=cat,
                title=f"{cat.heading} rule {i}",
                content=f"Distinct rule {i} about component c{i} in the {cat.value} "
                f"area, with detail d{i * 7}.",
                confidence=0.85,
                sources=[f"t{i}"],
            )
            for i in range(10)
        ]
        for cat in Category
    }
    return BranchMemory(branch_id="bench", summary="Bench branch.", items=items)


def _conversation(target: int = 100_000) -> str:
    parts = [p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("*.txt"))]
    text = "\n".join(parts) or "User: Always use pathlib instead of os.path.\n"
    while len(text) < target:
        text += "\n" + text
    return text[:target]


def main() -> None:
    conversation = _conversation()
    seed_text = render(_branch())
    root = Path(tempfile.mkdtemp(prefix="puffin-bench-"))
    try:
        home = root / "home"
        (home / "branches").mkdir(parents=True)
        branch_file = home / "branches" / "bench.md"
        # One long-lived API, as in the app; the branch is reset to its 50 items before each
        # run (outside the timing) so every run merges into the same starting file.
        api = build_api(home, engine_override="offline")
        engine = api.writer.engine
        timings, extract_timings = [], []
        reply: dict = {}
        for _run in range(RUNS + 1):
            branch_file.write_text(seed_text, encoding="utf-8")
            api.index.sync(api.store)
            start = time.perf_counter()
            asyncio.run(engine.extract(conversation, source="bench"))
            extract_ms = (time.perf_counter() - start) * 1000
            start = time.perf_counter()
            reply = asyncio.run(
                api.invoke(
                    "memory:memorize",
                    {"conversationText": conversation, "branchId": "bench", "source": "bench"},
                )
            )
            elapsed = (time.perf_counter() - start) * 1000
            assert "error" not in reply, reply
            if _run:  # the first run fills caches (regexes, similarity)
                timings.append(elapsed)
                extract_timings.append(extract_ms)
        timings.sort()
        p95 = timings[int(len(timings) * 0.95) - 1]
        print(f"conversation: {len(conversation) / 1000:.0f} KB, branch: 50 items, runs: {RUNS}")
        print(
            f"memorize  p50 {statistics.median(timings):6.1f} ms   p95 {p95:6.1f} ms   "
            f"(target <= 50 ms)"
        )
        print(f"  of which extract p50 {statistics.median(extract_timings):6.1f} ms")
        print(f"last reply: {reply['itemsExtracted']} committed, {reply['queuedForReview']} queued")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
