"""`LocalEngine`: extraction and change lists from an OpenAI-compatible chat completions API.

Every request is `chat.completions.create` with a system message, one user message and
`response_format={"type": "json_schema", "json_schema": {..., "strict": true}}`; the reply's
JSON is validated with the same pydantic models as Claude's, and asked for once more (with
the problems listed) when it does not match. The conversation is redacted again before it
leaves, and long ones are split into chunks like Claude's. The request timeout and retry
budget are the same settings as Claude's (`request_timeout_s`, `max_retries` and their
environment variables). Calls block the calling thread; the SDK's `timeout` bounds each wait
on the server and `max_retries` how often it is asked again, so a server that never answers
costs bounded waits. A reply cut off at the length limit or refused is a failure, not retried.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar

import httpx2
import openai
from pydantic import BaseModel, ValidationError

from app.core.config import Config
from app.core.engine import Candidate, DeepAnswer, Engine, extract_each
from app.core.errors import ExtractionFailed, InvalidInput, MaintenanceFailed, PuffinError
from app.core.models import BranchMemory, EvolutionResult, ExtractionResult, MemoryItem, utc_now
from app.core.redact import redact
from app.engines.claude.caller import call_limits
from app.engines.claude.engine import extraction_result
from app.engines.claude.prompts import (
    CHARS_PER_TOKEN,
    chunk_text,
    extraction_request,
    system_prompt,
)
from app.engines.claude.replies import ExtractionReply
from app.engines.ops import (
    CHANGE_SCHEMA,
    OPS_SYSTEM_PROMPT,
    ChangeList,
    consolidate_through,
    evolve_through,
    strict_schema,
)

log = logging.getLogger(__name__)

LOCAL_KEY_ENV = "PUFFIN_MEMORY_LOCAL_API_KEY"
# Most local servers want no key; the SDK insists on a non-empty one.
_NO_KEY = "not-needed"
_MAX_TOKENS = 8_192

ReplyT = TypeVar("ReplyT", bound=BaseModel)
EXTRACTION_SCHEMA = strict_schema(ExtractionReply)


class _Invalid(Exception):
    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def describe_local_error(exc: BaseException, *, url: str, model: str) -> str:
    """A sentence a person understands for a failed call to the local server."""
    if isinstance(exc, openai.APITimeoutError | TimeoutError):
        return f"The local model server at {url} did not answer in time"
    if isinstance(exc, openai.APIConnectionError):
        return (
            f"Could not reach the local model server at {url}. Is it running (e.g. "
            "`ollama serve`) and is the address in Settings right?"
        )
    if isinstance(exc, openai.NotFoundError):
        return (
            f"The local server at {url} does not know the model {model!r} (404). Pull or "
            "load it first, or fix the model name in Settings."
        )
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        return (
            f"The local server at {url} refused the key ({getattr(exc, 'status_code', '')})."
            f" Set {LOCAL_KEY_ENV} if it needs one."
        )
    if isinstance(exc, openai.BadRequestError):
        return (
            f"The local server rejected the request (400): {exc.message}. The model may "
            "not support JSON-schema output."
        )
    if isinstance(exc, openai.APIStatusError):
        return f"The local server failed ({exc.status_code})"
    return f"The call to the local model failed ({type(exc).__name__})"


class LocalEngine:
    """The `Engine` protocol on an OpenAI-compatible server (see the module docstring).

    `fallback` is the offline engine: it answers deep retrieval and places what needs no
    thinking. `http_client` replaces the SDK's (tests, proxies); `now` is injectable.
    """

    name = "local"

    def __init__(
        self,
        config: Config,
        *,
        fallback: Engine,
        http_client: httpx2.Client | None = None,
        now: Callable[[], datetime] | None = None,
        api_key: str | None = None,
    ) -> None:
        """Keep the settings; the SDK client is made on the first call."""
        if not config.local_model.strip():
            raise InvalidInput(
                "The local engine needs a model name: set it in Settings (e.g. llama3.1:8b) "
                "or `local_model` in config.json."
            )
        self.config = config
        self.fallback = fallback
        self.limits = call_limits(config)
        self._http_client = http_client
        self._client: openai.OpenAI | None = None
        self._key = api_key or os.environ.get(LOCAL_KEY_ENV, "").strip() or _NO_KEY
        self._now = now or utc_now

    def __repr__(self) -> str:
        return f"LocalEngine(url={self.config.local_base_url!r}, model={self.config.local_model!r})"

    @property
    def client(self) -> openai.OpenAI:
        """The SDK client (made on first use)."""
        if self._client is None:
            self._client = openai.OpenAI(
                api_key=self._key,
                base_url=self.config.local_base_url,
                timeout=self.limits.timeout_s,
                max_retries=self.limits.max_retries,
                http_client=self._http_client,
            )
        return self._client

    def close(self) -> None:
        """Close the HTTP connections."""
        if self._client is not None:
            self._client.close()
            self._client = None

    # ------------------------------------------------------------------------------ calls

    def _ask(
        self,
        system: str,
        user: str,
        name: str,
        schema: dict[str, Any],
        reply: type[ReplyT],
        failure: type[PuffinError],
    ) -> ReplyT:
        """One JSON-schema call, validated; asked once more when the JSON does not match."""
        messages: list[dict[str, str]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ]
        problems: list[str] = []
        for attempt in range(2):
            if problems:
                messages = [
                    *messages[:2],
                    {
                        "role": "user",
                        "content": (
                            user + "\n\nYour previous reply was rejected because its JSON did not "
                            "match the schema:\n"
                            + "\n".join(f"- {p}" for p in problems)
                            + "\nReply again with JSON that matches the schema exactly."
                        ),
                    },
                ]
            raw = self._send(messages, name, schema, failure)
            try:
                return _validated(raw, reply)
            except _Invalid as exc:
                problems = exc.problems
                log.warning(
                    "invalid %s reply from the local model (attempt %d): %s",
                    name,
                    attempt + 1,
                    problems[:3],
                )
        raise failure(
            f"The local model's {name} reply did not match the expected format twice "
            f"({'; '.join(problems[:3])}); nothing was changed.",
            context={"engine": self.name, "model": self.config.local_model},
        )

    def _send(
        self,
        messages: list[dict[str, str]],
        name: str,
        schema: dict[str, Any],
        failure: type[PuffinError],
    ) -> str:
        url, model = self.config.local_base_url, self.config.local_model
        try:
            params: dict[str, Any] = {
                "model": model,
                "messages": messages,
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": name, "schema": schema, "strict": True},
                },
                "max_tokens": _MAX_TOKENS,
            }
            completion = self.client.chat.completions.create(**params)
        except (openai.OpenAIError, TimeoutError, ValueError) as exc:
            message = describe_local_error(exc, url=url, model=model)
            log.warning("local model call failed: %s", message)
            raise failure(
                message + "; nothing was changed.", context={"engine": self.name, "model": model}
            ) from exc
        choices = getattr(completion, "choices", None)
        if not isinstance(choices, list) or not choices:
            raise failure(
                f"The server at {url} did not answer like an OpenAI-compatible API; "
                "nothing was changed.",
                context={"engine": self.name},
            )
        choice = choices[0]
        if choice.finish_reason == "length":
            raise failure(
                "The local model's reply was cut off at its length limit; nothing was changed.",
                context={"engine": self.name, "model": model},
            )
        refusal = getattr(choice.message, "refusal", None)
        if refusal:
            raise failure(
                f"The local model declined ({refusal}); nothing was changed.",
                context={"engine": self.name, "model": model},
            )
        return str(choice.message.content or "")

    # ------------------------------------------------------------------------- extraction

    def extract(self, conversation: str, *, source: str) -> ExtractionResult:
        """Solution-wide knowledge in a conversation, per chunk, merged."""
        chunks = chunk_text(redact(conversation), self.config.chunk_tokens * CHARS_PER_TOKEN)
        if not chunks or not "".join(chunks).strip():
            return ExtractionResult(
                no_content_to_extract=True, engine=self.name, notes=["empty conversation"]
            )
        replies = [
            self._ask(
                system_prompt("extraction"),
                extraction_request(chunk, part=part, parts=len(chunks)),
                "record_memories",
                EXTRACTION_SCHEMA,
                ExtractionReply,
                ExtractionFailed,
            )
            for part, chunk in enumerate(chunks)
        ]
        return extraction_result(replies, source, len(chunks), self._now().date(), self.name)

    def extract_many(
        self, conversations: Sequence[tuple[str, str]], **_options: float
    ) -> list[ExtractionResult | ExtractionFailed]:
        """A backlog, one conversation after another (local servers have no batch API)."""
        return extract_each(self, conversations)

    # ------------------------------------------------------------- evolution / consolidation

    def evolve(
        self, current: BranchMemory | None, items: list[MemoryItem], *, branch_id: str
    ) -> EvolutionResult:
        """Integrate `items` through a change list (`ops.evolve_through`)."""

        def ask(request: str, _listed: int) -> ChangeList:
            return self._ask(
                OPS_SYSTEM_PROMPT,
                request,
                "change_list",
                CHANGE_SCHEMA,
                ChangeList,
                ExtractionFailed,
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
        """Merges and the summary through a change list."""

        def ask(request: str, _listed: int) -> ChangeList:
            return self._ask(
                OPS_SYSTEM_PROMPT,
                request,
                "change_list",
                CHANGE_SCHEMA,
                ChangeList,
                MaintenanceFailed,
            )

        return consolidate_through(
            self.name, ask, self.fallback, memory, config=self.config, now=self._now()
        )

    def deep_retrieve(self, query: str, candidates: list[Candidate]) -> DeepAnswer:
        """The offline re-ranking: retrieval stays local and instant."""
        return self.fallback.deep_retrieve(query, candidates)


def _validated(raw: str, reply: type[ReplyT]) -> ReplyT:
    text = raw.strip()
    if text.startswith("```"):
        # Some local models wrap JSON in a code fence even in JSON mode.
        text = text.strip("`").removeprefix("json").strip()
    if not text:
        raise _Invalid(["the reply held no JSON text"])
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _Invalid(
            [f"the reply is not valid JSON ({exc.msg} at character {exc.pos})"]
        ) from None
    try:
        return reply.model_validate(data)
    except ValidationError as exc:
        raise _Invalid(
            [
                f"{'.'.join(str(p) for p in e['loc']) or 'input'}: {e['msg']}"
                for e in exc.errors()[:6]
            ]
        ) from None
