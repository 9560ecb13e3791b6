"""How the user's next words move the agent's statements (extract_merge._apply_responses)."""

from __future__ import annotations

import pytest

from app.core.models import Category
from app.engines.offline.extract import skip_section
from app.engines.offline.extract_items import Candidate, Family
from app.engines.offline.extract_merge import ACK_BONUS, REJECT_PENALTY, _apply_responses
from app.engines.offline.extract_text import Speaker, read_statements, split_turns

REPORT = (
    "User: map the errors to exit codes please\n\n"
    "Assistant: Done:\n"
    "- `src/error.rs`: `SliceError` (thiserror) with `Open`, `Range` and `Io` variants.\n"
    "- `main.rs` maps `SliceError::Range` to exit code 2, everything else to 1.\n"
    "- Messages go to stderr as `logslice: <message>`.\n\n"
    "{closing}\n\n"
    "User: {reply}\n"
)


def _moved(closing: str, reply: str) -> float:
    """How far the agent's first report line moved, from 0.75."""
    text = REPORT.format(closing=closing, reply=reply)
    statements = read_statements(split_turns(text), skip_section).statements
    index = next(i for i, s in enumerate(statements) if "SliceError" in s.text)
    candidate = Candidate(
        category=Category.IMPLEMENTATION_NOTES,
        speaker=Speaker.AGENT,
        turn=statements[index].turn,
        index=index,
        content=statements[index].text,
        confidence=0.75,
        family=Family.LESSON,
    )
    _apply_responses(statements, [candidate])
    return round(candidate.confidence - 0.75, 2)


@pytest.mark.parametrize(
    ("closing", "reply"),
    [
        (
            "I could also add `--json` error output for scripting if that's useful.",
            "no need. merged, thx",
        ),
        ("Let me know if you want the old codes kept as aliases.", "nope, merged"),
        ("Should I also update the man page?", "no, I'll do that myself"),
        (
            "One alternative worth mentioning: I could introduce miette for fancier reports. "
            "Want me to do that?",
            "no miette. plain messages are fine",
        ),
    ],
)
def test_turning_down_the_closing_offer_is_no_rejection_of_the_report(
    closing: str, reply: str
) -> None:
    assert _moved(closing, reply) == 0.0


@pytest.mark.parametrize(
    ("closing", "reply"),
    [
        ("Want me to merge it?", "no, the codes are wrong, usage errors are 64"),
        ("All tests pass.", "no, revert that, we keep exit code 1 for everything"),
    ],
)
def test_a_rejection_of_the_work_itself_still_counts(closing: str, reply: str) -> None:
    assert _moved(closing, reply) == -REJECT_PENALTY


def test_an_acknowledgement_still_raises_the_report() -> None:
    assert (
        _moved("I could also add `--json` output if that's useful.", "great, merged") == ACK_BONUS
    )


OFFERED = (
    "User: port the invoice jobs to Dramatiq\n\n"
    "Assistant: Done: `billing/actors.py` defines the two actors on the RabbitMQ broker and the "
    "Celery app is gone. Tests pass. I could also add a Prometheus middleware for the actors "
    "if that's useful.\n\n"
    "User: {reply}\n"
)


def test_a_refusal_said_alone_makes_no_decision_of_the_next_point() -> None:
    from app.engines.offline.extract import extract

    text = OFFERED.format(reply="no need. Ci takes 14 min on every PR. Was it always that slow.")
    found = extract(text, source="b").items
    assert not any("14 min" in item.content for item in found), [i.content for i in found]
    assert not any(item.content.lower().startswith("need") for item in found)


def test_a_refusal_with_its_reason_still_decides() -> None:
    from app.engines.offline.extract import extract

    reply = "no, no Prometheus middleware: the actors already report through the statsd exporter."
    found = extract(OFFERED.format(reply=reply), source="b").items
    assert any("statsd exporter" in item.content for item in found), [i.content for i in found]
