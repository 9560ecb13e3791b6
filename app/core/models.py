"""Data models of a branch memory: items, contradictions, the branch file and extraction results.

These pydantic models are the contract between every layer. A `BranchMemory` renders to the
Markdown file of seed 001 section 1.1 (`app/core/format.py`) and parses back to an equal model.
Values are normalised on the way in (UTC timestamps to the second, confidence to two decimals,
single-line titles) so that `parse(render(m)) == m` holds.
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, date, datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from app.core.ranking import HEADINGS


class Category(StrEnum):
    """The five knowledge categories of seed 001, in file order."""

    CODING_PREFERENCES = "coding_preferences"
    ARCHITECTURAL_DECISIONS = "architectural_decisions"
    PROJECT_CONVENTIONS = "project_conventions"
    BUG_PATTERNS = "bug_patterns"
    IMPLEMENTATION_NOTES = "implementation_notes"

    @property
    def heading(self) -> str:
        """The section heading used in the branch file."""
        return CATEGORY_HEADINGS[self]

    @property
    def id_prefix(self) -> str:
        """Short prefix of generated item ids (`pref-1a2b3c4d`)."""
        return CATEGORY_PREFIXES[self]


# The section headings are defined once, in app.core.ranking (the cold paths read them).
CATEGORY_HEADINGS: dict[Category, str] = {c: HEADINGS[c.value] for c in Category}
CATEGORY_PREFIXES: dict[Category, str] = {
    Category.CODING_PREFERENCES: "pref",
    Category.ARCHITECTURAL_DECISIONS: "arch",
    Category.PROJECT_CONVENTIONS: "conv",
    Category.BUG_PATTERNS: "bug",
    Category.IMPLEMENTATION_NOTES: "note",
}
SUMMARY_HEADING = "Summary"
CONTRADICTIONS_HEADING = "Contradictions and Conflicts"
USER_SOURCE = "user"

_SPACE_RE = re.compile(r"\s+")
_TOKEN_RE = re.compile(r"[^\w.:/@+#-]+")


def utc_now() -> datetime:
    """Now, in UTC, truncated to the second (the precision of the file format)."""
    return datetime.now(UTC).replace(microsecond=0)


def normalize_timestamp(value: datetime) -> datetime:
    """UTC, to the second; naive datetimes are taken as UTC."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).replace(microsecond=0)


def one_line(text: str) -> str:
    """Collapse all whitespace (newlines included) to single spaces and strip."""
    return _SPACE_RE.sub(" ", text).strip()


def clean_token(text: str) -> str:
    """A tag or source reference: no spaces or commas, so it survives inline metadata."""
    return _TOKEN_RE.sub("-", text.strip()).strip("-")


def make_item_id(category: Category, title: str, content: str) -> str:
    """Deterministic id for an item without one: same text, same id, across parses."""
    digest = hashlib.sha1(f"{category}|{title}|{content}".encode()).hexdigest()[:8]
    return f"{category.id_prefix}-{digest}"


class _Model(BaseModel):
    # Schemas are built on first use: a CLI command that touches two models should not pay
    # for building all of them at import time.
    model_config = ConfigDict(extra="forbid", validate_assignment=False, defer_build=True)


class MemoryItem(_Model):
    """One remembered fact: a bullet in a category section of a branch file.

    Category-specific fields follow seed 001's extraction schema and seed 003's lesson shape:
    decisions carry `rationale`/`trade_offs`, conventions `scope`, bug patterns `root_cause`,
    `fix` and `occurrences`, implementation notes `approach`/`lessons`.
    """

    id: str = ""
    category: Category
    title: str
    content: str
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    sources: list[str] = Field(default_factory=list)
    extracted: date = Field(default_factory=lambda: utc_now().date())
    tags: list[str] = Field(default_factory=list)
    pinned: bool = False
    # Architectural decisions
    rationale: str = ""
    trade_offs: str = ""
    # Project conventions
    scope: str = ""
    # Bug patterns (seed 003: symptom is the content, then root cause, fix, occurrences)
    root_cause: str = ""
    fix: str = ""
    occurrences: int = Field(default=1, ge=1)
    # Implementation notes
    approach: str = ""
    lessons: str = ""

    @field_validator(
        "title",
        "content",
        "rationale",
        "trade_offs",
        "scope",
        "root_cause",
        "fix",
        "approach",
        "lessons",
    )
    @classmethod
    def _one_line(cls, value: str) -> str:
        return one_line(value)

    @field_validator("confidence")
    @classmethod
    def _round_confidence(cls, value: float) -> float:
        return round(value, 2)

    @field_validator("sources", "tags")
    @classmethod
    def _clean_tokens(cls, value: list[str]) -> list[str]:
        seen: list[str] = []
        for raw in value:
            token = clean_token(raw)
            if token and token not in seen:
                seen.append(token)
        return seen

    @model_validator(mode="after")
    def _fill_defaults(self) -> MemoryItem:
        if not self.title:
            self.title = derive_title(self.content)
        if not self.id:
            self.id = make_item_id(self.category, self.title, self.content)
        if USER_SOURCE in self.sources:
            self.pinned = True
        return self

    @property
    def text(self) -> str:
        """Title, content and category fields as one searchable string."""
        parts = [
            self.title,
            self.content,
            self.rationale,
            self.trade_offs,
            self.scope,
            self.root_cause,
            self.fix,
            self.approach,
            self.lessons,
        ]
        return " ".join(p for p in parts if p)


def derive_title(content: str, max_words: int = 6) -> str:
    """A short title from the first words of a sentence (for bullets written without one)."""
    words = one_line(content).split(" ")
    title = " ".join(words[:max_words]).rstrip(".,;:")
    return title[:1].upper() + title[1:] if title else "Untitled"


class Contradiction(_Model):
    """An entry of the "Contradictions and Conflicts" section.

    `items` holds complete copies of the statements involved that are no longer in a category
    section (a superseded item moves here whole, so nothing is lost). `refs` names items that
    are still in their sections. `status` is `superseded` (the newer statement won), `open`
    (ambiguous, both kept for a person to decide) or `resolved` (a person decided).
    """

    id: str = ""
    title: str
    description: str
    status: Literal["open", "superseded", "resolved"] = "open"
    detected: date = Field(default_factory=lambda: utc_now().date())
    refs: list[str] = Field(default_factory=list)
    items: list[MemoryItem] = Field(default_factory=list)

    @field_validator("title", "description")
    @classmethod
    def _one_line(cls, value: str) -> str:
        return one_line(value)

    @field_validator("refs")
    @classmethod
    def _clean_refs(cls, value: list[str]) -> list[str]:
        return [t for t in (clean_token(v) for v in value) if t]

    @model_validator(mode="after")
    def _fill_id(self) -> Contradiction:
        if not self.id:
            digest = hashlib.sha1(f"{self.title}|{self.description}".encode()).hexdigest()[:8]
            self.id = f"conflict-{digest}"
        return self


class ExtraSection(_Model):
    """A section the app does not know (written by hand or by an LLM), kept verbatim."""

    heading: str
    body: str

    @field_validator("heading")
    @classmethod
    def _one_line(cls, value: str) -> str:
        return one_line(value)

    @field_validator("body")
    @classmethod
    def _strip(cls, value: str) -> str:
        return value.strip("\n")


def _empty_sections() -> dict[Category, list[MemoryItem]]:
    return {c: [] for c in Category}


class BranchMemory(_Model):
    """The whole branch memory file: header, summary, items per category, contradictions."""

    branch_id: str
    last_updated: datetime = Field(default_factory=utc_now)
    last_extraction: datetime | None = None
    thread_count: int = Field(default=0, ge=0)
    summary: str = ""
    items: dict[Category, list[MemoryItem]] = Field(default_factory=lambda: _empty_sections())
    contradictions: list[Contradiction] = Field(default_factory=list)
    # Free text found in the Contradictions section that is not a structured entry.
    contradiction_notes: str = ""
    extra_sections: list[ExtraSection] = Field(default_factory=list)

    @field_validator("last_updated", "last_extraction")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return None if value is None else normalize_timestamp(value)

    @field_validator("summary", "contradiction_notes")
    @classmethod
    def _strip(cls, value: str) -> str:
        return value.strip()

    @field_validator("items")
    @classmethod
    def _all_categories(
        cls, value: dict[Category, list[MemoryItem]]
    ) -> dict[Category, list[MemoryItem]]:
        return {c: list(value.get(c, [])) for c in Category}

    def all_items(self) -> list[MemoryItem]:
        """Items of every category section, in file order (contradiction copies excluded)."""
        return [item for c in Category for item in self.items[c]]

    def item_count(self) -> int:
        """Number of items in the category sections."""
        return sum(len(v) for v in self.items.values())

    def find(self, item_id: str) -> MemoryItem | None:
        """The item with this id in a category section, if any."""
        return next((i for i in self.all_items() if i.id == item_id), None)


class ExtractionResult(_Model):
    """What an engine found in one conversation, before confidence routing."""

    items: list[MemoryItem] = Field(default_factory=list)
    no_content_to_extract: bool = False
    # Which path produced it ("offline", "anthropic", "anthropic+offline-fallback", ...).
    engine: str = "offline"
    notes: list[str] = Field(default_factory=list)


class EvolutionResult(_Model):
    """A new branch memory from an engine, with the path taken to produce it."""

    memory: BranchMemory
    path: str = "offline"
    notes: list[str] = Field(default_factory=list)
    # Counts for reports: "added", "reinforced", "superseded", "conflicts", "merged", "pruned".
    stats: dict[str, int] = Field(default_factory=dict)
    # Review-queue candidates this result records as superseded (the writer unqueues them).
    settled: list[str] = Field(default_factory=list)
