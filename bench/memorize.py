"""Offline memorize of a 100 KB conversation into a branch of 50 items, then of 2,000 items.

Targets (issues 3 and 11): <= 50 ms per memorize into 50 items and <= 100 ms into 2,000 items,
in process, offline engine. The conversation is 100 KB of dense prose (the extraction fixtures
end to end); the real transcripts of ../shared/corpus of 100 KB or more are timed too, as read.
Prints p50/p95 over repeated runs on a fresh copy of the branch each time, the share spent
extracting, and each figure next to its target.
"""

from __future__ import annotations

import random
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.container import build_api
from app.core.format import render
from app.core.models import BranchMemory, Category, MemoryItem

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "extraction"
# (items in the branch, runs, target p50 in ms)
CASES = ((50, 30, 50.0), (2_000, 15, 100.0))

# Words for the large branch: items about many different things, as a real memory grows,
# rather than one template repeated 2,000 times.
_WORDS = """
    parser cache index queue worker scheduler logger config schema migration router handler
    session token retry timeout backoff pool socket buffer stream codec encoder decoder lexer
    renderer layout widget dialog button theme palette font icon tray menu shortcut clipboard
    database table column cursor transaction commit rollback snapshot replica shard cluster
    node pod container image registry volume secret certificate proxy gateway endpoint
    payload header cookie redirect upload download archive backup restore export import
    sync diff patch merge branch rebase tag release version changelog build bundle compile
    lint format test fixture mock stub spy coverage benchmark profile trace metric alert
    dashboard report chart graph tree list map set heap stack vector matrix tensor model
    embedding vocabulary tokenizer prompt template context window budget quota limit rate
    throttle debounce poll watch notify event signal slot thread lock mutex semaphore future
    promise callback coroutine task job cron daemon service client server api sdk plugin
    adapter facade factory builder visitor observer strategy command repository entity value
"""
_VOCABULARY = _WORDS.split()


@dataclass
class Figures:
    items: int
    runs: int
    target: float
    p50: float
    p95: float
    extract_p50: float
    committed: int
    queued: int


def _small_branch() -> BranchMemory:
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


def _large_branch(count: int) -> BranchMemory:
    rng = random.Random(11)
    per = count // len(Category)
    items: dict[Category, list[MemoryItem]] = {}
    for cat in Category:
        section = []
        for i in range(per):
            words = rng.sample(_VOCABULARY, 6)
            section.append(
                MemoryItem(
                    category=cat,
                    title=f"{words[0].title()} {words[1]} {i}",
                    content=f"Keep the {words[0]} {words[1]} apart from the {words[2]} "
                    f"{words[3]}; check {words[4]} before {words[5]} (case {cat.value}-{i}).",
                    confidence=0.85,
                    sources=[f"t{i % 97}"],
                )
            )
        items[cat] = section
    return BranchMemory(branch_id="bench", summary="Bench branch.", items=items)


def _conversation(target: int = 100_000) -> str:
    parts = [p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("*.txt"))]
    text = "\n".join(parts) or "User: Always use pathlib instead of os.path.\n"
    while len(text) < target:
        text += "\n" + text
    return text[:target]


def _bench_api(root: Path) -> tuple[Any, Path]:
    """One long-lived API over a home in `root`, as in the app, and the branch file the runs
    reset to their starting items before each memorize (outside the timing), so every run
    merges into the same starting file."""
    home = root / "home"
    (home / "branches").mkdir(parents=True)
    return build_api(home, engine_override="offline"), home / "branches" / "bench.md"


def _timed_memorize(api: Any, branch_file: Path, seed_text: str, text: str) -> tuple[float, dict]:
    """Milliseconds of one memorize of `text` into the branch reset to `seed_text` (the reset
    and the index catching up with it are not timed), and the reply."""
    branch_file.write_text(seed_text, encoding="utf-8")
    api.index.sync(api.store)
    start = time.perf_counter()
    reply = api.invoke(
        "memory:memorize", {"conversationText": text, "branchId": "bench", "source": "bench"}
    )
    elapsed = (time.perf_counter() - start) * 1000
    assert "error" not in reply, reply
    return elapsed, reply


def measure(count: int, runs: int, target: float, conversation: str) -> Figures:
    branch = _small_branch() if count <= 50 else _large_branch(count)
    assert branch.item_count() == count, branch.item_count()
    seed_text = render(branch)
    root = Path(tempfile.mkdtemp(prefix="puffin-bench-"))
    try:
        api, branch_file = _bench_api(root)
        engine = api.writer.engine
        timings: list[float] = []
        extract_timings: list[float] = []
        reply: dict = {}
        for run in range(runs + 1):
            start = time.perf_counter()
            engine.extract(conversation, source="bench")
            extract_ms = (time.perf_counter() - start) * 1000
            elapsed, reply = _timed_memorize(api, branch_file, seed_text, conversation)
            if run:  # the first run fills caches (regexes, similarity, the parsed file)
                timings.append(elapsed)
                extract_timings.append(extract_ms)
        timings.sort()
        return Figures(
            items=count,
            runs=runs,
            target=target,
            p50=statistics.median(timings),
            p95=timings[max(0, int(len(timings) * 0.95) - 1)],
            extract_p50=statistics.median(extract_timings),
            committed=reply["itemsExtracted"],
            queued=reply["queuedForReview"],
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
# Real agent transcripts at least this large are timed as they are read (`memorize` is given
# the raw JSONL; the reader renders it first).
REAL_MIN_BYTES = 100_000


def measure_real(path: Path, runs: int = 15) -> tuple[float, int, int]:
    """p50 (ms) of memorizing one real transcript into the 50-item branch, the size of the
    text the engine reads, and the items committed."""
    raw = path.read_text(encoding="utf-8")
    seed_text = render(_small_branch())
    root = Path(tempfile.mkdtemp(prefix="puffin-bench-"))
    try:
        api, branch_file = _bench_api(root)
        read = api.writer.transcript(raw) if api.writer.transcript is not None else None
        rendered = len(read[0]) if read is not None else len(raw)
        timings: list[float] = []
        reply: dict = {}
        for run in range(runs + 1):
            elapsed, reply = _timed_memorize(api, branch_file, seed_text, raw)
            if run:
                timings.append(elapsed)
        return statistics.median(timings), rendered, reply["itemsExtracted"]
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    conversation = _conversation()
    print(f"conversation: {len(conversation) / 1000:.0f} KB, offline engine, in process")
    print(f"{'branch':>12}  {'p50':>8}  {'p95':>8}  {'target':>9}  {'extract p50':>11}  result")
    for count, runs, target in CASES:
        f = measure(count, runs, target, conversation)
        verdict = "ok" if f.p50 <= f.target else "OVER"
        print(
            f"{f.items:>6} items  {f.p50:5.1f} ms  {f.p95:5.1f} ms  <= {f.target:3.0f} ms  "
            f"{f.extract_p50:8.1f} ms  {verdict} ({f.runs} runs; last: {f.committed} "
            f"committed, {f.queued} queued)"
        )
    # The case above is 100 KB of dense prose (the extraction fixtures end to end). A real
    # session of that size is mostly tool calls and their output, which the reader drops or
    # clips before the engine reads it: these are the real transcripts of ../shared/corpus.
    real = (
        sorted(p for p in CORPUS.glob("*/*.jsonl") if p.stat().st_size >= REAL_MIN_BYTES)
        if CORPUS.is_dir()
        else []
    )
    if not real:
        print("real transcripts: none of 100 KB or more in ../shared/corpus, skipped")
        return
    print(f"real transcripts of {REAL_MIN_BYTES // 1000} KB or more, into the 50-item branch:")
    for path in real:
        p50, rendered, committed = measure_real(path)
        verdict = "ok" if p50 <= CASES[0][2] else "OVER"
        print(
            f"  {path.parent.name}/{path.name[:40]}: {path.stat().st_size / 1000:.0f} KB "
            f"(engine reads {rendered / 1000:.0f} KB)  p50 {p50:5.1f} ms  <= {CASES[0][2]:.0f} ms  "
            f"{verdict} ({committed} committed)"
        )


if __name__ == "__main__":
    main()
