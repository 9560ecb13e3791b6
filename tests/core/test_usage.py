"""The usage ledger: tokens and estimated cost per model per day, safe across processes."""

from __future__ import annotations

import json
import multiprocessing
from datetime import date, timedelta
from pathlib import Path

import pytest

from app.core.usage import UsageLedger, estimate_cost, price_for


def test_records_add_up_per_model_and_day(home: Path) -> None:
    ledger = UsageLedger(home / "usage.json")
    ledger.record(
        "claude-haiku-4-5",
        input_tokens=1_000,
        output_tokens=200,
        cache_read_input_tokens=3_000,
        cache_creation_input_tokens=500,
    )
    ledger.record("claude-haiku-4-5", input_tokens=1_000, output_tokens=100)
    ledger.record("claude-sonnet-4-6", input_tokens=2_000, output_tokens=1_000)

    today = ledger.today()
    haiku = today["models"]["claude-haiku-4-5"]
    assert (haiku["input_tokens"], haiku["output_tokens"]) == (2_000, 300)
    assert (haiku["cache_read_input_tokens"], haiku["cache_creation_input_tokens"]) == (3_000, 500)
    assert haiku["requests"] == 2
    assert today["requests"] == 3
    assert ledger.tokens_today() == 2_000 + 300 + 3_000 + 500 + 3_000
    # Estimates: haiku $1/$5 per MTok (cache read 0.1x, write 1.25x), sonnet $3/$15.
    expected = (2_000 * 1 + 300 * 5 + 3_000 * 0.1 + 500 * 1.25 + 2_000 * 3 + 1_000 * 15) / 1e6
    assert today["cost_usd"] == pytest.approx(expected)


def test_file_is_plain_json_by_day_and_model(home: Path) -> None:
    ledger = UsageLedger(home / "usage.json")
    ledger.record("claude-haiku-4-5", input_tokens=10, day=date(2025, 3, 4))
    data = json.loads((home / "usage.json").read_text())
    assert data["days"]["2025-03-04"]["claude-haiku-4-5"]["input_tokens"] == 10
    assert not list(home.glob("*.tmp"))


def test_month_totals_only_that_month(home: Path) -> None:
    ledger = UsageLedger(home / "usage.json")
    ledger.record("claude-haiku-4-5", input_tokens=10, day=date(2025, 3, 1))
    ledger.record("claude-haiku-4-5", input_tokens=20, day=date(2025, 3, 31))
    ledger.record("claude-haiku-4-5", input_tokens=40, day=date(2025, 4, 1))
    march = ledger.month(2025, 3)
    assert march["input_tokens"] == 30 and march["month"] == "2025-03"
    assert march["models"]["claude-haiku-4-5"]["requests"] == 2
    assert ledger.month()["requests"] == 0  # the current month has nothing


def test_old_days_are_dropped(home: Path) -> None:
    ledger = UsageLedger(home / "usage.json")
    start = date(2024, 1, 1)
    for offset in (0, 200, 500):
        ledger.record("claude-haiku-4-5", input_tokens=1, day=start + timedelta(days=offset))
    days = json.loads((home / "usage.json").read_text())["days"]
    assert "2024-01-01" not in days and len(days) == 2


def test_a_broken_ledger_is_moved_aside_not_fatal(home: Path) -> None:
    path = home / "usage.json"
    path.write_text("{not json")
    ledger = UsageLedger(path)
    assert ledger.tokens_today() == 0
    ledger.record("claude-haiku-4-5", input_tokens=5)
    assert ledger.tokens_today() == 5
    assert len(list(home.glob("usage.json.broken-*"))) == 1


def test_bad_values_in_the_file_count_as_zero(home: Path) -> None:
    path = home / "usage.json"
    today = UsageLedger(path).today()["date"]
    path.write_text(
        json.dumps(
            {
                "days": {
                    today: {
                        "m": {"input_tokens": "lots", "output_tokens": -5, "cost_usd": True},
                        "n": 3,
                    },
                    "not-a-day": {"m": {"input_tokens": 9}},
                }
            }
        )
    )
    ledger = UsageLedger(path)
    assert ledger.tokens_today() == 0
    ledger.record("m", input_tokens=2)
    assert ledger.tokens_today() == 2


def test_prices_by_family() -> None:
    assert price_for("claude-haiku-4-5-20251001").input == 1.0
    assert price_for("claude-sonnet-4-6").output == 15.0
    assert price_for("claude-opus-4-1-20250805").input == 15.0
    assert price_for("claude-opus-4-6").input == 5.0
    assert price_for("some-new-model").input == 3.0  # unknown: priced like Sonnet
    tokens = {"input_tokens": 1_000_000}
    assert estimate_cost("claude-haiku-4-5", tokens, batch=True) == pytest.approx(0.5)


def _record_many(path: str, count: int) -> None:
    ledger = UsageLedger(Path(path))
    for _ in range(count):
        ledger.record("claude-haiku-4-5", input_tokens=1)


def test_concurrent_processes_lose_no_update(home: Path) -> None:
    path = str(home / "usage.json")
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_record_many, args=(path, 25)) for _ in range(3)]
    for worker in workers:
        worker.start()
    _record_many(path, 25)
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    assert UsageLedger(Path(path)).today()["requests"] == 100
