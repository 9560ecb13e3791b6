"""Floors for the injection screen on held-out cases (bench/injection.py prints the figures).

The cases in tests/fixtures/injection were written before the screen was run on them; the
screen was tuned on dev only. The test split's figures are what the project claims.
"""

from __future__ import annotations

from types import ModuleType

import pytest

from tests.benches import load_bench


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_bench("injection")


def test_held_out_attacks_are_caught_and_look_alikes_pass(bench: ModuleType) -> None:
    score = bench.evaluate("test")
    assert score.caught / score.attacks >= 0.84, score.missed
    assert len(score.false_alarms) <= 1, score.false_alarms


def test_dev_split_is_fully_screened(bench: ModuleType) -> None:
    score = bench.evaluate("dev")
    assert score.missed == [] and score.false_alarms == []
