"""Project names and git branches from folders, without running git.

A thread's project is the name of its repository root folder: the nearest folder at or
above the working directory that holds `.git` (a folder, or a file pointing elsewhere in a
worktree). When the folder is not on this machine (transcripts copied from elsewhere) the
last path component is used. The current branch is read from `.git/HEAD`. Results are
cached per path because a transcript repeats the same working directory on every line.
Git's small files are read with `read_small`: bounded, and never blocking on a FIFO.
"""

from __future__ import annotations

import os
import stat
from functools import lru_cache
from pathlib import Path

_MAX_UP = 40
# HEAD and a `.git` file hold one line; anything longer is not what git writes.
SMALL_FILE_LIMIT = 4096


def read_small(path: Path, limit: int = SMALL_FILE_LIMIT) -> str | None:
    """The text of a small regular file (at most `limit` bytes read), else None.

    Opened non-blocking and checked with fstat before reading: a FIFO in place of
    `.git/HEAD` would otherwise block the reader (a scan, or a hook in the agent's session)
    until something writes to it.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = os.read(fd, limit)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data.decode("utf-8", errors="replace")


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
            text = (read_small(marker) or "").strip()
            if text.startswith("gitdir:"):
                target = Path(text[len("gitdir:") :].strip())
                return target if target.is_absolute() else (folder / target).resolve()
    except (OSError, ValueError):
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
    text = read_small(folder_of_git / "HEAD")
    if text is None:
        return None
    head = text.strip()
    prefix = "ref: refs/heads/"
    if head.startswith(prefix):
        return head[len(prefix) :] or None
    return None
