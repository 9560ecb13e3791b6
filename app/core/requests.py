"""The request models of the `memory:*` operations (declared in `app.core.operations`).

Each operation's request is validated by one of these pydantic models before its handler
runs: unknown keys are refused, names are the JSON names of the API (camelCase aliases, the
Python names accepted too), and bounds are checked here so no handler sees a request it
cannot answer.
"""

from __future__ import annotations

from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.core.models import Category
from app.core.review import ReviewEntry


class Request(BaseModel):
    """Base of every request model: unknown keys are a mistake worth reporting."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True)


class Empty(Request):
    """A channel that takes no parameters."""


class MemorizeRequest(Request):
    """A conversation to memorize into a branch, with the source it came from and, when it
    is not today's, the day it took place (its items are dated by it)."""

    conversation_text: str = Field(alias="conversationText", min_length=1)
    branch_id: str = Field(alias="branchId", min_length=1)
    source: str = "cli"
    conversation_date: date | None = Field(default=None, alias="conversationDate")


class RetrieveRequest(Request):
    """A question, how many answers, where to look and how deep."""

    query: str = Field(min_length=1, max_length=2000)
    max_results: int = Field(default=5, ge=1, le=100, alias="maxResults")
    branch: str | None = None
    project: str | None = None
    mode: Literal["fast", "deep"] = "fast"
    tags: list[str] = Field(default_factory=list)
    include_archive: bool = Field(default=False, alias="includeArchive")


class BranchRequest(Request):
    """One branch by id."""

    branch: str = Field(min_length=1)


class ArchiveRestoreRequest(Request):
    """An archived item of a branch to put back."""

    branch: str = Field(min_length=1)
    id: str = Field(min_length=1, max_length=200)


class SaveBranchRequest(Request):
    """The edited text of a branch memory."""

    branch: str = Field(min_length=1)
    content: str = Field(min_length=1)


class VersionRequest(Request):
    """One saved version of a branch."""

    branch: str = Field(min_length=1)
    version: str = Field(min_length=1)


class MaintenanceRequest(Request):
    """Which maintenance to run."""

    type: Literal["weekly", "monthly", "full"]


class ReviewApproveRequest(Request):
    """A queued item to approve, with optional edits."""

    id: str = Field(min_length=1)
    title: str | None = None
    content: str | None = None
    category: Category | None = None


class IdRequest(Request):
    """One item or candidate by id."""

    id: str = Field(min_length=1)


class ReviewBulkRequest(Request):
    """Many queued items to approve or reject."""

    action: Literal["approve", "reject"]
    ids: list[str] = Field(min_length=1, max_length=1000)


class ReviewRequeueRequest(Request):
    """Review decisions to undo (the entries the decisions returned)."""

    entries: list[ReviewEntry] = Field(min_length=1, max_length=1000)


class ResolveConflictRequest(Request):
    """A contradiction and how to settle it."""

    id: str = Field(min_length=1)
    action: Literal["keep-newer", "keep-both", "mark-outdated"]
    branch: str | None = None
    item_ids: list[str] = Field(default_factory=list, alias="itemIds")


class RememberRequest(Request):
    """A statement a person wants remembered, pinned."""

    branch: str = Field(min_length=1)
    text: str = Field(min_length=1, max_length=5000)
    category: Category = Category.IMPLEMENTATION_NOTES
    title: str | None = None
    tags: list[str] = Field(default_factory=list)


class ListItemsRequest(Request):
    """Filters for listing items."""

    category: Category | None = Field(default=None, alias="type")
    branch: str | None = None
    tags: list[str] = Field(default_factory=list)
    limit: int | None = Field(default=None, ge=1)


class ForgetRequest(Request):
    """Which items to forget (one id, tags, a pattern, an age, or all)."""

    id: str | None = None
    tags: list[str] = Field(default_factory=list)
    pattern: str | None = None
    older_than: int | None = Field(default=None, alias="olderThan", ge=0)
    all: bool = False
    confirm: bool = False


class ActivityRequest(Request):
    """How many recent events."""

    limit: int = Field(default=50, ge=1, le=200)


class ContextRequest(Request):
    """A digest of the memory (optional topic, how many items), or with `branch` what a
    session start on that branch is given (within `budget` characters)."""

    topic: str | None = Field(default=None, max_length=2000)
    limit: int = Field(default=40, ge=1, le=200)
    branch: str | None = Field(default=None, min_length=1, max_length=500)
    budget: int = Field(default=8_000, ge=500, le=10_000)


class HealthRequest(Request):
    """Whether to check the index too."""

    index: bool = False


class ExportRequest(Request):
    """The export format."""

    format: Literal["json", "md"] = "json"


class ImportRequest(Request):
    """An export (or one memory file) to merge."""

    content: str = Field(min_length=1)
    branch: str | None = None


class SetConfigRequest(Request):
    """A partial config to merge into the settings."""

    config: dict[str, Any]


class KeyRequest(Request):
    """An Anthropic API key to store."""

    key: str = Field(min_length=1, max_length=500)


class ImproveRequest(Request):
    """Re-distil a branch's threads that no LLM has read yet."""

    branch: str = Field(min_length=1, max_length=500)


class ProvenanceRequest(Request):
    """Which item's origin to show."""

    id: str = Field(min_length=1, max_length=200)
    branch: str | None = Field(default=None, max_length=500)


class ScanRequest(Request):
    """What to scan: one source, one folder, threads since a date, or a dry run."""

    source: Literal["claude-code", "puffin", "codex", "aider"] | None = None
    path: str | None = None
    since: str | None = None
    dry_run: bool = Field(default=False, alias="dryRun")


class InstallHooksRequest(Request):
    """Install or remove the hooks, in the default or a given settings file."""

    uninstall: bool = False
    settings: str | None = Field(default=None, min_length=1)


def describe_validation(channel: str, exc: ValidationError) -> str:
    """A validation failure in one line: where and what, for the first three problems."""
    parts = []
    for err in exc.errors()[:3]:
        where = ".".join(str(p) for p in err["loc"]) or "request"
        parts.append(f"{where}: {err['msg']}")
    return f"{channel}: " + "; ".join(parts)
