"""Project and branch of a session's working directory, as the session-start hook sees them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from app.integrations.gitref import NO_BRANCH, branch_from_head, locate
from app.sources.models import NO_BRANCH as SOURCES_NO_BRANCH
from tests.integrations.conftest import checkout


def test_branch_is_read_from_head_in_a_subfolder(tmp_path: Path) -> None:
    repo = checkout(tmp_path, "spotter", "ref: refs/heads/feature/auth")
    (repo / "src" / "deep").mkdir(parents=True)

    where = locate(str(repo / "src" / "deep"))

    assert (where.project, where.branch) == ("spotter", "feature/auth")
    assert where.branch_id == "spotter/feature/auth"


def test_detached_head_is_named_by_its_short_sha(tmp_path: Path) -> None:
    repo = checkout(tmp_path, "spotter", "0123456789abcdef0123456789abcdef01234567")

    assert locate(str(repo)).branch == "0123456"


def test_worktree_follows_the_gitdir_file(tmp_path: Path) -> None:
    main = checkout(tmp_path, "spotter", "ref: refs/heads/main")
    admin = main / ".git" / "worktrees" / "wt"
    admin.mkdir(parents=True)
    (admin / "HEAD").write_text("ref: refs/heads/feature-x\n", encoding="utf-8")
    worktree = tmp_path / "spotter-wt"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {admin}\n", encoding="utf-8")

    where = locate(str(worktree))

    assert where.branch == "feature-x"
    # The same project name app.sources gives this folder (its repository root's name).
    assert where.project == "spotter-wt"


def test_relative_gitdir_in_a_worktree_file(tmp_path: Path) -> None:
    admin = tmp_path / "store" / "wt"
    admin.mkdir(parents=True)
    (admin / "HEAD").write_text("ref: refs/heads/fix-1\n", encoding="utf-8")
    worktree = tmp_path / "app"
    worktree.mkdir()
    (worktree / ".git").write_text("gitdir: ../store/wt\n", encoding="utf-8")

    assert locate(str(worktree)).branch == "fix-1"


def test_outside_git_the_branch_is_no_branch(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()

    where = locate(str(folder))

    assert (where.project, where.branch, where.root) == ("notes", "(no branch)", None)
    assert NO_BRANCH == SOURCES_NO_BRANCH


@pytest.mark.parametrize("cwd", ["", "/definitely/not/here"])
def test_missing_or_unknown_cwd_is_refused(cwd: str) -> None:
    with pytest.raises(ValueError, match="cwd"):
        locate(cwd)


@pytest.mark.parametrize(
    ("head", "branch"),
    [
        ("ref: refs/heads/main", "main"),
        ("ref: refs/heads/feature/a/b", "feature/a/b"),
        ("ref: refs/remotes/origin/x", "remotes/origin/x"),
        ("a" * 64, "aaaaaaa"),
        ("garbage", None),
        ("", None),
    ],
)
def test_head_texts(head: str, branch: str | None) -> None:
    assert branch_from_head(head) == branch


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_real_git_init_on_feature_x(tmp_path: Path) -> None:
    repo = tmp_path / "spotter"
    repo.mkdir()
    done = subprocess.run(
        ["git", "init", "-q", "-b", "feature-x", str(repo)], capture_output=True, check=False
    )
    if done.returncode != 0:
        pytest.skip("this git cannot `init -b`")

    assert locate(str(repo)).branch_id == "spotter/feature-x"
