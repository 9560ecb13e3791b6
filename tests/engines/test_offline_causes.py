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


def test_the_agent_agreeing_with_a_change_is_no_cause() -> None:
    # After "we're moving the broker off redis to rabbitmq": the reason for the change the
    # user decided, not what went wrong.
    said = ["That makes sense: RabbitMQ persists messages, so a restart won't lose queued jobs."]
    assert _diagnosis(said, looked=False) is None


def test_a_broker_is_no_trouble() -> None:
    from app.engines.offline.dialogue import _symptom

    report = (
        "the email jobs got lost twice this week when redis restarted during a deploy. "
        "we're moving the dramatiq broker off redis to rabbitmq, redis stays only as the cache"
    )
    assert _symptom(report).startswith("the email jobs got lost")
