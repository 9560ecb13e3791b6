"""Which project and git branch a Claude Code session is in, from its working directory.

Owns the branch id the session-start hook looks up: `<project>/<branch>`, the same
convention as `app.sources` (project = name of the repository root folder, found by walking
up to the nearest `.git`; outside a repository the folder's own name). The branch comes from
`HEAD` read directly (no `git` process: a hook must start fast), in a worktree through the
`gitdir:` file; a detached HEAD is named by its short sha; outside a repository the branch
is `(no branch)`. Only when HEAD cannot be read is `git` itself asked, if it is installed.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import NamedTuple

from app.sources.gitinfo import git_dir, project_name, read_small, repo_root

# Same text as app.sources.models.NO_BRANCH (kept literal here: importing the models
# module costs a hook more than the string; a test keeps the two equal).
NO_BRANCH = "(no branch)"
SHORT_SHA = 7
_SHA_RE = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_GIT_TIMEOUT_S = 1.0


class Location(NamedTuple):
    """Where a session runs: project, branch, and the repository root when there is one."""

    project: str
    branch: str
    root: str | None

    @property
    def branch_id(self) -> str:
        """`<project>/<branch>`: the memory file the sources feed for this checkout."""
        return f"{self.project}/{self.branch}"


def branch_from_head(head: str) -> str | None:
    """The branch named by the text of a HEAD file (short sha when detached), else None."""
    head = head.strip()
    if head.startswith("ref:"):
        ref = head[len("ref:") :].strip()
        for prefix in ("refs/heads/", "refs/"):
            if ref.startswith(prefix):
                ref = ref[len(prefix) :]
                break
        return ref or None
    if _SHA_RE.fullmatch(head):
        return head[:SHORT_SHA]
    return None


def _branch_from_git(root: str) -> str | None:
    """Ask `git` (when HEAD could not be read directly)."""
    import shutil

    git = shutil.which("git")
    if git is None:
        return None
    import subprocess  # rare path, keeps the hook's start-up light

    try:
        name = subprocess.run(
            [git, "-C", root, "rev-parse", "--abbrev-ref", "HEAD"],
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_S,
            check=True,
        ).stdout.strip()
        if name == "HEAD":
            name = subprocess.run(
                [git, "-C", root, "rev-parse", f"--short={SHORT_SHA}", "HEAD"],
                capture_output=True,
                text=True,
                timeout=_GIT_TIMEOUT_S,
                check=True,
            ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return name or None


def _special(path: Path) -> bool:
    """Whether `path` exists but is not a regular file (a FIFO, folder, device)."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def locate(cwd: str) -> Location:
    """Project and branch of a working directory; ValueError when it is not a folder here."""
    if not cwd:
        raise ValueError("the hook input has no cwd")
    if not os.path.isdir(cwd):
        raise ValueError(f"cwd {cwd!r} is not a folder on this machine")
    project = project_name(cwd)
    root = repo_root(cwd)
    if root is None:
        return Location(project, NO_BRANCH, None)
    branch: str | None = None
    folder = git_dir(Path(root))
    if folder is not None:
        text = read_small(folder / "HEAD")
        branch = branch_from_head(text) if text is not None else None
        if text is None and _special(folder / "HEAD"):
            # A FIFO or folder as HEAD: git would block or fail on it too, so do not ask.
            return Location(project, NO_BRANCH, root)
    if branch is None:
        branch = _branch_from_git(root)
    return Location(project, branch or NO_BRANCH, root)
