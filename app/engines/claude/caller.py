"""One reliable Claude call: budget check, structured output, timeouts, retries, usage, errors.

`ClaudeCaller` owns the `anthropic.Anthropic` client; its calls block the calling thread.
Each call checks the daily token budget first (raising `BudgetExceeded` without touching the
network), sends the request with the fixed instructions marked for prompt caching, lets the
SDK retry rate limits, overloads and connection failures (`max_retries` and the per-request
`timeout`, from `Config` or the `PUFFIN_MEMORY_LLM_RETRIES` / `PUFFIN_MEMORY_LLM_TIMEOUT_S`
environment variables, which win), streams requests that may write long answers, records the
reply's tokens in the usage ledger, and validates the reply's JSON with its pydantic model,
asking once more when it does not match. There is no outer deadline: the SDK's `timeout`
bounds each wait on the network (for a stream, each pause between events) and `max_retries`
bounds how often it starts again. Requests use only shapes current models accept: structured
outputs (`output_config.format`), no forced `tool_choice`, no sampling parameters, no
assistant prefill, no thinking settings (Claude Sonnet 5.5 answers each of those with a 400).
A refusal or a reply cut off at `max_tokens` is a failure, not retried. Every failure leaves
as the operation's `PuffinError` with a sentence a person can act on; the API key is never
part of a message.
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import anthropic
import httpx2
from anthropic.types import Message, TextBlock
from pydantic import ValidationError

from app.core.config import Config
from app.core.errors import BudgetExceeded, PuffinError
from app.core.usage import BUDGET_NOTE, UsageLedger
from app.engines.claude.replies import ReplyShape, ReplyT

log = logging.getLogger(__name__)

EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
# Requests that may write more than this many tokens are streamed (long extractions).
STREAM_ABOVE_TOKENS = 8_192
TIMEOUT_ENV = "PUFFIN_MEMORY_LLM_TIMEOUT_S"
RETRIES_ENV = "PUFFIN_MEMORY_LLM_RETRIES"
# The same bounds `Config` puts on request_timeout_s and max_retries.
_TIMEOUT_RANGE = (0.0, 900.0)
_RETRIES_RANGE = (0, 10)


class InvalidReplyError(Exception):
    """Claude answered, but not with JSON valid for the requested shape (after the retries)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class CallLimits:
    """How long one request may take and how often the SDK retries it; where they came from."""

    timeout_s: float
    max_retries: int
    # Problems with the environment variables (ignored values), for status and the log.
    warnings: tuple[str, ...] = ()


def call_limits(config: Config, environ: Mapping[str, str] | None = None) -> CallLimits:
    """The request timeout and retry budget: `Config`, overridden by the environment.

    An environment value that is not a number in range is ignored with a warning, so a typo
    in a shell profile cannot stop memorizing.
    """
    env = os.environ if environ is None else environ
    timeout_s, retries = config.request_timeout_s, config.max_retries
    warnings: list[str] = []
    raw = env.get(TIMEOUT_ENV, "").strip()
    if raw:
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if _TIMEOUT_RANGE[0] < value <= _TIMEOUT_RANGE[1]:
            timeout_s = value
        else:
            warnings.append(f"{TIMEOUT_ENV}={raw!r} ignored: use seconds between 0 and 900")
    raw = env.get(RETRIES_ENV, "").strip()
    if raw:
        try:
            count = int(raw)
        except ValueError:
            count = -1
        if _RETRIES_RANGE[0] <= count <= _RETRIES_RANGE[1]:
            retries = count
        else:
            warnings.append(f"{RETRIES_ENV}={raw!r} ignored: use a whole number from 0 to 10")
    for warning in warnings:
        log.warning("%s", warning)
    return CallLimits(timeout_s=timeout_s, max_retries=retries, warnings=tuple(warnings))


def describe_api_error(
    exc: BaseException, *, model: str, timeout_s: float, retries: int
) -> tuple[str, dict[str, Any]]:
    """A sentence a person understands for an API failure, and context for the error reply."""
    retried = (
        f" and {retries} retr{'y' if retries == 1 else 'ies'} did not get through"
        if retries
        else ""
    )
    status = getattr(exc, "status_code", None)
    api_message = getattr(exc, "api_message", None) or ""
    context: dict[str, Any] = {"engine": "anthropic", "model": model}
    if isinstance(status, int):
        context["status"] = status
    if isinstance(exc, anthropic.AuthenticationError):
        return (
            "Claude rejected the API key (401). Check it with `puffin-memory auth status`.",
            context,
        )
    if isinstance(exc, anthropic.PermissionDeniedError):
        return (
            f"Claude refused this API key permission to use {model} (403). Check the key's "
            "workspace and model access in the Anthropic console.",
            context,
        )
    if isinstance(exc, anthropic.RateLimitError):
        return f"Claude's rate limit was reached (429){retried}.", context
    if isinstance(exc, anthropic.OverloadedError):
        return f"Claude is overloaded (529){retried}.", context
    if isinstance(exc, anthropic.NotFoundError):
        return (
            f"Claude does not know the model {model!r} (404). Check the model names in settings.",
            context,
        )
    if isinstance(exc, anthropic.BadRequestError):
        detail = f": {api_message}" if api_message else ""
        return f"Claude rejected the request as invalid (400){detail}.", context
    if isinstance(exc, anthropic.ContentTooLargeError):
        return "The request was too large for Claude (413); the text is too long.", context
    if isinstance(exc, anthropic.InternalServerError):
        return f"Claude's API had a server error ({status}){retried}.", context
    if isinstance(exc, anthropic.APIStatusError):
        detail = f": {api_message}" if api_message else ""
        return f"Claude's API answered with status {status}{detail}.", context
    if isinstance(exc, anthropic.APITimeoutError | TimeoutError):
        context["timeout_s"] = timeout_s
        return (
            f"Claude did not answer within {timeout_s:g} s (timeout). The limit is the "
            f"request_timeout_s setting (or {TIMEOUT_ENV}).",
            context,
        )
    if isinstance(exc, anthropic.APIConnectionError):
        return (
            "Could not connect to Claude's API. Check the network connection or proxy "
            "(ANTHROPIC_BASE_URL if set).",
            context,
        )
    if isinstance(exc, json.JSONDecodeError):
        return "Claude's API sent a reply that is not valid JSON; nothing was changed.", context
    return f"The call to Claude failed ({type(exc).__name__}).", context


# Models Anthropic has announced for retirement, with the date (from the model deprecations
# page, as shipped in anthropic 2.13's own table; checked 2026-11-24). Our own copy: the SDK
# keeps its table in a private module that moved between releases.
DEPRECATED_MODELS: dict[str, str] = {
    "claude-mythos-preview": "June 30th, 2026",
    "claude-opus-4-5": "January 22nd, 2027",
    "claude-opus-4-5-20251101": "January 22nd, 2027",
    "claude-sonnet-4-5": "November 30th, 2026",
    "claude-sonnet-4-5-20250929": "November 30th, 2026",
}


def deprecated_models(config: Config) -> dict[str, str]:
    """Configured models Anthropic has announced for retirement, with their end-of-life dates."""
    return {
        name: DEPRECATED_MODELS[name]
        for name in dict.fromkeys(config.models.model_dump().values())
        if name in DEPRECATED_MODELS
    }


def _validation_problems(exc: ValidationError) -> list[str]:
    problems = []
    for error in exc.errors()[:6]:
        where = ".".join(str(p) for p in error["loc"]) or "input"
        problems.append(f"{where}: {error['msg']}")
    return problems


class ClaudeCaller:
    """Makes structured-output Claude calls for one engine (see the module docstring)."""

    def __init__(
        self,
        config: Config,
        *,
        api_key: str,
        usage: UsageLedger,
        http_client: httpx2.Client | None = None,
    ) -> None:
        """Calls with `api_key`, recording usage in `usage`; `http_client` for tests/proxies."""
        self.config = config
        self.usage = usage
        self._api_key = api_key
        self._http_client = http_client
        self._client: anthropic.Anthropic | None = None
        self.limits = call_limits(config)

    def __repr__(self) -> str:
        return f"ClaudeCaller(models={self.config.models!r})"

    @property
    def client(self) -> anthropic.Anthropic:
        """The SDK client, created on first use."""
        if self._client is None:
            self._client = anthropic.Anthropic(
                api_key=self._api_key,
                max_retries=self.limits.max_retries,
                timeout=self.limits.timeout_s,
                http_client=self._http_client,
            )
        return self._client

    def close(self) -> None:
        """Close the HTTP connections."""
        if self._client is not None:
            self._client.close()
            self._client = None

    def check_budget(self, estimate: int = 0) -> None:
        """Raise BudgetExceeded when today's tokens reached the daily budget (0: no limit), or
        when a request of about `estimate` input tokens would take them past it."""
        budget = self.config.daily_token_budget
        if budget <= 0:
            return
        used = self.usage.tokens_today()
        if used >= budget or (estimate and used + estimate > budget):
            needs = f"; the next request needs about {estimate:,}" if used < budget else ""
            raise BudgetExceeded(
                f"{BUDGET_NOTE} ({used:,} of {budget:,} tokens used today{needs}).",
                context={
                    "tokensToday": used,
                    "dailyTokenBudget": budget,
                    "requestEstimate": estimate,
                },
            )

    def remaining_budget(self) -> int | None:
        """Tokens left today under the daily budget (None: no budget)."""
        budget = self.config.daily_token_budget
        if budget <= 0:
            return None
        used = self.usage.tokens_today()
        return max(0, budget - used)

    def request(
        self,
        *,
        model: str,
        system: str,
        content: list[dict[str, Any]],
        shape: ReplyShape[Any],
        max_tokens: int,
    ) -> dict[str, Any]:
        """The Messages API parameters of a structured-output call (also used for batches).

        Only what every current model accepts: no `tool_choice`, no `temperature`/`top_p`/
        `top_k`, no assistant prefill (the last turn is the user's), no `thinking` field.
        """
        return {
            "model": model,
            "max_tokens": max_tokens,
            # The fixed instructions are cached: they open every request of a task.
            "system": [{"type": "text", "text": system, "cache_control": EPHEMERAL}],
            "messages": [{"role": "user", "content": content}],
            "output_config": {"format": shape.output_format()},
        }

    def send(
        self, params: dict[str, Any], *, failure: type[PuffinError], phase: str = ""
    ) -> Message:
        """Send one request (budget-checked, SDK timeout and retries), record usage."""
        self.check_budget(estimate_request_tokens(params))
        model = str(params["model"])
        try:
            reply: object = (
                self._streamed(params)
                if int(params["max_tokens"]) > STREAM_ABOVE_TOKENS
                else self.client.messages.create(**params)
            )
        except (anthropic.AnthropicError, TimeoutError, ValueError) as exc:
            message, context = describe_api_error(
                exc,
                model=model,
                timeout_s=self.limits.timeout_s,
                retries=self.limits.max_retries,
            )
            log.warning("Claude call failed: %s", message)
            raise failure(message, context=context) from exc
        if not isinstance(reply, Message) or not isinstance(reply.content, list):
            raise failure(
                "Claude's API sent something that is not a Messages API reply; nothing was "
                "changed. Check ANTHROPIC_BASE_URL if it is set.",
                context={"engine": "anthropic", "model": model},
            )
        self.record_usage(model, reply, phase=phase)
        return reply

    def _streamed(self, params: dict[str, Any]) -> Message | None:
        """A long request as a stream: the read timeout then bounds each pause between events
        instead of the whole answer, and the SDK's 10-minute limit on plain calls is moot.

        None when the answer was not an event stream at all (a proxy's HTML page, say)."""
        with self.client.messages.stream(**params) as stream:
            try:
                return stream.get_final_message()
            except AssertionError:  # the SDK's own check: the stream held no message
                return None

    def record_usage(
        self, model: str, reply: Message, *, batch: bool = False, phase: str = ""
    ) -> None:
        """Add a reply's tokens to the ledger (a ledger failure is logged, never fatal)."""
        usage = reply.usage
        if usage is None:
            return
        try:
            self.usage.record(
                model,
                input_tokens=usage.input_tokens or 0,
                output_tokens=usage.output_tokens or 0,
                cache_read_input_tokens=usage.cache_read_input_tokens or 0,
                cache_creation_input_tokens=usage.cache_creation_input_tokens or 0,
                batch=batch,
                phase=phase,
            )
        except PuffinError as exc:
            log.warning("usage not recorded: %s", exc.message)

    @staticmethod
    def structured_reply(
        reply: Message, shape: ReplyShape[ReplyT], *, failure: type[PuffinError]
    ) -> ReplyT:
        """The validated JSON of `reply` for `shape`.

        A refusal, or a reply cut off at `max_tokens` (its JSON is incomplete, and asking
        again with the same limit cuts it off again), raises `failure`; JSON that does not
        parse or match the shape raises InvalidReplyError, which the caller may retry.
        """
        context = {"engine": "anthropic", "model": reply.model}
        if reply.stop_reason == "refusal":
            raise failure(
                f"Claude declined to give the {shape.name} reply (stop reason: refusal); "
                "nothing was changed.",
                context={**context, "stopReason": "refusal"},
            )
        if reply.stop_reason == "max_tokens":
            raise failure(
                f"Claude's {shape.name} reply was cut off at the output limit (max_tokens); "
                "nothing was changed.",
                context={**context, "stopReason": "max_tokens"},
            )
        # Thinking blocks may come first: the answer is the text, read by block type.
        texts = [b.text for b in reply.content if isinstance(b, TextBlock)]
        raw = "".join(texts).strip()
        if not raw:
            raise InvalidReplyError([f"the reply held no JSON text for `{shape.name}`"])
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InvalidReplyError(
                [f"the reply is not valid JSON ({exc.msg} at character {exc.pos})"]
            ) from None
        try:
            return shape.reply.model_validate(data)
        except ValidationError as exc:
            raise InvalidReplyError(_validation_problems(exc)) from None

    def call(
        self,
        *,
        model: str,
        system: str,
        content: list[dict[str, Any]],
        shape: ReplyShape[ReplyT],
        max_tokens: int,
        failure: type[PuffinError],
        retries_on_invalid: int = 1,
        phase: str = "",
    ) -> ReplyT:
        """Ask Claude for `shape`; validate; ask again (at most `retries_on_invalid`).

        `phase` (extraction, evolution, consolidation, retrieval) labels the tokens in the
        usage ledger."""
        attempt_content = list(content)
        for attempt in range(retries_on_invalid + 1):
            params = self.request(
                model=model,
                system=system,
                content=attempt_content,
                shape=shape,
                max_tokens=max_tokens,
            )
            reply = self.send(params, failure=failure, phase=phase)
            try:
                return self.structured_reply(reply, shape, failure=failure)
            except InvalidReplyError as exc:
                log.warning("invalid %s reply (attempt %d): %s", shape.name, attempt + 1, exc)
                if attempt >= retries_on_invalid:
                    raise
                attempt_content = [*content, retry_block(shape, exc.problems)]
        raise AssertionError("unreachable")


def retry_block(shape: ReplyShape[Any], problems: list[str]) -> dict[str, Any]:
    """The text block appended to a request after an invalid reply."""
    listed = "\n".join(f"- {p}" for p in problems)
    return {
        "type": "text",
        "text": (
            f"Your previous reply was rejected because its JSON did not match the "
            f"`{shape.name}` schema:\n{listed}\nReply again with JSON that matches the schema "
            "exactly."
        ),
    }


def estimate_request_tokens(params: dict[str, Any]) -> int:
    """About how many input tokens a request costs (its system prompt and messages)."""
    sent = json.dumps(params.get("system", "")) + json.dumps(params.get("messages", []))
    return len(sent) // 4


def dump_json(data: Any) -> str:
    """Compact, stable JSON for prompt blocks."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
