"""What an agent's turn gives as a bug's cause (dialogue._diagnosis)."""

from __future__ import annotations

import pytest

from app.engines.offline.dialogue import _diagnosis


@pytest.mark.parametrize(
    "offer",
    [
        "To stay safe I could keep the completion-handler versions too, so nothing else breaks.",
        "For the year, I can either hardcode 2025 or compute it, so it never goes stale.",
        "We could also add a retry here, so a flaky network does not fail the sync.",
    ],
)
def test_an_option_the_agent_offers_is_no_cause(offer: str) -> None:
    assert _diagnosis([offer], looked=True) is None


def test_a_cause_is_still_a_cause() -> None:
    found = _diagnosis(
        [
            "The worker reads the config before the volume is mounted, so it starts with the "
            "defaults and never retries.",
        ],
        looked=True,
    )
    assert found is not None
    assert "volume is mounted" in found[0]
