"""Backlogs through the Message Batches API: half price, answers within hours, optional.

When many threads wait (a first scan of months of transcripts), sending their extraction
requests as one batch costs half as much. `batch_recommended` says when that is worth
suggesting; `run_batch` creates the batch, polls it until it has ended (cancelling it when it
takes longer than allowed), and returns each request's reply or a sentence saying why it has
none. Used only when `Config.use_batches` is on.

A batch outlives the app: every batch sent is written to a journal (`batches.json` beside the
usage ledger) with a digest of each request, and removed once its results are read or it is
cancelled. After a quit or a crash, the next backlog run finds the requests it would send in
a journalled batch and waits for that batch instead of paying for them twice. The daily
token budget is checked against each request's estimate before the batch is created: the
requests that do not fit stay out of it (their threads stay pending), so a batch can never
carry the day past its budget.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import time
from pathlib import Path
from typing import Any

import anthropic
from anthropic.types import Message

from app.core.atomic import read_json, write_json
from app.core.config import Config
from app.core.errors import BudgetExceeded, ExtractionFailed, PuffinError
from app.core.usage import BUDGET_NOTE
from app.engines.claude.caller import (
    ClaudeCaller,
    describe_api_error,
    estimate_request_tokens,
)

log = logging.getLogger(__name__)


def batch_recommended(pending_threads: int, config: Config) -> bool:
    """True when the backlog is large enough for the Message Batches API to pay off."""
    return pending_threads > config.batch_backlog_threshold


_JOURNAL = "batches.json"


def request_digest(params: dict[str, Any]) -> str:
    """A stable digest of a request: the same thread chunk to the same model, the same digest."""
    raw = json.dumps(params, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:32]


class BatchJournal:
    """Batches sent and not yet read back: batch id -> {custom id: request digest}."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def open_batches(self) -> dict[str, dict[str, str]]:
        """Batches sent and not yet collected: batch id -> request digests."""
        try:
            data = read_json(self.path, default=None)
        except PuffinError as exc:
            log.warning("batch journal unreadable, ignored: %s", exc.message)
            return {}
        if not isinstance(data, dict) or not isinstance(data.get("batches"), dict):
            return {}
        return {
            str(bid): {str(k): str(v) for k, v in entry.items()}
            for bid, entry in data["batches"].items()
            if isinstance(entry, dict)
        }

    def _save(self, batches: dict[str, dict[str, str]]) -> None:
        try:
            write_json(self.path, {"version": 1, "batches": batches})
        except PuffinError as exc:  # the journal saves money; it never stops a scan
            log.warning("batch journal not written: %s", exc.message)

    def add(self, batch_id: str, digests: dict[str, str]) -> None:
        """Record a batch just sent, with the digest of each of its requests."""
        self._save({**self.open_batches(), batch_id: digests})

    def remove(self, batch_id: str) -> None:
        """Forget a batch whose results were collected."""
        batches = self.open_batches()
        if batches.pop(batch_id, None) is not None:
            self._save(batches)


def _journal(caller: ClaudeCaller) -> BatchJournal | None:
    usage_path = getattr(caller.usage, "path", None)
    return BatchJournal(usage_path.with_name(_JOURNAL)) if isinstance(usage_path, Path) else None


def _within_budget(
    caller: ClaudeCaller, requests: dict[str, dict[str, Any]]
) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """The requests that fit in today's budget, and a reason for each one left out."""
    remaining = caller.remaining_budget()
    if remaining is None:
        return requests, {}
    fitting: dict[str, dict[str, Any]] = {}
    left: dict[str, str] = {}
    spent = 0
    for cid, params in requests.items():
        cost = estimate_request_tokens(params)
        if spent + cost <= remaining:
            fitting[cid] = params
            spent += cost
        else:
            left[cid] = (
                f"{BUDGET_NOTE}: this conversation did not fit in today's budget and stays pending."
            )
    if not fitting:
        raise BudgetExceeded(
            f"{BUDGET_NOTE} ({remaining:,} tokens left today).", context={"tokensLeft": remaining}
        )
    return fitting, left


def run_batch(
    caller: ClaudeCaller,
    requests: dict[str, dict[str, Any]],
    *,
    poll_interval_s: float,
    max_wait_s: float,
) -> dict[str, Message | str]:
    """Send `requests` (custom id -> Messages API params) as one batch; wait for the results.

    Blocks the calling thread until then, sleeping `poll_interval_s` between polls. Requests
    already in a journalled batch (sent before a quit) are read from that batch. Returns, for
    each custom id, the reply or why there is none. Raises ExtractionFailed when a batch
    cannot be created, polled or read, or does not end within `max_wait_s`, and
    BudgetExceeded when not one request fits in today's budget.
    """
    caller.check_budget()
    journal = _journal(caller)
    deadline = time.monotonic() + max_wait_s
    first_model = str(next(iter(requests.values()))["model"])
    digests = {cid: request_digest(p) for cid, p in requests.items()}
    outcomes: dict[str, Message | str] = {}
    try:
        if journal is not None:
            by_digest = {d: cid for cid, d in digests.items()}
            for batch_id, sent in journal.open_batches().items():
                wanted = {old: by_digest[d] for old, d in sent.items() if d in by_digest}
                if not wanted:
                    continue
                log.info("resuming batch %s for %d request(s)", batch_id, len(wanted))
                read = _finish(
                    caller,
                    batch_id,
                    requests,
                    poll_interval_s,
                    deadline,
                    max_wait_s,
                    journal,
                    first_model,
                    resumed=True,
                )
                if read is None:
                    continue  # gone (expired, deleted): send those requests again
                outcomes.update({wanted[old]: r for old, r in read.items() if old in wanted})
        pending = {cid: p for cid, p in requests.items() if cid not in outcomes}
        if pending:
            fitting, left = _within_budget(caller, pending)
            outcomes.update(left)
            batch = caller.client.messages.batches.create(
                requests=[{"custom_id": cid, "params": p} for cid, p in fitting.items()]  # type: ignore[typeddict-item]
            )
            if journal is not None:
                journal.add(batch.id, {cid: digests[cid] for cid in fitting})
            read = _finish(
                caller,
                batch.id,
                requests,
                poll_interval_s,
                deadline,
                max_wait_s,
                journal,
                first_model,
                resumed=False,
                status=batch.processing_status,
            )
            outcomes.update({cid: r for cid, r in (read or {}).items() if cid in fitting})
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


def _finish(
    caller: ClaudeCaller,
    batch_id: str,
    requests: dict[str, dict[str, Any]],
    poll_interval_s: float,
    deadline: float,
    max_wait_s: float,
    journal: BatchJournal | None,
    first_model: str,
    *,
    resumed: bool,
    status: str = "",
) -> dict[str, Message | str] | None:
    """Wait for a batch to end and read its results (custom id -> reply or reason).

    None when a resumed batch no longer exists or ended without results (it is dropped from
    the journal and its requests are sent again).
    """
    client = caller.client
    if resumed:
        try:
            found = client.messages.batches.retrieve(batch_id)
        except anthropic.NotFoundError:
            if journal is not None:
                journal.remove(batch_id)
            return None
        status = found.processing_status
    while status != "ended":
        if time.monotonic() >= deadline:
            with contextlib.suppress(anthropic.AnthropicError, TimeoutError):
                client.messages.batches.cancel(batch_id)
            if journal is not None:
                journal.remove(batch_id)
            raise ExtractionFailed(
                f"Claude's batch {batch_id} did not finish within {max_wait_s:g} s; it was "
                "cancelled and the threads will be retried later.",
                context={"engine": "anthropic", "batch": batch_id},
            )
        time.sleep(poll_interval_s)
        batch = client.messages.batches.retrieve(batch_id)
        status = batch.processing_status
    outcomes: dict[str, Message | str] = {}
    for line in client.messages.batches.results(batch_id):
        result = line.result
        if result.type == "succeeded":
            outcomes[line.custom_id] = result.message
            caller.record_usage(
                str(requests.get(line.custom_id, {}).get("model", first_model)),
                result.message,
                batch=True,
                phase="extraction",
            )
        elif result.type == "errored":
            outcomes[line.custom_id] = (
                f"Claude's batch could not process this conversation "
                f"({result.error.error.type}); it will be retried later."
            )
        else:
            outcomes[line.custom_id] = (
                f"Claude's batch request was {result.type} before it ran; it will be retried later."
            )
    if journal is not None:
        journal.remove(batch_id)
    if resumed and not outcomes:
        return None
    return outcomes
