"""Choosing the engine, the budget hand-over to the offline engine, and the status view."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import keyring
import keyring.backends.fail
import pytest

from app.core.config import Config
from app.core.errors import ExtractionFailed, InvalidInput
from app.core.format import parse
from app.core.usage import UsageLedger
from app.engines.offline import OfflineEngine
from app.engines.select import ClaudeWithBudgetFallback, build_engine, describe_engine
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
    assert isinstance(engine, ClaudeWithBudgetFallback)
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


def test_http_client_must_be_an_async_httpx2_client(home: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with pytest.raises(InvalidInput, match=r"httpx2\.AsyncClient"):
        build_engine(Config(), home, override="anthropic", http_client=object())


def test_budget_reached_hands_the_call_to_the_offline_engine(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    over_budget(home)
    api = FakeAPI([])
    engine = build_engine(make_config(daily_token_budget=1_000), home, override="anthropic",
                          http_client=api.client())
    assert isinstance(engine, ClaudeWithBudgetFallback)

    result = asyncio.run(engine.extract(text("conversation_auth.txt"), source=SOURCE))

    assert api.requests == []
    assert result.engine == "offline-budget"
    assert any("Daily token budget reached" in n for n in result.notes)
    assert engine.status_note == (
        "Daily token budget reached: using the offline engine until tomorrow"
    )
    current = parse(text("branch_before.md"))
    evolved = asyncio.run(engine.evolve(current, result.items, branch_id=current.branch_id))
    assert evolved.path == "offline-budget" and api.requests == []


def test_api_errors_are_not_hidden_behind_the_offline_engine(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    api = FakeAPI([error(401)])
    engine = build_engine(make_config(), home, override="anthropic", http_client=api.client())
    with pytest.raises(ExtractionFailed, match=r"\(401\)"):
        asyncio.run(engine.extract(text("conversation_auth.txt"), source=SOURCE))
    assert getattr(engine, "status_note", None) is None


def test_status_note_clears_when_claude_answers_again(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    over_budget(home)
    api = FakeAPI([reply("extraction_reply.json")])
    config = make_config(daily_token_budget=1_000)
    engine = build_engine(config, home, override="anthropic", http_client=api.client())
    assert isinstance(engine, ClaudeWithBudgetFallback)
    asyncio.run(engine.extract("User: hi", source=SOURCE))
    assert engine.status_note is not None
    config.daily_token_budget = 10**9  # a new day, or a raised budget
    asyncio.run(engine.extract(text("conversation_auth.txt"), source=SOURCE))
    assert engine.status_note is None and len(api.requests) == 1


def test_describe_engine_without_a_key(home: Path) -> None:
    info = describe_engine(Config(), home)
    assert info["engine"] == "offline" and info["ready"] is True
    assert info["keyConfigured"] is False
    assert "NoKeyringError" in info["keyOrigin"]
    assert info["note"].startswith("Using the offline engine")


def test_describe_engine_with_a_key_and_usage(home: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    over_budget(home)
    info = describe_engine(Config(models=MODELS, daily_token_budget=1_000), home,
                           check_models=True)
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
