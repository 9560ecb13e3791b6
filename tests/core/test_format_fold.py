"""Reading rendered bullet runs without Markdown gives exactly the full parse (speed issue 11).

`parse` and `validate` fold each run of `- **Title**: ...` bullets into one stand-in item
before the Markdown parser sees the text and read the run's lines directly. These tests compare
that path with the plain full parse on the fixtures and on rendered files mangled at random.
"""

from __future__ import annotations

import random
from pathlib import Path

from app.core import format as fmt
from app.core.format import parse, render, validate
from app.core.models import BranchMemory, Category, Contradiction, ExtraSection, MemoryItem

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

_PIECES = [
    "use pathlib",
    "never os.path",
    "**bold**",
    "`code`",
    "<!-- note -->",
    "<div>",
    "-->",
    "```",
    "~~~",
    "# not a heading",
    "> quoted",
    "1. first",
    "* star",
    "---",
    "===",
    "[ref]: http://x",
    "Rationale: because",
    "Fix: patch it",
    "Occurred 3 times",
    "(id: pref-1, confidence: 0.9)",
    "\\",
    "|a|b|",
    "\u00a0",
    "_under_",
    "x" * 30,
]
_LINES = [
    "",
    "   ",
    "\t",
    "- plain bullet",
    "  - nested (id: pref-9, confidence: 0.5)",
    "    indented code",
    "## Coding Preferences",
    "## Notes",
    "### group",
    "```",
    "<!--",
    "-->",
    "> quote",
    "---",
    "===",
    "Some paragraph text",
    "- **Lazy**: item (id: pref-7, confidence: 2.5, extracted: 2026-13-01)",
    "- **Tab**:\tx (id: pref-8, confidence: 0.5)",
    "  continuation of a bullet",
    "[x]: http://example.com",
    "\u00a0",
    "# Branch Memory: other",
]


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_PIECES) for _ in range(words))


def _memory(rng: random.Random) -> BranchMemory:
    items = {
        cat: [
            MemoryItem(
                category=cat,
                title=_text(rng, rng.randint(1, 3)),
                content=_text(rng, rng.randint(0, 6)),
                rationale=_text(rng, 2) if rng.random() < 0.2 else "",
                confidence=rng.choice([0.5, 0.8, 0.99]),
                sources=[f"t{rng.randint(0, 3)}"],
                tags=["a", "b"] if rng.random() < 0.2 else [],
                pinned=rng.random() < 0.1,
            )
            for _ in range(rng.randint(0, 5))
        ]
        for cat in Category
    }
    contradictions = [
        Contradiction(
            title=_text(rng, 2),
            description=_text(rng, 3),
            items=[
                MemoryItem(category=Category.CODING_PREFERENCES, title="T", content=_text(rng, 2))
            ]
            if rng.random() < 0.7
            else [],
        )
        for _ in range(rng.randint(0, 2))
    ]
    return BranchMemory(
        branch_id="fold",
        summary=_text(rng, rng.randint(0, 8)),
        items=items,
        contradictions=contradictions,
        contradiction_notes=_text(rng, 3) if rng.random() < 0.3 else "",
        extra_sections=[ExtraSection(heading="Extra", body=_text(rng, 4))]
        if rng.random() < 0.3
        else [],
    )


def _mangled(rng: random.Random, text: str) -> str:
    lines = text.split("\n")
    for _ in range(rng.randint(0, 4)):
        where = rng.randrange(len(lines) + 1)
        choice = rng.random()
        if choice < 0.5:
            lines.insert(where, rng.choice(_LINES))
        elif choice < 0.7 and where < len(lines):
            del lines[where]
        elif where < len(lines):
            lines[where] = rng.choice(["  ", " ", "\t", ""]) + lines[where]
    return "\n".join(lines)


def _full(text: str) -> tuple[str, list[fmt.Problem], set[str]]:
    memory, problems, kinds = fmt._Parser(text, None, fold=False).run()
    return memory.model_dump_json(exclude={"last_updated"}), problems, kinds


def _folded(text: str) -> tuple[str, list[fmt.Problem], set[str]]:
    _parser, (memory, problems, kinds) = fmt._parsed(text, None)
    return memory.model_dump_json(exclude={"last_updated"}), problems, kinds


def _full_validate(text: str) -> list[fmt.Problem]:
    parser = fmt._Parser(text, None, fold=False)
    _memory, problems, kinds = parser.run()
    rules = [
        (parser.has_header, "missing the '# Branch Memory: <branch>' header"),
        ("summary" in kinds, f"missing the '## {fmt.SUMMARY_HEADING}' section"),
        (kinds & {str(c) for c in Category}, "no category section (e.g. '## Coding Preferences')"),
    ]
    return [fmt.Problem(None, m) for ok, m in rules if not ok] + problems


def _check(text: str) -> bool:
    """Compare both paths on `text`; True when the fold was used (no fallback)."""
    assert _folded(text) == _full(text)
    assert validate(text) == _full_validate(text)
    # Twice: the second validate answers from the bullet cache.
    assert validate(text) == _full_validate(text)
    parser = fmt._Parser(text, None)
    parser.run()
    return bool(parser.runs) and not parser.unread


def test_fold_matches_the_full_parse_on_the_fixtures() -> None:
    texts = [p.read_text(encoding="utf-8") for p in sorted(FIXTURES.glob("**/*.md"))]
    assert texts
    for text in texts:
        _check(text)


def test_fold_matches_the_full_parse_on_rendered_and_mangled_files() -> None:
    rng = random.Random(11)
    folded = 0
    for _ in range(300):
        text = render(_memory(rng))
        folded += _check(text)
        _check(_mangled(rng, text))
    # The fold is actually taken on many rendered files, not always refused (titles that
    # open with `*`, `_` or `-`, and free text shaped like bullets, make it step aside).
    assert folded > 50


def test_rendered_items_round_trip_through_the_fold() -> None:
    memory = BranchMemory(
        branch_id="fold",
        summary="Summary.",
        items={
            Category.CODING_PREFERENCES: [
                MemoryItem(
                    category=Category.CODING_PREFERENCES,
                    title=f"Rule {i}",
                    content=f"Use tool {i} for job {i}.",
                    sources=["t1"],
                )
                for i in range(50)
            ]
        },
    )
    text = render(memory)
    parser = fmt._Parser(text, None)
    assert len(parser.runs) == 1
    parser.run()
    assert not parser.unread
    assert parse(text).model_dump(exclude={"last_updated"}) == memory.model_dump(
        exclude={"last_updated"}
    )


def test_restamp_is_rendering_with_other_timestamps() -> None:
    from datetime import UTC, datetime

    rng = random.Random(5)
    stamps = [datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC), datetime(2026, 6, 7, tzinfo=UTC)]
    for _ in range(50):
        memory = _memory(rng)
        for updated in stamps:
            for extraction in (None, *stamps):
                same = memory.model_copy(
                    update={"last_updated": updated, "last_extraction": extraction}
                )
                assert fmt.restamp(render(memory), updated, extraction) == render(same)


def test_remembered_bullets_follow_every_field() -> None:
    item = MemoryItem(
        category=Category.BUG_PATTERNS, title="Race", content="Lock the cache.", sources=["t1"]
    )
    first = fmt._item_bullet(item)
    changes: dict[str, object] = {
        "confidence": 0.5,
        "sources": ["t1", "t2"],
        "tags": ["x"],
        "pinned": True,
        "occurrences": 3,
        "fix": "Use a mutex",
        "content": "Lock the cache first.",
        "title": "Races",
    }
    for name, value in changes.items():
        changed = item.model_copy(update={name: value})
        assert fmt._item_bullet(changed) == fmt._new_bullet(changed) != first, name
    assert fmt._item_bullet(item) == first
