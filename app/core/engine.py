"""The `Engine` protocol: what the writer, reader and maintenance need from a thinking engine.

Two engines implement it: `app.engines.offline.OfflineEngine` (rules, no network) and
`app.engines.anthropic_engine.AnthropicEngine` (Claude). Engines never write files: they
return models, and the core checks them (`app/core/guard.py`) before anything is written.
All methods are plain blocking calls: the core is synchronous and runs on one worker thread
(the GUI's `MemoryHost`) or in the calling process (CLI, hooks, MCP); the Claude engine blocks
on the network there, with the SDK's own timeouts bounding every wait.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, Field

from app.core.errors import ExtractionFailed
from app.core.models import BranchMemory, Category, EvolutionResult, ExtractionResult, MemoryItem


class Candidate(BaseModel):
    """An item offered to an engine's deep retrieval, with where it lives."""

    branch: str
    project: str = ""
    item: MemoryItem
    relevance: float = 0.0


class DeepAnswer(BaseModel):
    """Deep retrieval result: chosen item ids with relevance, and conflicts found."""

    ranked: list[tuple[str, float]] = Field(default_factory=list)  # (item id, relevance 0..1)
    conflicts: list[CrossConflict] = Field(default_factory=list)
    path: str = "offline"


class CrossConflict(BaseModel):
    """Two or more items in different branches that say opposite things."""

    category: Category
    description: str
    item_ids: list[str]
    branches: list[str]


DeepAnswer.model_rebuild()


@runtime_checkable
class Engine(Protocol):
    """A thinking engine. `name` is shown in status and responses."""

    name: str

    def extract(self, conversation: str, *, source: str) -> ExtractionResult:
        """Find solution-wide knowledge in a conversation (already redacted)."""
        ...

    def evolve(
        self, current: BranchMemory | None, items: list[MemoryItem], *, branch_id: str
    ) -> EvolutionResult:
        """Integrate new items into the branch memory (or start one)."""
        ...

    def consolidate(self, memory: BranchMemory) -> EvolutionResult:
        """Weekly consolidation: merge duplicates, tidy, refresh the summary."""
        ...

    def deep_retrieve(self, query: str, candidates: list[Candidate]) -> DeepAnswer:
        """Deep retrieval tiers over candidate items from several branches."""
        ...


def extract_each(
    engine: Engine, conversations: Sequence[tuple[str, str]]
) -> list[ExtractionResult | ExtractionFailed]:
    """A backlog of `(conversation, source)` pairs extracted one after another; a
    conversation that fails gets its `ExtractionFailed` in its place."""
    results: list[ExtractionResult | ExtractionFailed] = []
    for text, source in conversations:
        try:
            results.append(engine.extract(text, source=source))
        except ExtractionFailed as exc:
            results.append(exc)
    return results
