"""Project names and git branches from folders, without running git.

A thread's project is the name of its repository root folder: the nearest folder at or
above the working directory that holds `.git` (a folder, or a file pointing elsewhere in a
worktree). When the folder is not on this machine (transcripts copied from elsewhere) the
last path component is used. The current branch is read from `.git/HEAD`. Results are
cached per path because a transcript repeats the same working directory on every line.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

_MAX_UP = 40


def last_component(path: str) -> str:
    """The last folder name of a POSIX or Windows path (`C:\\code\\app` -> `app`)."""
    cleaned = path.rstrip("/\\")
    for sep in ("/", "\\"):
        if sep in cleaned:
            cleaned = cleaned.rsplit(sep, 1)[1]
    return cleaned


def git_dir(folder: Path) -> Path | None:
    """The git directory of a repository root: `.git`, or where a `.git` file points."""
    marker = folder / ".git"
    try:
        if marker.is_dir():
            return marker
        if marker.is_file():
            text = marker.read_text(encoding="utf-8", errors="replace").strip()
            if text.startswith("gitdir:"):
                target = Path(text[len("gitdir:") :].strip())
                return target if target.is_absolute() else (folder / target).resolve()
    except OSError:
        return None
    return None


@lru_cache(maxsize=4096)
def repo_root(cwd: str) -> str | None:
    """The nearest folder at or above `cwd` holding `.git`, if `cwd` exists here."""
    if not cwd:
        return None
    try:
        folder = Path(cwd)
        if not folder.is_dir():
            return None
    except (OSError, ValueError):
        return None
    for _ in range(_MAX_UP):
        if git_dir(folder) is not None:
            return str(folder)
        if folder.parent == folder:
            return None
        folder = folder.parent
    return None


@lru_cache(maxsize=4096)
def project_name(cwd: str) -> str:
    """Repository root folder name for a working directory (else its last component)."""
    root = repo_root(cwd)
    name = last_component(root if root else cwd)
    return name or "(unknown project)"


def current_branch(folder: Path) -> str | None:
    """The checked-out branch of the repository holding `folder`, from `.git/HEAD`.

    None when there is no repository or HEAD is detached (no branch to name).
    """
    root = repo_root(str(folder))
    if root is None:
        return None
    folder_of_git = git_dir(Path(root))
    if folder_of_git is None:
        return None
    try:
        head = (folder_of_git / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    prefix = "ref: refs/heads/"
    if head.startswith(prefix):
        return head[len(prefix) :] or None
    return None
