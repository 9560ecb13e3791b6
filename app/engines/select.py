"""Choosing the thinking engine: `auto`, `offline` or `anthropic`, and what status shows.

`build_engine` is what the composition root (CLI, desktop host) calls. `auto` uses Claude
when an API key is found (environment, then system keyring) and the offline engine otherwise;
`anthropic` insists on Claude and says how to add a key when there is none. The Claude engine
comes wrapped (`ClaudeWithFallback`) so that no Claude failure costs a thread: a used-up daily
token budget, and any API failure (4xx, 5xx, timeout, connection, refusal, truncated or invalid
reply), hands that one call to the offline engine, and the answer says so (`engine`/`path`
`offline-budget` or `offline-fallback`, with the reason in its notes). A circuit breaker stops
calling Claude after `Config.breaker_failures` consecutive failures: the rest of the run goes
offline at once, with the reason in every answer and in `status_note`, and Claude is tried
again after a cool-down. `describe_engine` gives the engine part of `status` without building
anything or touching the network.
"""

from __future__ import annotations

import logging
import sys
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from app.core.config import Config
from app.core.engine import Candidate, DeepAnswer, Engine, extract_each
from app.core.errors import BudgetExceeded, ExtractionFailed, InvalidInput, PuffinError
from app.core.keys import find_key
from app.core.models import BranchMemory, EvolutionResult, ExtractionResult, MemoryItem
from app.core.usage import BUDGET_NOTE, UsageLedger
from app.engines.offline import OfflineEngine

if TYPE_CHECKING:
    from app.engines.claude.engine import AnthropicEngine
    from app.engines.local.engine import LocalEngine

log = logging.getLogger(__name__)

ENGINE_CHOICES: tuple[str, ...] = ("auto", "offline", "anthropic", "local")
BUDGET_PATH = "offline-budget"
FALLBACK_PATH = "offline-fallback"
USAGE_FILE = "usage.json"
# After the breaker trips, Claude is left alone this long; then one call tries it again (and
# one more failure trips it again at once). Five minutes spans one scan of a backlog without
# keeping the app offline for the rest of the day.
BREAKER_COOLDOWN_S = 300.0
# Threads whose extraction fell back: their merge goes offline too, without another call.
_FAILED_SOURCES_KEPT = 200

ResultT = TypeVar("ResultT")


class ClaudeWithFallback:
    """The Claude engine, with the offline engine taking any call Claude cannot answer.

    See the module docstring. `clock` (monotonic seconds) is injectable for tests.
    """

    name = "anthropic"

    def __init__(
        self,
        claude: AnthropicEngine | LocalEngine,
        offline: Engine,
        *,
        breaker_failures: int = 3,
        cooldown_s: float = BREAKER_COOLDOWN_S,
        clock: Callable[[], float] = time.monotonic,
        label: str = "Claude",
    ) -> None:
        """Wrap `claude` (or the local engine, named `label` in messages); `offline` answers
        what it cannot."""
        self.claude = claude
        self.name = claude.name
        self.label = label
        self.offline = offline
        self.breaker_failures = breaker_failures
        self.cooldown_s = cooldown_s
        self._clock = clock
        # Shown by status and the tray while the offline engine stands in; None otherwise.
        self.status_note: str | None = None
        self.consecutive_failures = 0
        self._open_until: float | None = None
        self._breaker_reason = ""
        self._failed_sources: OrderedDict[str, str] = OrderedDict()

    @property
    def breaker_open(self) -> bool:
        """True while the breaker keeps calls away from Claude."""
        return self._open_until is not None and self._clock() < self._open_until

    def _failed(self, message: str) -> None:
        self.consecutive_failures += 1
        # Until Claude answers again, status and the tray say why the offline engine works.
        self.status_note = (
            f"{self.label}'s last call failed ({message}); the offline engine stood in"
        )
        if self.breaker_failures and self.consecutive_failures >= self.breaker_failures:
            self._open_until = self._clock() + self.cooldown_s
            self._breaker_reason = (
                f"{self.label} failed {self.consecutive_failures} times in a row (last: "
                f"{message}); "
                f"it is not called for the next {self.cooldown_s / 60:g} minutes and the "
                "offline engine stands in"
            )
            self.status_note = self._breaker_reason
            log.warning("circuit breaker open: %s", self._breaker_reason)

    def _succeeded(self) -> None:
        self.consecutive_failures = 0
        self._open_until = None
        self.status_note = None

    def _run(
        self,
        claude_call: Callable[[], ResultT],
        offline_call: Callable[[], ResultT],
        *,
        skip_reason: str | None = None,
        settles: bool = True,
    ) -> tuple[ResultT, str | None, str | None]:
        """Claude's answer, or the offline one: `(result, why, path)`; `why` is None for Claude.

        `skip_reason` sends the call offline without trying Claude (its thread already failed).
        `settles=False`: an answer does not close the breaker by itself (a backlog whose
        conversations can each fail says itself what succeeded).
        """
        if self.breaker_open:
            return (
                offline_call(),
                f"{self.label} was not called: {self._breaker_reason}.",
                FALLBACK_PATH,
            )
        if skip_reason is not None:
            return offline_call(), skip_reason, FALLBACK_PATH
        try:
            result = claude_call()
        except BudgetExceeded as exc:
            self.status_note = BUDGET_NOTE
            return offline_call(), exc.message, BUDGET_PATH
        except InvalidInput:
            raise
        except PuffinError as exc:
            message = exc.message
        except Exception as exc:  # a defect or an SDK surprise must not cost the thread
            log.exception("%s call crashed", self.label)
            message = f"the call to {self.label} crashed ({type(exc).__name__})"
        else:
            if settles:
                self._succeeded()
            return result, None, None
        self._failed(message.rstrip("."))
        why = f"{message.rstrip('.')}; the offline engine was used instead."
        return offline_call(), why, FALLBACK_PATH

    def _remember_failed(self, source: str, why: str) -> None:
        self._failed_sources[source] = why
        self._failed_sources.move_to_end(source)
        while len(self._failed_sources) > _FAILED_SOURCES_KEPT:
            self._failed_sources.popitem(last=False)

    def _skip_reason(self, items: Iterable[MemoryItem]) -> str | None:
        sources = {s for item in items for s in item.sources}
        if not sources or not sources <= set(self._failed_sources):
            return None
        return (
            f"{self.label}'s extraction of this thread failed, so its merge was done offline too "
            "(no second call)."
        )

    def extract(self, conversation: str, *, source: str) -> ExtractionResult:
        """Claude's extraction, or the offline one when Claude cannot answer."""
        result, why, path = self._run(
            lambda: self.claude.extract(conversation, source=source),
            lambda: self.offline.extract(conversation, source=source),
        )
        if why is None or path is None:
            self._failed_sources.pop(source, None)
            return result
        if path == FALLBACK_PATH:
            self._remember_failed(source, why)
        return result.model_copy(update={"engine": path, "notes": [*result.notes, why]})

    def extract_many(
        self, conversations: Sequence[tuple[str, str]], **options: float
    ) -> list[ExtractionResult | ExtractionFailed]:
        """A backlog through Claude (batched when enabled); what fails goes offline."""
        return self._backlog(
            lambda: self.claude.extract_many(conversations, **options), conversations
        )

    def extract_group(
        self, conversations: Sequence[tuple[str, str]]
    ) -> list[ExtractionResult | ExtractionFailed]:
        """Several threads of one branch in as few calls as fit (engines that can group;
        the others extract them one by one); what fails goes offline."""
        group = getattr(self.claude, "extract_group", None)
        if callable(group):
            return self._backlog(lambda: group(conversations), conversations)
        return self._backlog(lambda: extract_each(self.claude, conversations), conversations)

    def _backlog(
        self,
        call: Callable[[], list[ExtractionResult | ExtractionFailed]],
        conversations: Sequence[tuple[str, str]],
    ) -> list[ExtractionResult | ExtractionFailed]:
        def offline_all() -> list[ExtractionResult | ExtractionFailed]:
            return [self.offline.extract(text, source=source) for text, source in conversations]

        results, why, path = self._run(call, offline_all, settles=False)
        if why is not None and path is not None:
            return [
                r.model_copy(update={"engine": path, "notes": [*r.notes, why]})
                if isinstance(r, ExtractionResult)
                else r
                for r in results
            ]
        finished: list[ExtractionResult | ExtractionFailed] = []
        counted: set[int] = set()
        if any(isinstance(outcome, ExtractionResult) for outcome in results):
            self._succeeded()
        for (text, source), outcome in zip(conversations, results, strict=True):
            if isinstance(outcome, ExtractionResult):
                self._failed_sources.pop(source, None)
                finished.append(outcome)
                continue
            # One conversation of the backlog failed: that one goes offline. A shared call
            # that failed counts once toward the breaker, not once per conversation in it.
            if id(outcome) not in counted:
                counted.add(id(outcome))
                self._failed(outcome.message.rstrip("."))
            note = f"{outcome.message.rstrip('.')}; the offline engine was used instead."
            self._remember_failed(source, note)
            fallback = self.offline.extract(text, source=source)
            finished.append(
                fallback.model_copy(
                    update={"engine": FALLBACK_PATH, "notes": [*fallback.notes, note]}
                )
            )
        return finished

    def evolve(
        self, current: BranchMemory | None, items: list[MemoryItem], *, branch_id: str
    ) -> EvolutionResult:
        """Claude's guarded rewrite, or the offline merge when Claude cannot answer."""
        result, why, path = self._run(
            lambda: self.claude.evolve(current, items, branch_id=branch_id),
            lambda: self.offline.evolve(current, items, branch_id=branch_id),
            skip_reason=self._skip_reason(items),
        )
        return result if why is None or path is None else _marked(result, why, path)

    def consolidate(self, memory: BranchMemory) -> EvolutionResult:
        """Claude's guarded consolidation, or the offline one when Claude cannot answer."""
        result, why, path = self._run(
            lambda: self.claude.consolidate(memory),
            lambda: self.offline.consolidate(memory),
        )
        return result if why is None or path is None else _marked(result, why, path)

    def deep_retrieve(self, query: str, candidates: list[Candidate]) -> DeepAnswer:
        """Claude's retrieval tiers, or the offline re-ranking when Claude cannot answer."""
        result, why, path = self._run(
            lambda: self.claude.deep_retrieve(query, candidates),
            lambda: self.offline.deep_retrieve(query, candidates),
        )
        return result if why is None or path is None else result.model_copy(update={"path": path})

    def close(self) -> None:
        """Close Claude's HTTP connections."""
        self.claude.close()


def _marked(result: EvolutionResult, why: str, path: str) -> EvolutionResult:
    return result.model_copy(update={"path": path, "notes": [*result.notes, why]})


def build_engine(
    config: Config,
    home: Path,
    *,
    override: str | None = None,
    http_client: object | None = None,
) -> Engine:
    """The engine for `config.engine` (or `override`), see the module docstring.

    `http_client` (an `httpx2.Client`) replaces the SDK's own, for tests and proxies.
    """
    choice = (override or config.engine).strip().lower()
    if choice not in ENGINE_CHOICES:
        raise InvalidInput(f"Unknown engine {choice!r}: choose one of {', '.join(ENGINE_CHOICES)}.")
    offline = OfflineEngine(config)
    if choice == "offline":
        return offline
    if choice == "local":
        import httpx2

        from app.engines.local.engine import LocalEngine

        if http_client is not None and not isinstance(http_client, httpx2.Client):
            raise InvalidInput("http_client must be an httpx2.Client")
        local = LocalEngine(config, fallback=offline, http_client=http_client)
        return ClaudeWithFallback(
            local, offline, breaker_failures=config.breaker_failures, label="The local model"
        )
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

    if http_client is not None and not isinstance(http_client, httpx2.Client):
        raise InvalidInput("http_client must be an httpx2.Client")
    claude = AnthropicEngine(
        config,
        api_key=key,
        usage=UsageLedger(home / USAGE_FILE),
        fallback=offline,
        http_client=http_client,
    )
    return ClaudeWithFallback(claude, offline, breaker_failures=config.breaker_failures)


def describe_engine(
    config: Config, home: Path, *, check_models: bool | None = None
) -> dict[str, Any]:
    """The engine part of `status`: which engine runs, the key's origin, models, usage.

    `check_models` looks the models up in the SDK's deprecation table; by default only when
    the SDK is already loaded, since importing it just for status would take seconds.
    """
    if config.engine == "local":
        return {
            "engine": "local",
            "configured": "local",
            "ready": bool(config.local_model.strip()),
            "localBaseUrl": config.local_base_url,
            "localModel": config.local_model,
            "useBatches": False,
            "note": None
            if config.local_model.strip()
            else "The local engine has no model name: set one in Settings.",
        }
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
