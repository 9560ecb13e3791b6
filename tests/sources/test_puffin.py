"""Puffin histories: topic branches, prompt trees, timestamps, recent projects."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from app.core.config import SourceSettings
from app.sources.models import ASSISTANT, USER
from app.sources.render import render
from app.sources.scan import discover, sources_report
from tests.sources.conftest import copy_to

BRANCHES = [
    "architecture",
    "backend",
    "deployment",
    "fullstack",
    "improvements",
    "specifications",
    "tmp",
    "ui",
]


@pytest.mark.corpus
def test_real_history_gives_its_eight_branches(
    corpus_dir: Path, tmp_path: Path, user_home: Path
) -> None:
    project = tmp_path / "todo-list"
    copy_to(
        corpus_dir / "puffin" / "jdubray-puffin-todo-list__.puffin__history.json",
        project / ".puffin" / "history.json",
    )
    settings = SourceSettings(puffin_projects=[str(project)])

    found = discover(settings, source="puffin", home=user_home)
    report = sources_report(settings, user_home)

    assert found.errors == []
    assert len(found.threads) == 32
    assert {t.branch for t in found.threads} == {"specifications", "fullstack"}
    assert {t.project for t in found.threads} == {"todo-list"}
    (puffin,) = [s for s in report["sources"] if s["source"] == "puffin"]
    (entry,) = puffin["projects"]
    assert entry["project"] == "todo-list"
    assert [b["branch"] for b in entry["branches"]] == BRANCHES
    counts = {b["branch"]: b["threads"] for b in entry["branches"]}
    assert counts["fullstack"] == 28
    assert counts["specifications"] == 4
    assert counts["ui"] == 0
    first = found.threads[0]
    assert first.started == datetime(2026, 2, 9, 21, 28, 47, 781000, tzinfo=UTC)
    text = render(first.load())
    assert text.startswith("User: Based on the attached specification")
    assert "[tool] files changed:" in text


def _project(src: Path, tmp_path: Path) -> Path:
    project = tmp_path / "shop"
    copy_to(src / "puffin" / "history.json", project / ".puffin" / "history.json")
    return project


def test_a_thread_is_a_root_prompt_with_its_descendants(src_fixtures: Path, tmp_path: Path) -> None:
    project = _project(src_fixtures, tmp_path)
    found = discover(SourceSettings(), path=project)

    assert [(t.id, t.branch_id, t.message_count) for t in found.threads] == [
        ("r1", "shop/architecture", 5),
        ("r2", "shop/architecture", 2),
        ("o1", "shop/architecture", 1),
    ]
    thread = found.threads[0]
    messages = thread.messages
    assert [m.role for m in messages] == [USER, ASSISTANT, USER, ASSISTANT, USER]
    assert messages[-1].text == "Write that down as a decision."
    # Epoch milliseconds and ISO strings both read as UTC.
    assert thread.started == datetime(2026, 1, 1, 10, 0, tzinfo=UTC)
    assert thread.ended == datetime(2026, 1, 1, 10, 7, tzinfo=UTC)
    assert messages[1].tools == ["files changed: adr-001.md"]
    assert thread.ref == "pf-r1"


def test_empty_branches_and_bad_prompts_are_reported_not_fatal(
    src_fixtures: Path, tmp_path: Path
) -> None:
    found = discover(SourceSettings(), path=_project(src_fixtures, tmp_path))
    assert found.empty_branches == ["shop/backend", "shop/ui"]
    assert found.skipped == {"malformed Puffin prompts": 1}
    assert found.errors == []


@pytest.mark.parametrize("which", ["project", "dot-puffin", "history-file"])
def test_path_may_name_the_project_its_puffin_folder_or_the_file(
    src_fixtures: Path, tmp_path: Path, which: str
) -> None:
    project = _project(src_fixtures, tmp_path)
    path = {
        "project": project,
        "dot-puffin": project / ".puffin",
        "history-file": project / ".puffin" / "history.json",
    }[which]
    found = discover(SourceSettings(), path=path)
    assert {t.branch_id for t in found.threads} == {"shop/architecture"}


def test_projects_come_from_puffins_recent_list(
    src_fixtures: Path, tmp_path: Path, user_home: Path
) -> None:
    project = _project(src_fixtures, tmp_path)
    recent = user_home / ".puffin" / "recent-projects.json"
    recent.parent.mkdir()
    text = (src_fixtures / "puffin" / "recent-projects.json").read_text()
    recent.write_text(
        text.replace("PROJECT_A", str(project)).replace("PROJECT_B", str(tmp_path / "gone"))
    )

    found = discover(SourceSettings(), source="puffin", home=user_home)

    assert {t.project for t in found.threads} == {"shop"}
    assert found.errors == []


def test_unreadable_recent_list_and_history_are_errors_with_file_names(
    tmp_path: Path, user_home: Path
) -> None:
    (user_home / ".puffin").mkdir()
    (user_home / ".puffin" / "recent-projects.json").write_text("{not json")
    project = tmp_path / "broken"
    (project / ".puffin").mkdir(parents=True)
    (project / ".puffin" / "history.json").write_text('{"branches": [1, 2')

    found = discover(
        SourceSettings(puffin_projects=[str(project)]), source="puffin", home=user_home
    )

    assert found.threads == []
    assert len(found.errors) == 2
    assert any("recent-projects.json" in e for e in found.errors)
    assert any(str(project / ".puffin" / "history.json") in e for e in found.errors)


def test_pending_response_gives_no_assistant_message(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / ".puffin").mkdir(parents=True)
    history = {
        "branches": {
            "ui": {
                "prompts": [
                    {
                        "id": "x",
                        "parentId": None,
                        "content": "Make the header sticky",
                        "timestamp": 1767261600000,
                        "response": None,
                    }
                ]
            }
        }
    }
    (project / ".puffin" / "history.json").write_text(json.dumps(history))
    (thread,) = discover(SourceSettings(), path=project).threads
    assert [m.role for m in thread.messages] == [USER]
