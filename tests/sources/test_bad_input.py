"""Scans survive bad input: one bad record or file never costs the others.

Each case here once aborted a whole scan with a traceback, or hung it on a FIFO: a record
of an unexpected shape, a FIFO where a subagent transcript, `.git/HEAD` or Puffin's
recent-projects list was expected, a reader failing in a way nobody foresaw.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from app.core.config import SourceSettings
from app.sources import claude_code
from app.sources.jsonl import BAD_RECORDS, UNKNOWN_TYPES
from app.sources.ledger import LEDGER_FILE, Ledger
from app.sources.scan import discover
from tests.sources.conftest import copy_to

SID = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
GOOD = (
    b'{"type":"user","message":{"role":"user","content":"Use tabs"},'
    b'"timestamp":"2026-02-10T21:11:56Z","cwd":"/nowhere/app","gitBranch":"main"}\n'
)
fifo_only = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")


def _in_time(work: Callable[[], object], seconds: float = 10.0) -> object:
    """Run `work` in a daemon thread; fail instead of hanging when it blocks."""
    box: list[object] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            box.append(work())
        except BaseException as exc:  # re-raised in the test's thread
            errors.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"blocked for more than {seconds} s"
    if errors:
        raise errors[0]
    return box[0]


@pytest.mark.parametrize(
    "bad",
    [
        b'{"type": []}',
        b'{"type": {"a": 1}}',
        b"[1, 2]",
        b'{"type":"user","message": 5}',
        b'{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Task",'
        b'"input":{"description":"d"},"id":["x"]}]}}',
        b'{"type":"user","isSidechain":true,"uuid":{"u":1},"message":{"content":"x"}}',
        b'{"type":"progress","data":{"type":"agent_progress","message":{"type":"user",'
        b'"message":{"content":"x"}},"agentId":[1]}}',
    ],
)
def test_a_claude_session_with_a_malformed_record_keeps_its_other_messages(
    tmp_path: Path, bad: bytes
) -> None:
    folder = tmp_path / "projects" / "-nowhere-app"
    folder.mkdir(parents=True)
    (folder / f"{SID}.jsonl").write_bytes(GOOD + bad + b"\n" + GOOD)

    found = discover(SourceSettings(), path=tmp_path / "projects")

    assert len(found.threads) == 1
    assert found.threads[0].message_count >= 2  # both good lines, whatever the bad one held
    assert found.errors == []


def test_an_unhashable_record_type_is_counted_not_fatal(tmp_path: Path) -> None:
    folder = tmp_path / "projects" / "-nowhere-app"
    folder.mkdir(parents=True)
    (folder / f"{SID}.jsonl").write_bytes(GOOD + b'{"type": []}\n')

    found = discover(SourceSettings(), path=tmp_path / "projects")

    assert found.skipped.get(UNKNOWN_TYPES) == 1
    assert len(found.threads) == 1


def test_a_codex_rollout_with_a_malformed_record_keeps_its_other_messages(
    tmp_path: Path, src_fixtures: Path
) -> None:
    rollout = next((src_fixtures / "codex").rglob("rollout-*.jsonl"))
    target = tmp_path / "sessions" / rollout.name
    copy_to(rollout, target)
    before = discover(SourceSettings(), source="codex", path=target).threads
    with target.open("ab") as handle:
        handle.write(b'{"type": [1], "payload": {}}\n{"type":"response_item","payload":[]}\n')

    found = discover(SourceSettings(), source="codex", path=target)

    assert [t.message_count for t in found.threads] == [t.message_count for t in before]
    assert found.errors == []


def test_a_reader_failing_unexpectedly_names_the_file_and_the_others_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "projects" / "-nowhere-app"
    folder.mkdir(parents=True)
    broken = folder / f"{SID}.jsonl"
    broken.write_bytes(GOOD)
    (folder / "11111111-2222-3333-4444-555555555555.jsonl").write_bytes(GOOD)
    original = claude_code._Session.threads

    def threads(self: claude_code._Session) -> list[object]:
        if self.path == broken:
            raise RuntimeError("something nobody foresaw")
        return original(self)  # type: ignore[return-value]

    monkeypatch.setattr(claude_code._Session, "threads", threads)

    found = discover(SourceSettings(), path=tmp_path / "projects")

    assert [t.id for t in found.threads] == ["11111111-2222-3333-4444-555555555555"]
    assert len(found.errors) == 1
    assert str(broken) in found.errors[0]
    assert "something nobody foresaw" in found.errors[0]


def test_bad_records_are_counted(tmp_path: Path) -> None:
    folder = tmp_path / "projects" / "-nowhere-app"
    folder.mkdir(parents=True)
    # `content` a list of tool_use blocks whose `name` is an object: tool_line gets a dict.
    bad = (
        b'{"type":"assistant","message":{"id":"m","content":[{"type":"tool_use",'
        b'"name":{"n":1},"input":{"command":"ls"}}]}}\n'
    )
    (folder / f"{SID}.jsonl").write_bytes(GOOD + bad)

    found = discover(SourceSettings(), path=tmp_path / "projects")

    assert len(found.threads) == 1
    assert found.errors == []
    assert sum(found.skipped.values()) <= 1
    assert set(found.skipped) <= {BAD_RECORDS}


@fifo_only
def test_a_fifo_as_a_subagent_transcript_is_reported_not_waited_on(tmp_path: Path) -> None:
    folder = tmp_path / "projects" / "-nowhere-app"
    (folder / SID / "subagents").mkdir(parents=True)
    (folder / f"{SID}.jsonl").write_bytes(GOOD)
    fifo = folder / SID / "subagents" / "agent-a1.jsonl"
    os.mkfifo(fifo)

    found = _in_time(lambda: discover(SourceSettings(), path=tmp_path / "projects"))

    assert len(found.threads) == 1  # type: ignore[attr-defined]
    assert any(str(fifo) in e and "pipe" in e for e in found.errors)  # type: ignore[attr-defined]


@fifo_only
def test_a_fifo_as_git_head_does_not_hang_an_aider_scan(tmp_path: Path) -> None:
    project = tmp_path / "app"
    (project / ".git").mkdir(parents=True)
    os.mkfifo(project / ".git" / "HEAD")
    (project / ".aider.chat.history.md").write_text(
        "# aider chat started at 2026-01-01 10:00:00\n\n#### make it fast  \n\nDone.\n",
        encoding="utf-8",
    )

    found = _in_time(lambda: discover(SourceSettings(), source="aider", path=project))

    assert [t.branch for t in found.threads] == ["aider"]  # type: ignore[attr-defined]


@fifo_only
def test_a_fifo_as_puffins_recent_projects_does_not_hang_a_scan(tmp_path: Path) -> None:
    (tmp_path / ".puffin").mkdir()
    fifo = tmp_path / ".puffin" / "recent-projects.json"
    os.mkfifo(fifo)
    settings = SourceSettings(claude_code=False, codex=False, aider=False, puffin=True)

    found = _in_time(lambda: discover(settings, home=tmp_path))

    assert found.threads == []  # type: ignore[attr-defined]
    assert any(str(fifo) in e for e in found.errors)  # type: ignore[attr-defined]


@fifo_only
def test_a_fifo_given_as_the_scan_path_is_reported(tmp_path: Path) -> None:
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)

    found = _in_time(lambda: discover(SourceSettings(), path=fifo))

    assert found.threads == []  # type: ignore[attr-defined]
    assert any(str(fifo) in e for e in found.errors)  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", ["fifo", "folder", "deep"])
def test_an_unusable_ledger_is_set_aside_not_waited_on(tmp_path: Path, kind: str) -> None:
    path = tmp_path / LEDGER_FILE
    if kind == "fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("FIFOs are POSIX")
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        path.write_bytes(b"[" * 200_000 + b"]" * 200_000)

    ledger = _in_time(lambda: Ledger.open(tmp_path))

    assert len(ledger) == 0  # type: ignore[arg-type]
    assert "unreadable" in (ledger.warning or "")  # type: ignore[attr-defined]
    assert path.exists() is False or path.is_file()  # moved aside
