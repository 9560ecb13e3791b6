"""Discovery, planning, the dry-run and sources reports, and memorizing pending threads."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from app.core.config import SourceSettings
from app.core.errors import ExtractionFailed, InvalidInput
from app.sources.ledger import Ledger
from app.sources.scan import discover, dry_run_report, memorize_pending, plan, sources_report
from tests.sources.conftest import copy_to

SID = "11111111-2222-4333-8444-555555555555"
LATER = datetime(2026, 6, 1, tzinfo=UTC)


def _claude(src: Path, tmp_path: Path) -> Path:
    projects = tmp_path / "projects"
    copy_to(src / "claude" / "branch_switch.jsonl", projects / "-home-u-shop" / f"{SID}.jsonl")
    return projects


class Recorder:
    """A memorize callback that records its calls and answers like MemoryApi."""

    def __init__(self, replies: list[dict[str, Any]] | None = None) -> None:
        self.calls: list[tuple[str, str, str]] = []
        self.replies = replies or []

    def __call__(self, text: str, branch_id: str, ref: str) -> dict[str, Any]:
        self.calls.append((text, branch_id, ref))
        if self.replies:
            return self.replies.pop(0)
        return {"itemsExtracted": 1, "categoriesUpdated": ["coding_preferences"]}


# -- discovery ------------------------------------------------------------------------------


def test_unknown_source_is_invalid_input() -> None:
    with pytest.raises(InvalidInput, match="Unknown source 'cursor'"):
        discover(SourceSettings(), source="cursor")


def test_missing_path_is_invalid_input(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="does not exist"):
        discover(SourceSettings(), path=tmp_path / "nope")


def test_missing_configured_folders_find_nothing_and_are_no_error(user_home: Path) -> None:
    settings = SourceSettings(puffin_projects=["~/gone"], aider_projects=["/definitely/not/here"])
    found = discover(settings, home=user_home)
    assert (found.threads, found.errors, found.skipped) == ([], [], {})


def test_tilde_in_settings_means_the_given_home(src_fixtures: Path, user_home: Path) -> None:
    copy_to(
        src_fixtures / "claude" / "branch_switch.jsonl",
        user_home / ".claude" / "projects" / "-home-u-shop" / f"{SID}.jsonl",
    )
    found = discover(SourceSettings(), home=user_home)
    assert [t.source for t in found.threads] == ["claude-code"] * 3


def test_disabled_sources_are_not_read_unless_asked_for(
    src_fixtures: Path, user_home: Path
) -> None:
    copy_to(
        src_fixtures / "claude" / "branch_switch.jsonl",
        user_home / ".claude" / "projects" / "p" / f"{SID}.jsonl",
    )
    settings = SourceSettings(claude_code=False)
    assert discover(settings, home=user_home).threads == []
    assert len(discover(settings, source="claude-code", home=user_home).threads) == 3


@pytest.mark.parametrize(
    ("relative", "source"),
    [
        ("claude/branch_switch.jsonl", "claude-code"),
        ("claude", "claude-code"),
        ("codex/rollout-2026-01-07T10-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeffff0001.jsonl", "codex"),
        ("codex", "codex"),
        ("puffin/history.json", "puffin"),
        ("aider/.aider.chat.history.md", "aider"),
        ("aider", "aider"),
        ("text/design-notes.md", "file"),
        ("text/plain.txt", "file"),
    ],
)
def test_path_kind_is_detected(src_fixtures: Path, relative: str, source: str) -> None:
    found = discover(SourceSettings(), path=src_fixtures / relative)
    assert found.threads
    assert {t.source for t in found.threads} == {source}


def test_folder_without_transcripts_says_so(tmp_path: Path) -> None:
    (tmp_path / "notes.csv").write_text("a,b\n")
    found = discover(SourceSettings(), path=tmp_path)
    assert found.threads == []
    assert found.errors == [f"{tmp_path}: no transcripts recognised in this folder"]


def test_a_folder_of_collected_transcripts_is_read_by_content(
    src_fixtures: Path, tmp_path: Path
) -> None:
    # Histories copied out of their projects under other names, one folder per tool (as in
    # ../shared/corpus): each file's kind is read from its first bytes, not its name.
    box = tmp_path / "collected"
    copy_to(src_fixtures / "claude" / "branch_switch.jsonl", box / "claude" / "shop__s1.jsonl")
    rollout = "rollout-2026-01-07T10-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeffff0001.jsonl"
    copy_to(src_fixtures / "codex" / rollout, box / "codex" / f"tool__codex__{rollout[8:]}")
    copy_to(src_fixtures / "puffin" / "history.json", box / "puffin" / "app__.puffin__history.json")
    (box / "puffin" / "app__.puffin__config.json").write_text('{"name": "app"}\n')
    copy_to(src_fixtures / "aider" / ".aider.chat.history.md", box / "aider" / "calc__history.md")
    (box / "aider" / "README.md").write_text("# Notes\n\nUser: not an Aider history\n")
    found = discover(SourceSettings(), path=box)
    assert found.errors == []
    assert {t.source for t in found.threads} == {"claude-code", "codex", "puffin", "aider"}
    assert not any(t.source == "claude-code" and "codex" in str(t.path) for t in found.threads)


def test_text_files_split_on_speaker_labels(src_fixtures: Path) -> None:
    (thread,) = discover(SourceSettings(), path=src_fixtures / "text" / "design-notes.md").threads
    assert [(m.role, m.text) for m in thread.messages][1:] == [
        ("user", "Should the cache be per branch?"),
        ("assistant", "Yes: one SQLite file per branch keeps invalidation simple."),
        ("user", "And the size limit?"),
        ("assistant", "200 MB, oldest entries evicted first."),
    ]
    (plain,) = discover(SourceSettings(), path=src_fixtures / "text" / "plain.txt").threads
    assert [(m.role, m.text) for m in plain.messages] == [
        ("user", "We decided to drop Python 3.9 support in March.")
    ]


def test_since_keeps_only_newer_threads(src_fixtures: Path, tmp_path: Path) -> None:
    projects = _claude(src_fixtures, tmp_path)
    found = discover(
        SourceSettings(), path=projects, since=datetime(2026, 3, 1, 10, 30, tzinfo=UTC)
    )
    assert [t.id for t in found.threads] == [f"{SID}#3"]


@pytest.mark.corpus
def test_every_corpus_file_parses(corpus_dir: Path) -> None:
    files = [p for p in sorted(corpus_dir.rglob("*")) if p.is_file() and p.name != "README.md"]
    assert len(files) >= 9
    total = 0
    for path in files:
        found = discover(SourceSettings(), path=path)
        total += len(found.threads)
        for thread in found.threads:
            assert thread.message_count == len(thread.messages)
    assert total >= 40


# -- planning -------------------------------------------------------------------------------


def test_threads_are_complete_when_newer_or_idle(
    src_fixtures: Path, tmp_path: Path, home: Path
) -> None:
    found = discover(SourceSettings(), path=_claude(src_fixtures, tmp_path))
    ledger = Ledger.open(home)
    soon = datetime(2026, 3, 1, 11, 10, tzinfo=UTC)

    planned = plan(found, ledger, idle_minutes=30, now=soon)

    # main#1 has a newer main thread; feature/cart is idle for an hour; the last main thread
    # ended ten minutes ago.
    assert [(p.thread.branch, p.complete, p.processed) for p in planned] == [
        ("main", True, False),
        ("feature/cart", True, False),
        ("main", False, False),
    ]
    assert plan(found, ledger, idle_minutes=5, now=soon)[2].complete
    assert not plan(found, ledger, idle_minutes=120, now=soon)[1].complete


def test_dry_run_report_has_exactly_the_agreed_shape(
    src_fixtures: Path, tmp_path: Path, home: Path
) -> None:
    found = discover(SourceSettings(), path=_claude(src_fixtures, tmp_path))
    report = dry_run_report(found, plan(found, Ledger.open(home), idle_minutes=30, now=LATER))
    assert set(report) == {"threads", "errors", "skipped"}
    assert report["threads"][1] == {
        "id": f"{SID}#2",
        "source": "claude-code",
        "project": "shop",
        "branch": "feature/cart",
        "branchId": "shop/feature/cart",
        "messages": 4,
        "started": "2026-03-01T10:00:00Z",
        "ended": "2026-03-01T10:00:03Z",
        "complete": True,
        "processed": False,
    }
    json.dumps(report)
    sized = dry_run_report(
        found, plan(found, Ledger.open(home), idle_minutes=30), include_size=True
    )
    assert sized["size"]["rawBytes"] == found.raw_bytes > sized["size"]["renderedBytes"] > 0
    assert 0 < sized["size"]["reductionPercent"] < 100


# -- memorizing -----------------------------------------------------------------------------


def test_pending_threads_are_memorized_once(src_fixtures: Path, tmp_path: Path, home: Path) -> None:
    found = discover(SourceSettings(), path=_claude(src_fixtures, tmp_path))
    ledger = Ledger.open(home)
    memorize = Recorder()
    progress: list[tuple[int, int, str]] = []

    result = memorize_pending(
        plan(found, ledger, idle_minutes=30, now=LATER),
        ledger,
        memorize,
        progress=lambda i, n, label: progress.append((i, n, label)),
    )

    counts = {k: result[k] for k in ("memorized", "failed", "skipped", "errors", "read")}
    assert counts == {
        "memorized": 3,
        "failed": 0,
        "skipped": 0,
        "errors": [],
        "read": {"claude-code": 3},
    }
    assert [(b, r) for _, b, r in memorize.calls] == [
        ("shop/main", "cc-11111111"),
        ("shop/feature/cart", "cc-11111111-2"),
        ("shop/main", "cc-11111111-3"),
    ]
    assert memorize.calls[0][0].startswith("User: Use pnpm, never npm")
    assert [p[:2] for p in progress] == [(1, 3), (2, 3), (3, 3)]
    assert progress[0][2] == "shop/main cc-11111111"
    again = plan(
        discover(SourceSettings(), path=tmp_path / "projects"),
        Ledger.open(home),
        idle_minutes=30,
        now=LATER,
    )
    assert all(p.processed for p in again)
    second = memorize_pending(again, Ledger.open(home), memorize)
    assert {k: second[k] for k in ("memorized", "failed", "skipped", "errors", "read")} == {
        "memorized": 0,
        "failed": 0,
        "skipped": 3,
        "errors": [],
        "read": {},
    }
    assert len(memorize.calls) == 3


def test_incomplete_threads_wait(src_fixtures: Path, tmp_path: Path, home: Path) -> None:
    found = discover(SourceSettings(), path=_claude(src_fixtures, tmp_path))
    ledger = Ledger.open(home)
    memorize = Recorder()
    soon = datetime(2026, 3, 1, 11, 10, tzinfo=UTC)
    result = memorize_pending(plan(found, ledger, idle_minutes=30, now=soon), ledger, memorize)
    assert (result["memorized"], result["skipped"]) == (2, 1)
    assert f"claude-code:{SID}#3" not in ledger.entries


def test_text_is_redacted_before_it_is_handed_over(tmp_path: Path, home: Path) -> None:
    notes = tmp_path / "repo" / "notes.md"
    notes.parent.mkdir()
    notes.write_text("User: deploy with AWS key AKIAIOSFODNN7EXAMPLE and password=hunter22\n")
    found = discover(SourceSettings(), path=notes)
    ledger = Ledger.open(home)
    memorize = Recorder()
    tomorrow = datetime.now(UTC) + timedelta(days=1)
    memorize_pending(plan(found, ledger, idle_minutes=30, now=tomorrow), ledger, memorize)
    ((text, branch_id, ref),) = memorize.calls
    assert "AKIAIOSFODNN7EXAMPLE" not in text
    assert "hunter22" not in text
    assert "[REDACTED:aws_access_key]" in text
    assert branch_id == "repo/(no branch)"
    assert ref.startswith("tx-")


def test_failures_are_not_recorded_and_are_retried(
    src_fixtures: Path, tmp_path: Path, home: Path
) -> None:
    projects = _claude(src_fixtures, tmp_path)
    found = discover(SourceSettings(), path=projects)
    ledger = Ledger.open(home)
    failing = Recorder(
        [
            {"error": True, "code": "EXTRACTION_FAILED", "message": "model overloaded"},
            {"itemsExtracted": 2},
            {"itemsExtracted": 0},
        ]
    )

    result = memorize_pending(plan(found, ledger, idle_minutes=30, now=LATER), ledger, failing)

    assert (result["memorized"], result["failed"]) == (2, 1)
    assert result["errors"] == ["cc-11111111: model overloaded"]
    retry = plan(
        discover(SourceSettings(), path=projects), Ledger.open(home), idle_minutes=30, now=LATER
    )
    assert [p.processed for p in retry] == [False, True, True]

    def raising(text: str, branch_id: str, ref: str) -> dict[str, Any]:
        raise ExtractionFailed("engine unavailable")

    again = memorize_pending(retry, Ledger.open(home), raising)
    assert (again["failed"], again["errors"]) == (1, ["cc-11111111: engine unavailable"])


def _append(path: Path, records: list[dict[str, Any]]) -> None:
    with path.open("a") as out:
        for record in records:
            out.write(json.dumps(record) + "\n")


def _turn(uuid: str, kind: str, ts: str, content: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message["id"] = f"msg_{uuid}"
    return {
        "type": kind,
        "uuid": uuid,
        "parentUuid": None,
        "sessionId": SID,
        "timestamp": ts,
        "cwd": "/home/u/shop",
        "gitBranch": "main",
        "isSidechain": False,
        "message": message,
    }


def test_a_resumed_thread_has_only_its_new_part_memorized(
    src_fixtures: Path, tmp_path: Path, home: Path
) -> None:
    projects = _claude(src_fixtures, tmp_path)
    session = projects / "-home-u-shop" / f"{SID}.jsonl"
    ledger = Ledger.open(home)
    memorize_pending(
        plan(discover(SourceSettings(), path=projects), ledger, idle_minutes=30, now=LATER),
        ledger,
        Recorder(),
    )
    _append(
        session,
        [
            _turn("n1", "user", "2026-03-02T09:00:00Z", "Also pin the Node version to 22."),
            _turn(
                "n2",
                "assistant",
                "2026-03-02T09:00:05Z",
                [{"type": "text", "text": "Added .nvmrc."}],
            ),
        ],
    )

    planned = plan(
        discover(SourceSettings(), path=projects), Ledger.open(home), idle_minutes=30, now=LATER
    )

    grown = planned[-1]
    assert (grown.processed, grown.start, grown.grown) == (False, 2, True)
    memorize = Recorder()
    result = memorize_pending(planned, Ledger.open(home), memorize)
    assert result["memorized"] == 1
    ((text, branch_id, ref),) = memorize.calls
    assert text == "User: Also pin the Node version to 22.\n\nAssistant: Added .nvmrc."
    assert (branch_id, ref) == ("shop/main", "cc-11111111-3")
    entry = Ledger.open(home).get(f"claude-code:{SID}#3")
    assert entry is not None
    assert entry.messages == 4


def test_nothing_left_to_say_is_recorded_without_a_call(
    src_fixtures: Path, tmp_path: Path, home: Path
) -> None:
    projects = _claude(src_fixtures, tmp_path)
    session = projects / "-home-u-shop" / f"{SID}.jsonl"
    original = session.read_bytes()
    ledger = Ledger.open(home)
    memorize_pending(
        plan(discover(SourceSettings(), path=projects), ledger, idle_minutes=30, now=LATER),
        ledger,
        Recorder(),
    )
    _append(session, [_turn("n1", "user", "2026-03-02T09:00:00Z", "One more thing.")])
    planned = plan(
        discover(SourceSettings(), path=projects), Ledger.open(home), idle_minutes=30, now=LATER
    )
    session.write_bytes(original)  # the new part vanished before it was memorized

    memorize = Recorder()
    result = memorize_pending(planned, Ledger.open(home), memorize)

    assert memorize.calls == []
    assert (result["memorized"], result["failed"], result["skipped"]) == (0, 0, 3)


def test_a_corrupt_ledger_does_not_stop_memorizing(
    src_fixtures: Path, tmp_path: Path, home: Path
) -> None:
    (home / "ledger.json").write_text("garbage")
    ledger = Ledger.open(home)
    found = discover(SourceSettings(), path=_claude(src_fixtures, tmp_path))
    result = memorize_pending(plan(found, ledger, idle_minutes=30, now=LATER), ledger, Recorder())
    assert result["memorized"] == 3
    assert ledger.warning is not None


# -- sources report -------------------------------------------------------------------------


def test_sources_report_lists_what_each_source_found(
    src_fixtures: Path, tmp_path: Path, user_home: Path
) -> None:
    projects = _claude(src_fixtures, tmp_path)
    settings = SourceSettings(
        claude_projects_dir=str(projects),
        codex_sessions_dir="~/.codex/sessions",
        aider=False,
    )
    report = sources_report(settings, user_home)
    by_source = {s["source"]: s for s in report["sources"]}
    assert list(by_source) == ["claude-code", "puffin", "codex", "aider"]
    claude = by_source["claude-code"]
    assert claude["enabled"] is True
    assert claude["threads"] == 3
    assert claude["locations"] == [{"path": str(projects), "exists": True}]
    assert claude["projects"] == [
        {
            "project": "shop",
            "branches": [
                {"branch": "feature/cart", "threads": 1},
                {"branch": "main", "threads": 2},
            ],
        }
    ]
    assert by_source["codex"]["locations"] == [
        {"path": str(user_home / ".codex" / "sessions"), "exists": False}
    ]
    assert by_source["codex"]["threads"] == 0
    assert by_source["aider"]["enabled"] is False
    assert report["errors"] == []
    json.dumps(report)


def test_plan_uses_the_clock_when_not_told(src_fixtures: Path, tmp_path: Path, home: Path) -> None:
    found = discover(SourceSettings(), path=_claude(src_fixtures, tmp_path))
    assert all(p.complete for p in plan(found, Ledger.open(home), idle_minutes=30))
    assert datetime.now(UTC) - found.threads[-1].ended > timedelta(minutes=30)


def test_settled_transcripts_are_not_read_again_until_they_change(
    tmp_path: Path, src_fixtures: Path
) -> None:
    from app.sources.scan import settled_transcripts

    project = tmp_path / "todo"
    (project / ".puffin").mkdir(parents=True)
    history = project / ".puffin" / "history.json"
    history.write_bytes((src_fixtures / "puffin" / "history.json").read_bytes())
    ledger = Ledger.open(tmp_path / "home")
    first = discover(SourceSettings(), path=project)
    planned = plan(first, ledger, idle_minutes=0)
    for item in planned:
        ledger.record(
            item.thread.key,
            source=item.thread.source,
            thread_id=item.thread.id,
            branch_id=item.thread.branch_id,
            ref=item.thread.ref,
            content_hash="h",
            messages=item.thread.message_count,
            path=str(item.thread.path),
        )
    settled = settled_transcripts(first, planned, ledger)
    assert settled

    again = discover(SourceSettings(), path=project, settled=settled)
    assert again.threads == [] and again.unchanged == len(settled)

    history.write_bytes(history.read_bytes() + b" ")
    changed = discover(SourceSettings(), path=project, settled=settled)
    assert changed.threads and changed.unchanged == 0


def test_describe_scan_says_what_was_read_and_why_nothing_was_kept() -> None:
    from app.sources.scan import describe_scan

    assert describe_scan({"threads": 0}).startswith("No agent conversations found")
    assert describe_scan({"threads": 5, "skipped": 5}).startswith("Nothing new to read")
    # A transcript changed minutes ago (a session still open, a file just copied) is not
    # finished: the scan says so rather than claiming everything was read before.
    assert describe_scan({"threads": 1, "skipped": 1, "inProgress": 1, "idleMinutes": 30.0}) == (
        "Nothing read yet: 1 conversation is still going (changed in the last 30 minutes); "
        "it is read once idle that long."
    )
    assert describe_scan(
        {"threads": 3, "read": {"aider": 1}, "itemsAdded": 2, "inProgress": 2, "idleMinutes": 5}
    ) == (
        "1 Aider chat read, 2 items remembered. 2 conversations are still going (changed in "
        "the last 5 minutes); they are read once idle that long."
    )
    quiet = describe_scan(
        {
            "threads": 12,
            "memorized": 12,
            "read": {"claude-code": 12},
            "itemsAdded": 0,
            "queuedForReview": 9,
            "engines": ["offline"],
        }
    )
    assert quiet == (
        "12 Claude Code sessions read, 0 items remembered: the offline engine "
        "found no statement it trusts enough to keep; 9 candidates are in Review."
    )
    broken = describe_scan(
        {
            "threads": 3,
            "memorized": 1,
            "failed": 2,
            "read": {"codex": 1},
            "itemsAdded": 4,
            "errors": ["a.jsonl: is a named pipe (FIFO), not a file; skipped", "b.jsonl: bad"],
        }
    )
    assert broken.startswith("1 Codex session read, 4 items remembered. 2 problems: a.jsonl")
