"""Shared test setup: offscreen Qt before anything imports it, temp homes, the real corpus."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Tests must never see a developer's real key or home.
os.environ.pop("ANTHROPIC_API_KEY", None)
os.environ.pop("PUFFIN_MEMORY_HOME", None)

REPO = Path(__file__).resolve().parents[1]
CORPUS = (REPO.parent / "shared" / "corpus").resolve()
FIXTURES = REPO / "tests" / "fixtures"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A fresh, empty memory home."""
    path = tmp_path / "memory-home"
    path.mkdir()
    return path


@pytest.fixture
def corpus_dir() -> Path:
    """../shared/corpus, or skip when it is absent (a user's fresh clone)."""
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not present")
    return CORPUS


@pytest.fixture
def fixtures_dir() -> Path:
    """tests/fixtures."""
    return FIXTURES


@pytest.fixture(autouse=True)
def answer_contract(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every answer the API gives in a test matches its operation's answer type
    (`app/core/answers.py`); the test fails at teardown otherwise."""
    from app.core.api import MemoryApi
    from tests.contract import problems

    found: list[str] = []
    invoke = MemoryApi.invoke

    def checked(self: MemoryApi, channel: str, payload: dict[str, Any] | None = None) -> Any:
        reply = invoke(self, channel, payload)
        found.extend(problems(channel, reply))
        return reply

    monkeypatch.setattr(MemoryApi, "invoke", checked)
    yield
    assert not found, "answers that break their declared types:\n" + "\n".join(found[:20])
