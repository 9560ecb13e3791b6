"""The answer of every `memory:*` operation, as a `TypedDict` named in the operation table.

A request is a pydantic model (validated before a handler runs); an answer is a plain dict
whose shape is declared here. TypedDicts rather than pydantic models: answers cross threads,
processes and JSON as dicts, the cold command line must not import pydantic to print one,
and mypy checks every widget that reads a key against the declaration (the Qt members in
`app/service/members.py` return these types). The test suite checks every answer the API
gives against its declaration (`tests/contract.py`): no undeclared key, every required key
present, every value of its declared type.

Every answer may instead be the error shape (`ErrorFields`): `is_error(reply)` tells them
apart.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


class ErrorFields(TypedDict):
    """The error shape every operation may answer with instead (all keys absent on success)."""

    error: NotRequired[bool]
    code: NotRequired[str]
    message: NotRequired[str]
    timestamp: NotRequired[str]
    context: NotRequired[dict[str, Any]]


# -- shared parts ------------------------------------------------------------------------


class Item(TypedDict):
    """A memory item's stored fields (the category-specific ones are empty when unused)."""

    id: str
    category: str
    title: str
    content: str
    confidence: float
    sources: list[str]
    extracted: str
    tags: list[str]
    pinned: bool
    rationale: str
    trade_offs: str
    scope: str
    root_cause: str
    fix: str
    occurrences: int
    approach: str
    lessons: str


class ArchivedItem(Item):
    """An item maintenance or a merge took out of its branch."""

    archived: str
    reason: str
    branch: NotRequired[str]
    archivedItem: NotRequired[bool]


class LocatedItem(Item):
    """An item with the branch and project it lives in."""

    branch: str
    project: str


class WriteStats(TypedDict):
    """What one integration did to a branch."""

    added: int
    reinforced: int
    superseded: int
    conflicts: int
    settled: NotRequired[int]
    unchanged: NotRequired[bool]
    merged: NotRequired[int]
    refused: NotRequired[int]


class QueuedEntry(TypedDict):
    """A review-queue entry as stored (returned by decisions so they can be undone)."""

    branch: str
    item: dict[str, Any]
    queued: str
    reason: NotRequired[str]
    excerpt: NotRequired[str]


class Success(ErrorFields):
    """An answer that only says it worked."""

    success: bool


# -- memorize, retrieve, context -------------------------------------------------------------


class MemorizeAnswer(ErrorFields):
    """`memorize`."""

    branch: str
    itemsExtracted: int
    categoriesUpdated: list[str]
    queuedForReview: int
    promotedFromReview: int
    # Review candidates this conversation replaced: out of the queue, kept as superseded.
    settledFromReview: NotRequired[int]
    dropped: int
    refusedUnsafe: int
    engine: str
    path: str | None
    notes: list[str]
    stats: NotRequired[WriteStats]
    memorizedTogether: NotRequired[int]


class Memory(TypedDict):
    """One retrieved item."""

    branch: str
    project: str
    category: str
    title: str
    content: str
    confidence: float
    score: float
    id: str
    relevance: float


class CrossConflictFields(TypedDict):
    """Items in different branches that say opposite things."""

    category: str
    description: str
    itemIds: list[str]
    branches: list[str]


class RetrieveAnswer(ErrorFields):
    """`retrieve`."""

    memories: list[Memory]
    conflicts: list[CrossConflictFields]
    totalTokens: int
    retrievalTime: float
    mode: str
    semantic: NotRequired[bool]
    nothing: NotRequired[bool]
    archived: NotRequired[list[ArchivedItem]]


class ContextAnswer(ErrorFields):
    """`context`: the digest, or with `branch` the session-start text."""

    markdown: str
    topic: NotRequired[str | None]
    branch: NotRequired[str]
    items: NotRequired[int]
    constraints: NotRequired[int]
    ids: NotRequired[list[str]]


# -- branches and versions -----------------------------------------------------------------


class BranchMemoryAnswer(ErrorFields):
    """`get-branch-memory`."""

    branch: str
    content: str
    lastUpdated: str
    itemCount: int
    valid: bool
    problems: list[str]


class BranchSummary(TypedDict):
    """One branch in the list."""

    branch: str
    project: str
    itemCount: int
    lastUpdated: str
    valid: bool


class BranchesAnswer(ErrorFields):
    """`list-branches`."""

    branches: list[BranchSummary]


class ClearAnswer(Success):
    """`clear-branch-memory`."""

    branch: str
    version: str


class SaveAnswer(Success):
    """`save-branch-memory`."""

    branch: str
    version: str | None
    secretsRedacted: int


class Version(TypedDict):
    """One saved version."""

    version: str
    timestamp: str
    size: int


class VersionsAnswer(ErrorFields):
    """`list-versions`."""

    branch: str
    versions: list[Version]


class VersionAnswer(ErrorFields):
    """`get-version`."""

    branch: str
    version: str
    content: str


class RestoreAnswer(Success):
    """`restore-version`."""

    branch: str
    restored: str
    previousVersion: str | None


class ArchiveListAnswer(ErrorFields):
    """`archive-list`."""

    branch: str
    items: list[ArchivedItem]
    path: str


class ArchiveRestoreAnswer(Success):
    """`archive-restore`."""

    branch: str
    id: str
    title: str
    alreadyPresent: bool


# -- review and conflicts ------------------------------------------------------------------


class ReviewItem(TypedDict):
    """One queued candidate."""

    id: str
    branch: str
    category: str
    title: str
    content: str
    confidence: float
    source: str
    queued: str
    sources: list[str]
    extracted: str
    tags: list[str]
    reason: str
    excerpt: str


class ReviewListAnswer(ErrorFields):
    """`review-list`."""

    items: list[ReviewItem]


class ReviewDecisionAnswer(Success):
    """`review-approve` and `review-reject`."""

    branch: str
    id: str
    entry: QueuedEntry


class ReviewDone(TypedDict):
    """One decided entry of a bulk decision."""

    id: str
    branch: str
    title: str
    entry: QueuedEntry


class ReviewFailed(TypedDict):
    """One entry a bulk decision could not apply."""

    id: str
    message: str


class ReviewBulkAnswer(Success):
    """`review-bulk`."""

    action: str
    done: list[ReviewDone]
    failed: list[ReviewFailed]
    missing: list[str]


class RequeueAnswer(Success):
    """`review-requeue`."""

    requeued: list[str]
    alreadyQueued: list[str]


class Conflict(TypedDict):
    """One open contradiction, inside a branch or across branches."""

    scope: str
    id: str
    title: str
    description: str
    status: str
    category: str | None
    branch: NotRequired[str]
    refs: NotRequired[list[str]]
    branches: NotRequired[list[str]]
    itemIds: NotRequired[list[str]]
    items: list[dict[str, Any]]


class ConflictsAnswer(ErrorFields):
    """`list-conflicts`."""

    conflicts: list[Conflict]


class ResolveAnswer(Success):
    """`resolve-conflict`."""

    action: str
    branch: NotRequired[str]
    id: NotRequired[str]
    branches: NotRequired[list[str]]
    itemIds: NotRequired[list[str]]


# -- items ---------------------------------------------------------------------------------


class RememberAnswer(Success):
    """`remember`."""

    branch: str
    id: str
    added: bool
    stats: WriteStats


class ItemAnswer(ErrorFields):
    """`get-item`."""

    item: LocatedItem


class ListedItem(TypedDict):
    """One item of `list-items`."""

    id: str
    branch: str
    project: str
    category: str
    title: str
    content: str
    confidence: float
    tags: list[str]
    pinned: bool
    extracted: str
    accessCount: int


class ItemsAnswer(ErrorFields):
    """`list-items`."""

    items: list[ListedItem]
    count: int


class ForgottenItem(TypedDict):
    """One item `forget` removed."""

    branch: str
    id: str
    title: str


class ForgetAnswer(Success):
    """`forget`: `versions` maps each changed branch to the version that undoes it."""

    forgotten: int
    items: list[ForgottenItem]
    versions: dict[str, str]
    undo: NotRequired[str]


class ProvenanceSource(TypedDict):
    """Where one source of an item came from."""

    ref: str
    agent: NotRequired[str]
    date: NotRequired[str]
    path: NotRequired[str]
    exists: NotRequired[bool]
    branch: NotRequired[str]
    excerpt: NotRequired[str]
    note: NotRequired[str]


class ProvenanceAnswer(ErrorFields):
    """`provenance`."""

    id: str
    branch: str
    title: str
    extracted: str
    pinned: bool
    sources: list[ProvenanceSource]


# -- status, maintenance, health -------------------------------------------------------------


class StatsAnswer(ErrorFields):
    """`get-stats`."""

    totalBranches: int
    totalItems: int
    totalCategories: int
    categories: dict[str, int]
    lastMemorized: str | None
    nextMaintenance: str | None
    reviewQueue: int
    tokensToday: int
    costToday: float


class StatusAnswer(ErrorFields):
    """`get-status`."""

    status: str
    lastError: str | None
    problems: list[str]
    maintenanceInProgress: bool
    queueLength: int
    engine: str
    engineDetails: dict[str, Any]
    home: str
    notes: list[str]


class MaintenanceAnswer(Success):
    """`run-maintenance`: `results` holds what each step did."""

    type: str
    duration: float
    results: dict[str, Any]


class ActivityEvent(TypedDict):
    """One line of the activity log."""

    timestamp: str
    kind: str
    message: str
    branch: NotRequired[str]


class ActivityAnswer(ErrorFields):
    """`activity`."""

    events: list[ActivityEvent]


class BranchProblems(TypedDict):
    """A branch file and what is wrong with it."""

    branch: str
    problems: list[str]
    valid: NotRequired[bool]


class HealthAnswer(ErrorFields):
    """`health`."""

    healthy: bool
    branches: int
    invalid: list[BranchProblems]
    index: NotRequired[dict[str, Any]]


class RepairAnswer(Success):
    """`repair`."""

    fixed: list[BranchProblems]
    unfixable: list[BranchProblems]
    index: dict[str, Any]
    tempFilesRemoved: int


class ExportAnswer(ErrorFields):
    """`export`."""

    format: str
    branches: int
    content: str


class ImportedBranch(TypedDict):
    """What an import did to one branch."""

    branch: str
    added: int
    skipped: int
    reinforced: int
    conflicts: int


class ImportAnswer(Success):
    """`import`."""

    branches: list[ImportedBranch]
    added: int


# -- settings, sources, usage, keys, hooks -------------------------------------------------


class ConfigAnswer(ErrorFields):
    """`get-config`: the settings (Config's fields) and the memory folder."""

    config: dict[str, Any]
    home: str


class SetConfigAnswer(Success):
    """`set-config`."""

    config: dict[str, Any]
    warning: NotRequired[str]


class ScanThread(TypedDict):
    """One thread a dry-run scan found."""

    id: str
    source: str
    project: str
    branch: str
    branchId: str
    messages: int
    started: str
    ended: str
    complete: bool
    processed: bool


class ScanAnswer(ErrorFields):
    """`scan`: a scan's counts, or with `dryRun` the threads it would read."""

    threads: int | list[ScanThread]
    skipped: int | dict[str, int]
    errors: list[str]
    memorized: NotRequired[int]
    failed: NotRequired[int]
    itemsAdded: NotRequired[int]
    queuedForReview: NotRequired[int]
    read: NotRequired[dict[str, int]]
    engines: NotRequired[list[str]]
    pending: NotRequired[int]
    inProgress: NotRequired[int]
    idleMinutes: NotRequired[float]
    discoveryErrors: NotRequired[list[str]]
    fallbacks: NotRequired[int]
    skippedRecords: NotRequired[dict[str, int]]
    unchangedTranscripts: NotRequired[int]
    batchRecommended: NotRequired[bool]
    engineNote: NotRequired[str]
    inbox: NotRequired[dict[str, int]]
    summary: NotRequired[str]
    duplicates: NotRequired[list[str]]
    size: NotRequired[dict[str, float]]


class ImproveAnswer(ErrorFields):
    """`improve`."""

    branch: str
    threads: int
    improved: int
    failed: int
    skipped: int
    itemsAdded: int
    errors: list[str]
    notes: list[str]
    summary: str


class SourcesAnswer(ErrorFields):
    """`sources`: each source, where it reads, and what it found."""

    sources: list[dict[str, Any]]
    errors: list[str]
    skipped: dict[str, int]


class UsageAnswer(ErrorFields):
    """`usage`: tokens and estimated cost today and this month."""

    today: dict[str, Any]
    month: dict[str, Any]


class AuthStatusAnswer(ErrorFields):
    """`auth-status` (never the key itself)."""

    configured: bool
    origin: str
    masked: str | None
    keyringAvailable: bool


class AuthSetAnswer(AuthStatusAnswer):
    """`auth-set`."""

    success: bool


class AuthTestAnswer(ErrorFields):
    """`auth-test`: `ok`, and `message` (from the error fields) says why."""

    ok: bool


class InstallHooksAnswer(ErrorFields):
    """`install-hooks`."""

    settings: str
    action: str
    changed: bool
    added: list[str]
    updated: list[str]
    removed: list[str]
    backup: str | None
    command: str
