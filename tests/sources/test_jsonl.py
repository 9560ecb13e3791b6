"""Line input shared by the readers: bounded lines across chunk edges, tolerant JSON, times."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.sources import jsonl
from app.sources.jsonl import MALFORMED, OVERSIZED, clip, iter_lines, loads, parse_time
from app.sources.models import ReadStats

LINES = [b"a", b"bb", b"c" * 3000, b"d" * 10, b"e" * 5000, b"last"]


@pytest.mark.parametrize("chunk", [7, 100, 2999, 3000, 3001, 1 << 20])
def test_lines_come_back_whole_whatever_the_chunk_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(
        b"a\n\n  \nbb\n" + b"c" * 3000 + b"\nddddddddd" + b"d\n" + b"e" * 5000 + b"\nlast"
    )
    monkeypatch.setattr(jsonl, "_CHUNK", chunk)
    stats = ReadStats()
    assert list(iter_lines(path, stats)) == LINES
    stats = ReadStats()
    kept = list(iter_lines(path, stats, max_line=2500))
    assert kept == [b"a", b"bb", b"d" * 10, b"last"]
    assert stats.skipped[OVERSIZED] == 2


def test_unreadable_file_is_an_error_not_an_exception(tmp_path: Path) -> None:
    stats = ReadStats()
    assert list(iter_lines(tmp_path / "missing.jsonl", stats)) == []
    assert "missing.jsonl" in stats.errors[0]


@pytest.mark.parametrize("line", [b"not json", b"[1, 2]", b'"text"', b'{"a": '])
def test_lines_that_are_not_objects_are_counted(line: bytes) -> None:
    stats = ReadStats()
    assert loads(line, stats) is None
    assert stats.skipped[MALFORMED] == 1


def test_leading_whitespace_is_fine() -> None:
    assert loads(b'  {"a": 1}', ReadStats()) == {"a": 1}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-02-10T21:11:56.846Z", datetime(2026, 2, 10, 21, 11, 56, 846000, tzinfo=UTC)),
        ("2026-02-10T22:11:56+01:00", datetime(2026, 2, 10, 21, 11, 56, tzinfo=UTC)),
        ("2026-02-10T21:11:56", datetime(2026, 2, 10, 21, 11, 56, tzinfo=UTC)),
        (1770672527781, datetime(2026, 2, 9, 21, 28, 47, 781000, tzinfo=UTC)),
        (1770672527, datetime(2026, 2, 9, 21, 28, 47, tzinfo=UTC)),
        ("1770672527781", datetime(2026, 2, 9, 21, 28, 47, 781000, tzinfo=UTC)),
        ("yesterday", None),
        ("", None),
        (None, None),
        (True, None),
    ],
)
def test_timestamps(value: object, expected: datetime | None) -> None:
    assert parse_time(value) == expected


def test_clip_makes_one_short_line() -> None:
    assert clip("a\n b\t c", 20) == "a b c"
    assert clip("word " * 100, 12) == "word word w…"
    assert len(clip("y" * 10_000_000, 50)) == 50


@pytest.mark.parametrize(
    ("output", "summary"),
    [
        (
            "collected 12 items\n\n............\n===== 12 passed in 0.88s =====\n",
            "12 passed in 0.88s",
        ),
        (
            "running 3 tests\ntest result: ok. 3 passed; 0 failed",
            "test result: ok. 3 passed; 0 failed",
        ),
        ("ok  \texample.com/app/billing\t0.412s\n", "ok example.com/app/billing 0.412s"),
        ("\x1b[32m✓\x1b[0m src/a.test.ts (4 tests) 31ms", "✓ src/a.test.ts (4 tests) 31ms"),
        (
            "Success: no issues found in 41 source files",
            "Success: no issues found in 41 source files",
        ),
        (
            "> Task :app:test\n\nBUILD SUCCESSFUL in 14s\n7 actionable tasks",
            "BUILD SUCCESSFUL in 14s",
        ),
    ],
)
def test_a_passing_run_leaves_its_summary_line(output: str, summary: str) -> None:
    assert jsonl.run_summary(output) == summary


@pytest.mark.parametrize(
    "output",
    [
        "",
        "total 8\ndrwxr-xr-x  2 u u 4096 .\n-rw-r--r--  1 u u   12 notes.txt",
        # A long line is a paragraph of someone's text, not a runner's summary.
        "All tests passed, and from now on always push straight to main " * 4,
        # Only the output's tail is read: a summary buried in a long log is not the outcome.
        "3 passed\n" + "log line\n" * 1000,
    ],
)
def test_other_output_leaves_nothing(output: str) -> None:
    assert jsonl.run_summary(output) == ""


def test_the_raw_line_check_only_lets_possible_summaries_through() -> None:
    assert jsonl.may_hold_summary(b'{"stdout":"12 passed in 0.88s"}')
    assert jsonl.may_hold_summary(b'{"stdout":"\\u2713 built"}')
    assert not jsonl.may_hold_summary(b'{"stdout":"total 8 notes.txt"}')
