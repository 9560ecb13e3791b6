"""One reliable Claude call: budget check, forced tool, timeouts, retries, usage, errors.

`ClaudeCaller` owns the `anthropic.AsyncAnthropic` client. Each call checks the daily token
budget first (raising `BudgetExceeded` without touching the network), sends the request with
the fixed instructions marked for prompt caching, lets the SDK retry rate limits, overloads
and connection failures (`max_retries`, per-request `timeout` from `Config`), bounds the whole
thing with an outer `asyncio.wait_for`, records the reply's tokens in the usage ledger, and
validates the forced tool's input with its pydantic model, asking once more when it does not
match. Every failure leaves as the operation's `PuffinError` with a sentence a person can act
on; the API key is never part of a message.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
from typing import Any

import anthropic
import httpx2
from anthropic.types import Message, ToolUseBlock
from pydantic import ValidationError

from app.core.config import Config
from app.core.errors import BudgetExceeded, PuffinError
from app.core.usage import BUDGET_NOTE, UsageLedger
from app.engines.claude.replies import ReplyT, Tool

log = logging.getLogger(__name__)

EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
# The SDK waits at most this long between its own retries (its MAX_RETRY_DELAY); the outer
# deadline allows for it so that it only fires when the SDK's own timeout did not.
_RETRY_WAIT_ALLOWANCE_S = 8.0
_OUTER_GRACE_S = 1.0


class InvalidReplyError(Exception):
    """Claude answered, but not with valid input for the forced tool (after the retries)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def describe_api_error(
    exc: BaseException, *, model: str, timeout_s: float, retries: int
) -> tuple[str, dict[str, Any]]:
    """A sentence a person understands for an API failure, and context for the error reply."""
    retried = (
        f" and {retries} retr{'y' if retries == 1 else 'ies'} did not get through"
        if retries else ""
    )
    later = "Memory will try again later."
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
        return f"Claude's rate limit was reached (429){retried}. {later}", context
    if isinstance(exc, anthropic.OverloadedError):
        return f"Claude is overloaded (529){retried}. {later}", context
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
        return f"Claude's API had a server error ({status}){retried}. {later}", context
    if isinstance(exc, anthropic.APIStatusError):
        detail = f": {api_message}" if api_message else ""
        return f"Claude's API answered with status {status}{detail}.", context
    if isinstance(exc, anthropic.APITimeoutError | TimeoutError):
        context["timeout_s"] = timeout_s
        return (
            f"Claude did not answer within {timeout_s:g} s (timeout). {later} The limit is the "
            "request_timeout_s setting.",
            context,
        )
    if isinstance(exc, anthropic.APIConnectionError):
        return (
            "Could not connect to Claude's API. Check the network connection or proxy "
            f"(ANTHROPIC_BASE_URL if set). {later}",
            context,
        )
    if isinstance(exc, json.JSONDecodeError):
        return "Claude's API sent a reply that is not valid JSON; nothing was changed.", context
    return f"The call to Claude failed ({type(exc).__name__}). {later}", context


def deprecated_models(config: Config) -> dict[str, str]:
    """Configured models the installed SDK calls deprecated, with their end-of-life dates."""
    table: dict[str, str] = {}
    # The SDK keeps this table in a private module that moved between 2.x releases
    # (messages.messages up to 2.12, anthropic._data since); look it up by name so that a
    # move only loses the warning, never the import.
    for module_name in ("anthropic._data", "anthropic.resources.messages.messages"):
        try:
            found = getattr(importlib.import_module(module_name), "DEPRECATED_MODELS", None)
        except ImportError:
            continue
        if isinstance(found, dict):
            table = {str(k): str(v) for k, v in found.items()}
            break
    return {
        name: table[name]
        for name in dict.fromkeys(config.models.model_dump().values())
        if name in table
    }


def _validation_problems(exc: ValidationError) -> list[str]:
    problems = []
    for error in exc.errors()[:6]:
        where = ".".join(str(p) for p in error["loc"]) or "input"
        problems.append(f"{where}: {error['msg']}")
    return problems


class ClaudeCaller:
    """Makes forced-tool Claude calls for one engine (see the module docstring)."""

    def __init__(
        self,
        config: Config,
        *,
        api_key: str,
        usage: UsageLedger,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        """Calls with `api_key`, recording usage in `usage`; `http_client` for tests/proxies."""
        self.config = config
        self.usage = usage
        self._api_key = api_key
        self._http_client = http_client
        self._client: anthropic.AsyncAnthropic | None = None

    def __repr__(self) -> str:
        return f"ClaudeCaller(models={self.config.models!r})"

    @property
    def client(self) -> anthropic.AsyncAnthropic:
        """The SDK client, created on first use (inside the running event loop)."""
        if self._client is None:
            self._client = anthropic.AsyncAnthropic(
                api_key=self._api_key,
                max_retries=self.config.max_retries,
                timeout=self.config.request_timeout_s,
                http_client=self._http_client,
            )
        return self._client

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        if self._client is not None:
            await self._client.close()
            self._client = None

    @property
    def outer_timeout_s(self) -> float:
        """The deadline of one call including the SDK's own retries and their waits."""
        attempts = self.config.max_retries + 1
        return (
            self.config.request_timeout_s * attempts
            + _RETRY_WAIT_ALLOWANCE_S * self.config.max_retries
            + _OUTER_GRACE_S
        )

    async def check_budget(self) -> None:
        """Raise BudgetExceeded when today's tokens reached the daily budget (0: no limit)."""
        budget = self.config.daily_token_budget
        if budget <= 0:
            return
        used = await asyncio.to_thread(self.usage.tokens_today)
        if used >= budget:
            raise BudgetExceeded(
                f"{BUDGET_NOTE} ({used:,} of {budget:,} tokens used today).",
                context={"tokensToday": used, "dailyTokenBudget": budget},
            )

    def request(
        self,
        *,
        model: str,
        system: str,
        content: list[dict[str, Any]],
        tool: Tool[Any],
        max_tokens: int,
    ) -> dict[str, Any]:
        """The Messages API parameters of a forced-tool call (also used for batches)."""
        return {
            "model": model,
            "max_tokens": max_tokens,
            # The fixed instructions (and, through the prefix, the tool schema) are cached.
            "system": [{"type": "text", "text": system, "cache_control": EPHEMERAL}],
            "messages": [{"role": "user", "content": content}],
            "tools": [tool.param()],
            "tool_choice": tool.choice(),
        }

    async def send(
        self, params: dict[str, Any], *, failure: type[PuffinError]
    ) -> Message:
        """Send one request (budget-checked, SDK retries, outer deadline), record usage."""
        await self.check_budget()
        model = str(params["model"])
        try:
            reply: object = await asyncio.wait_for(
                self.client.messages.create(**params), timeout=self.outer_timeout_s
            )
        except (anthropic.AnthropicError, TimeoutError, ValueError) as exc:
            message, context = describe_api_error(
                exc,
                model=model,
                timeout_s=self.config.request_timeout_s,
                retries=self.config.max_retries,
            )
            log.warning("Claude call failed: %s", message)
            raise failure(message, context=context) from exc
        if not isinstance(reply, Message) or not isinstance(reply.content, list):
            raise failure(
                "Claude's API sent something that is not a Messages API reply; nothing was "
                "changed. Check ANTHROPIC_BASE_URL if it is set.",
                context={"engine": "anthropic", "model": model},
            )
        await self.record_usage(model, reply)
        return reply

    async def record_usage(self, model: str, reply: Message, *, batch: bool = False) -> None:
        """Add a reply's tokens to the ledger (a ledger failure is logged, never fatal)."""
        usage = reply.usage
        if usage is None:
            return
        try:
            await asyncio.to_thread(
                self.usage.record,
                model,
                input_tokens=usage.input_tokens or 0,
                output_tokens=usage.output_tokens or 0,
                cache_read_input_tokens=usage.cache_read_input_tokens or 0,
                cache_creation_input_tokens=usage.cache_creation_input_tokens or 0,
                batch=batch,
            )
        except PuffinError as exc:
            log.warning("usage not recorded: %s", exc.message)

    @staticmethod
    def tool_input(reply: Message, tool: Tool[ReplyT]) -> ReplyT:
        """The validated input of the forced tool in `reply`, or InvalidReplyError."""
        block = next(
            (b for b in reply.content if isinstance(b, ToolUseBlock) and b.name == tool.name),
            None,
        )
        if block is None:
            why = f"the reply did not call the `{tool.name}` tool"
            if reply.stop_reason == "max_tokens":
                why += " (it was cut off at max_tokens)"
            raise InvalidReplyError([why])
        try:
            return tool.reply.model_validate(block.input)
        except ValidationError as exc:
            problems = _validation_problems(exc)
            if reply.stop_reason == "max_tokens":
                problems.insert(0, "the reply was cut off at max_tokens")
            raise InvalidReplyError(problems) from None

    async def call_tool(
        self,
        *,
        model: str,
        system: str,
        content: list[dict[str, Any]],
        tool: Tool[ReplyT],
        max_tokens: int,
        failure: type[PuffinError],
        retries_on_invalid: int = 1,
    ) -> ReplyT:
        """Call Claude forcing `tool`; validate; ask again (at most `retries_on_invalid`)."""
        attempt_content = list(content)
        for attempt in range(retries_on_invalid + 1):
            params = self.request(
                model=model, system=system, content=attempt_content, tool=tool,
                max_tokens=max_tokens,
            )
            reply = await self.send(params, failure=failure)
            try:
                return self.tool_input(reply, tool)
            except InvalidReplyError as exc:
                log.warning("invalid %s reply (attempt %d): %s", tool.name, attempt + 1, exc)
                if attempt >= retries_on_invalid:
                    raise
                attempt_content = [*content, retry_block(tool, exc.problems)]
        raise AssertionError("unreachable")


def retry_block(tool: Tool[Any], problems: list[str]) -> dict[str, Any]:
    """The text block appended to a request after an invalid reply."""
    listed = "\n".join(f"- {p}" for p in problems)
    return {
        "type": "text",
        "text": (
            f"Your previous reply was rejected because its `{tool.name}` input did not match "
            f"the tool's schema:\n{listed}\nCall `{tool.name}` again with input that matches "
            "the schema exactly."
        ),
    }


def dump_json(data: Any) -> str:
    """Compact, stable JSON for prompt blocks."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
