"""The session-end inbox: spooled records, draining, retries, giving up, one drain at a time."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from filelock import FileLock

from app.container import build_api
from app.integrations import inbox
from app.integrations.inbox import MAX_ATTEMPTS, drain_inbox, spool

SESSION = "7b1c9e2a-4d3f-4a8e-9c21-5f0e6d2b8a11"


def drain(home: Path) -> dict[str, object]:
    """Drain as the process-inbox command does: with an api built only when needed."""
    return drain_inbox(home, lambda: build_api(home))


@pytest.fixture
def offline_home(home: Path) -> Path:
    (home / "config.json").write_text('{"engine": "offline"}\n', encoding="utf-8")
    return home


@pytest.fixture
def transcript(tmp_path: Path, fixtures_dir: Path) -> Path:
    path = tmp_path / "projects" / "-home-dev-spotter" / f"{SESSION}.jsonl"
    path.parent.mkdir(parents=True)
    shutil.copyfile(fixtures_dir / "integrations" / "session-feature-x.jsonl", path)
    return path


def _spool(home: Path, transcript: Path | str, event: str = "SessionEnd") -> Path:
    return spool(home, transcript_path=str(transcript), session_id=SESSION, cwd="/tmp", event=event)


def _ledger(home: Path) -> dict[str, dict[str, object]]:
    data = json.loads((home / "ledger.json").read_text(encoding="utf-8"))
    threads: dict[str, dict[str, object]] = data["threads"]
    return threads


def test_a_record_is_one_small_json_file(home: Path) -> None:
    path = _spool(home, "/x/session.jsonl", "PreCompact")

    record = json.loads(path.read_text(encoding="utf-8"))
    assert path.parent == home / "inbox"
    assert record["transcript_path"] == "/x/session.jsonl"
    assert record["session_id"] == SESSION
    assert record["event"] == "PreCompact"
    assert record["attempts"] == 0
    assert record["time"].endswith("Z")
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")]  # no temp left


def test_drain_memorizes_and_empties_the_inbox(offline_home: Path, transcript: Path) -> None:
    _spool(offline_home, transcript)
    _spool(offline_home, transcript, "SessionEnd")  # the same session twice: one pass

    report = drain(offline_home)

    assert report["busy"] is False
    assert report["records"] == 2
    assert report["memorized"] == 1
    assert report["remaining"] == 0
    assert report["transcripts"][0]["threads"][0]["branchId"] == "spotter/feature-x"
    assert f"claude-code:{SESSION}" in _ledger(offline_home)
    assert (offline_home / "branches" / "spotter%2Ffeature-x.md").is_file()


def test_a_grown_session_memorizes_only_the_new_part(offline_home: Path, transcript: Path) -> None:
    lines = transcript.read_text(encoding="utf-8").splitlines(keepends=True)
    transcript.write_text("".join(lines[:2]), encoding="utf-8")
    _spool(offline_home, transcript, "PreCompact")
    drain(offline_home)
    first = _ledger(offline_home)[f"claude-code:{SESSION}"]["messages"]

    transcript.write_text("".join(lines), encoding="utf-8")
    _spool(offline_home, transcript)
    report = drain(offline_home)

    assert report["memorized"] == 1
    assert _ledger(offline_home)[f"claude-code:{SESSION}"]["messages"] == len(lines) > first


def test_the_app_can_drain_with_its_own_api(offline_home: Path, transcript: Path) -> None:
    api = build_api(offline_home)
    _spool(offline_home, transcript)

    report = drain_inbox(offline_home, api)

    assert report["memorized"] == 1
    assert not list((offline_home / "inbox").glob("*.json"))


def test_failures_are_retried_then_given_up_with_a_reason(
    offline_home: Path, tmp_path: Path
) -> None:
    record = _spool(offline_home, tmp_path / "gone.jsonl")

    for attempt in range(1, MAX_ATTEMPTS):
        report = drain(offline_home)
        assert report["failed"][0]["attempts"] == attempt
        data = json.loads(record.read_text(encoding="utf-8"))
        assert data["attempts"] == attempt
        assert "does not exist" in data["lastError"]

    report = drain(offline_home)

    assert report["gaveUp"][0]["record"] == record.name
    assert not record.exists()
    assert (offline_home / "inbox" / "failed" / record.name).is_file()
    log = (offline_home / "logs" / "hooks.log").read_text(encoding="utf-8")
    assert f"gave up on {record.name}" in log
    assert f"after {MAX_ATTEMPTS} attempts" in log


def test_unreadable_records_are_set_aside(offline_home: Path) -> None:
    bad = offline_home / "inbox" / "20260101T000000000000Z-bad.json"
    bad.parent.mkdir(parents=True)
    bad.write_text("{ not json", encoding="utf-8")
    empty = offline_home / "inbox" / "20260101T000000000001Z-empty.json"
    empty.write_text('{"session_id": "x"}', encoding="utf-8")

    report = drain(offline_home)

    assert report["remaining"] == 0
    assert (offline_home / "inbox" / "failed" / bad.name).is_file()
    assert (offline_home / "inbox" / "failed" / empty.name).is_file()


def test_only_one_drain_runs_at_a_time(offline_home: Path, transcript: Path) -> None:
    record = _spool(offline_home, transcript)
    held = FileLock(str(inbox.lock_path(offline_home)))
    with held:
        if sys.platform != "win32":
            assert inbox.drainer_busy(offline_home)
        report = drain(offline_home)
    assert report["busy"] is True
    assert record.exists()
    assert not inbox.drainer_busy(offline_home)
    assert drain(offline_home)["memorized"] == 1


def test_the_drain_command_names_the_home_and_engine(tmp_path: Path) -> None:
    argv = inbox.drainer_command(tmp_path / "h", "offline")

    assert argv[:3] == [sys.executable, "-m", "app.integrations"]
    assert argv[3:] == [
        "--home",
        str((tmp_path / "h").resolve()),
        "--engine",
        "offline",
        "hook",
        "process-inbox",
    ]
    assert inbox.drainer_command(None)[-2:] == ["hook", "process-inbox"]
