"""The price table for Claude models: one row per model id, each with its source and date."""

from __future__ import annotations

import pytest

from app.core.config import ModelSettings
from app.core.usage import MODEL_PRICES, PRICES_CHECKED, estimate_cost, price_for


@pytest.mark.parametrize("model", sorted(set(ModelSettings().model_dump().values())))
def test_every_default_model_has_its_own_row(model: str) -> None:
    price = price_for(model)
    assert price is MODEL_PRICES[model]
    assert PRICES_CHECKED in price.source


def test_every_row_says_where_its_prices_come_from() -> None:
    assert all(price.source and PRICES_CHECKED in price.source for price in MODEL_PRICES.values())


def test_sonnet_5_5_is_no_longer_priced_like_sonnet_4() -> None:
    """The old table priced it by family at $3 / $15: half again too high."""
    price = price_for("claude-sonnet-5-5")
    assert (price.input, price.output, price.cache_read) == (2.0, 10.0, 0.10)
    tokens = {"input_tokens": 1_000_000, "output_tokens": 1_000_000}
    assert estimate_cost("claude-sonnet-5-5", tokens) == pytest.approx(12.0)
    assert estimate_cost("claude-sonnet-4-6", tokens) == pytest.approx(18.0)


def test_unverified_rows_say_so() -> None:
    assert price_for("claude-haiku-5-5").source.startswith("UNVERIFIED")


@pytest.mark.parametrize(
    ("model", "base"),
    [
        ("claude-haiku-4-5-20251001", "claude-haiku-4-5"),
        ("claude-sonnet-5-5[1m]", "claude-sonnet-5-5"),
        ("claude-opus-4-1-20250805", "claude-opus-4-1"),
    ],
)
def test_dated_and_suffixed_ids_use_their_base_row(model: str, base: str) -> None:
    assert price_for(model) is MODEL_PRICES[base]


def test_unknown_ids_fall_back_to_a_family_estimate() -> None:
    assert price_for("claude-haiku-9").source.startswith("family estimate")
    assert price_for("some-new-model").input == 3.0
