"""Backlogs through the Message Batches API: half price, answers within hours, optional.

When many threads wait (a first scan of months of transcripts), sending their extraction
requests as one batch costs half as much. `batch_recommended` says when that is worth
suggesting; `run_batch` creates the batch, polls it until it has ended (cancelling it when it
takes longer than allowed), and returns each request's reply or a sentence saying why it has
none. Used only when `Config.use_batches` is on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import anthropic
from anthropic.types import Message

from app.core.config import Config
from app.core.errors import ExtractionFailed
from app.engines.claude.caller import ClaudeCaller, describe_api_error

log = logging.getLogger(__name__)


def batch_recommended(pending_threads: int, config: Config) -> bool:
    """True when the backlog is large enough for the Message Batches API to pay off."""
    return pending_threads > config.batch_backlog_threshold


async def run_batch(
    caller: ClaudeCaller,
    requests: dict[str, dict[str, Any]],
    *,
    poll_interval_s: float,
    max_wait_s: float,
) -> dict[str, Message | str]:
    """Send `requests` (custom id -> Messages API params) as one batch; wait for the results.

    Returns, for each custom id, the reply or why there is none. Raises ExtractionFailed when
    the batch itself cannot be created, polled or read, or does not end within `max_wait_s`.
    """
    await caller.check_budget()
    client = caller.client
    loop = asyncio.get_running_loop()
    deadline = loop.time() + max_wait_s
    first_model = str(next(iter(requests.values()))["model"])
    try:
        batch = await asyncio.wait_for(
            client.messages.batches.create(
                requests=[{"custom_id": cid, "params": p} for cid, p in requests.items()]  # type: ignore[typeddict-item]
            ),
            timeout=caller.outer_timeout_s,
        )
        while batch.processing_status != "ended":
            if loop.time() >= deadline:
                with contextlib.suppress(anthropic.AnthropicError, TimeoutError):
                    await asyncio.wait_for(
                        client.messages.batches.cancel(batch.id), timeout=caller.outer_timeout_s
                    )
                raise ExtractionFailed(
                    f"Claude's batch {batch.id} did not finish within {max_wait_s:g} s; it was "
                    "cancelled and the threads will be retried later.",
                    context={"engine": "anthropic", "batch": batch.id},
                )
            await asyncio.sleep(poll_interval_s)
            batch = await asyncio.wait_for(
                client.messages.batches.retrieve(batch.id), timeout=caller.outer_timeout_s
            )
        outcomes: dict[str, Message | str] = {}
        decoder = await asyncio.wait_for(
            client.messages.batches.results(batch.id), timeout=caller.outer_timeout_s
        )
        async for line in decoder:
            result = line.result
            if result.type == "succeeded":
                outcomes[line.custom_id] = result.message
                await caller.record_usage(
                    str(requests.get(line.custom_id, {}).get("model", first_model)),
                    result.message,
                    batch=True,
                )
            elif result.type == "errored":
                outcomes[line.custom_id] = (
                    f"Claude's batch could not process this conversation "
                    f"({result.error.error.type}); it will be retried later."
                )
            else:
                outcomes[line.custom_id] = (
                    f"Claude's batch request was {result.type} before it ran; it will be "
                    "retried later."
                )
    except (anthropic.AnthropicError, TimeoutError, ValueError) as exc:
        message, context = describe_api_error(
            exc,
            model=first_model,
            timeout_s=caller.limits.timeout_s,
            retries=caller.limits.max_retries,
        )
        raise ExtractionFailed(message, context=context) from exc
    missing = "Claude's batch returned no result for this conversation; it will be retried later."
    return {cid: outcomes.get(cid, missing) for cid in requests}
