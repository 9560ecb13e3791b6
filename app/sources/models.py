"""Thread models shared by every reader: messages, side conversations, threads, read statistics.

Kept as slotted dataclasses rather than pydantic models because a scan builds hundreds of
thousands of them. A `Thread` found by discovery carries only its metadata (counts, times,
hash, where it came from); its messages are read again from the transcript when needed
(`Thread.load()`), so a scan's memory does not grow with the size of the transcript folders.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from app.core.errors import NotFound

NO_BRANCH = "(no branch)"

# Message roles and kinds. `user`/`assistant` with kind `text` are the speakers' own words;
# `system` covers text that is in the transcript but was not said by either: injected meta
# text, compaction summaries, tool errors, the summary line of a command run that passed,
# command output, interruptions, and the dependency lines of manifests a tool read.
USER = "user"
ASSISTANT = "assistant"
SYSTEM = "system"

TEXT = "text"
META = "meta"
SUMMARY = "summary"
TOOL_ERROR = "tool_error"
COMMAND = "command"
COMMAND_OUTPUT = "command_output"
INTERRUPT = "interrupt"
# The checked dependency line of a manifest a tool read (see app/sources/manifests.py).
MANIFEST = "manifest"
# The summary line of a command run that passed ("12 passed in 0.88s"; see `run_summary`).
TOOL_OUTCOME = "tool_outcome"


@dataclass(slots=True)
class Message:
    """One turn: who, what, when. Assistant turns list their tool calls as short lines."""

    role: str
    text: str
    timestamp: datetime | None = None
    kind: str = TEXT
    tools: list[str] = field(default_factory=list)


@dataclass(slots=True)
class SideConversation:
    """A subagent's conversation, attached to the thread that started it."""

    id: str
    title: str
    messages: list[Message] = field(default_factory=list)
    started: datetime | None = None
    # What the subagent returned to the parent (the Task tool's result), when known.
    report: str = ""

    def final_text(self) -> str:
        """The subagent's report to the parent: the Task result, else its last text."""
        if self.report.strip():
            return self.report.strip()
        for message in reversed(self.messages):
            if message.role == ASSISTANT and message.kind == TEXT and message.text.strip():
                return message.text
        return ""


@dataclass(slots=True)
class ThreadContent:
    """What a thread says: its messages and side conversations."""

    messages: list[Message] = field(default_factory=list)
    side_conversations: list[SideConversation] = field(default_factory=list)


@dataclass(slots=True)
class ParsedThread:
    """A reader's output: metadata plus content, before discovery drops the content."""

    id: str
    source: str
    project: str
    branch: str
    content: ThreadContent
    ref: str
    title: str = ""
    started: datetime | None = None
    ended: datetime | None = None


class ReadStats:
    """Counts of skipped input and readable error messages collected while reading."""

    __slots__ = ("declared_branches", "errors", "skipped")

    def __init__(self) -> None:
        self.skipped: Counter[str] = Counter()
        self.errors: list[str] = []
        # Branch ids a source declares even without threads (empty Puffin branches).
        self.declared_branches: set[str] = set()

    def skip(self, what: str, count: int = 1) -> None:
        """Count something that was skipped (unknown record types, malformed lines, ...)."""
        self.skipped[what] += count

    def declare_branch(self, branch_id: str) -> None:
        """Note a branch the source knows about, whether or not it has threads."""
        self.declared_branches.add(branch_id)

    def error(self, message: str) -> None:
        """Record a problem a person should hear about (with the file name in it)."""
        self.errors.append(message)


# A reader: transcript paths (the main file first) -> parsed threads.
Reader = Callable[[tuple[Path, ...], ReadStats], list[ParsedThread]]


def content_hash(messages: list[Message]) -> str:
    """Stable digest of what was said (roles, kinds, text, tool lines)."""
    digest = hashlib.sha256()
    for message in messages:
        digest.update(message.role.encode())
        digest.update(b"\x1f")
        digest.update(message.kind.encode())
        digest.update(b"\x1f")
        digest.update(message.text.encode("utf-8", "surrogatepass"))
        for tool in message.tools:
            digest.update(b"\x1e")
            digest.update(tool.encode("utf-8", "surrogatepass"))
        digest.update(b"\x1d")
    return digest.hexdigest()


@dataclass(slots=True)
class Thread:
    """A conversation on one branch: metadata, with its content loaded on demand.

    `project` is the repository (or Puffin project) folder name, `branch` the git branch
    (Puffin: the conversation branch). `branch_id` is `<project>/<branch>`.
    """

    id: str
    source: str
    project: str
    branch: str
    started: datetime
    ended: datetime
    message_count: int
    content_hash: str
    ref: str
    paths: tuple[Path, ...]
    title: str = ""
    side_count: int = 0
    rendered_bytes: int = 0
    reader: Reader | None = field(default=None, repr=False, compare=False)

    @property
    def branch_id(self) -> str:
        """`<project>/<branch>`, the memory file this thread feeds."""
        return f"{self.project}/{self.branch}"

    @property
    def key(self) -> str:
        """Ledger key: unique across sources."""
        return f"{self.source}:{self.id}"

    @property
    def path(self) -> Path:
        """The transcript file the thread was read from."""
        return self.paths[0]

    def load(self) -> ThreadContent:
        """Read the thread's messages and side conversations from its transcript again."""
        if self.reader is None:
            raise NotFound(f"Thread {self.id} has no reader to load it from")
        stats = ReadStats()
        for parsed in self.reader(self.paths, stats):
            if parsed.id == self.id:
                return parsed.content
        raise NotFound(f"Thread {self.id} is no longer in {self.path}")

    @property
    def messages(self) -> list[Message]:
        """The thread's messages (read from the transcript on each access)."""
        return self.load().messages

    @property
    def side_conversations(self) -> list[SideConversation]:
        """The thread's side conversations (read from the transcript on each access)."""
        return self.load().side_conversations


@dataclass(slots=True)
class Discovery:
    """What a scan found: threads, readable errors, counts of skipped input, sizes."""

    threads: list[Thread] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    files: int = 0
    raw_bytes: int = 0
    rendered_bytes: int = 0
    # Branch ids known without threads (empty Puffin branches), for the sources report.
    empty_branches: list[str] = field(default_factory=list)
    # File signatures of each transcript read, keyed by its paths (for incremental scans),
    # and how many transcripts were left unread because they had not changed.
    signatures: dict[tuple[str, ...], tuple[tuple[int, int], ...]] = field(default_factory=dict)
    unchanged: int = 0


@dataclass(slots=True)
class PlannedThread:
    """A thread with what the ledger and the completion rule say about it."""

    thread: Thread
    complete: bool
    processed: bool
    # Index of the first message not yet memorized (0 for a new thread, >0 when it grew).
    start: int = 0

    @property
    def grown(self) -> bool:
        """Memorized before, with new messages since."""
        return self.start > 0 and not self.processed
