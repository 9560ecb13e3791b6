"""`AnthropicEngine`: the `Engine` protocol on Claude (extraction, evolution, consolidation,
deep retrieval), with the offline engine as the safety net.

Extraction redacts the conversation again (defence in depth), splits it into chunks of
`Config.chunk_tokens`, asks the fast model for each chunk for a `record_memories` reply
(structured output, see `caller`) and merges the items. Evolution and consolidation never ask
for a file: Claude sees the new items and only the existing items they could bear on, and
answers with a change list (`app.engines.ops`: add, reinforce, supersede, flag_conflict, merge,
update_summary by item id), which is validated and applied by deterministic code; refused
operations are listed with their reasons, and new items no operation placed go through the
offline rules. The writer's guard then checks the result like any other engine's. Deep
retrieval runs the tiers of seed 001 section 3.3 in at most four small calls. API failures
(and refusals, truncated or invalid replies) surface as the operation's error
(`ExtractionFailed`, `MaintenanceFailed`, `RetrievalFailed`); the wrapper in
`app.engines.select` turns them into the offline engine's answer for that call. The engine
writes no files except the usage ledger.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import date, datetime
from typing import Any

import httpx2
from anthropic.types import Message

from app.core.config import Config
from app.core.engine import Candidate, CrossConflict, DeepAnswer, Engine, extract_each
from app.core.errors import (
    ExtractionFailed,
    MaintenanceFailed,
    PuffinError,
    RetrievalFailed,
)
from app.core.models import (
    BranchMemory,
    Category,
    EvolutionResult,
    ExtractionResult,
    MemoryItem,
    one_line,
    utc_now,
)
from app.core.redact import redact
from app.core.usage import UsageLedger
from app.engines.claude.batches import run_batch
from app.engines.claude.caller import ClaudeCaller, InvalidReplyError, dump_json
from app.engines.claude.prompts import (
    CHARS_PER_TOKEN,
    chunk_text,
    extraction_request,
    fence,
    group_extraction_request,
    system_prompt,
)
from app.engines.claude.replies import (
    CHANGES_SHAPE,
    CONFLICTS_SHAPE,
    EXTRACT_SHAPE,
    GROUP_EXTRACT_SHAPE,
    GROUP_MAX_CONVERSATIONS,
    PLAN_SHAPE,
    RANK_SHAPE,
    ExtractionReply,
    GroupExtractionReply,
    RankReply,
    ReplyShape,
    ReplyT,
)
from app.engines.ops import (
    OPS_SYSTEM_PROMPT,
    ChangeList,
    consolidate_through,
    evolve_through,
)

log = logging.getLogger(__name__)

# max_tokens caps thinking plus the reply, and current models think by default (adaptive
# thinking on Sonnet 5.5 and Haiku 5.5): the caps leave room for it, since a reply cut off at
# max_tokens is a failure. A cap costs nothing unless it is used.
EXTRACTION_MAX_TOKENS = 16_384
RETRIEVAL_MAX_TOKENS = 8_192
# A change list names ids and short texts: a few hundred tokens per listed item at most.
CHANGES_MIN_TOKENS = 4_096
CHANGES_MAX_TOKENS = 16_384
# Item text shown to the retrieval tiers is cut here: enough to judge, cheap to send.
_CANDIDATE_CHARS = 600
_TITLES_PER_BRANCH = 40
_CONFLICT_ITEMS = 40


def _invalid_twice(what: str, exc: InvalidReplyError) -> str:
    return (
        f"Claude's {what} reply did not match the expected format twice "
        f"({'; '.join(exc.problems[:3])}); nothing was changed."
    )


def _changes_max_tokens(listed: int) -> int:
    return min(CHANGES_MAX_TOKENS, CHANGES_MIN_TOKENS + 150 * listed)


def _key(item: MemoryItem) -> tuple[Category, str]:
    return item.category, one_line(item.title).lower()


def merge_extracted(items: list[MemoryItem]) -> list[MemoryItem]:
    """Items from several chunks with repeats folded together (same category and title or
    content): the higher confidence wins, bug occurrences add up, empty fields are filled."""
    merged: list[MemoryItem] = []
    by_title: dict[tuple[Category, str], int] = {}
    by_content: dict[tuple[Category, str], int] = {}
    for item in items:
        content_key = (item.category, one_line(item.content).lower())
        index = by_title.get(_key(item), by_content.get(content_key))
        if index is None:
            by_title[_key(item)] = by_content[content_key] = len(merged)
            merged.append(item)
            continue
        kept = merged[index]
        update: dict[str, Any] = {
            "confidence": max(kept.confidence, item.confidence),
            "tags": list(dict.fromkeys([*kept.tags, *item.tags])),
        }
        if kept.category is Category.BUG_PATTERNS:
            update["occurrences"] = kept.occurrences + item.occurrences
        for name in (
            "rationale",
            "trade_offs",
            "scope",
            "root_cause",
            "fix",
            "approach",
            "lessons",
        ):
            if not getattr(kept, name) and getattr(item, name):
                update[name] = getattr(item, name)
        merged[index] = kept.model_copy(update=update)
    return merged


def extraction_result(
    replies: list[ExtractionReply], source: str, parts: int, today: date, engine: str
) -> ExtractionResult:
    """The items of one conversation's chunk replies, merged (shared by every LLM engine)."""
    items = merge_extracted([i for r in replies for i in r.to_items(source, today)])
    return ExtractionResult(
        items=items,
        no_content_to_extract=not items and all(r.no_content_to_extract for r in replies),
        engine=engine,
        notes=[f"conversation split into {parts} parts"] if parts > 1 else [],
    )


def _extraction_content(chunk: str, part: int, parts: int) -> list[dict[str, Any]]:
    return [{"type": "text", "text": extraction_request(chunk, part=part, parts=parts)}]


class AnthropicEngine:
    """The Claude engine (see the module docstring).

    `fallback` is the offline engine: it takes over a rewrite that the guard refused twice.
    `now` is injectable for tests.
    """

    name = "anthropic"

    def __init__(
        self,
        config: Config,
        *,
        api_key: str,
        usage: UsageLedger,
        fallback: Engine,
        http_client: httpx2.Client | None = None,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        """Keep the settings; the SDK client is created on the first call."""
        self.config = config
        self.caller = ClaudeCaller(config, api_key=api_key, usage=usage, http_client=http_client)
        self.fallback = fallback
        self._now = now or utc_now

    def __repr__(self) -> str:
        return f"AnthropicEngine(models={self.config.models!r})"

    def close(self) -> None:
        """Close the HTTP connections."""
        self.caller.close()

    # ------------------------------------------------------------------------- extraction

    def _chunks(self, conversation: str) -> list[str]:
        return chunk_text(redact(conversation), self.config.chunk_tokens * CHARS_PER_TOKEN)

    def _extraction_params(self, chunk: str, part: int, parts: int) -> dict[str, Any]:
        return self.caller.request(
            model=self.config.models.extraction,
            system=system_prompt("extraction"),
            content=_extraction_content(chunk, part, parts),
            shape=EXTRACT_SHAPE,
            max_tokens=EXTRACTION_MAX_TOKENS,
        )

    def _extract_chunk(self, chunk: str, part: int, parts: int) -> ExtractionReply:
        try:
            return self.caller.call(
                model=self.config.models.extraction,
                system=system_prompt("extraction"),
                content=_extraction_content(chunk, part, parts),
                shape=EXTRACT_SHAPE,
                max_tokens=EXTRACTION_MAX_TOKENS,
                failure=ExtractionFailed,
                phase="extraction",
            )
        except InvalidReplyError as exc:
            raise ExtractionFailed(
                _invalid_twice("extraction", exc), context={"engine": self.name}
            ) from None

    def _extraction_result(
        self, replies: list[ExtractionReply], source: str, parts: int
    ) -> ExtractionResult:
        return extraction_result(replies, source, parts, self._now().date(), self.name)

    def extract(self, conversation: str, *, source: str) -> ExtractionResult:
        """Solution-wide knowledge in a conversation, per chunk, merged (see module doc)."""
        chunks = self._chunks(conversation)
        if not chunks or not "".join(chunks).strip():
            return ExtractionResult(
                no_content_to_extract=True, engine=self.name, notes=["empty conversation"]
            )
        replies = [
            self._extract_chunk(chunk, part, len(chunks)) for part, chunk in enumerate(chunks)
        ]
        return self._extraction_result(replies, source, len(chunks))

    def extract_many(
        self,
        conversations: Sequence[tuple[str, str]],
        *,
        poll_interval_s: float = 30.0,
        max_wait_s: float = 3_600.0,
    ) -> list[ExtractionResult | ExtractionFailed]:
        """Extract a backlog of `(conversation, source)` pairs; results in the same order.

        With `Config.use_batches` the chunks go to the Message Batches API in one batch (half
        price, slower); otherwise they are extracted one by one. A conversation that fails
        gets an `ExtractionFailed` in its place; a budget overrun stops the whole backlog.
        """
        if not self.config.use_batches:
            return extract_each(self, conversations)
        chunked = [self._chunks(text) for text, _source in conversations]
        requests = {
            f"t{index}-p{part}": self._extraction_params(chunk, part, len(chunks))
            for index, chunks in enumerate(chunked)
            for part, chunk in enumerate(chunks)
        }
        outcomes = (
            run_batch(self.caller, requests, poll_interval_s=poll_interval_s, max_wait_s=max_wait_s)
            if requests
            else {}
        )
        results: list[ExtractionResult | ExtractionFailed] = []
        for index, ((_text, source), chunks) in enumerate(zip(conversations, chunked, strict=True)):
            if not chunks:
                results.append(
                    ExtractionResult(
                        no_content_to_extract=True, engine=self.name, notes=["empty conversation"]
                    )
                )
                continue
            try:
                replies = [
                    self._batch_reply(outcomes[f"t{index}-p{part}"], chunk, part, len(chunks))
                    for part, chunk in enumerate(chunks)
                ]
            except ExtractionFailed as exc:
                results.append(exc)
                continue
            result = self._extraction_result(replies, source, len(chunks))
            result.notes.append("extracted through the Message Batches API")
            results.append(result)
        return results

    def _packs(self, texts: list[str]) -> list[list[int]]:
        """Which conversations share a call: in order, while their text fits one chunk.

        A conversation longer than half a chunk, or empty, goes alone (the normal path splits
        a long one into parts).
        """
        limit = self.config.chunk_tokens * CHARS_PER_TOKEN
        packs: list[list[int]] = []
        current: list[int] = []
        size = 0
        for index, text in enumerate(texts):
            if not text.strip() or len(text) > limit // 2:
                continue
            if current and (size + len(text) > limit or len(current) >= GROUP_MAX_CONVERSATIONS):
                packs.append(current)
                current, size = [], 0
            current.append(index)
            size += len(text)
        if current:
            packs.append(current)
        return [pack for pack in packs if len(pack) > 1]

    def _extract_pack(self, texts: list[str]) -> GroupExtractionReply:
        try:
            return self.caller.call(
                model=self.config.models.extraction,
                system=system_prompt("extraction"),
                content=[{"type": "text", "text": group_extraction_request(texts)}],
                shape=GROUP_EXTRACT_SHAPE,
                max_tokens=EXTRACTION_MAX_TOKENS,
                failure=ExtractionFailed,
                phase="extraction",
            )
        except InvalidReplyError as exc:
            raise ExtractionFailed(
                _invalid_twice("extraction", exc), context={"engine": self.name}
            ) from None

    def extract_group(
        self, conversations: Sequence[tuple[str, str]]
    ) -> list[ExtractionResult | ExtractionFailed]:
        """Several conversations of one branch, as few calls as fit; results in order.

        Short conversations share one extraction call (each fenced with its number, the reply
        keyed by it), so a backlog of small threads costs one system prompt and one reply
        instead of one per thread. A conversation the reply leaves out, or one too long to
        share a call, is extracted alone; a failed shared call fails each of its
        conversations (the caller sends those offline).
        """
        texts = [redact(text) for text, _source in conversations]
        results: list[ExtractionResult | ExtractionFailed | None] = [None] * len(texts)
        for pack in self._packs(texts):
            try:
                reply = self._extract_pack([texts[i] for i in pack])
            except ExtractionFailed as exc:
                for index in pack:
                    results[index] = exc
                continue
            found = reply.by_conversation()
            for number, index in enumerate(pack, start=1):
                entries = found.get(number)
                if not entries:
                    continue
                result = self._extraction_result(list(entries), conversations[index][1], 1)
                result.notes.append(
                    f"extracted with {len(pack) - 1} other conversation(s) of the branch in "
                    "one call"
                )
                results[index] = result
        finished: list[ExtractionResult | ExtractionFailed] = []
        for index, (text, source) in enumerate(conversations):
            outcome = results[index]
            if outcome is None:
                try:
                    outcome = self.extract(text, source=source)
                except ExtractionFailed as exc:
                    outcome = exc
            finished.append(outcome)
        return finished

    def _batch_reply(
        self, outcome: Message | str, chunk: str, part: int, parts: int
    ) -> ExtractionReply:
        if isinstance(outcome, str):
            raise ExtractionFailed(outcome, context={"engine": self.name})
        try:
            return self.caller.structured_reply(outcome, EXTRACT_SHAPE, failure=ExtractionFailed)
        except InvalidReplyError:
            # The one retry of an invalid reply goes through the normal Messages API.
            return self._extract_chunk(chunk, part, parts)

    # ------------------------------------------------------------- evolution / consolidation

    def _changes(
        self, *, model: str, request: str, failure: type[PuffinError], listed: int, phase: str
    ) -> ChangeList:
        """Ask for a change list (the system prompt is the cached, stable prefix)."""
        try:
            return self.caller.call(
                model=model,
                system=OPS_SYSTEM_PROMPT,
                content=[{"type": "text", "text": request}],
                shape=CHANGES_SHAPE,
                max_tokens=_changes_max_tokens(listed),
                failure=failure,
                phase=phase,
            )
        except InvalidReplyError as exc:
            raise failure(
                _invalid_twice("change list", exc), context={"engine": self.name}
            ) from None

    def evolve(
        self, current: BranchMemory | None, items: list[MemoryItem], *, branch_id: str
    ) -> EvolutionResult:
        """Integrate `items` through a change list from Claude (`ops.evolve_through`)."""

        def ask(request: str, listed: int) -> ChangeList:
            return self._changes(
                model=self.config.models.evolution,
                request=request,
                failure=ExtractionFailed,
                listed=listed,
                phase="evolution",
            )

        return evolve_through(
            self.name,
            ask,
            self.fallback,
            current,
            items,
            branch_id=branch_id,
            config=self.config,
            now=self._now(),
        )

    def consolidate(self, memory: BranchMemory) -> EvolutionResult:
        """Weekly consolidation through a change list (merges and the summary only)."""

        def ask(request: str, listed: int) -> ChangeList:
            return self._changes(
                model=self.config.models.consolidation,
                request=request,
                failure=MaintenanceFailed,
                listed=listed,
                phase="consolidation",
            )

        return consolidate_through(
            self.name, ask, self.fallback, memory, config=self.config, now=self._now()
        )

    # ------------------------------------------------------------------------- retrieval

    def _retrieval_call(self, task: str, shape: ReplyShape[ReplyT], content: str) -> ReplyT:
        try:
            return self.caller.call(
                model=self.config.models.retrieval,
                system=system_prompt(task),
                content=[{"type": "text", "text": content}],
                shape=shape,
                max_tokens=RETRIEVAL_MAX_TOKENS,
                failure=RetrievalFailed,
                phase="retrieval",
            )
        except InvalidReplyError as exc:
            raise RetrievalFailed(
                _invalid_twice("retrieval", exc), context={"engine": self.name}
            ) from None

    @staticmethod
    def _listing(candidates: list[Candidate]) -> str:
        rows = [
            dump_json(
                {
                    "id": c.item.id,
                    "branch": c.branch,
                    "category": c.item.category.value,
                    "title": c.item.title,
                    "content": c.item.text[:_CANDIDATE_CHARS],
                    "confidence": c.item.confidence,
                }
            )
            for c in candidates
        ]
        return "\n".join(rows)

    def _rank(self, query: str, search_query: str, candidates: list[Candidate]) -> RankReply:
        text = "\n\n".join(
            [
                fence("query", query),
                fence("search_query", search_query),
                fence("memories", self._listing(candidates)),
                "Rank the relevant memories and judge whether they suffice.",
            ]
        )
        return self._retrieval_call("retrieval_rank", RANK_SHAPE, text)

    def deep_retrieve(self, query: str, candidates: list[Candidate]) -> DeepAnswer:
        """Seed 001 section 3.3 tiers over `candidates` in at most four calls.

        1. query synthesis and branch selection (one call, skipped for a single branch);
        2. sufficiency check and ranking of the selected branches' items (one call);
        3. deep search: the other branches' items, only when step 2 found them insufficient;
        4. cross-branch contradictions, only when the ranked items span two or more branches.
        Ids Claude invents are ignored; relevance is clamped to 0..1 by validation.
        """
        if not candidates:
            return DeepAnswer(path=self.name)
        query = redact(query)
        branches = list(dict.fromkeys(c.branch for c in candidates))
        search_query, selected = query, branches
        if len(branches) > 1:
            listing = []
            for branch in branches:
                mine = [c for c in candidates if c.branch == branch]
                project = next((c.project for c in mine if c.project), "")
                titles = "; ".join(c.item.title for c in mine[:_TITLES_PER_BRANCH])
                listing.append(
                    f"- {branch}" + (f" (project {project})" if project else "") + f": {titles}"
                )
            plan = self._retrieval_call(
                "retrieval_select",
                PLAN_SHAPE,
                "\n\n".join(
                    [
                        fence("query", query),
                        fence("branches", "\n".join(listing)),
                        "Synthesise the search query and select the branches to search.",
                    ]
                ),
            )
            search_query = plan.search_query
            chosen = [b for b in dict.fromkeys(plan.branches) if b in branches]
            selected = chosen or branches
        first = [c for c in candidates if c.branch in selected]
        ranking = self._rank(query, search_query, first)
        scores: dict[str, float] = {}
        offered = {c.item.id for c in first}

        def take(reply: RankReply, allowed: set[str]) -> None:
            for entry in reply.ranked:
                if entry.id in allowed:
                    scores[entry.id] = max(scores.get(entry.id, 0.0), entry.relevance)

        take(ranking, offered)
        rest = [c for c in candidates if c.branch not in selected]
        if not ranking.sufficient and rest:
            take(self._rank(query, search_query, rest), {c.item.id for c in rest})
        ranked = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
        conflicts = self._conflicts([c for c in candidates if c.item.id in scores], dict(ranked))
        return DeepAnswer(ranked=ranked, conflicts=conflicts, path=self.name)

    def _conflicts(self, chosen: list[Candidate], scores: dict[str, float]) -> list[CrossConflict]:
        chosen = sorted(chosen, key=lambda c: -scores.get(c.item.id, 0.0))[:_CONFLICT_ITEMS]
        if len({c.branch for c in chosen}) < 2:
            return []
        reply = self._retrieval_call(
            "retrieval_conflicts",
            CONFLICTS_SHAPE,
            fence("memories", self._listing(chosen))
            + "\n\nReport the contradictions between branches.",
        )
        branch_of: dict[str, set[str]] = {}
        for c in chosen:
            branch_of.setdefault(c.item.id, set()).add(c.branch)
        found: list[CrossConflict] = []
        for conflict in reply.conflicts:
            ids = [i for i in dict.fromkeys(conflict.item_ids) if i in branch_of]
            involved = sorted({b for i in ids for b in branch_of[i]})
            if len(ids) < 2 or len(involved) < 2:
                continue  # not cross-branch, or made-up ids
            found.append(
                CrossConflict(
                    category=conflict.category,
                    description=conflict.description,
                    item_ids=ids,
                    branches=involved,
                )
            )
        return found
