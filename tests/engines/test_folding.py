"""Case-insensitive patterns answered on folded text give the answers of the originals."""

from __future__ import annotations

import re

import pytest

from app.engines.offline import dialogue, extract
from app.engines.offline.folding import Folded

TEXTS = [
    "Still FAILS on CI.",
    "still fails",
    "İt still fails",  # İ matches i case-insensitively
    "ıt stıll faıls",  # so does dotless ı
    "Still ſee the error",  # long s matches s
    "\u212aeep the old one",  # the Kelvin sign matches k
    "We switched FROM Jest to Vitest, no longer Jest.",
    "Actually, scratch that: we changed our MIND.",
    "I'll fix it. I've now IMPLEMENTED the retry.",
    "Nothing to see here.",
    "",
    "Ünïcödé ÀND ascii: NOT broken",
]

PATTERNS = [
    r"(?i)\b(?:still (?:fail|broken|see)|not fixed|no longer)",
    r"(?i)^\W*(?:actually|scratch that)\b|\bchanged (?:the|our) (?:mind|plan)\b",
    r"(?i)\bkeep\b|\bfrom\s+\w+\s+to\b",
    r"(?ix) ^ i'?ll \s+ fix | implemented",
]


@pytest.mark.parametrize("source", PATTERNS)
def test_a_folded_pattern_answers_as_the_original(source: str) -> None:
    original, fast = re.compile(source), Folded(source)
    for text in TEXTS:
        assert fast.search(text) == (original.search(text) is not None), text
        assert fast.match(text) == (original.match(text) is not None), text


@pytest.mark.parametrize(
    "source",
    [
        r"\bstill fails\b",  # not case-insensitive: nothing to gain, and lowering would change it
        r"(?i)[A-Z]{2,} is a name",  # a capital in the pattern would not match folded text
        r"(?i)café",  # a letter beyond ASCII
        r"(?i)fix (?-i:NOW)",  # case switched back on inside
    ],
)
def test_a_pattern_folding_would_change_is_refused(source: str) -> None:
    with pytest.raises(ValueError, match=r"case|letter"):
        Folded(source)


def test_escapes_and_group_names_are_not_letters_to_match() -> None:
    source = r"(?i)(?P<Verb>\bswitch\S*)\s+to\b(?P=Verb)?|\d+\s*mb\b|\Bx\D"
    fast, original = Folded(source), re.compile(source)
    for text in ("We SWITCHED to it", "512 MB", "boX!", "a x1"):
        assert fast.search(text) == (original.search(text) is not None), text
    assert fast.search("We SWITCHED to it") and fast.search("512 MB")


def test_the_engine_patterns_are_folded() -> None:
    """The hot patterns of memorize stay folded (bench/memorize.py measures what it saves)."""
    for pattern in (
        dialogue._DENY,
        dialogue._PLAN,
        dialogue._REPLACE_GATE,
        dialogue.PROBLEM_GONE_RE,
        extract._GENERAL,
        extract._CHANGES_A_VALUE,
    ):
        assert isinstance(pattern, Folded)
