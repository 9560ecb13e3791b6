"""The shapes Claude must reply in: pydantic models, and the structured-output formats built
from them.

Each Claude call asks for structured output (`output_config.format`, a JSON schema made from a
reply model here), so the reply arrives as one JSON text block; that JSON is then validated
with the same model (extra fields forbidden, confidences 0..1, non-empty content), so nothing
unchecked ever reaches the memory. Forced tool use is not used: current models (Claude Sonnet
5.5) refuse it with a 400, and every model refuses it while thinking. Extraction replies
follow seed 001 section 2.4 and map onto `app.core.models.MemoryItem`, with the category fields
of the contract (rationale, trade-offs, scope, root cause, fix, occurrences, approach,
lessons). Evolution and consolidation answer with a change list (`app.engines.ops`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Annotated, Any, Generic, TypeVar

import anthropic
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from app.core.models import Category, MemoryItem
from app.engines.ops import ChangeList

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
OptionalText = Annotated[str, StringConstraints(strip_whitespace=True)]
Confidence = Annotated[float, Field(ge=0.0, le=1.0)]


class _Reply(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PreferenceReply(_Reply):
    """A coding preference: a solution-wide style, library or practice choice."""

    title: Text = Field(max_length=120, description="2 to 8 words naming the fact")
    content: Text = Field(description="One clear, specific, actionable statement")
    confidence: Confidence = Field(description="0.0 to 1.0, see the quality rules")
    tags: list[OptionalText] = Field(
        default_factory=list, max_length=8, description="A few search keywords (optional)"
    )


class DecisionReply(PreferenceReply):
    """An architectural decision affecting several components."""

    rationale: OptionalText = Field(default="", description="Why it was chosen")
    trade_offs: OptionalText = Field(default="", description="What was given up")


class ConventionReply(PreferenceReply):
    """A convention enforced everywhere."""

    scope: OptionalText = Field(default="", description="Where the convention applies")


class BugReply(PreferenceReply):
    """A recurring bug pattern; `content` is the symptom."""

    root_cause: OptionalText = Field(default="", description="Why it happens")
    fix: OptionalText = Field(default="", description="How to prevent or repair it")
    occurrences: int = Field(default=1, ge=1, le=1000, description="Times seen in this text")


class NoteReply(PreferenceReply):
    """A cross-cutting implementation lesson."""

    approach: OptionalText = Field(default="", description="The recommended approach")
    lessons: OptionalText = Field(default="", description="The insight learned")


class ExtractionReply(_Reply):
    """What Claude found in one conversation (or one chunk of it)."""

    no_content_to_extract: bool = Field(
        default=False, description="True when there is nothing solution-wide; lists stay empty"
    )
    coding_preferences: list[PreferenceReply] = Field(default_factory=list)
    architectural_decisions: list[DecisionReply] = Field(default_factory=list)
    project_conventions: list[ConventionReply] = Field(default_factory=list)
    bug_patterns: list[BugReply] = Field(default_factory=list)
    implementation_notes: list[NoteReply] = Field(default_factory=list)

    @model_validator(mode="after")
    def _empty_when_nothing(self) -> ExtractionReply:
        if self.no_content_to_extract and self.item_count():
            raise ValueError("no_content_to_extract is true but items were listed")
        return self

    def item_count(self) -> int:
        """Number of items across categories."""
        return sum(len(getattr(self, c.value)) for c in Category)

    def to_items(self, source: str, extracted: date) -> list[MemoryItem]:
        """The reply as memory items from `source`, extracted on `extracted`."""
        items: list[MemoryItem] = []
        for category in Category:
            for reply in getattr(self, category.value):
                fields = reply.model_dump()
                items.append(
                    MemoryItem(
                        category=category,
                        sources=[source],
                        extracted=extracted,
                        tags=[t for t in fields.pop("tags") if t],
                        **fields,
                    )
                )
        return items


# At most this many conversations go into one grouped extraction call.
GROUP_MAX_CONVERSATIONS = 8


class ConversationReply(ExtractionReply):
    """What Claude found in one conversation of a grouped extraction call."""

    conversation: int = Field(
        ge=1, le=GROUP_MAX_CONVERSATIONS, description="The number of the conversation (id=...)"
    )


class GroupExtractionReply(_Reply):
    """What Claude found in each of several conversations of one branch, sent in one call."""

    conversations: list[ConversationReply] = Field(
        description="One entry per conversation, by its number, in any order"
    )

    def by_conversation(self) -> dict[int, list[ConversationReply]]:
        """The entries grouped by conversation number."""
        found: dict[int, list[ConversationReply]] = {}
        for entry in self.conversations:
            found.setdefault(entry.conversation, []).append(entry)
        return found


class PlanReply(_Reply):
    """Retrieval tiers 1-2: the synthesised query and the branches worth searching."""

    search_query: Text = Field(max_length=400, description="Self-contained search query")
    branches: list[Text] = Field(description="Branches likely to answer, most promising first")


class RankedId(_Reply):
    """One relevant item."""

    id: Text
    relevance: Confidence


class RankReply(_Reply):
    """Retrieval tiers 3-4: relevance of offered items, and whether they suffice."""

    ranked: list[RankedId] = Field(description="Relevant items only, with relevance 0..1")
    sufficient: bool = Field(description="True when these items answer the question well")


class ConflictReply(_Reply):
    """One cross-branch contradiction."""

    category: Category
    description: Text = Field(max_length=500)
    item_ids: list[Text] = Field(min_length=2, description="Ids of the conflicting items")


class ConflictsReply(_Reply):
    """Retrieval tier 5: contradictions between branches."""

    conflicts: list[ConflictReply] = Field(default_factory=list)


ReplyT = TypeVar("ReplyT", bound=BaseModel)


def _inline_refs(schema: Any, defs: dict[str, Any]) -> Any:
    """Replace `$ref`s with their definitions and drop pydantic's `title` annotations."""
    if isinstance(schema, dict):
        if "$ref" in schema:
            name = str(schema["$ref"]).rsplit("/", 1)[-1]
            merged = {**defs[name], **{k: v for k, v in schema.items() if k != "$ref"}}
            return _inline_refs(merged, defs)
        return {
            key: _inline_refs(value, defs)
            for key, value in schema.items()
            if key != "$defs" and not (key == "title" and isinstance(value, str))
        }
    if isinstance(schema, list):
        return [_inline_refs(v, defs) for v in schema]
    return schema


def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A self-contained JSON schema of `model` in the subset structured outputs accept.

    References are inlined first; the SDK's `transform_schema` (what `messages.parse` uses)
    then sets `additionalProperties: false` on every object and moves the keywords the API
    does not enforce (lengths, bounds, defaults) into the descriptions, where the model still
    reads them; the pydantic model enforces them on the reply.
    """
    raw = model.model_json_schema()
    inlined: dict[str, Any] = _inline_refs(raw, raw.get("$defs", {}))
    return anthropic.transform_schema(inlined)


@dataclass(frozen=True)
class ReplyShape(Generic[ReplyT]):
    """One kind of reply: its name (for messages), what it is for, and its pydantic model.

    `output_format()` is the `output_config.format` of a request asking for it; a later reply
    kind (a change list of operations, say) is one more `ReplyShape`.
    """

    name: str
    description: str
    reply: type[ReplyT]
    schema: dict[str, Any] = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "schema", json_schema(self.reply))

    def output_format(self) -> dict[str, Any]:
        """The `output_config.format` entry of a Messages API request."""
        return {"type": "json_schema", "schema": self.schema}


EXTRACT_SHAPE = ReplyShape(
    "record_memories",
    "The solution-wide knowledge found in the conversation, by category.",
    ExtractionReply,
)
GROUP_EXTRACT_SHAPE = ReplyShape(
    "record_memories_by_conversation",
    "The solution-wide knowledge found in each of several conversations, by conversation.",
    GroupExtractionReply,
)
CHANGES_SHAPE = ReplyShape(
    "change_list",
    "The operations that integrate new items into a branch memory (app.engines.ops).",
    ChangeList,
)
PLAN_SHAPE = ReplyShape(
    "plan_search",
    "The synthesised search query and the branches to search.",
    PlanReply,
)
RANK_SHAPE = ReplyShape(
    "rank_memories",
    "The relevant memory items with their relevance, and whether they suffice.",
    RankReply,
)
CONFLICTS_SHAPE = ReplyShape(
    "report_conflicts",
    "Contradictions between memory items of different branches.",
    ConflictsReply,
)
