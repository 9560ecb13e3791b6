"""Choosing the thinking engine: `auto`, `offline` or `anthropic`, and what status shows.

`build_engine` is what the composition root (CLI, desktop host) calls. `auto` uses Claude
when an API key is found (environment, then system keyring) and the offline engine otherwise;
`anthropic` insists on Claude and says how to add a key when there is none. The Claude engine
comes wrapped so that a used-up daily token budget hands that one call to the offline engine
and leaves a `status_note` for the tray and `status`; API failures are *not* hidden this way
(the caller reports EXTRACTION_FAILED and retries the thread later). `describe_engine` gives
the engine part of `status` without building anything or touching the network.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from app.core.config import Config
from app.core.engine import Candidate, DeepAnswer, Engine
from app.core.errors import BudgetExceeded, ExtractionFailed, InvalidInput
from app.core.keys import find_key
from app.core.models import BranchMemory, EvolutionResult, ExtractionResult, MemoryItem
from app.core.usage import BUDGET_NOTE, UsageLedger
from app.engines.offline import OfflineEngine

if TYPE_CHECKING:
    from app.engines.claude.engine import AnthropicEngine

ENGINE_CHOICES: tuple[str, ...] = ("auto", "offline", "anthropic")
BUDGET_PATH = "offline-budget"
USAGE_FILE = "usage.json"

ResultT = TypeVar("ResultT")


class ClaudeWithBudgetFallback:
    """The Claude engine, with the offline engine taking calls once the budget is used up."""

    name = "anthropic"

    def __init__(self, claude: AnthropicEngine, offline: Engine) -> None:
        """Wrap `claude`; `offline` answers while the daily budget is exhausted."""
        self.claude = claude
        self.offline = offline
        # Shown by status and the tray while the offline engine stands in; None otherwise.
        self.status_note: str | None = None

    async def _run(
        self,
        claude_call: Callable[[], Awaitable[ResultT]],
        offline_call: Callable[[], Awaitable[ResultT]],
    ) -> tuple[ResultT, str | None]:
        try:
            result = await claude_call()
        except BudgetExceeded as exc:
            self.status_note = BUDGET_NOTE
            return await offline_call(), exc.message
        self.status_note = None
        return result, None

    async def extract(self, conversation: str, *, source: str) -> ExtractionResult:
        """Claude's extraction, or the offline one when the budget is used up."""
        result, why = await self._run(
            lambda: self.claude.extract(conversation, source=source),
            lambda: self.offline.extract(conversation, source=source),
        )
        if why is None:
            return result
        return result.model_copy(update={"engine": BUDGET_PATH, "notes": [*result.notes, why]})

    async def extract_many(
        self, conversations: Sequence[tuple[str, str]], **options: float
    ) -> list[ExtractionResult | ExtractionFailed]:
        """A backlog through Claude (batched when enabled), offline once over budget."""
        async def offline_all() -> list[ExtractionResult | ExtractionFailed]:
            return [await self.extract(text, source=source) for text, source in conversations]

        results, _why = await self._run(
            lambda: self.claude.extract_many(conversations, **options), offline_all
        )
        return results

    async def evolve(
        self, current: BranchMemory | None, items: list[MemoryItem], *, branch_id: str
    ) -> EvolutionResult:
        """Claude's guarded rewrite, or the offline merge when the budget is used up."""
        result, why = await self._run(
            lambda: self.claude.evolve(current, items, branch_id=branch_id),
            lambda: self.offline.evolve(current, items, branch_id=branch_id),
        )
        return result if why is None else _budget_result(result, why)

    async def consolidate(self, memory: BranchMemory) -> EvolutionResult:
        """Claude's guarded consolidation, or the offline one when the budget is used up."""
        result, why = await self._run(
            lambda: self.claude.consolidate(memory),
            lambda: self.offline.consolidate(memory),
        )
        return result if why is None else _budget_result(result, why)

    async def deep_retrieve(self, query: str, candidates: list[Candidate]) -> DeepAnswer:
        """Claude's retrieval tiers, or the offline re-ranking when the budget is used up."""
        result, why = await self._run(
            lambda: self.claude.deep_retrieve(query, candidates),
            lambda: self.offline.deep_retrieve(query, candidates),
        )
        return result if why is None else result.model_copy(update={"path": BUDGET_PATH})

    async def aclose(self) -> None:
        """Close Claude's HTTP connections."""
        await self.claude.aclose()


def _budget_result(result: EvolutionResult, why: str) -> EvolutionResult:
    return result.model_copy(update={"path": BUDGET_PATH, "notes": [*result.notes, why]})


def build_engine(
    config: Config,
    home: Path,
    *,
    override: str | None = None,
    http_client: object | None = None,
) -> Engine:
    """The engine for `config.engine` (or `override`), see the module docstring.

    `http_client` (an `httpx2.AsyncClient`) replaces the SDK's own, for tests and proxies.
    """
    choice = (override or config.engine).strip().lower()
    if choice not in ENGINE_CHOICES:
        raise InvalidInput(
            f"Unknown engine {choice!r}: choose one of {', '.join(ENGINE_CHOICES)}."
        )
    offline = OfflineEngine(config)
    if choice == "offline":
        return offline
    key, origin = find_key()
    if key is None:
        if choice == "anthropic":
            raise InvalidInput(
                f"The anthropic engine needs an API key ({origin}). Store one with "
                "`puffin-memory auth set`, or use `--engine offline`."
            )
        return offline
    # The SDK takes seconds to import: only commands that really call Claude pay for it.
    import httpx2

    from app.engines.claude.engine import AnthropicEngine

    if http_client is not None and not isinstance(http_client, httpx2.AsyncClient):
        raise InvalidInput("http_client must be an httpx2.AsyncClient")
    claude = AnthropicEngine(
        config,
        api_key=key,
        usage=UsageLedger(home / USAGE_FILE),
        fallback=offline,
        http_client=http_client,
    )
    return ClaudeWithBudgetFallback(claude, offline)


def describe_engine(
    config: Config, home: Path, *, check_models: bool | None = None
) -> dict[str, Any]:
    """The engine part of `status`: which engine runs, the key's origin, models, usage.

    `check_models` looks the models up in the SDK's deprecation table; by default only when
    the SDK is already loaded, since importing it just for status would take seconds.
    """
    key, origin = find_key()
    wants_claude = config.engine == "anthropic" or (config.engine == "auto" and key is not None)
    today = UsageLedger(home / USAGE_FILE).today()
    budget = config.daily_token_budget
    used = int(today["total_tokens"])
    over = bool(budget) and used >= budget
    info: dict[str, Any] = {
        "engine": "anthropic" if wants_claude else "offline",
        "configured": config.engine,
        "ready": key is not None or not wants_claude,
        "keyConfigured": key is not None,
        "keyOrigin": origin,
        "models": config.models.model_dump(),
        "dailyTokenBudget": budget,
        "tokensToday": used,
        "estimatedCostTodayUsd": today["cost_usd"],
        "budgetReached": over,
        "useBatches": config.use_batches,
        "note": None,
    }
    if wants_claude and key is None:
        info["note"] = f"The anthropic engine has no API key ({origin})."
    elif wants_claude and over:
        info["note"] = BUDGET_NOTE
    elif config.engine == "auto" and key is None:
        info["note"] = f"Using the offline engine ({origin})."
    if check_models is None:
        check_models = "anthropic" in sys.modules
    if check_models:
        from app.engines.claude.caller import deprecated_models

        old = deprecated_models(config)
        if old:
            info["deprecatedModels"] = old
    return info
