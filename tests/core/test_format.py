"""Tests for app/core/format.py: the seed 001 branch file renders, parses and validates."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from app.core.format import Problem, header_last_updated, parse, render, validate
from app.core.models import (
    BranchMemory,
    Category,
    Contradiction,
    ExtraSection,
    MemoryItem,
    make_item_id,
    one_line,
)

SEED_TITLES = {
    Category.CODING_PREFERENCES: [
        ("Async pattern", 0.95, "thread_xyz789", date(2024, 1, 19)),
        ("Functional style", 0.88, "thread_abc123", date(2024, 1, 15)),
    ],
    Category.ARCHITECTURAL_DECISIONS: [("SAM Pattern", 0.92, "thread_xyz789", date(2024, 1, 19))],
    Category.PROJECT_CONVENTIONS: [("Naming", 0.95, "thread_def456", date(2024, 1, 10))],
    Category.BUG_PATTERNS: [
        ("Race conditions in async state updates", 0.85, "thread_xyz789", date(2024, 1, 19))
    ],
    Category.IMPLEMENTATION_NOTES: [
        ("Component refactoring", 0.88, "thread_abc123", date(2024, 1, 15))
    ],
}

HEADER = (
    "# Branch Memory: feature-auth\n\n**Last Updated:** 2024-02-01T10:00:00Z\n"
    "**Last Extraction:** never\n**Thread Count:** 1\n\n## Summary\n\nAuth work.\n\n"
)


@pytest.fixture
def seed_text(fixtures_dir: Path) -> str:
    return (fixtures_dir / "format" / "seed_example.md").read_text(encoding="utf-8")


def _only(memory: BranchMemory, category: Category) -> MemoryItem:
    assert len(memory.items[category]) == 1
    return memory.items[category][0]


# ------------------------------------------------------------------------- the seed example


def test_seed_example_parses_into_its_six_items(seed_text: str) -> None:
    memory = parse(seed_text)
    assert memory.last_updated == datetime(2024, 1, 19, 8, 45, tzinfo=UTC)
    assert memory.last_extraction == datetime(2024, 1, 19, 0, 15, 30, tzinfo=UTC)
    assert memory.thread_count == 3
    assert memory.item_count() == 6
    for category, expected in SEED_TITLES.items():
        got = [(i.title, i.confidence, i.sources[0], i.extracted) for i in memory.items[category]]
        assert got == expected
    decision = _only(memory, Category.ARCHITECTURAL_DECISIONS)
    assert decision.content == "Adopted State-Action-Model pattern for state management."
    assert decision.rationale == "explicit control states map well to FSM-driven UI."
    assert decision.trade_offs == "more boilerplate than simpler solutions"
    bug = _only(memory, Category.BUG_PATTERNS)
    assert (bug.content, bug.occurrences) == ("Fix with explicit locking mechanisms.", 2)
    assert memory.summary.startswith("High-level narrative summary")
    assert memory.contradiction_notes.startswith("[Any conflicting memories")
    assert not any(i.pinned for i in memory.all_items())


def test_seed_example_validates_and_survives_render(seed_text: str) -> None:
    assert validate(seed_text) == []
    memory = parse(seed_text)
    text = render(memory)
    assert parse(text) == memory
    assert validate(text) == []
    assert render(parse(text)) == text
    # Bullets still read like the seed's.
    assert (
        "- **Race conditions in async state updates**: Fix with explicit locking "
        "mechanisms. Occurred 2 times (id: bug-"
    ) in text
    assert "Rationale: explicit control states map well to FSM-driven UI. Trade-off: " in text


def test_header_last_updated_reads_the_value_as_written(seed_text: str) -> None:
    assert header_last_updated(seed_text) == "2024-01-19T08:45:00Z"
    assert header_last_updated("# Branch Memory: x\n**Last updated**: soon\n") == "soon"
    assert header_last_updated("# Branch Memory: x\n\n## Summary\n**Last Updated:** 1\n") is None
    assert header_last_updated("") is None


# ------------------------------------------------------------------------------- rendering


def _memory() -> BranchMemory:
    old = MemoryItem(
        category=Category.CODING_PREFERENCES,
        title="Tabs",
        content="Use tabs",
        confidence=0.8,
        sources=["t1"],
        extracted=date(2024, 1, 1),
    )
    return BranchMemory(
        branch_id="spotter/feature/auth",
        last_updated=datetime(2024, 2, 1, 9, 30, tzinfo=UTC),
        thread_count=2,
        summary="First paragraph.\n\nSecond paragraph.",
        items={
            Category.CODING_PREFERENCES: [
                MemoryItem(
                    category=Category.CODING_PREFERENCES,
                    title="Spaces",
                    content="Use spaces",
                    confidence=0.956,
                    sources=["t2", "t3"],
                    extracted=date(2024, 2, 1),
                    tags=["project:spotter", "style"],
                    pinned=True,
                )
            ],
            Category.PROJECT_CONVENTIONS: [
                MemoryItem(
                    category=Category.PROJECT_CONVENTIONS,
                    title="Naming",
                    content="snake_case",
                    scope="all Python modules",
                    sources=["t2"],
                    extracted=date(2024, 2, 1),
                )
            ],
            Category.BUG_PATTERNS: [
                MemoryItem(
                    category=Category.BUG_PATTERNS,
                    title="Stale lock",
                    content="Writes hang",
                    root_cause="lock file left behind",
                    fix="use filelock timeouts",
                    occurrences=3,
                    sources=["t1"],
                    extracted=date(2024, 2, 1),
                )
            ],
            Category.IMPLEMENTATION_NOTES: [
                MemoryItem(
                    category=Category.IMPLEMENTATION_NOTES,
                    title="Parsing",
                    content="",
                    approach="markdown-it tokens",
                    lessons="regexes break on hand edits",
                    sources=["t3"],
                    extracted=date(2024, 2, 1),
                )
            ],
        },
        contradictions=[
            Contradiction(
                title="Indentation",
                description="Spaces replaced tabs",
                status="superseded",
                detected=date(2024, 2, 1),
                refs=["pref-aaaa"],
                items=[old],
            )
        ],
        contradiction_notes="Ask the team about line length.",
        extra_sections=[ExtraSection(heading="Open Questions", body="- Which ORM?\n\nLater.")],
    )


def test_render_writes_every_section_in_seed_order() -> None:
    text = render(_memory())
    headings = re.findall(r"^## (.+)$", text, flags=re.MULTILINE)
    assert headings == [
        "Summary",
        "Coding Preferences",
        "Architectural Decisions",
        "Project Conventions",
        "Bug Patterns",
        "Implementation Notes",
        "Contradictions and Conflicts",
        "Open Questions",
    ]
    assert text.startswith(
        "# Branch Memory: spotter/feature/auth\n\n"
        "**Last Updated:** 2024-02-01T09:30:00Z\n"
        "**Last Extraction:** never\n**Thread Count:** 2\n"
    )
    assert text.endswith("- Which ORM?\n\nLater.\n")


def test_render_bullet_grammar_per_category() -> None:
    text = render(_memory())
    spaces = _memory().items[Category.CODING_PREFERENCES][0]
    assert (
        f"- **Spaces**: Use spaces (id: {spaces.id}, confidence: 0.96, source: t2, t3, "
        "extracted: 2024-02-01, tags: project:spotter, style, pinned: true)"
    ) in text
    assert "- **Naming**: snake_case Scope: all Python modules (id: conv-" in text
    assert (
        "- **Stale lock**: Writes hang Root cause: lock file left behind Fix: use filelock "
        "timeouts Occurred 3 times (id: bug-"
    ) in text
    assert (
        "- **Parsing**: Approach: markdown-it tokens Lessons: regexes break on hand edits "
        "(id: note-"
    ) in text
    assert "- **Indentation**: Spaces replaced tabs (id: conflict-" in text
    assert "status: superseded, detected: 2024-02-01, refs: pref-aaaa)" in text
    assert "\n  - [Coding Preferences] **Tabs**: Use tabs (id: pref-" in text


def test_render_round_trips_a_full_model_and_is_deterministic() -> None:
    memory = _memory()
    text = render(memory)
    assert parse(text) == memory
    assert render(parse(text)) == text
    assert validate(text) == []
    superseded = parse(text).contradictions[0].items[0]
    assert (superseded.title, superseded.category, superseded.sources) == (
        "Tabs",
        Category.CODING_PREFERENCES,
        ["t1"],
    )


# ------------------------------------------------------------------- hand-written variants


def _one(body: str, heading: str = "Coding Preferences") -> MemoryItem:
    memory = parse(f"{HEADER}## {heading}\n\n{body}\n")
    items = memory.all_items()
    assert len(items) == 1, items
    return items[0]


def test_bullet_without_metadata_is_a_pinned_user_item() -> None:
    item = _one("- **Commits**: Small commits with imperative messages")
    assert (item.title, item.content) == ("Commits", "Small commits with imperative messages")
    assert item.sources == ["user"]
    assert item.pinned
    assert item.confidence == 1.0
    assert item.id == make_item_id(Category.CODING_PREFERENCES, item.title, item.content)
    assert item.extracted == date(2024, 2, 1)  # the header's date, so parsing is repeatable


@pytest.mark.parametrize(
    "bullet",
    [
        "* **Async**: Prefer await (confidence: 0.9, source: t1, extracted: 2024-01-02)",
        "+ **Async**: Prefer await (confidence: 0.9, source: t1, extracted: 2024-01-02)",
        "1. **Async**: Prefer await (confidence: 0.9, source: t1, extracted: 2024-01-02)",
        "-   **Async:**   Prefer   await   (Confidence: 90%,  Source: t1,  extracted: 2024-01-02)",
        "- __Async__ - Prefer await (confidence: 0.90; source: t1; extracted: 2024-01-02).",
    ],
)
def test_hand_written_bullet_variations(bullet: str) -> None:
    item = _one(bullet)
    assert (item.title, item.content, item.confidence) == ("Async", "Prefer await", 0.9)
    assert (item.sources, item.extracted, item.pinned) == (["t1"], date(2024, 1, 2), False)


def test_bullet_without_bold_title_gets_a_derived_title() -> None:
    item = _one("- prefer pathlib over os.path for every file operation here (confidence: 0.8)")
    assert item.title == "Prefer pathlib over os.path for every"
    assert item.content == "prefer pathlib over os.path for every file operation here"


def test_crlf_heading_case_and_header_spelling_variants() -> None:
    text = (
        "# Branch Memory: x\r\n\r\n**Last updated:** 2024-03-04T05:06:07+02:00\r\n"
        "**Thread count**: 4\r\n\r\n## summary\r\n\r\nS.\r\n\r\n## coding preferences\r\n\r\n"
        "- **A**: a (confidence: 0.7)\r\n\r\n## Bug patterns\r\n\r\n- **B**: b\r\n"
    )
    memory = parse(text)
    assert memory.last_updated == datetime(2024, 3, 4, 3, 6, 7, tzinfo=UTC)
    assert (memory.thread_count, memory.summary) == (4, "S.")
    assert [i.title for i in memory.items[Category.CODING_PREFERENCES]] == ["A"]
    assert [i.title for i in memory.items[Category.BUG_PATTERNS]] == ["B"]
    assert validate(text) == []


def test_paragraphs_subheadings_and_nested_fields_are_kept() -> None:
    body = (
        "A paragraph written instead of a bullet.\n\n"
        "### Backend\n\n"
        "- **Queue**: One job queue for all writes (confidence: 0.9)\n"
        "  - Rationale: keeps file writes ordered\n"
        "  - **Trade-off:** slower bulk imports\n"
        "  - **Retries**: a separate nested statement\n"
    )
    memory = parse(f"{HEADER}## Architectural Decisions\n\n{body}")
    items = memory.items[Category.ARCHITECTURAL_DECISIONS]
    assert [i.title for i in items] == ["A paragraph written instead of a", "Queue", "Retries"]
    queue = items[1]
    assert (queue.rationale, queue.trade_offs) == (
        "keeps file writes ordered",
        "slower bulk imports",
    )
    assert queue.tags == items[2].tags == ["backend"]
    assert parse(render(memory)) == memory


def test_unknown_sections_are_kept_through_render() -> None:
    text = (
        f"{HEADER}## Team Notes\n\nKeep this *exactly*.\n\n    code block\n\n"
        "### Sub\n\n- list\n\n## Coding Preferences\n\n- **A**: a\n"
    )
    memory = parse(text)
    assert memory.extra_sections == [
        ExtraSection(
            heading="Team Notes", body="Keep this *exactly*.\n\n    code block\n\n### Sub\n\n- list"
        )
    ]
    again = parse(render(memory))
    assert again.extra_sections == memory.extra_sections
    assert [i.title for i in again.all_items()] == ["A"]


@pytest.mark.parametrize("opener", ["```python", "~~~~", "<!-- todo", "<pre>"])
def test_render_closes_a_block_left_open_in_free_text(opener: str) -> None:
    memory = parse(f"{HEADER}## Coding Preferences\n\n- **A**: a\n")
    memory.summary = f"Intro.\n\n{opener}\nsome code"
    memory.extra_sections = [ExtraSection(heading="Scratch", body=opener)]
    again = parse(render(memory))
    assert [i.title for i in again.all_items()] == ["A"]
    assert again.summary.startswith(memory.summary)
    assert [e.heading for e in again.extra_sections] == ["Scratch"]
    assert validate(render(memory)) == []


def test_headings_inside_code_blocks_do_not_start_sections() -> None:
    text = f"{HEADER}## Coding Preferences\n\n```\n## Bug Patterns\n- **no**: x\n```\n"
    memory = parse(text)
    assert memory.items[Category.BUG_PATTERNS] == []
    assert len(memory.items[Category.CODING_PREFERENCES]) == 1  # the code block, kept as text


def test_missing_header_uses_the_given_branch_id_and_bad_values_do_not_raise() -> None:
    assert parse("## Summary\n\nHi\n", branch_id="main").branch_id == "main"
    assert parse("just text").branch_id == "unknown"
    memory = parse(
        "# Branch Memory: b\n\n**Last Updated:** yesterday\n"
        "**Last Extraction:** 2024-13-45\n**Thread Count:** many\n\n"
        "## Bug Patterns\n\n- **X**: y (confidence: 7, extracted: someday)\n"
    )
    assert memory.branch_id == "b"
    assert memory.last_extraction is None
    assert memory.thread_count == 0
    assert memory.items[Category.BUG_PATTERNS][0].confidence == 1.0


def test_hand_written_contradictions() -> None:
    text = (
        f"{HEADER}## Coding Preferences\n\n- **A**: a\n\n## Conflicts\n\n"
        "- **Line length**: 88 or 100? (status: open, detected: 2024-02-02, refs: pref-1)\n"
        "  - one thread says 88\n"
        "  - **Old**: 79 columns (id: pref-old, confidence: 0.6, source: t9)\n\n"
        "- a loose remark\n"
    )
    memory = parse(text)
    entry = memory.contradictions[0]
    assert (entry.title, entry.status, entry.refs) == ("Line length", "open", ["pref-1"])
    assert entry.description == "88 or 100? one thread says 88"
    assert entry.items[0].id == "pref-old"
    assert memory.contradiction_notes == "- a loose remark"
    assert parse(render(memory)) == memory


# ------------------------------------------------------------------------------ validation


def _messages(text: str) -> list[str]:
    return [p.message for p in validate(text)]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("## Summary\n\nx\n\n## Coding Preferences\n", "header"),
        ("# Branch Memory: x\n\n## Coding Preferences\n", "Summary"),
        ("# Branch Memory: x\n\n## Summary\n\nx\n\n## Other\n", "category"),
        (HEADER + "## Bug Patterns\n\n- **A**: a (confidence: 1.5)\n", "outside 0.0-1.0"),
        (HEADER + "## Bug Patterns\n\n- **A**: a (confidence: high)\n", "not a number"),
        (HEADER + "## Bug Patterns\n\n- **A**: a (extracted: 2024-02-30)\n", "not a valid date"),
        (HEADER.replace("2024-02-01T10:00:00Z", "Feb 1st") + "## Bug Patterns\n", "ISO 8601"),
        (HEADER.replace("never", "last week") + "## Bug Patterns\n", "ISO 8601"),
    ],
)
def test_validate_catches_each_rule(text: str, fragment: str) -> None:
    messages = _messages(text)
    assert len(messages) == 1, messages
    assert fragment in messages[0]


def test_validate_points_at_the_line() -> None:
    problems = validate(HEADER + "## Bug Patterns\n\n- **A**: a\n- **B**: b (confidence: -1)\n")
    assert problems == [Problem(14, "confidence '-1' is not a number")]


# ------------------------------------------------------------------------------ properties


_KNOWN = {
    "summary",
    "codingpreferences",
    "architecturaldecisions",
    "projectconventions",
    "bugpatterns",
    "implementationnotes",
    "contradictionsandconflicts",
    "conflictsandcontradictions",
    "contradictions",
    "conflicts",
}
_LABELS = re.compile(
    r"(?i)(rationale|trade-?offs?|scope|root cause|fix|approach|lessons"
    r"|learned)\s*:|occurred"
)

_chars = st.characters(codec="utf-8", categories=["L", "N", "P", "S", "Zs"], exclude_characters="*")
_line = st.text(_chars, max_size=30).map(one_line).filter(lambda s: not _LABELS.search(s))
_word_line = _line.filter(bool)
_maybe = st.one_of(st.just(""), _line)
_token = (
    st.text(st.sampled_from("abcXYZ019_.:/@+#-"), min_size=1, max_size=10)
    .map(lambda s: s.strip("-"))
    .filter(bool)
)
_tokens = st.lists(_token, max_size=3, unique=True)
_stamp = st.datetimes(timezones=st.just(UTC)).map(lambda d: d.replace(microsecond=0))


def _block_ok(line: str) -> bool:
    """Free text lines that cannot open a block swallowing later headings."""
    bare = line.strip()
    return not (
        bare.startswith(("#", "<", "```", "~~~"))
        or "```" in bare
        or "~~~" in bare
        or (bare and set(bare) <= set("-=_ "))
    )


_body = st.lists(st.text(_chars, max_size=30).filter(_block_ok), max_size=4).map(
    lambda lines: "\n".join(lines)
)


@st.composite
def _items(draw: st.DrawFn, category: Category | None = None) -> MemoryItem:
    return MemoryItem(
        id=draw(st.one_of(st.just(""), _token)),
        category=category or draw(st.sampled_from(list(Category))),
        title=draw(_word_line),
        content=draw(_line),
        confidence=draw(st.integers(0, 100)) / 100,
        sources=draw(_tokens),
        extracted=draw(st.dates()),
        tags=draw(_tokens),
        pinned=draw(st.booleans()),
        rationale=draw(_maybe),
        trade_offs=draw(_maybe),
        scope=draw(_maybe),
        root_cause=draw(_maybe),
        fix=draw(_maybe),
        approach=draw(_maybe),
        lessons=draw(_maybe),
        occurrences=draw(st.integers(1, 10**6)),
    )


_heading = _word_line.filter(
    lambda h: (
        re.sub(r"[^a-z]", "", h.lower().replace("&", "and")) not in _KNOWN and not h.endswith("#")
    )
)


@st.composite
def _memories(draw: st.DrawFn) -> BranchMemory:
    return BranchMemory(
        branch_id=draw(_word_line.filter(lambda b: not b.endswith("#"))),
        last_updated=draw(_stamp),
        last_extraction=draw(st.one_of(st.none(), _stamp)),
        thread_count=draw(st.integers(0, 10**6)),
        summary=draw(_body),
        items={c: draw(st.lists(_items(c), max_size=2)) for c in Category},
        contradictions=draw(
            st.lists(
                st.builds(
                    Contradiction,
                    id=st.one_of(st.just(""), _token),
                    title=_word_line,
                    description=_line,
                    status=st.sampled_from(["open", "superseded", "resolved"]),
                    detected=st.dates(),
                    refs=_tokens,
                    items=st.lists(_items(), max_size=2),
                ),
                max_size=2,
            )
        ),
        contradiction_notes=draw(
            _body.map(lambda b: "\n".join(x.lstrip() for x in b.split("\n") if "(" not in x))
        ),
        extra_sections=draw(
            st.lists(st.builds(ExtraSection, heading=_heading, body=_body), max_size=2)
        ),
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_memories())
def test_property_render_then_parse_is_identity(memory: BranchMemory) -> None:
    ids = [i.id for i in memory.all_items()]
    # (a second item under a taken id is given its own: the next property)
    assume(len(ids) == len(set(ids)))
    text = render(memory)
    assert parse(text) == memory
    assert validate(text) == []


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_memories())
def test_property_every_item_read_has_an_id_of_its_own(memory: BranchMemory) -> None:
    text = render(memory)
    read = parse(text)
    ids = [i.id for i in read.all_items()]
    assert len(ids) == len(set(ids))
    assert [i.content for i in read.all_items()] == [i.content for i in memory.all_items()]
    assert parse(text) == read  # the same file reads the same every time


@settings(max_examples=150, deadline=None)
@given(_items(), st.booleans())
def test_property_any_item_survives_in_its_section_or_a_contradiction(
    item: MemoryItem, superseded: bool
) -> None:
    memory = BranchMemory(branch_id="b", last_updated=datetime(2024, 1, 1, tzinfo=UTC))
    if superseded:
        memory.contradictions.append(Contradiction(title="t", description="d", items=[item]))
    else:
        memory.items[item.category].append(item)
    assert parse(render(memory)) == memory


_markdownish = st.text(
    st.sampled_from(list("#-*+>_`()[]:,.!%0123456789 \n\r\tabcxyz")), max_size=300
)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=300), _markdownish))
def test_property_parse_and_validate_never_raise(text: str) -> None:
    assert isinstance(parse(text), BranchMemory)
    assert all(isinstance(p, Problem) for p in validate(text))
    header_last_updated(text)


@settings(max_examples=100, deadline=None)
@given(_markdownish.map(lambda t: HEADER + "## Coding Preferences\n\n" + t))
def test_property_text_in_a_category_is_never_dropped(text: str) -> None:
    memory = parse(text)
    rendered = render(memory)
    for word in re.findall(r"[a-z]+", text.split("## Coding Preferences", 1)[1]):
        assert word in rendered
    again = parse(rendered)
    assert again.item_count() == memory.item_count()
    assert render(again) == rendered
