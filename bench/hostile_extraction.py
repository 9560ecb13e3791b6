"""Offline extraction of hostile conversations: does the cost grow with the text, not its square?

A pasted log or a runaway agent can hand the extractor a megabyte of near-identical
statements on the same common words. Each hostile conversation below is extracted at a
quarter of its size and at full size; four times the text should cost about four times the
time. Printed per conversation: size, seconds, seconds per MB and the growth factor from
the quarter to the full size, next to the target (<= 6x for 4x the text) and, as the
baseline of the same run, the seconds per MB of the ordinary 100 KB bench conversation.

Run: .venv/bin/python bench/hostile_extraction.py
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.redact import redact
from app.engines.offline.extract import extract

GROWTH_TARGET = 6.0  # time factor allowed for 4x the text


def _rules_at_scale(n: int) -> str:
    """Reports, causes, options, measurements and rules that share their common words."""
    parts = ["User: We need to move everything out of the request path, every service."]
    for i in range(n):
        parts.append(
            f"User: The nightly job{i} failed again, always on a different file{i}. it happens "
            f"whenever kafka{i} has a hiccup. Was it always that slow{i}. We keep getting "
            f"reviews{i}. Ci{i} takes {i} min on every PR. We already run broker{i}, so use "
            f"lib{i} with broker{i} as the broker. Thank you. 1) first{i}. 2) No undo "
            f"migrations{i}; (3) keep {i} replicas. after a merchandiser{i} replaces the "
            f"image{i}, stale."
        )
        parts.append(
            f"Assistant: Your shell{i} already has a session, so I'll work with that. The "
            f"options are (a) x{i} for all, (b) y{i} for everything, (c) z{i}. Cause: the "
            f"cache{i} key is shared, so the job{i} reads stale rows. Fix: key{i} per file."
        )
    return "\n\n".join(parts)


def _traces_at_scale(n: int) -> str:
    """Things that keep dropping, nested brackets, if-leads, next steps and Java traces."""
    parts = []
    for i in range(n):
        parts.append(
            f"User: the worker{i} pods are dropping messages{i} again (node{i} lost, "
            f"{'(' * 3}deep{i}{')' * 3}) and if the cache{i} is wrong, we keep lib{i} — the "
            "tag broke us."
        )
        parts.append(
            f"Assistant: I'll also add test{i}.py in a follow-up. PR will contain: x{i}.\n"
            f"java.lang.IllegalStateException: e{i}\n\tat a.B.c(B.java:{i})\n"
            f"Caused by: x.Y{i}Exception: boom\n\t... {i} more"
        )
    return "\n\n".join(parts)


def _merges_at_scale(n: int) -> str:
    """One paragraph whose full stops and question marks end no sentence ("e.g. X", Rust's
    "use ? and …"): the sentence splitter joins its pieces back into one long sentence."""
    words = " ".join(f"use ? on call{i}, e.g. Foo{i} and vs. Bar{i} and" for i in range(n))
    return f"User: {words} done.\n\nAssistant: Noted."


def _long_tokens_at_scale(n: int) -> str:
    """Changes of choice around one unbroken token (a blob pasted without a fence): patterns
    that try every split of a name would cost the square of its length."""
    blob = "a" * (10 * n)
    return (
        f"User: we ditched {blob} yes. replace {blob} with b. is it {blob} or b? swap {blob} "
        f"out for c.\n\nAssistant: Noted."
    )


def _timed(text: str) -> float:
    start = time.perf_counter()
    extract(text, source="bench")
    return time.perf_counter() - start


def _ordinary_rate() -> float:
    from bench.memorize import _conversation

    text = redact(_conversation())
    extract(text, source="bench")  # warm the caches the hostile runs also enjoy
    best = min(_timed(text) for _ in range(5))
    return best / (len(text) / 1e6)


def main() -> int:
    cases: list[tuple[str, Callable[[int], str]]] = [
        ("rules on common words", _rules_at_scale),
        ("traces and brackets", _traces_at_scale),
        ("joined sentence pieces", _merges_at_scale),
        ("one unbroken token", _long_tokens_at_scale),
    ]
    baseline = _ordinary_rate()
    print(f"baseline: the 100 KB bench conversation, {baseline:.2f} s per MB")
    print(f"{'conversation':24} {'size':>9} {'seconds':>8} {'s/MB':>6} {'x4 text':>8}  target")
    worst = 0.0
    for name, build in cases:
        small, full = build(500), build(2000)
        t_small, t_full = _timed(small), _timed(full)
        growth = t_full / max(t_small, 1e-9)
        worst = max(worst, growth)
        for label, text, seconds in (("1/4", small, t_small), ("full", full, t_full)):
            rate = seconds / (len(text) / 1e6)
            grown = f"{growth:7.1f}x" if label == "full" else ""
            target = f"<= {GROWTH_TARGET:.0f}x" if grown else ""
            print(
                f"{name + ' ' + label:24} {len(text) / 1e3:7.0f}KB {seconds:8.2f} "
                f"{rate:6.2f} {grown:>8}  {target}"
            )
    print("result:", "ok" if worst <= GROWTH_TARGET else "over target")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
