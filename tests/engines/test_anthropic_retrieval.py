"""Deep retrieval tiers through Claude: few calls, invented ids ignored, cross-branch only."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.engine import Candidate
from app.core.format import parse
from app.core.models import Category
from tests.fixtures.anthropic.fake_api import (
    FakeAPI,
    asked_for,
    fast_retries,
    json_reply,
    make_engine,
    reply,
    reply_json,
    text,
    user_text,
)

QUERY = "How should a module make HTTP calls? My key is sk-ant-api03-Qw3Er4Ty5Ui6Op7As8Df9Gh0Jk"


@pytest.fixture(autouse=True)
def _fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    fast_retries(monkeypatch)


def candidates() -> list[Candidate]:
    auth = parse(reply_json("evolution_reply.json")["file"])
    billing = parse(text("branch_billing.md"))
    return [
        *(
            Candidate(branch=auth.branch_id, project="spotter", item=i, relevance=0.5)
            for i in auth.all_items()
        ),
        *(
            Candidate(branch=billing.branch_id, project="spotter", item=i, relevance=0.4)
            for i in billing.all_items()
        ),
    ]


def test_all_tiers_when_the_selected_branch_is_not_enough(home: Path) -> None:
    api = FakeAPI(
        [
            reply("retrieval_plan_reply.json"),
            reply("retrieval_rank_insufficient_reply.json"),
            reply("retrieval_deep_reply.json"),
            reply("retrieval_conflicts_reply.json"),
        ]
    )

    answer = make_engine(api, home).deep_retrieve(QUERY, candidates())

    assert answer.path == "anthropic"
    # The invented id arch-00000000 is dropped; the billing item comes from the deep search.
    assert answer.ranked == [
        ("arch-7c5008ff", 0.96),
        ("arch-b111c0de", 0.88),
        ("conv-b9f90ef8", 0.41),
    ]
    [conflict] = answer.conflicts  # the same-branch "conflict" is not cross-branch: dropped
    assert conflict.category is Category.ARCHITECTURAL_DECISIONS
    assert conflict.item_ids == ["arch-7c5008ff", "arch-b111c0de"]
    assert conflict.branches == ["spotter/billing", "spotter/feature-auth"]

    plan, rank, deep, conflicts = api.bodies()
    assert [asked_for(b) for b in api.bodies()] == [
        "plan_search",
        "rank_memories",
        "rank_memories",
        "report_conflicts",
    ]
    assert all(b["model"] == "claude-haiku-4-5" for b in api.bodies())
    assert "spotter/billing" in user_text(plan) and "Billing owns its HTTP client" in user_text(
        plan
    )
    assert "[REDACTED:anthropic_key]" in user_text(plan)
    assert "sk-ant-api03-Qw3" not in api.requests[0].content.decode()
    # Tier 3 sees only the selected branch, with the synthesised query; tier 4 the rest.
    assert "arch-7c5008ff" in user_text(rank) and "arch-b111c0de" not in user_text(rank)
    assert "shared httpx AsyncClient" in user_text(rank)
    assert "arch-b111c0de" in user_text(deep) and "arch-7c5008ff" not in user_text(deep)
    assert "arch-7c5008ff" in user_text(conflicts) and "arch-b111c0de" in user_text(conflicts)


def test_sufficient_answer_from_one_branch_takes_two_calls(home: Path) -> None:
    api = FakeAPI(
        [reply("retrieval_plan_reply.json"), reply("retrieval_rank_sufficient_reply.json")]
    )

    answer = make_engine(api, home).deep_retrieve(QUERY, candidates())

    assert answer.ranked == [("arch-7c5008ff", 0.96), ("pref-0e1f2a3b", 0.3)]
    assert answer.conflicts == []
    assert len(api.requests) == 2


def test_single_branch_skips_branch_selection(home: Path) -> None:
    auth_only = [c for c in candidates() if c.branch == "spotter/feature-auth"]
    api = FakeAPI([reply("retrieval_rank_sufficient_reply.json")])

    answer = make_engine(api, home).deep_retrieve("http client?", auth_only)

    assert answer.ranked[0] == ("arch-7c5008ff", 0.96)
    assert [asked_for(b) for b in api.bodies()] == ["rank_memories"]


def test_no_candidates_no_calls(home: Path) -> None:
    api = FakeAPI([])
    answer = make_engine(api, home).deep_retrieve("anything", [])
    assert answer.ranked == [] and api.requests == []


def test_out_of_range_relevance_is_asked_again(home: Path) -> None:
    auth_only = [c for c in candidates() if c.branch == "spotter/feature-auth"]
    bad = json_reply({"ranked": [{"id": "arch-7c5008ff", "relevance": 7}], "sufficient": True})
    api = FakeAPI([bad, reply("retrieval_rank_sufficient_reply.json")])

    answer = make_engine(api, home).deep_retrieve("http client?", auth_only)

    assert answer.ranked[0] == ("arch-7c5008ff", 0.96)
    assert "ranked.0.relevance" in user_text(api.body(1))
