"""The `memory:*` operations, each declared once: the one table the API is made from.

An `Operation` names the channel, its request model (in `app.core.requests`), its answer type
(a TypedDict in `app.core.answers`) and a sentence on what the answer holds, the errors it
can give, whether it writes, and how the command line spells it. From
this table come the API's routing (`MemoryApi.handle(OP, handler)`), the Qt channel members
(`app/service/members.py`, generated), the `puffin-memory` subcommands (`app.cli`), the calls
the running app answers for a cold CLI (`app.remote`), docs/api.md (generated) and the names
the MCP tools call. Adding an operation = one declaration here + one handler (a function
in `app/core/handlers/<concern>.py`, listed in that module's `HANDLERS`); run
`python -m app.service.generate` to regenerate the members and the docs (a test fails when
they are stale).

This module imports nothing heavy (no pydantic): the cold read path uses it.
"""

from __future__ import annotations

from typing import Any


class Arg:
    """One command-line argument and the request key it fills.

    `kind`: "str" | "int" | "count" (an int, 0 = not given) | "flag" (store_true) |
    "csv" (comma list) | "words" (the rest of the line joined; stdin when `stdin` and empty) |
    "file" (a path whose text is sent; stdin when absent or "-") | "path" (expanded and made
    absolute) | "local" (used by the command, not sent). `key` is the request's JSON name;
    `flag` is "" for a positional. `values` maps a command-line choice to the value sent.
    (Plain classes, not NamedTuples: the cold read path imports this table.)
    """

    __slots__ = (
        "choices",
        "default",
        "flag",
        "help",
        "key",
        "kind",
        "optional",
        "required",
        "stdin",
        "values",
    )

    def __init__(
        self,
        key: str,
        flag: str = "",
        kind: str = "str",
        help: str = "",
        choices: tuple[str, ...] = (),
        default: Any = None,
        required: bool = False,
        optional: bool = False,
        values: tuple[tuple[str, str], ...] = (),
        stdin: bool = False,
    ) -> None:
        self.key, self.flag, self.kind, self.help = key, flag, kind, help
        self.choices, self.default, self.required = choices, default, required
        self.optional, self.values, self.stdin = optional, values, stdin


class Command:
    """How the command line spells an operation: `path` ("branch", "versions"), arguments,
    constant request values, a refusal unless a flag is given, and how the answer prints
    (json, markdown: the answer's `markdown`, export: to a file)."""

    __slots__ = ("args", "confirm", "fixed", "help", "output", "path")

    def __init__(
        self,
        path: tuple[str, ...],
        help: str,
        args: tuple[Arg, ...] = (),
        fixed: tuple[tuple[str, Any], ...] = (),
        confirm: tuple[str, str] | None = None,
        output: str = "json",
    ) -> None:
        self.path, self.help, self.args = path, help, args
        self.fixed, self.confirm, self.output = fixed, confirm, output


class Operation:
    """One `memory:*` operation (see the module docstring).

    `long`: minutes of work (the status says "processing", the log "started"); `job`: the
    app runs it in its job queue (progress, one at a time); `remote`: a quick read a cold CLI
    may ask the running app for.
    """

    __slots__ = (
        "answer",
        "commands",
        "doc",
        "errors",
        "job",
        "long",
        "member",
        "name",
        "remote",
        "reply",
        "request",
        "writes",
    )

    def __init__(
        self,
        name: str,
        doc: str,
        request: str,
        reply: str,
        answer: str,
        writes: bool,
        errors: tuple[str, ...] = ("INVALID_INPUT",),
        commands: tuple[Command, ...] = (),
        member: str = "",
        long: bool = False,
        job: bool = False,
        remote: bool = False,
    ) -> None:
        self.name, self.doc, self.request, self.answer = name, doc, request, answer
        self.reply = reply
        self.writes, self.errors, self.commands, self.member = writes, errors, commands, member
        self.long, self.job, self.remote = long, job, remote

    def __repr__(self) -> str:
        return f"Operation({self.name!r})"

    @property
    def method(self) -> str:
        """The Python name of the operation (Qt member, handler registry)."""
        return self.member or self.name.removeprefix("memory:").replace("-", "_")


CATEGORIES = (
    "coding_preferences",
    "architectural_decisions",
    "project_conventions",
    "bug_patterns",
    "implementation_notes",
)
# Help of the command groups whose actions are two-word commands (`branch show`).
GROUPS = {
    "branch": "list, show, versions, restore",
    "archive": "items maintenance took out of a branch: list, restore",
    "review": "medium-confidence items waiting for approval",
}
_NF = ("INVALID_INPUT", "NOT_FOUND")
_ST = ("INVALID_INPUT", "STORAGE_ERROR")
_ALL = ("INVALID_INPUT", "NOT_FOUND", "STORAGE_ERROR")
_BRANCH = Arg("branch", help="the branch id, e.g. myproject/main")
_OPERATIONS: list[Operation] = []


def _op(*args: Any, **kwargs: Any) -> Operation:
    operation = Operation(*args, **kwargs)
    _OPERATIONS.append(operation)
    return operation


MEMORIZE = _op(
    "memory:memorize",
    "Extract what matters from one conversation into a branch memory.",
    "MemorizeRequest",
    "MemorizeAnswer",
    "`itemsExtracted`, `categoriesUpdated`, `queuedForReview`, `dropped`, `engine`, `path` "
    "(which engine path wrote the file; `offline-fallback` when Claude failed and the offline "
    "engine stood in), `notes[]` (why), `stats`",
    True,
    ("INVALID_INPUT", "EXTRACTION_FAILED", "STORAGE_ERROR", "BUDGET_EXCEEDED"),
    (
        Command(
            ("memorize",),
            "extract memories from a conversation",
            (
                Arg("branchId", "--branch", required=True),
                Arg("conversationText", "--file", "file", "conversation file (default: stdin)"),
                Arg("source", "--source", default="cli", help="source reference stored with items"),
                Arg(
                    "conversationDate",
                    "--date",
                    help="the day the conversation took place (YYYY-MM-DD; default: today)",
                ),
            ),
        ),
    ),
    long=True,
    job=True,
)
RETRIEVE = _op(
    "memory:retrieve",
    "Search the memory: the items that answer a question, best first.",
    "RetrieveRequest",
    "RetrieveAnswer",
    "`memories[]` (branch, project, category, title, content, confidence, score, id, "
    "relevance), `conflicts[]` (category, description, itemIds, branches), `totalTokens`, "
    "`retrievalTime` (ms), `mode`; `semantic: true` when embeddings were fused in; "
    '`nothing: true` + `message` ("nothing in memory about this") when nothing reaches '
    "`min_relevance`; with `includeArchive`, `archived[]` (archived items holding the "
    "query's words, with `archived`, `reason`, `archivedItem: true`)",
    False,
    ("INVALID_INPUT", "RETRIEVAL_FAILED"),
    (
        Command(
            ("retrieve",),
            "search memories",
            (
                Arg("query"),
                Arg("maxResults", "--max-results", "int", default=5),
                Arg("branch", "--branch"),
                Arg("project", "--project"),
                Arg("mode", "--mode", choices=("fast", "deep"), default="fast"),
                Arg(
                    "includeArchive",
                    "--include-archive",
                    "flag",
                    "also search items archived by maintenance",
                ),
            ),
        ),
        Command(
            ("recall",),
            "search with tags and modes (seed 002)",
            (
                Arg("query"),
                Arg("tags", "--tags", "csv"),
                Arg(
                    "mode",
                    "--mode",
                    choices=("keyword", "semantic", "hybrid"),
                    default="hybrid",
                    # keyword: the FTS index alone; semantic and hybrid add the deep tiers.
                    values=(("keyword", "fast"), ("semantic", "deep"), ("hybrid", "deep")),
                ),
                Arg("maxResults", "--limit", "int", default=5),
                Arg(
                    "includeArchive",
                    "--include-archive",
                    "flag",
                    "also search items archived by maintenance",
                ),
            ),
        ),
    ),
    remote=True,
)
GET_BRANCH_MEMORY = _op(
    "memory:get-branch-memory",
    "One branch memory file as text, with whether it validates.",
    "BranchRequest",
    "BranchMemoryAnswer",
    "`branch`, `content`, `lastUpdated`, `itemCount`, `valid`, `problems`",
    False,
    _NF,
    (Command(("branch", "show"), "show a branch memory", (_BRANCH,)),),
    remote=True,
)
GET_STATS = _op(
    "memory:get-stats",
    "Counts across the memory: branches, items, review queue, usage today.",
    "Empty",
    "StatsAnswer",
    "`totalBranches`, `totalItems`, `totalCategories`, `categories`, `lastMemorized`, "
    "`nextMaintenance`, `reviewQueue`, `tokensToday`, `costToday`",
    False,
    (),
    (Command(("stats",), "counts, last memorized, next maintenance"),),
    remote=True,
)
GET_STATUS = _op(
    "memory:get-status",
    "Whether the memory is ready, busy or in trouble, and why.",
    "Empty",
    "StatusAnswer",
    "`status` (ready/processing/maintenance/error/warning), `problems[]` (files moved aside "
    "or not parsing, with what to do; status is `warning` while any remains), `lastError`, "
    "`maintenanceInProgress`, `queueLength`, `engine`, `engineDetails`, `home`, `notes[]`",
    False,
    (),
    (Command(("status",), "ready / processing / error, engine, notes"),),
    remote=True,
)
CLEAR_BRANCH_MEMORY = _op(
    "memory:clear-branch-memory",
    "Empty a branch memory (the old file is kept as a version).",
    "BranchRequest",
    "ClearAnswer",
    "`success`, `branch`, `version` (restore it to undo)",
    True,
    _ALL,
    (
        Command(
            ("clear",),
            "remove a branch memory (kept as a version)",
            (_BRANCH, Arg("yes", "--yes", "local")),
            confirm=(
                "yes",
                "Refusing to clear {branch!r} without --yes (it can be undone with "
                "`branch versions` and `branch restore`).",
            ),
        ),
    ),
)
RUN_MAINTENANCE = _op(
    "memory:run-maintenance",
    "Consolidate, prune and check the memory (weekly, monthly or full).",
    "MaintenanceRequest",
    "MaintenanceAnswer",
    "`success`, `type`, `duration`, `results` (branchesConsolidated, branchesUnchanged: not "
    "consolidated again because the file has not changed since, itemsMerged, itemsPruned, "
    "filesValid, filesInvalid, invalid[], indexRebuilt)",
    True,
    ("INVALID_INPUT", "MAINTENANCE_FAILED", "STORAGE_ERROR"),
    (
        Command(
            ("maintain",),
            "run maintenance",
            (Arg("type", "--type", choices=("weekly", "monthly", "full"), default="full"),),
        ),
    ),
    long=True,
    job=True,
)
LIST_BRANCHES = _op(
    "memory:list-branches",
    "Every branch memory with its project, size and state.",
    "Empty",
    "BranchesAnswer",
    "`branches[]` (branch, project, itemCount, lastUpdated, valid)",
    False,
    (),
    (Command(("branch", "list"), "list branch memories"),),
    remote=True,
)
SAVE_BRANCH_MEMORY = _op(
    "memory:save-branch-memory",
    "Replace a branch memory with edited text (validated; the old text becomes a version).",
    "SaveBranchRequest",
    "SaveAnswer",
    "`success`, `version` (the previous content; null for a new branch), `secretsRedacted`; "
    "INVALID_INPUT with `context.problems` when the text does not validate",
    True,
    _ST,
)
LIST_VERSIONS = _op(
    "memory:list-versions",
    "The saved versions of a branch memory, newest first.",
    "BranchRequest",
    "VersionsAnswer",
    "`versions[]` (version, timestamp, size), newest first",
    False,
    _NF,
    (Command(("branch", "versions"), "saved versions of a branch memory", (_BRANCH,)),),
    remote=True,
)
GET_VERSION = _op(
    "memory:get-version",
    "The text of one saved version.",
    "VersionRequest",
    "VersionAnswer",
    "`content`",
    False,
    _NF,
)
RESTORE_VERSION = _op(
    "memory:restore-version",
    "Put a saved version back (the current text becomes a version itself).",
    "VersionRequest",
    "RestoreAnswer",
    "`success`, `restored`, `previousVersion`",
    True,
    _ALL,
    (
        Command(
            ("branch", "restore"),
            "restore a saved version",
            (_BRANCH, Arg("version")),
        ),
    ),
)
ARCHIVE_LIST = _op(
    "memory:archive-list",
    "Items maintenance or merges took out of a branch, newest first.",
    "BranchRequest",
    "ArchiveListAnswer",
    "`items[]` (the item's fields, `archived`, `reason`), newest first; `path` of the "
    "readable archive file",
    False,
    _NF,
    (Command(("archive", "list"), "archived items of a branch", (_BRANCH,)),),
)
ARCHIVE_RESTORE = _op(
    "memory:archive-restore",
    "Put an archived item back in its section.",
    "ArchiveRestoreRequest",
    "ArchiveRestoreAnswer",
    "`success`, `title`, `alreadyPresent`; the item is back in its section and out of the archive",
    True,
    _ALL,
    (Command(("archive", "restore"), "restore an archived item", (_BRANCH, Arg("id"))),),
)
REVIEW_LIST = _op(
    "memory:review-list",
    "Medium-confidence items waiting for a person's approval.",
    "Empty",
    "ReviewListAnswer",
    "`items[]` (id, branch, category, title, content, confidence, source, queued, sources[], "
    "extracted, tags[])",
    False,
    (),
    (Command(("review", "list"), "items waiting for approval"),),
)
REVIEW_APPROVE = _op(
    "memory:review-approve",
    "Approve a queued item (optionally edited) into its branch as a pinned user item.",
    "ReviewApproveRequest",
    "ReviewDecisionAnswer",
    "`success`, `branch`, `id` (the item enters the file as a pinned user item), `entry` (the "
    "queued entry as it was, for undo)",
    True,
    _ALL,
    (
        Command(
            ("review", "approve"),
            "approve a queued item",
            (Arg("id"), Arg("title", "--title"), Arg("content", "--content")),
        ),
    ),
)
REVIEW_REJECT = _op(
    "memory:review-reject",
    "Reject a queued item.",
    "IdRequest",
    "ReviewDecisionAnswer",
    "`success`, `branch`, `id`, `entry` (the queued entry as it was, for undo)",
    True,
    _ALL,
    (Command(("review", "reject"), "reject a queued item", (Arg("id"),)),),
)
REVIEW_BULK = _op(
    "memory:review-bulk",
    "Approve or reject many queued items at once.",
    "ReviewBulkRequest",
    "ReviewBulkAnswer",
    "`success`, `action`, `done[]` (id, branch, title, `entry`), `failed[]` (id, message; "
    "approvals whose branch write failed are put back), `missing[]` (ids no longer queued); "
    "one queue write and one file write per branch",
    True,
    _ST,
)
REVIEW_REQUEUE = _op(
    "memory:review-requeue",
    "Undo review decisions: put entries back in the queue.",
    "ReviewRequeueRequest",
    "RequeueAnswer",
    "`success`, `requeued[]`, `alreadyQueued[]`; undo of a decision (after an approve, forget "
    "the `id` first)",
    True,
    _ST,
)
LIST_CONFLICTS = _op(
    "memory:list-conflicts",
    "Open contradictions, inside branches and across them.",
    "Empty",
    "ConflictsAnswer",
    "`conflicts[]` (scope branch/cross-branch, id, category, title, description, status, "
    "items[] …)",
    False,
    (),
)
RESOLVE_CONFLICT = _op(
    "memory:resolve-conflict",
    "Settle a contradiction: keep the newer, keep both, or mark one outdated.",
    "ResolveConflictRequest",
    "ResolveAnswer",
    "`success` (in-branch: `branch` + `id`; cross-branch: `itemIds`)",
    True,
    _ALL,
)
REMEMBER = _op(
    "memory:remember",
    "Add a statement a person wrote as a pinned user item.",
    "RememberRequest",
    "RememberAnswer",
    "`success`, `id`, `added`",
    True,
    _ST,
    (
        Command(
            ("remember",),
            "add a pinned user memory",
            (
                Arg("branch", "--branch", required=True),
                Arg(
                    "category",
                    "--category",
                    choices=CATEGORIES,
                    default="implementation_notes",
                ),
                Arg("tags", "--tags", "csv"),
                Arg("text", kind="words", stdin=True),
            ),
        ),
    ),
)
GET_ITEM = _op(
    "memory:get-item",
    "One item by id.",
    "IdRequest",
    "ItemAnswer",
    "`item`",
    False,
    _NF,
    (Command(("get",), "one item by id", (Arg("id"),)),),
    remote=True,
)
LIST_ITEMS = _op(
    "memory:list-items",
    "Items by category, branch and tags.",
    "ListItemsRequest",
    "ItemsAnswer",
    "`items[]`, `count`",
    False,
    (),
    (
        Command(
            ("list",),
            "list items",
            (
                Arg("type", "--type", choices=CATEGORIES),
                Arg("branch", "--branch"),
                Arg("tags", "--tags", "csv"),
                Arg("limit", "--limit", "count"),
            ),
        ),
    ),
    remote=True,
)
FORGET = _op(
    "memory:forget",
    "Remove items by id, tags, pattern or age (undoable through versions).",
    "ForgetRequest",
    "ForgetAnswer",
    "`forgotten`, `items[]`, `versions` (per branch, to undo)",
    True,
    _ALL,
    (
        Command(
            ("forget",),
            "remove items (undoable through versions)",
            (
                Arg("id", optional=True),
                Arg("tags", "--tags", "csv"),
                Arg("pattern", "--pattern"),
                Arg("olderThan", "--older-than", "int", help="DAYS"),
                Arg("all", "--all", "flag"),
                Arg("confirm", "--confirm", "flag"),
            ),
        ),
    ),
)
ACTIVITY = _op(
    "memory:activity",
    "Recent activity: what was memorized, maintained, changed.",
    "ActivityRequest",
    "ActivityAnswer",
    "`events[]` (timestamp, kind, message, branch)",
    False,
    (),
    (Command(("activity",), "recent activity", (Arg("limit", "--limit", "int", default=20),)),),
)
CONTEXT = _op(
    "memory:context",
    "A Markdown digest of the memory; with `branch`, what a session start there is given.",
    "ContextRequest",
    "ContextAnswer",
    "`markdown`; with `branch`: `branch`, `markdown` (the session-start text, redacted), "
    "`items`, `constraints`, `ids`, or `message` when nothing is remembered",
    False,
    (),
    (
        Command(
            ("context",),
            "a markdown digest of memory; --branch: what a session start there is given",
            (
                Arg("topic", kind="words"),
                Arg("branch", "--branch", help="the session-start text of this branch"),
            ),
            output="markdown",
        ),
    ),
)
HEALTH = _op(
    "memory:health",
    "Check every branch file (and the index).",
    "HealthRequest",
    "HealthAnswer",
    "`healthy`, `branches`, `invalid[]`, `index`",
    False,
    (),
    (Command(("health",), "check files (and the index)", (Arg("index", "--index", "flag"),)),),
)
REPAIR = _op(
    "memory:repair",
    "Rebuild the index and fix what can be fixed.",
    "Empty",
    "RepairAnswer",
    "`fixed[]`, `unfixable[]`, `index`",
    True,
    _ST,
    (Command(("repair",), "rebuild the index, fix what can be fixed"),),
)
EXPORT = _op(
    "memory:export",
    "Every branch memory in one document (JSON or Markdown).",
    "ExportRequest",
    "ExportAnswer",
    "`content`, `format`, `branches`",
    False,
    (),
    (
        Command(
            ("export",),
            "write every branch memory to one file",
            (
                Arg("out", kind="local", help="output file ('-' for stdout)"),
                Arg("format", "--format", choices=("json", "md"), default="json"),
            ),
            output="export",
        ),
    ),
)
IMPORT = _op(
    "memory:import",
    "Merge an export into the memory (user items always kept).",
    "ImportRequest",
    "ImportAnswer",
    "`branches[]` (branch, added, skipped), `added`",
    True,
    _ST,
    (
        Command(
            ("import",),
            "merge an export (user items always kept)",
            (
                Arg("content", kind="file"),
                Arg("branch", "--branch", help="target branch when importing one memory file"),
            ),
        ),
    ),
    member="import_memory",
)
GET_CONFIG = _op(
    "memory:get-config",
    "The settings in effect.",
    "Empty",
    "ConfigAnswer",
    "`config`, `home`",
    False,
    (),
)
SET_CONFIG = _op(
    "memory:set-config",
    "Change settings (a partial config, validated whole).",
    "SetConfigRequest",
    "SetConfigAnswer",
    "`success`, `config`",
    True,
    _ST,
)
SCAN = _op(
    "memory:scan",
    "Find agent conversations and memorize the complete ones not read yet.",
    "ScanRequest",
    "ScanAnswer",
    "dry run: `threads[]`, `errors[]`, `skipped{}`, `size`; otherwise `memorized`, `failed`, "
    "`skipped`, `duplicates[]?` (threads not memorized because the same conversation already "
    "was, under another name), `errors[]` (unreadable files and failed threads), "
    "`discoveryErrors[]`, `skippedRecords{}`, `fallbacks` (threads the offline engine "
    "memorized because Claude failed), `engineNote?`, `threads`, `pending`, "
    "`batchRecommended`",
    True,
    _ST,
    (
        Command(
            ("scan",),
            "memorize complete, unprocessed agent threads",
            (
                Arg("source", "--source", choices=("claude-code", "puffin", "codex", "aider")),
                Arg("path", "--path", "path"),
                Arg("since", "--since", help="only threads active since this date (YYYY-MM-DD)"),
                Arg("dryRun", "--dry-run", "flag"),
            ),
        ),
    ),
    long=True,
    job=True,
)
IMPROVE = _op(
    "memory:improve",
    "Re-read a branch's threads that only the offline engine read, with the LLM engine.",
    "ImproveRequest",
    "ImproveAnswer",
    "`threads` (offline-only threads of the branch with a known transcript), `improved`, "
    "`failed`, `itemsAdded`, `errors[]`, `notes[]` (refused operations), `summary`; needs "
    "Claude or the local engine (else `INVALID_INPUT`)",
    True,
    _ALL,
    (
        Command(
            ("improve",),
            "re-read a branch's threads that only the offline engine has read, with Claude or "
            "the local model",
            (_BRANCH,),
        ),
    ),
    long=True,
)
PROVENANCE = _op(
    "memory:provenance",
    "Where an item came from: agent, conversation, date, excerpt, transcript.",
    "ProvenanceRequest",
    "ProvenanceAnswer",
    "`id`, `branch`, `title`, `extracted`, `pinned`, `sources[]` (ref, agent, date of the "
    "conversation, transcript `path`, `exists`, `branch`, `excerpt`: a few redacted lines "
    "around the statement, `note` when there is none)",
    False,
    _NF,
    (
        Command(
            ("provenance",),
            "where an item came from: agent, conversation, date, excerpt, transcript path",
            (Arg("id"),),
        ),
    ),
)
SOURCES = _op(
    "memory:sources",
    "The configured agent sources and what they hold.",
    "Empty",
    "SourcesAnswer",
    "per source: locations, projects, branches, thread counts",
    False,
    (),
    (Command(("sources",), "configured sources and what they hold"),),
)
USAGE = _op(
    "memory:usage",
    "LLM tokens and estimated cost, today and this month.",
    "Empty",
    "UsageAnswer",
    "`today`, `month` (tokens and estimated cost per model)",
    False,
    (),
    (Command(("usage",), "LLM tokens and estimated cost, today and this month"),),
)
AUTH_STATUS = _op(
    "memory:auth-status",
    "Whether an Anthropic key is configured, and from where.",
    "Empty",
    "AuthStatusAnswer",
    "`configured`, `origin`, `masked`, `keyringAvailable`",
    False,
    (),
)
AUTH_SET = _op(
    "memory:auth-set",
    "Store an Anthropic key in the system keyring.",
    "KeyRequest",
    "AuthSetAnswer",
    "`success` + status",
    True,
    _ST,
)
AUTH_TEST = _op(
    "memory:auth-test",
    "Check the configured key with one small request.",
    "Empty",
    "AuthTestAnswer",
    "`ok`, `message`",
    False,
    (),
)
INSTALL_HOOKS = _op(
    "memory:install-hooks",
    "Install (or remove) the Claude Code hooks in a settings file.",
    "InstallHooksRequest",
    "InstallHooksAnswer",
    "what changed in Claude Code's settings",
    True,
    _ST,
)

OPERATIONS: tuple[Operation, ...] = tuple(_OPERATIONS)
BY_NAME: dict[str, Operation] = {op.name: op for op in OPERATIONS}
CHANNELS: tuple[str, ...] = tuple(BY_NAME)
# Reads a cold CLI may ask the running app to answer (a quick look-up).
REMOTE: frozenset[str] = frozenset(op.name for op in OPERATIONS if op.remote)
WRITES: frozenset[str] = frozenset(op.name for op in OPERATIONS if op.writes)
JOBS: frozenset[str] = frozenset(op.name for op in OPERATIONS if op.job)
LONG: frozenset[str] = frozenset(op.name for op in OPERATIONS if op.long)


def command_table() -> dict[tuple[str, ...], tuple[Operation, Command]]:
    """Every command-line path with the operation it runs."""
    return {command.path: (op, command) for op in OPERATIONS for command in op.commands}
