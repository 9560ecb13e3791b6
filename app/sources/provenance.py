"""Where a memory item came from: the agent, the conversation, its date and the excerpt.

An item's `sources` are thread refs (`cc-…` Claude Code, `cx-…` Codex, `ai-…` Aider, `pf-…`
Puffin) or `user` / `cli` for what a person wrote. The scan ledger knows, for each thread it
memorized, the transcript's path, branch and when it was read; `provenance` joins the two
and, for the first few sources whose transcript still exists, reads the conversation again
(redacted, as it was memorized) and cuts out the lines around the statement that produced
the item. Reading is bounded: at most `MAX_EXCERPTS` transcripts per call, and nothing is
written.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from app.core.errors import PuffinError
from app.core.models import MemoryItem
from app.core.review import excerpt
from app.sources.ledger import Ledger, LedgerEntry

AGENTS = {
    "cc": "Claude Code",
    "cx": "Codex",
    "ai": "Aider",
    "pf": "Puffin",
    "tx": "A text transcript",
}
PEOPLE = {"user": "You (written by hand)", "cli": "Command line", "mcp": "An agent, via MCP"}
MAX_EXCERPTS = 5


@dataclass
class SourceInfo:
    """One source of an item, as a person reads it."""

    ref: str
    agent: str
    date: str = ""
    path: str = ""
    exists: bool = False
    branch: str = ""
    excerpt: str = ""
    note: str = ""


def agent_of(ref: str) -> str:
    """The agent (or person) behind a source ref."""
    if ref in PEOPLE:
        return PEOPLE[ref]
    prefix = ref.split("-", 1)[0]
    return AGENTS.get(prefix, "Another source")


def _entries_by_ref(ledger: Ledger) -> dict[str, LedgerEntry]:
    return {e.ref: e for e in ledger.entries.values() if e.ref}


def provenance(item: MemoryItem, branch: str, home: Path) -> dict[str, Any]:
    """Every source of `item` with agent, date, transcript path and an excerpt (see module)."""
    from app.sources.scan import thread_text

    by_ref = _entries_by_ref(Ledger.open(home))
    sources: list[SourceInfo] = []
    read = 0
    for ref in item.sources:
        info = SourceInfo(ref=ref, agent=agent_of(ref), date=item.extracted.isoformat())
        entry = by_ref.get(ref)
        if entry is not None:
            info.path, info.branch = entry.path, entry.branch_id
            info.date = (entry.conversed or entry.memorized_at).date().isoformat()
            info.exists = bool(entry.path) and Path(entry.path).is_file()
            if info.exists and read < MAX_EXCERPTS:
                read += 1
                try:
                    info.excerpt = excerpt(thread_text(entry), item)
                except PuffinError as exc:
                    info.note = exc.message
                except OSError as exc:
                    info.note = f"The transcript could not be read ({exc.strerror or exc})."
                if not info.excerpt and not info.note:
                    info.note = "The statement was not found word for word in the transcript."
            elif not info.exists and entry.path:
                info.note = "The transcript is no longer where it was read."
        elif ref not in PEOPLE:
            info.note = "No scan of this conversation is recorded on this machine."
        sources.append(info)
    return {
        "id": item.id,
        "branch": branch,
        "title": item.title,
        "extracted": item.extracted.isoformat(),
        "pinned": item.pinned,
        "sources": [asdict(s) for s in sources],
    }
