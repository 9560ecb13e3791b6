"""How a retrieval scores and packs its answer: one definition for the full read path
(`app.core.reader.MemoryReader`) and the cold one (`app/readpath.py`).

Score (seed 001 section 4): `relevance, confidence, min(accesses / 100, 1)` weighted by the
config (normalised to sum 1; no time decay: facts hold until superseded), times a locality
factor. Packing (section 4.3): conflict warnings first, within a share of the token budget,
then memories by score; a best match alone over the budget is sent truncated rather than
nothing. Standard library only: the cold command line imports it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

MAX_RESULTS = 100
# Candidate pools: generous, so that confidence and access counts can reorder more than
# the top few bm25 hits; deep mode gives the engine more to choose from.
FAST_POOL = 50
DEEP_POOL = 120
CONFLICT_POOL = 20
# Locality is a factor on the score, not a tier: with the same match, the same branch
# wins over the same project, which wins over other projects, yet a clearly better match
# elsewhere (more than 10-20 % better) still comes first.
SAME_BRANCH = 1.0
SAME_PROJECT = 0.9
ELSEWHERE = 0.8
CHARS_PER_TOKEN = 4
# Conflicts are packed first but may take at most this share of the budget.
CONFLICT_BUDGET_SHARE = 0.5
# Below this many tokens left, a truncated first memory would say too little to be useful.
MIN_TRUNCATED_TOKENS = 16
DEFAULT_WEIGHTS = (0.6, 0.3, 0.1)
NOTHING_MESSAGE = "nothing in memory about this"
# Explicit empty answer for the API, CLI, MCP `search` and the per-prompt hook.
NOTHING: dict[str, Any] = {"nothing": True, "message": NOTHING_MESSAGE}
# The heading each category's section has in a branch file, by category value.
HEADINGS: dict[str, str] = {
    "coding_preferences": "Coding Preferences",
    "architectural_decisions": "Architectural Decisions",
    "project_conventions": "Project Conventions",
    "bug_patterns": "Bug Patterns",
    "implementation_notes": "Implementation Notes",
}


class Ranked(NamedTuple):
    """A candidate with its score, as packing needs it (`category`: the category value)."""

    id: str
    branch: str
    project: str
    category: str
    title: str
    content: str
    confidence: float
    relevance: float
    score: float


def estimate_tokens(text: str) -> int:
    """Rough token count (seed 001 section 4.3: about four characters per token)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def locality(hit_branch: str, hit_project: str, branch: str | None, project: str | None) -> float:
    """How near an item is to where the question was asked (1 when no place was given)."""
    if branch is None and project is None:
        return SAME_BRANCH
    if branch is not None and hit_branch == branch:
        return SAME_BRANCH
    if project and hit_project == project:
        return SAME_PROJECT
    return ELSEWHERE


def score(
    relevance: float,
    confidence: float,
    access_count: int,
    weights: tuple[float, float, float],
    near: float,
) -> float:
    """The weighted score of one candidate (`near`: its `locality`)."""
    total = sum(weights)
    if total <= 0:
        weights, total = DEFAULT_WEIGHTS, 1.0
    frequency = min(access_count / 100, 1.0)
    base = (weights[0] * relevance + weights[1] * confidence + weights[2] * frequency) / total
    return base * near


def memory_text(ranked: Ranked, content: str) -> str:
    """How a memory counts against the budget (its heading, confidence, title and text)."""
    heading = HEADINGS.get(ranked.category, ranked.category)
    return (
        f"**{heading}** (confidence: {round(ranked.confidence * 100)}%)\n"
        f"{ranked.title}: {content}\n\n"
    )


def pack(
    conflicts: Sequence[dict[str, Any]],
    ranked: Sequence[Ranked],
    max_results: int,
    budget: int,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    """Conflict warnings first (each `{category, description, itemIds, branches}`), then
    memories by score, within `budget` tokens: (conflicts, memories, tokens used)."""
    used = 0
    packed_conflicts: list[dict[str, Any]] = []
    for conflict in conflicts[:max_results]:
        cost = estimate_tokens(
            f"**CONFLICT** in {conflict['category']}: {conflict['description']}\n"
        )
        if used + cost > budget * CONFLICT_BUDGET_SHARE:
            continue
        used += cost
        packed_conflicts.append(conflict)
    memories: list[dict[str, Any]] = []
    for hit in ranked:
        if len(memories) >= max_results:
            break
        content = hit.content
        cost = estimate_tokens(memory_text(hit, content))
        if used + cost > budget:
            left = budget - used
            if memories or left < MIN_TRUNCATED_TOKENS:
                continue  # a shorter item further down may still fit
            # The best match alone is over the budget: send its start rather than nothing.
            overhead = estimate_tokens(memory_text(hit, ""))
            keep = max(0, (left - overhead) * CHARS_PER_TOKEN - 1)
            content = content[:keep].rstrip() + "…"
            cost = estimate_tokens(memory_text(hit, content))
        used += cost
        memories.append(
            {
                "branch": hit.branch,
                "project": hit.project,
                "category": hit.category,
                "title": hit.title,
                "content": content,
                "confidence": hit.confidence,
                "score": round(hit.score, 4),
                "id": hit.id,
                "relevance": round(hit.relevance, 4),
            }
        )
    return packed_conflicts, memories, used
