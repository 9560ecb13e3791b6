"""The extractor's word-set lookups find exactly what comparing with every set finds.

`_merge_duplicates` (extract_merge) and `_Said` (extract) index the word sets they compare
so that a long conversation does not compare every candidate with every other one. These
tests hold both against the plain scans they replace, on random sets made to overlap a
lot, and check that a conversation of thousands of near-identical statements no longer
costs a comparison per pair.
"""

from __future__ import annotations

import random

import pytest

from app.core.models import Category
from app.engines.offline import extract_merge
from app.engines.offline.extract import _repeats, _Said
from app.engines.offline.extract_items import Candidate, Family, tokens
from app.engines.offline.extract_merge import _merge_duplicates, _similar
from app.engines.offline.extract_text import Speaker

_VOCABULARY = [f"w{n}" for n in range(14)]


def _random_sets(rng: random.Random, count: int) -> list[set[str]]:
    return [set(rng.sample(_VOCABULARY, rng.randint(0, 7))) for _ in range(count)]


def _scan_merge(word_sets: list[set[str]]) -> list[int]:
    """Which earlier word set each one lands in (its own position when it is kept), by
    comparing it with every kept set in turn."""
    kept: list[tuple[int, set[str]]] = []
    landed: list[int] = []
    for n, words in enumerate(word_sets):
        target = next((k for k, known in kept if _similar(words, known)), None)
        if target is None:
            landed.append(n)
            kept.append((n, set(words)))
        else:
            landed.append(target)
            next(known for k, known in kept if k == target).update(words)
    return landed


def _candidate(words: set[str], turn: int) -> Candidate:
    return Candidate(
        category=Category.PROJECT_CONVENTIONS,
        speaker=Speaker.USER,
        turn=turn,
        index=turn,
        content=" ".join(sorted(words)),
        confidence=0.8,
        family=Family.CONVENTION,
    )


@pytest.mark.parametrize("seed", range(40))
def test_merging_lands_where_a_scan_of_every_kept_item_lands(seed: int) -> None:
    rng = random.Random(seed)
    # Distinct statements only: the same words said twice merge by their statement first.
    word_sets = list({frozenset(w): w for w in _random_sets(rng, 60)}.values())
    candidates = [_candidate(words, n) for n, words in enumerate(word_sets)]
    merged = _merge_duplicates(candidates)
    landed = _scan_merge([tokens(c.content) for c in candidates])
    expected_kept = sorted(set(landed))
    assert [c.turn for c in merged] == expected_kept
    mentions = {k: landed.count(k) for k in expected_kept}
    assert [c.mentions for c in merged] == [mentions[c.turn] for c in merged]


@pytest.mark.parametrize("seed", range(40))
def test_said_answers_as_a_scan_of_every_set(seed: int) -> None:
    rng = random.Random(seed)
    known = _random_sets(rng, 30)
    said = _Said(known[:15])
    for words in known[15:]:
        said.append(words)
    for words in _random_sets(rng, 200):
        assert said.repeats(words) == _repeats(words, known)
    assert _Said().repeats(set()) is False
    assert _Said([{"a"}]).repeats(set()) is True  # as the scan: 0 of 0 words is enough


def test_thousands_of_similar_statements_do_not_compare_every_pair(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """2,000 statements that share their common words ("keep", "replica", "undo") but
    each name their own thing are 2,000 items, found with a few comparisons each."""
    compared = 0

    def counting(a: set[str], b: set[str]) -> bool:
        nonlocal compared
        compared += 1
        return _similar(a, b)

    monkeypatch.setattr(extract_merge, "_similar", counting)
    candidates = [
        _candidate({f"migration{n}", f"table{n}", "keep", "replica", "undo"}, n)
        for n in range(2_000)
    ]
    assert len(_merge_duplicates(candidates)) == 2_000
    assert compared < 10 * len(candidates)
