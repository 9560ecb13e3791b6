"""Gated dialogue patterns answer exactly as their regex (speed issue 11).

`_Gated.search` skips the regex when the text holds none of the literals every match needs;
these tests check the literals on the dialogue fixtures and on text built to hit the edges
(case, the four characters `re.IGNORECASE` folds to ASCII letters, near misses).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from app.engines.offline import dialogue
from app.engines.offline.extract_text import split_sentences

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
GATED = [
    dialogue._PROPOSAL_GATED,
    dialogue._CAUSAL_GATED,
    dialogue._DISPUTE_GATED,
    dialogue._RULED_OUT_GATED,
    dialogue._UNDECIDED_GATED,
]

_PIECES = [
    "should i",
    "SHALL \u0130",
    "want me to",
    "do you want me to",
    "would you like me to",
    "i propose",
    "\u0131 suggest",
    "i'd suggest",
    "id suggest",
    "I recommend",
    "we could",
    "i could also",
    "how about",
    "because",
    "BECAU\u017fE",
    "so the",
    "so it",
    ", so",
    "which means",
    "caused",
    "root cause",
    "the problem is",
    "the issue was",
    "that's why",
    "thats why",
    "leads to",
    "results in",
    "means that",
    "conflicts with",
    "differs from",
    "contradicts",
    "is at odds with",
    "disagrees with",
    "clashes with",
    "the cache rule",
    "isn't it",
    "isnt the cause",
    "WAS NOT the culprit",
    "is fine",
    "looks OK",
    "seems okay",
    "rules that out",
    "not a problem",
    "that's not it",
    "theory is out",
    "hypothesis doesn't hold",
    "cannot explain",
    "guess is wrong",
    "no idea who's right",
    "I don't know which one",
    "haven't agreed",
    "not decided",
    "an open question",
    "I'll ask",
    "not picking sides",
    "that's just open",
    "it stays OPEN",
    "remains unresolved",
    "not yet settled",
    "\u212a",
    " ",
    ".",
    "x",
    "é",
]


def _texts() -> list[str]:
    paths = sorted(FIXTURES.glob("dialogue/**/*.txt")) + sorted(FIXTURES.glob("extraction/*.txt"))
    texts = []
    for path in paths:
        text = path.read_text(encoding="utf-8")
        texts.append(text)
        texts += split_sentences(text)
    return texts


@pytest.mark.parametrize(
    "gated", GATED, ids=["proposal", "causal", "dispute", "ruled-out", "undecided"]
)
def test_gated_search_is_the_regex_search(gated: dialogue._Gated) -> None:
    rng = random.Random(3)
    texts = _texts()
    texts += [" ".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 8))) for _ in range(3000)]
    hits = 0
    for text in texts:
        expected = gated.pattern.search(text)
        found = gated.search(text)
        assert (found and found.span()) == (expected and expected.span()), repr(text)
        hits += expected is not None
    assert hits > 100


def test_folding_keeps_every_character_in_place() -> None:
    text = "\u0130\u0131\u017f\u212aABC\u00c9\u00df"
    assert len(dialogue._folded(text)) == len(text)
    assert dialogue._folded(text).startswith("iisk")
