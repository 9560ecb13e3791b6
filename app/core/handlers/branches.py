"""Branch files: read, list, save, clear, versions and the archive of each branch.

Each handler takes the `MemoryApi` it answers for and the validated request; `HANDLERS`
maps the operations of this concern to their handlers (the API attaches them).
"""

from __future__ import annotations

import logging
from typing import Any

from app.core import operations as ops
from app.core.errors import (
    InvalidInput,
    NotFound,
)
from app.core.format import header_last_updated, parse, validate
from app.core.handlers.base import Core, Handler
from app.core.models import (
    BranchMemory,
    utc_now,
)
from app.core.paths import project_of, validate_branch_id
from app.core.redact import redact_with_count

# The request models live in app.core.requests; the names are re-exported for callers.
from app.core.requests import (
    ArchiveRestoreRequest,
    BranchRequest,
    Empty,
    SaveBranchRequest,
    VersionRequest,
)

log = logging.getLogger(__name__)


def get_branch_memory(api: Core, req: BranchRequest) -> dict[str, Any]:
    """One branch memory file as text, with whether it validates."""
    validate_branch_id(req.branch)
    text = api.store.read_text(req.branch)
    if text is None:
        raise NotFound(f"No memory file for branch {req.branch!r}.")
    memory = parse(text, req.branch)
    problems = validate(text)
    return {
        "branch": req.branch,
        "content": text,
        "lastUpdated": header_last_updated(text),
        "itemCount": memory.item_count(),
        "valid": not problems,
        "problems": [p.message for p in problems],
    }


def clear_branch(api: Core, req: BranchRequest) -> dict[str, Any]:
    """Empty a branch memory (the old file is kept as a version)."""
    validate_branch_id(req.branch)
    version = api.store.delete(req.branch)
    api.writer.refresh_index(req.branch, None)
    api.activity.record(
        "clear",
        f"Cleared {req.branch} (restorable from version {version})",
        branch=req.branch,
    )
    return {"success": True, "branch": req.branch, "version": version}


def list_branches(api: Core, _req: Empty) -> dict[str, Any]:
    """Every branch memory with its project, size and state."""
    api.sync_index()
    per_branch: dict[str, int] = {}
    for item in api.index.items():
        per_branch[item.branch] = per_branch.get(item.branch, 0) + 1
    branches = []
    signatures = api.store.signatures()
    for branch in sorted(signatures):
        last_updated, valid = _file_facts(api, branch, signatures[branch])
        branches.append(
            {
                "branch": branch,
                "project": project_of(branch),
                "itemCount": per_branch.get(branch, 0),
                "lastUpdated": last_updated,
                "valid": valid,
            }
        )
    return {"branches": branches}


def branch_problems(api: Core) -> list[str]:
    """What needs the user's attention: files moved aside, branch files that do not parse.

    Each says what happened, to which file, and what to do; the status turns to
    "warning" while any remains, so a damaged file is never hidden behind "Ready".
    """
    problems = list(api.warnings)
    for source in (api.review.warning, api.maintenance_log.warning):
        if source:
            problems.append(source)
    try:
        signatures = api.store.signatures()
    except OSError:
        return problems
    for branch in sorted(signatures):
        if not _file_facts(api, branch, signatures[branch])[1]:
            problems.append(
                f"The memory file of {branch} ({api.store.branch_file(branch)}) does not "
                "parse: fix it in Branches (the problems are listed there) or restore a "
                "version. The next memory written to this branch replaces it; its text "
                "stays in Versions."
            )
    return problems


def _file_facts(api: Core, branch: str, signature: tuple[int, int]) -> tuple[str | None, bool]:
    """Header date and validity of a branch file, re-read only when the file changed.

    Validating means parsing (~5 ms a file); the branch list is asked for on every
    refresh of the browser, and files rarely change between two refreshes.
    """
    cached = api.file_facts.get(branch)
    if cached is not None and cached[0] == signature:
        return cached[1], cached[2]
    text = api.store.read_text(branch) or ""
    facts = (signature, header_last_updated(text), not validate(text))
    api.file_facts[branch] = facts
    return facts[1], facts[2]


def save_branch(api: Core, req: SaveBranchRequest) -> dict[str, Any]:
    """Replace a branch memory with edited text (validated; the old text becomes a version)."""
    validate_branch_id(req.branch)
    # A secret pasted into the editor must not land in memory (it would reach agents).
    content, redacted = redact_with_count(req.content)
    problems = validate(content)
    if problems:
        raise InvalidInput(
            "The memory file is not valid: " + "; ".join(p.message for p in problems[:5]),
            context={"problems": [{"line": p.line, "message": p.message} for p in problems]},
        )
    version = api.store.write_text(req.branch, content)
    api.writer.refresh_index(req.branch, parse(content, req.branch))
    api.activity.record("edit", f"Saved an edit of {req.branch}", branch=req.branch)
    return {
        "success": True,
        "branch": req.branch,
        "version": version,
        "secretsRedacted": redacted,
    }


def list_versions(api: Core, req: BranchRequest) -> dict[str, Any]:
    """The saved versions of a branch memory, newest first."""
    validate_branch_id(req.branch)
    return {
        "branch": req.branch,
        "versions": [v.to_dict() for v in api.store.list_versions(req.branch)],
    }


def get_version(api: Core, req: VersionRequest) -> dict[str, Any]:
    """The text of one saved version."""
    validate_branch_id(req.branch)
    content = api.store.read_version(req.branch, req.version)
    return {"branch": req.branch, "version": req.version, "content": content}


def restore_version(api: Core, req: VersionRequest) -> dict[str, Any]:
    """Put a saved version back (the current text becomes a version itself)."""
    validate_branch_id(req.branch)
    previous = api.store.restore(req.branch, req.version)
    api.writer.refresh_index(req.branch, api.store.read(req.branch))
    api.activity.record(
        "restore", f"Restored {req.branch} to version {req.version}", branch=req.branch
    )
    return {
        "success": True,
        "branch": req.branch,
        "restored": req.version,
        "previousVersion": previous,
    }


def archive_list(api: Core, req: BranchRequest) -> dict[str, Any]:
    """Items maintenance or merges took out of a branch, newest first."""
    validate_branch_id(req.branch)
    entries = api.archive.entries(req.branch)
    return {
        "branch": req.branch,
        "items": [e.to_dict() for e in reversed(entries)],
        "path": str(api.archive.path(req.branch)),
    }


def archive_restore(api: Core, req: ArchiveRestoreRequest) -> dict[str, Any]:
    """Put an archived item back in its section; the archive entry goes after."""
    validate_branch_id(req.branch)
    entry = api.archive.get(req.branch, req.id)
    restored: list[bool] = []

    def change(memory: BranchMemory | None) -> BranchMemory | None:
        memory = memory or BranchMemory(branch_id=req.branch)
        if memory.find(entry.item.id) is not None:
            return None  # already back (restored twice, or never left)
        memory.items[entry.item.category].append(entry.item)
        memory.last_updated = utc_now()
        restored.append(True)
        return memory

    memory = api.store.update(req.branch, change)
    api.archive.remove(req.branch, [req.id])
    api.writer.refresh_index(req.branch, memory)
    if restored:
        api.activity.record(
            "restore", f"Restored archived item {entry.item.title!r}", branch=req.branch
        )
    return {
        "success": True,
        "branch": req.branch,
        "id": req.id,
        "title": entry.item.title,
        "alreadyPresent": not restored,
    }


HANDLERS: dict[ops.Operation, Handler] = {
    ops.GET_BRANCH_MEMORY: get_branch_memory,
    ops.CLEAR_BRANCH_MEMORY: clear_branch,
    ops.LIST_BRANCHES: list_branches,
    ops.SAVE_BRANCH_MEMORY: save_branch,
    ops.LIST_VERSIONS: list_versions,
    ops.GET_VERSION: get_version,
    ops.RESTORE_VERSION: restore_version,
    ops.ARCHIVE_LIST: archive_list,
    ops.ARCHIVE_RESTORE: archive_restore,
}
