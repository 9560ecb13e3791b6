"""Backlog extraction through the Message Batches API (optional, `use_batches`)."""

from __future__ import annotations

import time
from pathlib import Path

import httpx2
import pytest

from app.core.config import Config
from app.core.errors import BudgetExceeded, ExtractionFailed
from app.core.models import ExtractionResult
from app.core.usage import UsageLedger
from app.engines.claude import batch_recommended
from tests.fixtures.anthropic.fake_api import (
    HERE,
    FakeAPI,
    fast_retries,
    load,
    make_config,
    make_engine,
    reply,
    text,
)

BATCH = "msgbatch_01HkcTjaV5uDC8jWR4ZsDV8d"
BACKLOG = [
    (text("conversation_auth.txt"), "thread_a"),
    (text("conversation_auth.txt").replace("billing", "search"), "thread_b"),
    ("User: rename the button to Save\nAssistant: Done.", "thread_c"),
]


@pytest.fixture(autouse=True)
def _fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    fast_retries(monkeypatch)


def batch(name: str) -> httpx2.Response:
    return httpx2.Response(200, json=load(name))


def results() -> httpx2.Response:
    return httpx2.Response(
        200,
        content=(HERE / "batch_results.jsonl").read_bytes(),
        headers={"content-type": "application/binary"},
    )


def test_batch_recommended_above_the_threshold() -> None:
    config = Config(batch_backlog_threshold=25)
    assert not batch_recommended(25, config)
    assert batch_recommended(26, config)


def test_backlog_goes_out_as_one_batch(home: Path) -> None:
    api = FakeAPI(
        [
            batch("batch_in_progress.json"),
            batch("batch_ended.json"),
            batch("batch_ended.json"),
            results(),
        ]
    )
    engine = make_engine(api, home, make_config(use_batches=True))

    outcome = engine.extract_many(BACKLOG, poll_interval_s=0)

    first, second, third = outcome
    assert isinstance(first, ExtractionResult) and len(first.items) == 5
    assert all(i.sources == ["thread_a"] for i in first.items)
    assert "Message Batches API" in first.notes[-1]
    assert isinstance(second, ExtractionFailed) and "overloaded_error" in second.message
    assert isinstance(third, ExtractionResult) and third.no_content_to_extract

    create = api.requests[0]
    assert (create.method, create.url.path) == ("POST", "/v1/messages/batches")
    sent = api.body(0)["requests"]
    assert [r["custom_id"] for r in sent] == ["t0-p0", "t1-p0", "t2-p0"]
    params = sent[0]["params"]
    assert "tool_choice" not in params and "tools" not in params
    assert params["output_config"]["format"]["type"] == "json_schema"
    assert "no_content_to_extract" in params["output_config"]["format"]["schema"]["properties"]
    assert params["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert [r.url.path for r in api.requests[1:]] == [
        f"/v1/messages/batches/{BATCH}",
        f"/v1/messages/batches/{BATCH}",
        f"/v1/messages/batches/{BATCH}/results",
    ]
    day = UsageLedger(home / "usage.json").today()["models"]["claude-haiku-4-5"]
    assert day["requests"] == 2
    # Batch replies are billed at half price: two replies cost what one normal reply does.
    normal = UsageLedger(home / "normal.json")
    normal.record(
        "claude-haiku-4-5", input_tokens=1843, output_tokens=612, cache_read_input_tokens=1126
    )
    normal.record(
        "claude-haiku-4-5", input_tokens=402, output_tokens=71, cache_read_input_tokens=1126
    )
    assert day["cost_usd"] == pytest.approx(normal.today()["cost_usd"] / 2, rel=1e-3)


def test_invalid_batch_reply_is_retried_through_the_messages_api(home: Path) -> None:
    # The replies' JSON sits inside a text block, so its quotes are escaped in the file.
    lines = (
        (HERE / "batch_results.jsonl")
        .read_text()
        .replace(r"\"confidence\": 0.95", r"\"confidence\": 9.5")
    )
    assert "9.5" in lines
    api = FakeAPI(
        [
            batch("batch_ended.json"),
            batch("batch_ended.json"),
            httpx2.Response(200, content=lines.encode()),
            reply("extraction_reply.json"),
        ]
    )
    engine = make_engine(api, home, make_config(use_batches=True))

    first, _second, _third = engine.extract_many(BACKLOG, poll_interval_s=0)

    assert isinstance(first, ExtractionResult) and len(first.items) == 5
    assert api.requests[-1].url.path == "/v1/messages"


def test_batch_that_does_not_end_is_cancelled(home: Path) -> None:
    api = FakeAPI([batch("batch_in_progress.json"), batch("batch_in_progress.json")])
    engine = make_engine(api, home, make_config(use_batches=True))

    with pytest.raises(ExtractionFailed, match="did not finish within 0 s; it was cancelled"):
        engine.extract_many(BACKLOG, poll_interval_s=0, max_wait_s=0)
    assert api.requests[-1].url.path == f"/v1/messages/batches/{BATCH}/cancel"


def test_polling_sleeps_between_polls_until_the_deadline(home: Path) -> None:
    api = FakeAPI([batch("batch_in_progress.json")] * 200)
    engine = make_engine(api, home, make_config(use_batches=True))

    started = time.monotonic()
    with pytest.raises(ExtractionFailed, match=r"did not finish within 0\.15 s"):
        engine.extract_many(BACKLOG, poll_interval_s=0.03, max_wait_s=0.15)
    elapsed = time.monotonic() - started

    assert 0.15 <= elapsed < 2, elapsed
    polls = [r for r in api.requests if r.method == "GET"]
    assert 3 <= len(polls) <= 7, len(polls)  # about one poll per interval, no busy loop
    assert api.requests[-1].url.path == f"/v1/messages/batches/{BATCH}/cancel"
    assert BATCH not in (home / "batches.json").read_text()


def test_batch_respects_the_budget(home: Path) -> None:
    UsageLedger(home / "usage.json").record("claude-haiku-4-5", input_tokens=50)
    api = FakeAPI([])
    engine = make_engine(api, home, make_config(use_batches=True, daily_token_budget=10))
    with pytest.raises(BudgetExceeded):
        engine.extract_many(BACKLOG, poll_interval_s=0)
    assert api.requests == []


def test_without_batches_the_backlog_is_extracted_one_by_one(home: Path) -> None:
    api = FakeAPI(
        [
            reply("extraction_reply.json"),
            reply("extraction_invalid_reply.json"),
            reply("extraction_invalid_reply.json"),
            reply("extraction_empty_reply.json"),
        ]
    )
    engine = make_engine(api, home)

    first, second, third = engine.extract_many(BACKLOG)

    assert isinstance(first, ExtractionResult) and len(first.items) == 5
    assert isinstance(second, ExtractionFailed)
    assert isinstance(third, ExtractionResult) and third.no_content_to_extract
    assert all(r.url.path == "/v1/messages" for r in api.requests)


class Quit(BaseException):
    """The app quitting (or crashing) while it waits for a batch: nothing catches it."""


def quit_now(request: httpx2.Request) -> httpx2.Response:
    raise Quit


def test_a_batch_sent_before_a_quit_is_resumed_not_paid_twice(home: Path) -> None:
    first = FakeAPI([batch("batch_in_progress.json"), batch("batch_in_progress.json"), quit_now])
    engine = make_engine(first, home, make_config(use_batches=True))

    with pytest.raises(Quit):
        engine.extract_many(BACKLOG, poll_interval_s=0.001)
    assert len(first.requests) == 3  # created, polled once, quit during the second poll
    assert BATCH in (home / "batches.json").read_text()

    again = FakeAPI([batch("batch_ended.json"), batch("batch_ended.json"), results()])
    engine = make_engine(again, home, make_config(use_batches=True))
    first_result, _second, third = engine.extract_many(BACKLOG, poll_interval_s=0)

    assert isinstance(first_result, ExtractionResult) and len(first_result.items) == 5
    assert isinstance(third, ExtractionResult)
    assert not any(
        r.method == "POST" and r.url.path == "/v1/messages/batches" for r in again.requests
    )  # nothing sent twice
    assert BATCH not in (home / "batches.json").read_text()


def test_a_batch_never_carries_the_day_past_its_budget(home: Path) -> None:
    from app.engines.claude.caller import estimate_request_tokens

    api = FakeAPI([batch("batch_ended.json"), batch("batch_ended.json"), results()])
    engine = make_engine(api, home, make_config(use_batches=True))
    one = estimate_request_tokens(engine._extraction_params(BACKLOG[0][0], 0, 1))
    engine = make_engine(api, home, make_config(use_batches=True, daily_token_budget=one + 50))

    outcome = engine.extract_many(BACKLOG, poll_interval_s=0)

    assert len(api.body(0)["requests"]) == 1
    assert isinstance(outcome[0], ExtractionResult)
    assert all(isinstance(o, ExtractionFailed) and "budget" in o.message for o in outcome[1:])


def test_each_request_is_checked_against_the_budget_before_it_is_sent(home: Path) -> None:
    api = FakeAPI([])
    engine = make_engine(api, home, make_config(daily_token_budget=200))
    with pytest.raises(BudgetExceeded, match="the next request needs about"):
        engine.extract(text("conversation_auth.txt"), source="t")
    assert api.requests == []


def test_usage_is_kept_per_phase(home: Path) -> None:
    api = FakeAPI([reply("extraction_reply.json")])
    engine = make_engine(api, home)
    engine.extract(text("conversation_auth.txt"), source="t")
    phases = UsageLedger(home / "usage.json").today()["phases"]
    assert list(phases) == ["extraction"] and phases["extraction"]["requests"] == 1
    assert UsageLedger(home / "usage.json").month()["phases"]["extraction"]["requests"] == 1
