"""The learned judge: which candidate items a careful reviewer would keep (issue 11).

The phrase rules of this package find candidates and build them into items (bug units,
reports, answers, reversals). What they decided alone did not carry over to conversations
they were not written against, so a linear model trained on the labeled dev split
(tests/fixtures/dialogue/dev, `bench/train_judge.py`) has the last word:

- every candidate the rules built gets a score; one below `veto` leaves;
- plain statements the rules passed over (the user's own prose, the agent's prose) are
  candidates too, kept only when their score reaches `add`;
- a rule candidate the user said, scored low by the hold model (below), is left out when
  the conversation commits something else (alone, it waits for review).

The shipped model (`bench/train_judge.py --statement-only --no-veto --agent-veto 0.4
--agent-veto-unsure 0.7`) reads the statement alone. Its veto is 0, so it drops no rule
candidate the user took part in; a rule candidate only the agent said leaves below `agent_veto`
(the agent's passing remarks, "I'd suggest removing it or pinning it", are what a low
score catches), or below `agent_veto_unsure` when the rules were unsure of it. The hold
model (`bench/train_judge.py --hold-only --hold 0.3`, weights beside the judge's) reads how
the rules built a candidate too; it is trained on the user's rule candidates of dev, with
the items dev's sequences keep or supersede as more positives, and leaves out the ones
under `hold` (`extract._held_for_review`; in the review queue they were right about once
in twenty, docs/decisions.md, fifty-second part).

Features are cheap and need no model download: hashed words and word pairs of the item's
text, who said it, how the rules built it (family, category, confidence, detail fields),
where it sits in the conversation and how the user answered it. Scoring is pure Python (a
sparse dot product), so the cold CLI/hook path pays no numpy import. The weights live in
`data/judge_model.json`; without that file the judge keeps the rules' decisions as they are.
"""

from __future__ import annotations

import bisect
import json
import math
import operator
import re
import zlib
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import pairwise, repeat
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.models import Category
from app.engines.offline.extract_text import Speaker, Statement

if TYPE_CHECKING:
    from app.engines.offline.extract_items import Candidate

__all__ = ["Judge", "features", "load_judge", "prepare"]

MODEL_FILE = Path(__file__).with_name("data") / "judge_model.json"
BUCKETS = 1 << 14
_FAMILIES = ("directive", "preference", "decision", "convention", "bug", "lesson", "section")
_CATEGORIES = tuple(c.value for c in Category)
_WORD = re.compile(r"[a-z0][a-z0'_./-]*|[^\sa-z0]")
_DIGITS = re.compile(r"\d+")
# How the user's next words answer an agent's turn.
_ACCEPTS = re.compile(
    r"(?i)^\W*(?:yes|yep|yeah|ok(?:ay)?|sure|great|perfect|nice|good|lgtm|sounds good|go ahead"
    r"|do it|agreed|works|thanks|thank you|looks good|ship it)\b"
)
_REJECTS = re.compile(r"(?i)^\W*(?:no|nah|nope|not|don'?t|stop|wrong|revert|undo|actually)\b")
_TOKENS_MAX = 80


@lru_cache(maxsize=1 << 16)
def _bucket(key: str) -> int:
    return zlib.crc32(key.encode("utf-8")) % BUCKETS


class _Named(dict[str, int]):
    """The bucket of each named feature (`#name`), hashed once."""

    def __missing__(self, name: str) -> int:
        b = self[name] = _bucket(f"#{name}")
        return b


_NAMED = _Named()
_named = _NAMED.__getitem__


@dataclass(frozen=True, slots=True)
class Context:
    """Per-conversation facts the features need, computed once per conversation."""

    turns: int
    first_user_turn: int
    # turn -> kind of the user's next reply after it: "accept", "reject", "ask", "other", ""
    reply: dict[int, str]
    # turns of the agent that follow tool work (a report of finished work)
    after_tools: frozenset[int]


EMPTY_CONTEXT = Context(turns=0, first_user_turn=-1, reply={}, after_tools=frozenset())


def prepare(statements: list[Statement], tool_turns: set[int]) -> Context:
    """What `features` needs to know about the whole conversation."""
    user_turns = sorted({s.turn for s in statements if s.speaker is Speaker.USER})
    firsts: dict[int, Statement] = {}
    for s in statements:
        if s.speaker is Speaker.USER and not s.text.startswith("[") and s.turn not in firsts:
            firsts[s.turn] = s
    reply: dict[int, str] = {}
    turns = sorted({s.turn for s in statements})
    answered = sorted(firsts)
    for turn in turns:
        at = bisect.bisect_right(answered, turn)
        if at == len(answered):
            reply[turn] = ""
            continue
        text = firsts[answered[at]].text
        if _REJECTS.match(text):
            reply[turn] = "reject"
        elif _ACCEPTS.match(text):
            reply[turn] = "accept"
        elif text.rstrip().endswith("?"):
            reply[turn] = "ask"
        else:
            reply[turn] = "other"
    after: set[int] = set()
    for turn in turns:
        if any(t in tool_turns for t in range(max(0, turn - 3), turn)):
            after.add(turn)
    return Context(
        turns=max(turns, default=0) + 1,
        first_user_turn=user_turns[0] if user_turns else -1,
        reply=reply,
        after_tools=frozenset(after),
    )


def features(
    candidate: Candidate, ctx: Context, *, extra: bool, rules: bool = True
) -> dict[int, float]:
    """Sparse features of one candidate: hashed words first, then named facts.

    With `rules` False the facts of how the rules built it (family, confidence, whether a
    rule picked it at all) are left out, so the judge reads the statement alone.
    """
    text = " ".join(
        part
        for part in (candidate.content, candidate.rationale, candidate.root_cause, candidate.fix)
        if part
    )
    words = _WORD.findall(_DIGITS.sub("0", text.lower()))[:_TOKENS_MAX]
    # Each word, each pair of neighbours, and the first three words marked as openers.
    keys = [*words, *map(" ".join, pairwise(words))]
    keys += ["^" + w for w in words[:3]]
    counts = Counter(map(_bucket, keys))
    squares = counts.values()
    norm = math.sqrt(sum(map(operator.mul, squares, squares))) or 1.0
    found: dict[int, float] = {b: n / norm for b, n in counts.items()}
    speakers = candidate.speakers or {candidate.speaker}
    user = Speaker.USER in speakers
    reply = ctx.reply.get(candidate.turn, "") or "end"
    # (bucket, value) in the order the model was trained with: the sums below add in it.
    named = [
        (_NAMED["bias"], 1.0),
        (_NAMED["user"], float(user)),
        (_NAMED["agent"], float(Speaker.AGENT in speakers)),
        (_NAMED["both"], float(len(speakers) > 1)),
        (_NAMED["rationale"], float(bool(candidate.rationale))),
        (_NAMED["cause"], float(bool(candidate.root_cause))),
        (_NAMED["fix"], float(bool(candidate.fix))),
        (_NAMED["mentions"], float(min(candidate.mentions, 3))),
        (_NAMED["question"], float(candidate.content.rstrip().endswith("?"))),
        (_NAMED["length"], min(len(text), 400) / 400),
        (_NAMED["short"], float(len(words) < 6)),
        (_NAMED["long"], float(len(words) > 50)),
        (_NAMED["position"], candidate.turn / max(1, ctx.turns)),
        (_NAMED["first_user_turn"], float(candidate.turn == ctx.first_user_turn)),
        (_named(f"reply:{reply}"), 1.0),
        (_named(f"{'user' if user else 'agent'}:reply:{reply}"), 1.0),
        (_NAMED["after_tools"], float(candidate.turn in ctx.after_tools)),
    ]
    if rules:
        category = candidate.category.value
        named += (
            (_NAMED["extra"], float(extra)),
            (_NAMED["rules"], float(not extra)),
            (_NAMED["confidence"], candidate.confidence),
            (_named(f"family:{candidate.family.value}"), 1.0),
            (_named(f"category:{category}"), 1.0),
            (_named(f"{'extra' if extra else 'rules'}:{category}"), 1.0),
        )
    get = found.get
    for b, value in named:
        if value:
            found[b] = get(b, 0.0) + value
    return found


def _probability(weights: dict[int, float], feats: dict[int, float]) -> float:
    weight = map(weights.get, feats.keys(), repeat(0.0))
    total = sum(map(operator.mul, weight, feats.values()))
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, total))))


@dataclass(frozen=True)
class Judge:
    """A trained linear model and the two thresholds chosen on dev."""

    weights: dict[int, float]
    add: float
    veto: float
    rules: bool = True
    # A rule candidate only the agent said (the user is not among its speakers) leaves
    # below this, even when `veto` is 0: see docs/decisions.md, thirteenth part.
    agent_veto: float = 0.0
    # The same for one the rules were unsure of (bound for the review queue): a queue the
    # user reads should not fill with the agent's asides.
    agent_veto_unsure: float = 0.0
    # A second model over the rules' candidates the user said (with how the rules built
    # them), trained on dev's required items and its sequences' kept ones: a candidate it
    # scores below `hold` waits for review (docs/decisions.md, twentieth part).
    hold: float = 0.0
    hold_weights: dict[int, float] = field(default_factory=dict)

    def score(self, feats: dict[int, float]) -> float:
        """Probability that a reviewer keeps the candidate with these features."""
        return _probability(self.weights, feats)

    def hold_score(self, feats: dict[int, float]) -> float:
        """The hold model's probability that a reviewer keeps this user rule candidate
        (features with `rules=True`)."""
        return _probability(self.hold_weights, feats)


@lru_cache(maxsize=1)
def load_judge() -> Judge | None:
    """The shipped model, or None when it is missing or unreadable (rules alone then)."""
    try:
        data = json.loads(MODEL_FILE.read_text(encoding="utf-8"))
        weights = {int(k): float(v) for k, v in data["weights"].items()}
        return Judge(
            weights,
            float(data["add"]),
            float(data["veto"]),
            bool(data.get("rules", True)),
            float(data.get("agent_veto", 0.0)),
            float(data.get("agent_veto_unsure", 0.0)),
            float(data.get("hold", 0.0)),
            {int(k): float(v) for k, v in data.get("hold_weights", {}).items()},
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


# Kept for the trainer: the feature names it reports, in the order listed above.
FAMILIES = _FAMILIES
CATEGORIES = _CATEGORIES
