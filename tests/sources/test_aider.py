"""Aider chat histories: one thread per session, branch from .git/HEAD."""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

import pytest

from app.core.config import SourceSettings
from app.sources.models import ASSISTANT, COMMAND, USER
from app.sources.render import render
from app.sources.scan import discover
from tests.sources.conftest import copy_to

HISTORY = ".aider.chat.history.md"


def _repo(tmp_path: Path, head: str | None) -> Path:
    repo = tmp_path / "calculator"
    repo.mkdir()
    if head is not None:
        (repo / ".git").mkdir()
        (repo / ".git" / "HEAD").write_text(head)
    return repo


@pytest.mark.corpus
def test_real_history_gives_its_session(corpus_dir: Path, tmp_path: Path, user_home: Path) -> None:
    repo = _repo(tmp_path, None)
    copy_to(
        corpus_dir / "aider" / "AndrewJacop-Simple-Calulator__.aider.chat.history.md",
        repo / HISTORY,
    )

    found = discover(SourceSettings(aider_projects=[str(repo)]), source="aider", home=user_home)

    (thread,) = found.threads
    assert thread.branch_id == "calculator/aider"
    users = [m.text for m in thread.messages if m.role == USER]
    assert users[0] == "give me a quick summarized overview of this repo"
    # `/code x` followed by `x` keeps the prompt only once.
    assert not any(u.startswith("/code") for u in users)
    assert users.count("add a nyancat animation in the background") == 1
    text = render(thread.load())
    assert "<think>" not in text
    assert "<<<<<<< SEARCH" not in text.split("add a nyancat")[0]
    assert "[tool] edit: src/App.js" in text
    assert thread.rendered_bytes < thread.path.stat().st_size


@pytest.mark.parametrize(
    ("head", "branch"),
    [
        ("ref: refs/heads/feature/calc\n", "feature/calc"),
        ("3f78685 detached\n", "aider"),
        (None, "aider"),
    ],
)
def test_branch_comes_from_git_head(
    src_fixtures: Path, tmp_path: Path, head: str | None, branch: str
) -> None:
    repo = _repo(tmp_path, head)
    copy_to(src_fixtures / "aider" / HISTORY, repo / HISTORY)
    found = discover(SourceSettings(), path=repo)
    assert {t.branch for t in found.threads} == {branch}


def test_each_session_is_a_thread(src_fixtures: Path, tmp_path: Path) -> None:
    repo = _repo(tmp_path, "ref: refs/heads/main\n")
    history = copy_to(src_fixtures / "aider" / HISTORY, repo / HISTORY)

    first, second = discover(SourceSettings(), path=history).threads

    assert first.ref == "ai-" + first.started.strftime("%Y%m%dT%H%M%S")
    assert [m.text for m in second.messages] == [
        "always use two-space indentation in CSS",
        "Noted, two spaces it is.",
    ]
    messages = first.messages
    assert [m.text for m in messages if m.role == USER] == [
        "make the title bold",
        "the build fails:\n\nModule not found: Error: Can't resolve './x.css'",
    ]
    assert [m.text for m in messages if m.kind == COMMAND] == ["/commit style: bold title"]
    reply = next(m for m in messages if m.role == ASSISTANT)
    assert "#### If you're using **npm**:" in reply.text
    assert "private reasoning" not in reply.text
    assert reply.tools == ["edit: src/styles.css"]
    text = render(first.load())
    assert "[tool error] litellm.APIError: upstream error" in text
    assert "Tokens: 3.2k" not in text


def _rendered_session(tmp_path: Path, body: str) -> str:
    """One Aider session of `body`, as the app renders it."""
    history = _repo(tmp_path, "main") / HISTORY
    history.write_text(f"\n# aider chat started at 2026-03-05 10:00:00\n\n{body}", "utf-8")
    (thread,) = discover(SourceSettings(), path=history).threads
    return render(thread.load())


def test_a_passing_test_run_keeps_its_summary_line(tmp_path: Path) -> None:
    text = _rendered_session(
        tmp_path,
        "#### fix the rounding in total()  \n\n"
        "I'll round with `Decimal.quantize`.\n\n"
        "> Applied edit to calc.py  \n"
        "> Running pytest -q  \n"
        "> .......  \n"
        "> 7 passed in 0.12s  \n",
    )
    assert "[tool result] 7 passed in 0.12s" in text
    assert "Applied edit" not in text


def test_a_passed_check_named_after_an_error_is_no_error(tmp_path: Path) -> None:
    text = _rendered_session(
        tmp_path,
        "#### /run node --test  \n\n"
        "> ✔ cli: unknown tag prints a friendly error (140.2ms)  \n"
        "> ok 3 - parse error is reported with its line  \n"
        "> Error: Command failed with exit code 128  \n",
    )
    assert "[tool error] ✔" not in text and "[tool error] ok 3" not in text, text
    assert "[tool error] Error: Command failed with exit code 128" in text, text


def test_a_history_written_long_after_its_last_session_is_dated_by_the_session(
    tmp_path: Path,
) -> None:
    # A clone or a copy writes the file today; the session was in May 2025.
    history = _repo(tmp_path, "main") / HISTORY
    history.write_text(
        "\n# aider chat started at 2025-05-04 17:02:36\n\n#### make the keys bigger\n\nDone.\n",
        "utf-8",
    )
    (thread,) = discover(SourceSettings(), path=history).threads
    assert thread.ended == thread.started
    assert thread.ended.year == 2025


def test_the_last_session_ends_when_the_file_was_written(tmp_path: Path) -> None:
    history = _repo(tmp_path, "main") / HISTORY
    history.write_text(
        "\n# aider chat started at 2025-05-04 17:02:36\n\n#### make the keys bigger\n\nDone.\n",
        "utf-8",
    )
    later = datetime(2025, 5, 4, 18, 30).timestamp()
    os.utime(history, (later, later))
    (thread,) = discover(SourceSettings(), path=history).threads
    assert thread.ended > thread.started
