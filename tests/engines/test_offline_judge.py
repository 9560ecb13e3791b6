"""The learned judge of the offline engine (`app/engines/offline/judge.py`).

Without a model file extraction is exactly the rules'; with a model, plain statements are
kept only above `add` and rule candidates leave below `veto`. The shipped model keeps every
rule candidate the user took part in (its veto is 0: vetoing those cost sequence checks of
the guard sets, see docs/decisions.md, "Offline engine v2, twelfth part"); one only the agent
said leaves below `agent_veto` (`agent_veto_unsure` when the rules were unsure of it;
thirteenth part).
"""

from __future__ import annotations

import json
import math
from datetime import date
from pathlib import Path

import pytest

from app.core.models import MemoryItem
from app.engines.offline import extract as extract_module
from app.engines.offline import judge
from app.engines.offline.extract import extract, read_candidates

TEXT = (
    "User: we keep the DTOs in /contracts, next to nothing else.\n\n"
    "Assistant: Moved `OrderDto` to contracts/order.ts and updated the imports.\n\n"
    "User: always use named exports in this repo.\n"
)


def _extract_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, model: dict[str, object], text: str
) -> list[MemoryItem]:
    """The items of `text` extracted with `model` as the judge's model file."""
    path = tmp_path / "judge_model.json"
    path.write_text(json.dumps(model), encoding="utf-8")
    monkeypatch.setattr(judge, "MODEL_FILE", path)
    judge.load_judge.cache_clear()
    try:
        return list(extract(text, source="t", today=date(2026, 1, 1)).items)
    finally:
        judge.load_judge.cache_clear()


def test_without_a_model_the_rules_alone_decide(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(judge, "MODEL_FILE", tmp_path / "missing.json")
    judge.load_judge.cache_clear()
    try:
        assert judge.load_judge() is None
        rules, _context, _notes = read_candidates(TEXT)
        assert not any(c.plain for c in rules)
        kept = extract(TEXT, source="t", today=date(2026, 1, 1)).items
    finally:
        judge.load_judge.cache_clear()
    assert [i.content for i in kept] == [c.content for c in rules if c.confidence >= 0.5]


def test_the_shipped_model_only_adds_plain_statements() -> None:
    shipped = judge.load_judge()
    assert shipped is not None
    assert shipped.veto == 0.0
    assert 0.0 < shipped.agent_veto <= shipped.agent_veto_unsure < shipped.add
    assert not shipped.rules  # it reads the statement, not how the rules built it
    assert 0.5 < shipped.add < 1.0
    rules, _context, _notes = read_candidates(TEXT)
    kept = [i.content for i in extract(TEXT, source="t", today=date(2026, 1, 1)).items]
    assert all(c.content in kept for c in rules if c.confidence >= 0.5)


AGENT_REMARK = (
    "User: the checkout page is slow, fix it please.\n\n"
    "Assistant: Note for later: the staging database has no index on carts.user_id, I'd "
    "suggest adding one.\n\n"
    "User: always use named exports in this repo.\n"
)


@pytest.mark.parametrize(
    ("agent_veto", "unsure", "kept_remark"),
    [(0.0, 0.0, True), (1.1, 0.0, True), (0.0, 1.1, False), (1.1, 1.1, False)],
)
def test_agent_veto_removes_only_what_the_agent_alone_said(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    agent_veto: float,
    unsure: float,
    kept_remark: bool,
) -> None:
    rules, _context, _notes = read_candidates(AGENT_REMARK)
    remark = next(c for c in rules if "carts.user_id" in c.content)
    assert extract_module._agent_only(remark)
    assert remark.confidence < extract_module.SURE  # so `agent_veto_unsure` is its bar
    model = {
        "add": 1.1,
        "veto": 0.0,
        "agent_veto": agent_veto,
        "agent_veto_unsure": unsure,
        "weights": {},
    }
    items = _extract_with(tmp_path, monkeypatch, model, AGENT_REMARK)
    texts = " ".join(i.content for i in items)
    assert ("carts.user_id" in texts) is kept_remark
    assert "named exports" in texts  # the user's rule is never the agent veto's to take


AGENT_ADVICE = (
    "User: how should the publish job get the npm token?\n\n"
    "Assistant: Store it as the repository secret NPM_TOKEN and read it with "
    "`${{ secrets.NPM_TOKEN }}` in the publish step. Never put the token in the workflow "
    "file itself.\n\n"
    "User: always use named exports in this repo.\n"
)


@pytest.mark.parametrize("score", [0.35, 0.45])
def test_the_agents_advice_alone_needs_more_of_the_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, score: float
) -> None:
    # A rule only the agent gave is advice: under `AGENT_ADVICE_VETO` it leaves even where
    # the model's own agent vetoes are 0 (docs/decisions.md, twenty-eighth part).
    rules, _context, _notes = read_candidates(AGENT_ADVICE)
    advice = next(c for c in rules if "workflow file" in c.content)
    assert extract_module._agent_only(advice)
    assert advice.family in extract_module._ADVICE
    model = tmp_path / "judge_model.json"
    bias = math.log(score / (1 - score))
    model.write_text(
        json.dumps(
            {
                "add": 1.1,
                "veto": 0.0,
                "agent_veto": 0.0,
                "agent_veto_unsure": 0.0,
                "weights": {str(judge._bucket("#bias")): bias},
            }
        ),
        encoding="utf-8",
    )
    monkeypatch.setattr(judge, "MODEL_FILE", model)
    judge.load_judge.cache_clear()
    try:
        shipped = judge.load_judge()
        assert shipped is not None
        _rules, context, _notes = read_candidates(AGENT_ADVICE, plain=True, judge=shipped)
        feats = judge.features(advice, context, extra=False, rules=shipped.rules)
        assert shipped.score(feats) == pytest.approx(score, abs=0.02)
        items = extract(AGENT_ADVICE, source="t", today=date(2026, 1, 1)).items
    finally:
        judge.load_judge.cache_clear()
    texts = " ".join(i.content for i in items)
    assert ("workflow file" in texts) is (score >= extract_module.AGENT_ADVICE_VETO)
    assert "named exports" in texts


def test_plain_statements_are_offered_to_the_judge() -> None:
    candidates, context, _notes = read_candidates(TEXT, plain=True)
    plain = [c for c in candidates if c.plain]
    assert any("contracts" in c.content for c in plain)
    feats = judge.features(plain[0], context, extra=True)
    assert feats and all(0 <= k < judge.BUCKETS for k in feats)


@pytest.mark.parametrize(
    ("add", "veto", "kept_plain", "kept_rules"), [(0.0, 0.0, True, True), (1.1, 1.1, False, False)]
)
def test_a_model_keeps_and_vetoes_by_its_thresholds(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    add: float,
    veto: float,
    kept_plain: bool,
    kept_rules: bool,
) -> None:
    model = {"add": add, "veto": veto, "weights": {"1": 0.5}}
    items = _extract_with(tmp_path, monkeypatch, model, TEXT)
    texts = " ".join(i.content for i in items)
    assert ("contracts" in texts) is kept_plain
    assert ("named exports" in texts) is kept_rules


def test_a_broken_model_file_means_rules_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = tmp_path / "judge_model.json"
    model.write_text("{not json", encoding="utf-8")
    monkeypatch.setattr(judge, "MODEL_FILE", model)
    judge.load_judge.cache_clear()
    try:
        assert judge.load_judge() is None
    finally:
        judge.load_judge.cache_clear()


def test_a_replacement_the_agent_said_is_never_vetoed() -> None:
    rules, _context, _notes = read_candidates(AGENT_REMARK)
    remark = next(c for c in rules if "carts.user_id" in c.content)
    remark.topic_tags = [*remark.topic_tags, "replaces:mysql"]
    assert not extract_module._agent_only(remark)


HOLDS = (
    "User: the settings screen needs a dark mode toggle.\n\n"
    "Assistant: Should the choice sync across devices, or stay per device? I could also "
    "add viper-style layered config for the theme.\n\n"
    "User: Theme state goes in src/stores/theme.ts. We never put user preferences in cookies. No "
    "viper, too much magic for one flag. Bump the cache lifetime to 30 days while you're in "
    "there.\n"
)


@pytest.mark.parametrize(("hold", "doubted"), [(0.0, False), (1.1, True)])
def test_the_hold_model_leaves_out_user_rules_it_doubts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hold: float, doubted: bool
) -> None:
    model = tmp_path / "judge_model.json"
    model.write_text(
        json.dumps({"add": 1.1, "veto": 0.0, "weights": {}, "hold": hold, "hold_weights": {}}),
        encoding="utf-8",
    )
    monkeypatch.setattr(judge, "MODEL_FILE", model)
    judge.load_judge.cache_clear()
    try:
        loaded = judge.load_judge()
        assert loaded is not None and loaded.hold == hold
        items = extract(HOLDS, source="t", today=date(2026, 1, 1)).items
    finally:
        judge.load_judge.cache_clear()
    confidence = {i.content.split(" ", 1)[0]: i.confidence for i in items}
    # Left out, not queued: in the review queue such rules were right 4 times in 74 on dev
    # (docs/decisions.md, fifty-second part).
    assert ("Theme" not in confidence) is doubted
    assert doubted or confidence["Theme"] >= 0.75
    # A rule for every case, a verdict on something named and a value changed are never held.
    assert confidence["We"] >= 0.75
    assert confidence["No"] >= 0.75
    assert confidence["Bump"] >= 0.75


def test_a_doubted_rule_that_is_all_a_conversation_says_waits_for_review(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Alone, it is no reason or context of another item: it waits, so a later thread that
    # changes it can record it as superseded (bench/changes_of_mind.py).
    model = {"add": 1.1, "veto": 0.0, "weights": {}, "hold": 1.1, "hold_weights": {}}
    said = "User: Theme state goes in src/stores/theme.ts.\n\nAssistant: OK.\n"
    [item] = _extract_with(tmp_path, monkeypatch, model, said)
    assert 0.5 <= item.confidence < 0.75, item


def test_the_shipped_hold_model_reads_how_the_rules_built_a_candidate() -> None:
    shipped = judge.load_judge()
    assert shipped is not None
    assert shipped.hold == 0.3
    assert len(shipped.hold_weights) > 1000
    candidates, context, _notes = read_candidates(HOLDS)
    rule = next(c for c in candidates if c.content.startswith("Theme"))
    with_rules = judge.features(rule, context, extra=False, rules=True)
    assert 0.0 < shipped.hold_score(with_rules) < 1.0


RULE_THEN = (
    "User: Every handler lives in internal/api, one file per resource, always.\n\n"
    "Assistant: Noted.\n\n"
    "User: {said}\n\n"
    "Assistant: Will do.\n"
)


def _with_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, weights: dict[str, float], text: str
) -> list[tuple[float, str]]:
    """Extract `text` with a judge that adds nothing, doubts no rule, and scores every
    candidate by `weights` alone."""
    model = {"add": 1.1, "veto": 0.0, "weights": weights, "hold": 0.0}
    return [(i.confidence, i.content) for i in _extract_with(tmp_path, monkeypatch, model, text)]


def test_a_review_candidate_that_names_nothing_and_leans_on_what_came_before_is_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # In the queue such candidates were right once in 15 on dev (docs/decisions.md,
    # fifty-third part): approved, "Keep it like that everywhere." says nothing on its own.
    items = _with_judge(
        tmp_path, monkeypatch, {}, RULE_THEN.format(said="Keep it like that everywhere.")
    )
    assert [content for _c, content in items] == [
        "Every handler lives in internal/api, one file per resource, always."
    ]
    # Alone, it is all the conversation says: it waits (a later thread may change it).
    alone = "User: Keep it like that everywhere.\n\nAssistant: Will do.\n"
    [(confidence, _content)] = _with_judge(tmp_path, monkeypatch, {}, alone)
    assert 0.5 <= confidence < 0.75


def test_a_review_candidate_the_judge_scores_under_the_floor_is_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = RULE_THEN.format(said="Switch both to KSP. No behaviour changes.")
    # A judge with no opinion (every score 0.5) lets it wait for review ...
    queued = _with_judge(tmp_path, monkeypatch, {}, text)
    assert [c for c, content in queued if content.startswith("Switch")] == [0.6]
    # ... one that gives it less than REVIEW_FLOOR leaves it out; the rule stays committed.
    doubtful = {str(judge._NAMED["bias"]): -5.0}
    assert extract_module.REVIEW_FLOOR == 0.3
    kept = _with_judge(tmp_path, monkeypatch, doubtful, text)
    assert [content for _c, content in kept] == [
        "Every handler lives in internal/api, one file per resource, always."
    ]


def test_a_change_bound_for_review_is_never_left_out() -> None:
    from app.core.models import Category
    from app.engines.offline.extract_items import Candidate, Family, Speaker

    doubtful = judge.Judge(weights={judge._NAMED["bias"]: -5.0}, add=1.1, veto=0.0)

    def unsure(content: str, tags: list[str]) -> Candidate:
        return Candidate(
            category=Category.PROJECT_CONVENTIONS,
            speaker=Speaker.USER,
            turn=2,
            index=3,
            content=content,
            confidence=0.6,
            family=Family.DIRECTIVE,
            topic_tags=tags,
        )

    change = unsure("Keep it like that, not the old way.", ["replaces:any"])
    value = unsure("Make it 30 seconds for that one.", [])
    chatter = unsure("Keep it like that everywhere.", [])
    left = extract_module._left_out_of_review(
        [change, value, chatter], judge.EMPTY_CONTEXT, doubtful
    )
    assert left == 1
    assert (change.confidence, value.confidence, chatter.confidence) == (0.6, 0.6, 0.0)
