"""Reliability of Claude calls: retries, timeouts, error messages, garbage, the budget."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx2
import pytest

from app.core.engine import Candidate
from app.core.errors import BudgetExceeded, ExtractionFailed, RetrievalFailed
from app.core.models import Category, ExtractionResult, MemoryItem
from app.core.usage import UsageLedger
from app.engines.claude.engine import AnthropicEngine
from app.engines.offline import OfflineEngine
from tests.fixtures.anthropic.fake_api import (
    SOURCE,
    FakeAPI,
    HangingServer,
    error,
    fast_retries,
    make_config,
    make_engine,
    reply,
    text,
)

KEY_FRAGMENT = "sk-ant-api03-test-key"


@pytest.fixture(autouse=True)
def _fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    fast_retries(monkeypatch)


def extract(api: FakeAPI, home: Path, **config: Any) -> ExtractionResult:
    engine = make_engine(api, home, make_config(**config))
    return engine.extract(text("conversation_auth.txt"), source=SOURCE)


def test_rate_limit_is_retried_by_the_sdk(home: Path) -> None:
    api = FakeAPI([error(429, **{"retry-after-ms": "1"}), reply("extraction_reply.json")])

    result = extract(api, home)

    assert len(result.items) == 5
    assert [r.headers["x-stainless-retry-count"] for r in api.requests] == ["0", "1"]
    # The SDK retried the very same request; the engine did not build a new one.
    assert api.requests[0].content == api.requests[1].content


def test_overload_twice_then_success(home: Path) -> None:
    api = FakeAPI([error(529), error(529), reply("extraction_reply.json")])
    result = extract(api, home, max_retries=2)
    assert len(result.items) == 5
    assert len(api.requests) == 3


def test_overload_beyond_max_retries_fails_with_a_clear_message(home: Path) -> None:
    api = FakeAPI([error(529)] * 3)
    with pytest.raises(ExtractionFailed) as caught:
        extract(api, home, max_retries=2)
    assert caught.value.message.startswith("Claude is overloaded (529)")
    assert caught.value.message == ("Claude is overloaded (529) and 2 retries did not get through.")
    assert caught.value.code == "EXTRACTION_FAILED"
    assert caught.value.context["status"] == 529


def test_transport_timeout_maps_to_a_timeout_message(home: Path) -> None:
    api = FakeAPI([httpx2.ReadTimeout("read timed out") for _ in range(2)])
    with pytest.raises(ExtractionFailed, match=r"did not answer within 5 s \(timeout\)"):
        extract(api, home, max_retries=1)
    assert len(api.requests) == 2


def test_the_request_timeout_reaches_the_transport(home: Path) -> None:
    seen: list[object] = []

    def stalled(request: httpx2.Request) -> httpx2.Response:
        seen.append(request.extensions["timeout"])
        raise httpx2.ReadTimeout("read timed out", request=request)

    api = FakeAPI([stalled])
    engine = make_engine(api, home, make_config(request_timeout_s=0.05, max_retries=0))
    with pytest.raises(ExtractionFailed, match=r"within 0.05 s"):
        engine.extract(text("conversation_auth.txt"), source=SOURCE)
    # The SDK's per-request timeout is the deadline: httpx bounds each wait with it.
    assert seen and isinstance(seen[0], dict) and seen[0]["read"] == 0.05


@pytest.mark.parametrize("streamed", [True, False])
def test_a_hung_server_costs_one_read_timeout(
    home: Path, monkeypatch: pytest.MonkeyPatch, streamed: bool
) -> None:
    from app.engines.claude import caller

    if not streamed:  # the extraction request then goes out as a plain call
        monkeypatch.setattr(caller, "STREAM_ABOVE_TOKENS", 10**6)
    server = HangingServer()
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    config = make_config(request_timeout_s=0.2, max_retries=1)
    engine = AnthropicEngine(
        config,
        api_key="sk-ant-api03-test-key-0000000000000000000000",
        usage=UsageLedger(home / "usage.json"),
        fallback=OfflineEngine(config),
    )
    started = time.monotonic()
    try:
        with pytest.raises(ExtractionFailed, match=r"did not answer within 0.2 s") as caught:
            engine.extract(text("conversation_auth.txt"), source=SOURCE)
    finally:
        elapsed = time.monotonic() - started
        engine.close()
        server.close()
    assert caught.value.context["timeout_s"] == 0.2
    assert len(server.accepted) == 2  # the first try and the one retry
    assert 0.35 <= elapsed < 3, elapsed


def test_connection_failure_maps_to_a_network_message(home: Path) -> None:
    api = FakeAPI([httpx2.ConnectError("connection refused")])
    with pytest.raises(ExtractionFailed, match="Could not connect to Claude's API"):
        extract(api, home, max_retries=0)


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (400, "Claude rejected the request as invalid (400): Your credit balance is too low"),
        (401, "Claude rejected the API key (401). Check it with `puffin-memory auth status`."),
        (403, "Claude refused this API key permission to use claude-haiku-4-5 (403)"),
        (404, "Claude does not know the model 'claude-haiku-4-5' (404)"),
        (429, "Claude's rate limit was reached (429)"),
        (500, "Claude's API had a server error (500)"),
        (529, "Claude is overloaded (529)"),
    ],
)
def test_each_status_maps_to_its_message(home: Path, status: int, expected: str) -> None:
    api = FakeAPI([error(status)])
    with pytest.raises(ExtractionFailed) as caught:
        extract(api, home, max_retries=0)
    assert caught.value.message.startswith(expected)
    assert caught.value.context["status"] == status
    assert KEY_FRAGMENT not in caught.value.message + repr(caught.value.context)


def test_html_instead_of_a_reply_is_an_api_failure(home: Path) -> None:
    page = httpx2.Response(
        200, content=b"<html>Proxy login</html>", headers={"content-type": "text/html"}
    )
    api = FakeAPI([page])
    with pytest.raises(ExtractionFailed, match="not a Messages API reply"):
        extract(api, home)
    assert len(api.requests) == 1


def test_broken_json_is_an_api_failure(home: Path) -> None:
    api = FakeAPI(
        [
            httpx2.Response(
                200, content=b'{"id": "msg_01', headers={"content-type": "application/json"}
            )
        ]
    )
    with pytest.raises(ExtractionFailed, match=r"not valid JSON|not a Messages API reply"):
        extract(api, home)


def test_usage_is_not_recorded_for_failures(home: Path) -> None:
    api = FakeAPI([error(401)])
    with pytest.raises(ExtractionFailed):
        extract(api, home)
    assert not (home / "usage.json").exists()


def test_budget_exceeded_before_any_request(home: Path) -> None:
    UsageLedger(home / "usage.json").record(
        "claude-haiku-4-5", input_tokens=9_000, output_tokens=1_000
    )
    api = FakeAPI([])
    with pytest.raises(BudgetExceeded, match="Daily token budget reached") as caught:
        extract(api, home, daily_token_budget=10_000)
    assert api.requests == []
    assert caught.value.code == "BUDGET_EXCEEDED"
    assert caught.value.context["tokensToday"] == 10_000
    assert caught.value.context["dailyTokenBudget"] == 10_000


def test_budget_zero_means_no_daily_limit(home: Path) -> None:
    UsageLedger(home / "usage.json").record("claude-haiku-4-5", input_tokens=10**9)
    api = FakeAPI([reply("extraction_reply.json")])
    result = extract(api, home, daily_token_budget=0)
    assert len(result.items) == 5


def test_retrieval_failures_are_retrieval_errors(home: Path) -> None:
    item = MemoryItem(category=Category.CODING_PREFERENCES, title="Async", content="Use async.")
    api = FakeAPI([error(500)])
    engine = make_engine(api, home, make_config(max_retries=0))
    with pytest.raises(RetrievalFailed, match=r"server error \(500\)") as caught:
        engine.deep_retrieve("async?", [Candidate(branch="b", item=item)])
    assert caught.value.code == "RETRIEVAL_FAILED"


def test_long_answers_are_streamed_and_short_ones_are_not(home: Path) -> None:
    from app.engines.claude.caller import STREAM_ABOVE_TOKENS

    api = FakeAPI([reply("extraction_reply.json")])
    result = extract(api, home)
    assert len(result.items) == 5  # read back from server-sent events
    body = api.body()
    assert body["stream"] is True and body["max_tokens"] > STREAM_ABOVE_TOKENS
