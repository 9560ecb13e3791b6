"""Codex rollouts: branch from session_meta, injected context marked, tool errors kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.config import SourceSettings
from app.sources.jsonl import UNKNOWN_TYPES
from app.sources.models import META, SYSTEM, USER
from app.sources.render import render
from app.sources.scan import discover
from tests.sources.conftest import copy_to

NEW = "rollout-2026-01-07T10-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeffff0001.jsonl"
OLD = "rollout-2025-06-01T08-00-00-5e0c2a9e-1111-4222-8333-444455556666.jsonl"


@pytest.mark.corpus
def test_real_rollouts_give_branch_main(corpus_dir: Path, tmp_path: Path, user_home: Path) -> None:
    sessions = user_home / ".codex" / "sessions"
    for path in (corpus_dir / "codex").glob("*.jsonl"):
        copy_to(path, sessions / "2026" / "02" / "23" / path.name.split("__")[-1])

    # The default setting `~/.codex/sessions` resolves against the given home.
    found = discover(SourceSettings(), source="codex", home=user_home)

    assert found.errors == []
    assert len(found.threads) == 2
    assert {t.branch for t in found.threads} == {"main"}
    for thread in found.threads:
        users = [m for m in thread.messages if m.role == USER]
        # Of several user-role items per rollout, one is the person's prompt.
        assert len(users) == 1
        assert render(thread.load()).count("User: ") == 1


def test_injected_context_is_meta_and_the_prompt_is_the_users(src_fixtures: Path) -> None:
    found = discover(SourceSettings(), path=src_fixtures / "codex" / NEW)
    (thread,) = found.threads
    assert thread.id == "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0001"
    assert thread.branch_id == "tool/(no branch)"
    assert thread.ref == "cx-ffff0001"
    first = thread.messages[0]
    assert (first.role, first.kind) == (SYSTEM, META)
    assert [m.text for m in thread.messages if m.role == USER] == ["Add a --json flag to the CLI."]
    text = render(thread.load())
    assert "permissions instructions" not in text
    assert "[tool] shell: bash -lc pytest -q" in text
    assert "[tool error] exit 1: 1 failed" in text
    assert "thinking" not in text
    assert found.skipped == {UNKNOWN_TYPES: 1}


def test_older_rollout_layout_is_read(src_fixtures: Path) -> None:
    (thread,) = discover(SourceSettings(), path=src_fixtures / "codex" / OLD).threads
    assert thread.branch == "release/1.x"
    assert thread.project == "tool"
    assert render(thread.load()) == (
        "User: Why is the release build slow?\n\nAssistant: The docs step rebuilds everything."
    )


def test_sessions_folder_is_searched_recursively(src_fixtures: Path, tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    copy_to(src_fixtures / "codex" / NEW, sessions / "2026" / "01" / "07" / NEW)
    copy_to(src_fixtures / "codex" / OLD, sessions / "2025" / "06" / "01" / OLD)
    found = discover(SourceSettings(), path=sessions)
    assert sorted(t.source for t in found.threads) == ["codex", "codex"]


def test_a_passing_run_keeps_its_summary_line(src_fixtures: Path, tmp_path: Path) -> None:
    lines = (src_fixtures / "codex" / NEW).read_text(encoding="utf-8").splitlines()
    runs = [
        '{"timestamp":"2026-01-07T10:00:11.500Z","type":"response_item","payload":{"type":'
        '"function_call","name":"shell","arguments":"{\\"command\\": [\\"pytest\\", \\"-q\\"]}",'
        '"call_id":"c3"}}',
        # The newer plain-text output shape, exit code first.
        '{"timestamp":"2026-01-07T10:00:11.600Z","type":"response_item","payload":{"type":'
        '"function_call_output","call_id":"c3","output":"Exit code: 0\\nWall time: 1.1 seconds\\n'
        'Output:\\n....\\n4 passed in 0.52s\\n"}}',
    ]
    path = tmp_path / NEW
    path.write_text("\n".join([*lines[:11], *runs, *lines[11:]]) + "\n", encoding="utf-8")

    (thread,) = discover(SourceSettings(), path=path).threads
    text = render(thread.load())

    assert "[tool] shell: pytest -q\n[tool result] 4 passed in 0.52s" in text
    assert text.count("[tool result]") == 1  # `ls` printed no summary
