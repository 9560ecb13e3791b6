"""Every reader against hostile input: random JSON shapes, bad bytes, huge lines, odd files.

No exception may escape a reader (the scan's per-file net in `app.sources.scan` is not
used here: the readers themselves must skip and count what they cannot use), and nothing
may block on a FIFO. Budgets are small so this runs in `make test`; `bench/fuzz_readers.py`
runs the same shapes for longer.
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.config import SourceSettings
from app.sources.models import ReadStats
from app.sources.scan import discover
from tests.sources.fuzzing import (
    READERS,
    exercise,
    exercise_ledger,
    json_documents,
    jsonl_files,
    place,
)

FUZZ = settings(
    max_examples=12,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _in_time(work: Callable[[], object], seconds: float = 10.0) -> None:
    """Run `work` in a daemon thread; fail (instead of hanging the suite) if it blocks."""
    errors: list[BaseException] = []

    def target() -> None:
        try:
            work()
        except BaseException as exc:  # reported in the test's thread
            errors.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"blocked for more than {seconds} s"
    if errors:
        raise errors[0]


@pytest.mark.parametrize("name", sorted(READERS))
def test_random_files_never_raise(name: str) -> None:
    @FUZZ
    @given(data=READERS[name][2], extra=st.none() | jsonl_files())
    def check(data: bytes, extra: bytes | None) -> None:
        with tempfile.TemporaryDirectory() as folder:
            exercise(Path(folder), name, data, extra)

    check()


@FUZZ
@given(data=json_documents())
def test_random_ledgers_never_raise(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        ledger = exercise_ledger(Path(folder), data)
        assert all(isinstance(k, str) for k in ledger.entries)


@settings(FUZZ, max_examples=6)
@given(files=st.lists(jsonl_files(), min_size=1, max_size=3))
def test_a_scan_reads_every_file_whatever_the_others_hold(files: list[bytes]) -> None:
    good = (
        b'{"type":"user","message":{"role":"user","content":"keep me"},'
        b'"timestamp":"2026-02-10T21:11:56Z"}'
    )
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "projects"
        (root / "p").mkdir(parents=True)
        for index, data in enumerate(files):
            (root / "p" / f"bad-{index}.jsonl").write_bytes(data)
        (root / "p" / "good.jsonl").write_bytes(good + b"\n")
        found = discover(SourceSettings(), source="claude-code", path=root)
        assert "good" in {t.id for t in found.threads}


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_20_mb_line_is_read_or_skipped(tmp_path: Path, name: str) -> None:
    text = "x" * (20 * 1024 * 1024)
    if name in ("claude-code", "codex"):
        data = (
            '{"type":"user","message":{"role":"user","content":"' + text + '"}}\n'
            '{"type":"user","message":{"role":"user","content":"after"}}\n'
        ).encode()
    elif name == "puffin":
        data = ('{"branches":{"b":{"prompts":[{"id":"p","content":"' + text + '"}]}}}').encode()
    else:
        data = ("User: " + text + "\nAssistant: after\n").encode()
    exercise(tmp_path, name, data)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize("name", sorted(READERS))
def test_a_fifo_in_place_of_the_file_is_reported_not_waited_on(tmp_path: Path, name: str) -> None:
    path = place(tmp_path, name, b"")
    path.unlink()
    os.mkfifo(path)
    stats = ReadStats()

    _in_time(lambda: READERS[name][1]((path,), stats))

    assert any(str(path) in e and "pipe" in e for e in stats.errors), stats.errors


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_folder_in_place_of_the_file_is_reported(tmp_path: Path, name: str) -> None:
    path = place(tmp_path, name, b"")
    path.unlink()
    path.mkdir()
    stats = ReadStats()

    assert READERS[name][1]((path,), stats) == []
    assert any(str(path) in e and "folder" in e for e in stats.errors), stats.errors


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_file_that_vanished_is_reported(tmp_path: Path, name: str) -> None:
    path = place(tmp_path, name, b"")
    path.unlink()
    stats = ReadStats()

    assert READERS[name][1]((path,), stats) == []
    assert any(str(path) in e and "disappeared" in e for e in stats.errors), stats.errors


@pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0,
    reason="root reads files whatever their permissions",
)
@pytest.mark.parametrize("name", sorted(READERS))
def test_an_unreadable_file_is_reported(tmp_path: Path, name: str) -> None:
    path = place(tmp_path, name, b'{"type":"user"}\n')
    path.chmod(0)
    stats = ReadStats()

    assert READERS[name][1]((path,), stats) == []
    assert any(str(path) in e and "permission" in e for e in stats.errors), stats.errors
