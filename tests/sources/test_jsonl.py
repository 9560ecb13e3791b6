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
