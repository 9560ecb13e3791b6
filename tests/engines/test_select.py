"""Choosing the engine, the hand-over to the offline engine (budget, API failures, the circuit
breaker), and the status view."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx2
import keyring
import keyring.backends.fail
import pytest

from app.core.config import Config
from app.core.engine import Candidate
from app.core.errors import InvalidInput
from app.core.format import parse
from app.core.guard import check_evolution
from app.core.usage import UsageLedger
from app.engines.offline import OfflineEngine
from app.engines.select import ClaudeWithFallback, build_engine, describe_engine
from tests.fixtures.anthropic.fake_api import (
    MODELS,
    SOURCE,
    FakeAPI,
    error,
    fast_retries,
    make_config,
    reply,
    text,
)

KEY = "sk-ant-api03-select-test-key-000000000000wxyz"


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No real key, no real keyring (the fail backend, as on a headless Linux box)."""
    fast_retries(monkeypatch)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    previous = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.fail.Keyring())
    yield
    keyring.set_keyring(previous)


def over_budget(home: Path) -> None:
    UsageLedger(home / "usage.json").record("claude-haiku-4-5", input_tokens=2_000)


def test_offline_is_offline(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    assert isinstance(build_engine(Config(engine="offline"), home), OfflineEngine)
    assert isinstance(build_engine(Config(), home, override="offline"), OfflineEngine)


def test_auto_without_a_key_is_offline(home: Path) -> None:
    assert isinstance(build_engine(Config(engine="auto"), home), OfflineEngine)


def test_auto_with_a_key_is_claude(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    engine = build_engine(Config(engine="auto"), home)
    assert isinstance(engine, ClaudeWithFallback)
    assert engine.name == "anthropic" and engine.status_note is None
    assert KEY not in repr(engine.claude) and KEY not in repr(engine.claude.caller)


def test_anthropic_without_a_key_says_how_to_add_one(home: Path) -> None:
    with pytest.raises(InvalidInput, match="needs an API key") as caught:
        build_engine(Config(), home, override="anthropic")
    assert "NoKeyringError" in caught.value.message
    assert "puffin-memory auth set" in caught.value.message


def test_unknown_engine_is_invalid_input(home: Path) -> None:
    with pytest.raises(InvalidInput, match="Unknown engine 'gpt'"):
        build_engine(Config(), home, override="gpt")


def test_http_client_must_be_an_httpx2_client(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with pytest.raises(InvalidInput, match=r"httpx2\.Client"):
        build_engine(Config(), home, override="anthropic", http_client=object())


def test_budget_reached_hands_the_call_to_the_offline_engine(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    over_budget(home)
    api = FakeAPI([])
    engine = build_engine(
        make_config(daily_token_budget=1_000), home, override="anthropic", http_client=api.client()
    )
    assert isinstance(engine, ClaudeWithFallback)

    result = engine.extract(text("conversation_auth.txt"), source=SOURCE)

    assert api.requests == []
    assert result.engine == "offline-budget"
    assert any("Daily token budget reached" in n for n in result.notes)
    assert engine.status_note == (
        "Daily token budget reached: using the offline engine until tomorrow"
    )
    current = parse(text("branch_before.md"))
    evolved = engine.evolve(current, result.items, branch_id=current.branch_id)
    assert evolved.path == "offline-budget" and api.requests == []


def claude(
    home: Path, api: FakeAPI, monkeypatch: pytest.MonkeyPatch, **config: object
) -> ClaudeWithFallback:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    engine = build_engine(
        make_config(**config), home, override="anthropic", http_client=api.client()
    )
    assert isinstance(engine, ClaudeWithFallback)
    return engine


@pytest.mark.parametrize(
    ("failure", "why"),
    [
        (error(400), "rejected the request as invalid (400)"),
        (error(401), "rejected the API key (401)"),
        (error(500), "server error (500)"),
        (error(529), "overloaded (529)"),
        (httpx2.ReadTimeout("read timed out"), "did not answer within 5 s"),
        (httpx2.ConnectError("connection refused"), "Could not connect"),
        (
            reply("extraction_reply.json", content=[{"type": "text", "text": '{"no'}]),
            "did not match the expected format twice",
        ),
        (
            reply(
                "extraction_reply.json",
                stop_reason="refusal",
                content=[{"type": "text", "text": ""}],
            ),
            "stop reason: refusal",
        ),
        (reply("extraction_reply.json", stop_reason="max_tokens"), "cut off at the output limit"),
    ],
    ids=["400", "401", "500", "529", "timeout", "connection", "invalid", "refusal", "max_tokens"],
)
def test_any_api_failure_hands_the_thread_to_the_offline_engine(
    home: Path, monkeypatch: pytest.MonkeyPatch, failure: object, why: str
) -> None:
    api = FakeAPI([failure, failure])  # type: ignore[list-item]
    engine = claude(home, api, monkeypatch, max_retries=0)
    current = parse(text("branch_before.md"))

    result = engine.extract(text("conversation_auth.txt"), source=SOURCE)
    evolved = engine.evolve(current, result.items, branch_id=current.branch_id)

    assert result.engine == "offline-fallback" and result.items
    assert any(
        why in note and "offline engine was used instead" in note for note in result.notes
    ), result.notes
    # The thread's merge is offline too, without calling again: one failure per thread.
    assert evolved.path == "offline-fallback"
    assert "extraction of this thread failed" in evolved.notes[-1]
    assert {i.id for i in result.items} <= {i.id for i in evolved.memory.all_items()}
    assert {i.id for i in current.all_items()} <= {i.id for i in evolved.memory.all_items()} | {
        i.id for c in evolved.memory.contradictions for i in c.items
    }
    assert len(api.requests) == (2 if why.startswith("did not match") else 1)
    assert KEY not in repr(result.notes)
    assert engine.status_note is not None and "offline engine stood in" in engine.status_note


def test_api_failure_during_evolution_falls_back_to_the_offline_merge(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = FakeAPI([reply("extraction_reply.json"), error(529)])
    engine = claude(home, api, monkeypatch, max_retries=0)
    current = parse(text("branch_before.md"))

    result = engine.extract(text("conversation_auth.txt"), source=SOURCE)
    evolved = engine.evolve(current, result.items, branch_id=current.branch_id)

    assert result.engine == "anthropic"
    assert evolved.path == "offline-fallback"
    assert "overloaded (529)" in evolved.notes[-1]
    # The offline merge folds Claude's items in (some into existing ones); the guard agrees.
    assert check_evolution(current, evolved.memory, result.items) == []
    assert evolved.memory.item_count() > current.item_count()


def test_consolidation_and_retrieval_fall_back_too(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = FakeAPI([error(500), error(500)])
    engine = claude(home, api, monkeypatch, max_retries=0)
    memory = parse(text("branch_duplicates.md"))

    consolidated = engine.consolidate(memory)
    items = list(memory.all_items())
    answer = engine.deep_retrieve(
        "http client?", [Candidate(branch=memory.branch_id, item=i) for i in items]
    )

    assert consolidated.path == "offline-fallback" and "(500)" in consolidated.notes[-1]
    assert answer.path == "offline-fallback"


def test_breaker_stops_calling_after_consecutive_failures(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = FakeAPI([error(500)] * 3)
    engine = claude(home, api, monkeypatch, max_retries=0, breaker_failures=3)

    results = [
        engine.extract(text("conversation_auth.txt"), source=f"thread_{n}") for n in range(5)
    ]

    assert len(api.requests) == 3  # threads 4 and 5 never reach the API
    assert all(r.engine == "offline-fallback" and r.items for r in results)
    assert "Claude was not called: Claude failed 3 times in a row" in results[3].notes[-1]
    assert "server error (500)" in results[4].notes[-1]
    assert engine.breaker_open
    assert engine.status_note is not None and "3 times in a row" in engine.status_note


def test_breaker_tries_again_after_the_cool_down_and_closes_on_success(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = FakeAPI([error(500), error(500), reply("extraction_reply.json")])
    engine = claude(home, api, monkeypatch, max_retries=0, breaker_failures=2)
    now = [0.0]
    engine._clock = lambda: now[0]

    for n in range(3):
        engine.extract(text("conversation_auth.txt"), source=f"thread_{n}")
    assert len(api.requests) == 2 and engine.breaker_open

    now[0] += engine.cooldown_s + 1
    result = engine.extract(text("conversation_auth.txt"), source="thread_9")

    assert result.engine == "anthropic" and len(api.requests) == 3
    assert not engine.breaker_open and engine.status_note is None


def test_a_success_resets_the_count_of_failures(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = FakeAPI([error(500), reply("extraction_reply.json"), error(500), error(500)])
    engine = claude(home, api, monkeypatch, max_retries=0, breaker_failures=3)
    for n in range(4):
        engine.extract(text("conversation_auth.txt"), source=f"thread_{n}")
    assert not engine.breaker_open and engine.consecutive_failures == 2


def test_breaker_zero_never_stops_calling(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    api = FakeAPI([error(500)] * 5)
    engine = claude(home, api, monkeypatch, max_retries=0, breaker_failures=0)
    for n in range(5):
        engine.extract(text("conversation_auth.txt"), source=f"thread_{n}")
    assert len(api.requests) == 5 and not engine.breaker_open


def test_invalid_input_is_not_hidden(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = claude(home, FakeAPI([]), monkeypatch)
    with pytest.raises(InvalidInput):
        engine.evolve(None, [], branch_id=" ")


def test_status_note_clears_when_claude_answers_again(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    over_budget(home)
    api = FakeAPI([reply("extraction_reply.json")])
    config = make_config(daily_token_budget=1_000)
    engine = build_engine(config, home, override="anthropic", http_client=api.client())
    assert isinstance(engine, ClaudeWithFallback)
    engine.extract("User: hi", source=SOURCE)
    assert engine.status_note is not None
    config.daily_token_budget = 10**9  # a new day, or a raised budget
    engine.extract(text("conversation_auth.txt"), source=SOURCE)
    assert engine.status_note is None and len(api.requests) == 1


def test_describe_engine_without_a_key(home: Path) -> None:
    info = describe_engine(Config(), home)
    assert info["engine"] == "offline" and info["ready"] is True
    assert info["keyConfigured"] is False
    assert "NoKeyringError" in info["keyOrigin"]
    assert info["note"].startswith("Using the offline engine")


def test_describe_engine_with_a_key_and_usage(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    over_budget(home)
    info = describe_engine(Config(models=MODELS, daily_token_budget=1_000), home, check_models=True)
    assert info["engine"] == "anthropic"
    assert info["keyOrigin"] == "environment variable ANTHROPIC_API_KEY"
    assert info["models"]["extraction"] == "claude-haiku-4-5"
    assert (info["tokensToday"], info["budgetReached"]) == (2_000, True)
    assert info["note"].startswith("Daily token budget reached")
    assert "deprecatedModels" not in info
    assert KEY not in repr(info)


def test_describe_engine_flags_deprecated_models(home: Path) -> None:
    # A configured model the SDK calls deprecated is named in status.
    config = Config()
    config.models.evolution = "claude-sonnet-4-5"
    info = describe_engine(config, home, check_models=True)
    assert "claude-sonnet-4-5" in info["deprecatedModels"]
    assert "deprecatedModels" not in describe_engine(Config(), home, check_models=True)
