"""Tests for app/engines/offline/evolve.py: deterministic evolution and consolidation."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.config import Config
from app.core.errors import InvalidInput
from app.core.format import parse, render
from app.core.guard import check_evolution
from app.core.models import BranchMemory, Category, Contradiction, MemoryItem
from app.core.similarity import contradicts, item_similarity
from app.engines.offline.evolve import (
    consolidate,
    evolve,
    reinforce,
    replaces_in_force,
    summarize,
)

PREF = Category.CODING_PREFERENCES
CONV = Category.PROJECT_CONVENTIONS
DEC = Category.ARCHITECTURAL_DECISIONS
BUG = Category.BUG_PATTERNS
NOW = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
CONFIG = Config()


def item(
    content: str,
    *,
    category: Category = PREF,
    confidence: float = 0.8,
    source: str = "thread-1",
    day: date = date(2024, 1, 10),
    **extra: object,
) -> MemoryItem:
    return MemoryItem.model_validate(
        {
            "category": category,
            "title": "",
            "content": content,
            "confidence": confidence,
            "sources": [source],
            "extracted": day,
            **extra,
        }
    )


def later(content: str, tag: str, *, category: Category = DEC) -> MemoryItem:
    """A statement of a second, later thread carrying one `replaces:` tag."""
    return item(content, category=category, source="thread-2", day=date(2024, 2, 1), tags=[tag])


def run(current: BranchMemory | None, *items: MemoryItem, branch: str = "main") -> BranchMemory:
    result = evolve(current, list(items), branch_id=branch, config=CONFIG, now=NOW)
    assert result.path == "offline"
    assert check_evolution(current, result.memory, list(items), branch_id=branch) == []
    return result.memory


def contents(memory: BranchMemory, category: Category = PREF) -> list[str]:
    return [i.content for i in memory.items[category]]


# --- starting and adding ---------------------------------------------------------------------


def test_first_evolution_starts_a_branch_file() -> None:
    result = evolve(
        None,
        [
            item("Use ruff for linting"),
            item("Race conditions in async state updates", category=BUG, fix="Use explicit locks"),
        ],
        branch_id="feature/auth",
        config=CONFIG,
        now=NOW,
    )
    memory = result.memory
    assert memory.branch_id == "feature/auth"
    assert contents(memory) == ["Use ruff for linting"]
    assert contents(memory, BUG) == ["Race conditions in async state updates"]
    assert memory.last_updated == NOW
    assert memory.last_extraction == NOW
    assert memory.thread_count == 1
    assert result.stats == {"added": 2, "reinforced": 0, "superseded": 0, "conflicts": 0}
    assert "Use ruff for linting" in memory.summary
    assert "Watch for: Race conditions in async state updates" in memory.summary
    assert parse(render(memory), "feature/auth") == memory


def test_unrelated_items_are_added_to_their_sections_in_order() -> None:
    first = run(None, item("Use ruff for linting"))
    second = run(
        first,
        item("Use pytest fixtures for database setup"),
        item("Name branches feature/<topic>", category=CONV),
    )
    assert contents(second) == ["Use ruff for linting", "Use pytest fixtures for database setup"]
    assert contents(second, CONV) == ["Name branches feature/<topic>"]


def test_wrong_branch_or_empty_branch_is_refused() -> None:
    memory = run(None, item("Use ruff for linting"))
    with pytest.raises(InvalidInput):
        evolve(memory, [], branch_id="other", config=CONFIG, now=NOW)
    with pytest.raises(InvalidInput):
        evolve(None, [], branch_id="  ", config=CONFIG, now=NOW)


# --- reinforcement ---------------------------------------------------------------------------


def test_near_duplicate_reinforces_the_existing_item() -> None:
    old = item(
        "Prefer async/await over .then() chains", confidence=0.8, tags=["js"], day=date(2024, 1, 10)
    )
    memory = run(None, old)
    again = item(
        "User prefers async/await over Promise .then() chains",
        confidence=0.8,
        source="thread-2",
        tags=["async"],
        day=date(2024, 2, 20),
    )
    result = evolve(memory, [again], branch_id="main", config=CONFIG, now=NOW)
    kept = result.memory.items[PREF]
    assert len(kept) == 1
    assert kept[0].id == old.id
    assert kept[0].content == old.content
    assert kept[0].confidence == 0.85  # 0.8 + 0.2 * 0.25
    assert kept[0].sources == ["thread-1", "thread-2"]
    assert kept[0].tags == ["js", "async"]
    assert kept[0].extracted == date(2024, 1, 10)
    assert result.stats["reinforced"] == 1
    assert result.stats["added"] == 0


def test_reinforcement_is_capped_and_never_lowers_confidence() -> None:
    strong = item("Use ruff for linting", confidence=0.96)
    assert (
        reinforce(
            strong, item("Use ruff for linting", confidence=0.5, source="thread-2")
        ).confidence
        == 0.97
    )
    capped = item("Use ruff for linting", confidence=0.99)
    assert reinforce(capped, item("Use ruff for linting", confidence=0.99)).confidence == 0.99
    certain = item("Use ruff for linting", confidence=1.0)
    assert reinforce(certain, item("Use ruff for linting")).confidence == 1.0


def test_the_same_thread_read_again_is_not_a_second_witness() -> None:
    first = item("Use ruff for linting", confidence=0.8, source="thread-1")
    again = reinforce(first, item("Use ruff for linting", confidence=0.8, source="thread-1"))
    assert again.confidence == 0.8
    bug = item("Race in async updates", category=BUG, source="thread-1")
    assert (
        reinforce(bug, item("Race in async updates", category=BUG, source="thread-1")).occurrences
        == 1
    )


def test_bug_pattern_occurrences_add_up_and_details_fill_in() -> None:
    bug = item("Race conditions in async state updates", category=BUG, occurrences=2)
    memory = run(None, bug)
    repeat = item(
        "Race conditions in async state updates.",
        category=BUG,
        source="thread-3",
        occurrences=1,
        fix="Use explicit locks",
        root_cause="Shared mutable state",
    )
    after = run(memory, repeat)
    [merged] = after.items[BUG]
    assert merged.occurrences == 3
    assert merged.fix == "Use explicit locks"
    assert merged.root_cause == "Shared mutable state"
    assert "seen 3 times" in after.summary


def test_duplicates_within_one_batch_become_one_bullet() -> None:
    result = evolve(
        None,
        [
            item("Use ruff for linting", source="thread-1"),
            item("Use ruff for linting.", source="thread-1", confidence=0.9),
            item("Always use ruff for linting", source="thread-1"),
        ],
        branch_id="main",
        config=CONFIG,
        now=NOW,
    )
    assert len(result.memory.items[PREF]) == 1
    assert result.stats["added"] == 1
    assert result.stats["reinforced"] == 2


def test_same_text_in_another_category_is_not_a_duplicate() -> None:
    memory = run(None, item("Use ruff for linting"), item("Use ruff for linting", category=CONV))
    assert len(memory.items[PREF]) == 1
    assert len(memory.items[CONV]) == 1


def test_duplicate_of_a_pinned_item_leaves_it_exactly_as_written() -> None:
    pinned = item("Use ruff for linting", source="user", confidence=0.7)
    memory = run(None, pinned)
    after = run(memory, item("Use ruff for linting", source="thread-9", confidence=0.95))
    assert after.items[PREF] == [pinned]


# --- contradictions --------------------------------------------------------------------------


def test_confident_contradiction_supersedes_and_keeps_the_old_item_whole() -> None:
    old = item(
        "Prefer async/await over .then() chains",
        confidence=0.85,
        day=date(2024, 1, 19),
        source="thread-a",
    )
    other = item("Use ruff for linting")
    memory = run(None, old, other)
    new = item(
        "Prefer .then() chains to async/await",
        confidence=0.9,
        day=date(2024, 3, 1),
        source="thread-b",
    )
    result = evolve(memory, [new], branch_id="main", config=CONFIG, now=NOW)
    after = result.memory
    assert contents(after) == ["Prefer .then() chains to async/await", "Use ruff for linting"]
    [entry] = after.contradictions
    assert entry.status == "superseded"
    assert entry.items == [old]
    assert entry.refs == [new.id]
    for text in (
        "2024-01-19",
        "2024-03-01",
        "thread-a",
        "thread-b",
        "Prefer async/await over .then() chains",
        "Prefer .then() chains to async/await",
    ):
        assert text in entry.description
    assert result.stats["superseded"] == 1
    assert result.stats["added"] == 0


def test_equal_confidence_is_enough_to_supersede() -> None:
    memory = run(None, item("Use tabs, not spaces", confidence=0.8))
    after = run(memory, item("Use spaces, not tabs", confidence=0.8, source="thread-2"))
    assert contents(after) == ["Use spaces, not tabs"]
    assert after.contradictions[0].status == "superseded"


def test_a_later_value_for_the_same_setting_supersedes_the_earlier_one() -> None:
    memory = run(
        None,
        item("Set retention for the app logs to 14 days.", category=DEC),
        item("Access tokens live 15 minutes, refresh tokens 7 days.", category=CONV),
    )
    after = run(
        memory,
        item("Loki retention for app logs goes up to 30 days.", category=DEC, source="thread-2"),
    )

    assert contents(after, DEC) == ["Loki retention for app logs goes up to 30 days."]
    assert contents(after, CONV) == ["Access tokens live 15 minutes, refresh tokens 7 days."]
    (entry,) = after.contradictions
    assert entry.status == "superseded"
    assert [i.content for i in entry.items] == ["Set retention for the app logs to 14 days."]


def test_a_change_of_choice_replaces_an_earlier_thread_on_one_shared_subject_word() -> None:
    chosen = item(
        "For the user uploads (profile photos, PDF contracts) we take Backblaze B2.",
        category=DEC,
    )
    other = item("Background jobs run on Sidekiq with Redis.", category=DEC)
    memory = run(None, chosen, other)
    moved = later("The uploads are going to R2 now.", "replaces:any")

    after = run(memory, moved)

    assert sorted(contents(after, DEC)) == sorted([other.content, moved.content])
    assert any("Backblaze" in str(c) for c in after.contradictions)


STYLED = (
    "styling: we use styled-components for all styling in packages/ui, theme values come from "
    "the ThemeProvider theme object, no plain css files."
)


@pytest.mark.parametrize(
    ("said", "replaced"),
    [
        # "instead of the JS theme object" names something no rule of the branch holds; the
        # change of course still replaces what an earlier thread set on the subject.
        (
            "From now on packages/ui is styled with CSS Modules, values come from the CSS "
            "custom properties in tokens.css instead of the JS theme object.",
            True,
        ),
        # The same words without "from now on": nothing moves.
        (
            "packages/ui styling values come from the CSS custom properties in tokens.css "
            "instead of the JS theme object.",
            False,
        ),
    ],
)
def test_from_now_on_replaces_an_earlier_rule_when_what_it_names_was_never_one(
    said: str, replaced: bool
) -> None:
    old = item(STYLED, category=CONV)
    other = item("Every package has its own tsconfig.", category=CONV)
    memory = run(None, old, other)
    new = later(said, "replaces:js")

    after = run(memory, new)

    if replaced:
        assert contents(after, CONV) == [other.content]
        (entry,) = after.contradictions
        assert entry.status == "superseded"
        assert [i.content for i in entry.items] == [old.content]
    else:
        assert contents(after, CONV) == [old.content, other.content]
        assert not after.contradictions


NOTE = Category.IMPLEMENTATION_NOTES
LINT_SETUP = "Set up: ESLint flat config with typescript-eslint, Prettier with 100 columns."


def _lint_setup_then(said: str, tag: str) -> BranchMemory:
    """The lint setup note of a first thread, then a later thread's statement."""
    memory = run(None, item(LINT_SETUP, category=NOTE))
    new = later(said, tag)
    return run(memory, new)


def test_a_named_replacement_retires_the_note_that_describes_the_old_setup() -> None:
    after = _lint_setup_then(
        "Biome does linting and formatting, replacing ESLint and Prettier.", "replaces:eslint"
    )

    assert contents(after, NOTE) == []
    (entry,) = after.contradictions
    assert entry.status == "superseded" and entry.items[0].content == LINT_SETUP


def test_an_unnamed_change_of_course_leaves_notes_alone() -> None:
    after = _lint_setup_then(
        "Actually, the lint setup with ESLint and Prettier gets Biome instead.", "replaces:any"
    )

    assert contents(after, NOTE) == [LINT_SETUP]


def test_an_unnamed_replacement_retires_no_rule_that_shares_its_words() -> None:
    # "if the buffer is full, drop the message …" names no choice: the extractor tags it
    # `replaces:unnamed`, and no rule goes for mentioning messages.
    rules = [
        item("Every log message is a single JSON object with a request_id field.", category=CONV),
        item("The commit message subject stays under 72 characters.", category=CONV),
    ]
    memory = run(None, *rules)
    new = later(
        "A low-priority log task drains a 4 KB ring buffer; if the buffer is full, drop the "
        "message and count the drops.",
        "replaces:unnamed",
    )

    after = run(memory, new)

    assert contents(after, CONV) == [r.content for r in rules]
    assert not after.contradictions


@pytest.mark.parametrize(
    ("said", "left"),
    [
        # The correction sets sqlite aside: only the rule that said sqlite goes.
        (
            "Actually, the api integration tests run against a real postgres in docker, "
            "not sqlite.",
            ["Every api endpoint gets integration tests in tests/api/."],
        ),
        # Nothing set aside: every rule sharing its subject goes, as before.
        ("Actually, the api integration tests run against a real postgres in docker.", []),
    ],
)
def test_a_correction_that_sets_a_value_aside_retires_only_the_rules_that_said_it(
    said: str, left: list[str]
) -> None:
    rules = [
        item("Every api endpoint gets integration tests in tests/api/.", category=CONV),
        item("The api integration tests use sqlite in memory.", category=CONV),
    ]
    memory = run(None, *rules)
    new = later(said, "replaces:any", category=CONV)

    after = run(memory, new)

    assert contents(after, CONV) == [*left, said]
    (entry,) = after.contradictions
    assert entry.status == "superseded"
    assert rules[1].content in [i.content for i in entry.items]


def test_a_correction_naming_nothing_takes_back_the_closest_rule_only() -> None:
    rules = [
        item("The lint target in the Makefile runs ruff and mypy.", category=CONV),
        item("Release builds go through the Makefile, never by hand.", category=CONV),
        item("Every Makefile target has a help line.", category=CONV),
    ]
    memory = run(None, *rules)
    new = later(
        "Actually, the lint target in the Makefile does not run mypy anymore, CI does.",
        "replaces:any",
        category=CONV,
    )

    after = run(memory, new)

    # The three share "makefile"; only the lint rule shares the correction's subject.
    assert sorted(contents(after, CONV)) == sorted(
        [rules[1].content, rules[2].content, new.content]
    )
    (entry,) = after.contradictions
    assert [i.content for i in entry.items] == [rules[0].content]


def test_the_verbs_every_rule_uses_are_no_shared_subject() -> None:
    pino = item("Logging goes through pino, JSON lines.", category=CONV)
    memory = run(None, pino)

    # "logging" and "goes" in common: only "logging" is a subject, and it is short.
    after = run(
        memory,
        later(
            "Actually, logging in the CLI goes to stderr as plain text.",
            "replaces:any",
            category=CONV,
        ),
    )

    assert pino.content in contents(after, CONV)
    assert not after.contradictions


def test_one_shared_word_within_a_thread_replaces_nothing() -> None:
    chosen = item("drift for local storage, SQLite with typed queries.", category=DEC)
    memory = run(None, chosen)
    said_later = item(
        "Hive is not maintained anymore, I don't want to depend on it for storage.",
        category=DEC,
        tags=["replaces:any"],
    )

    after = run(memory, said_later)

    assert chosen.content in contents(after, DEC)


def test_weaker_contradiction_is_left_open_and_not_committed() -> None:
    old = item("Never mock the database in tests", confidence=0.9, day=date(2024, 1, 5))
    memory = run(None, old)
    new = item(
        "Mock the database in tests", confidence=0.8, source="thread-7", day=date(2024, 2, 2)
    )
    result = evolve(memory, [new], branch_id="main", config=CONFIG, now=NOW)
    after = result.memory
    assert after.items[PREF] == [old]
    [entry] = after.contradictions
    assert entry.status == "open"
    assert entry.items == [new]
    assert entry.refs == [old.id]
    for text in ("2024-01-05", "2024-02-02", "thread-1", "thread-7", "higher confidence"):
        assert text in entry.description
    assert result.stats["conflicts"] == 1
    assert "1 open contradiction awaits a decision" in after.summary


def test_pinned_item_is_never_superseded() -> None:
    pinned = item("Use tabs, not spaces", source="user", confidence=0.6)
    memory = run(None, pinned)
    after = run(memory, item("Use spaces, not tabs", confidence=0.99, source="thread-3"))
    assert after.items[PREF] == [pinned]
    assert after.contradictions[0].status == "open"
    assert "pinned" in after.contradictions[0].description


def test_a_statement_written_by_the_user_beats_an_extracted_one() -> None:
    memory = run(None, item("Use tabs, not spaces", confidence=0.95))
    mine = item("Use spaces, not tabs", source="user", confidence=0.7)
    after = run(memory, mine)
    assert after.items[PREF] == [mine]
    assert after.contradictions[0].status == "superseded"


def test_repeating_an_open_contradiction_adds_sources_not_entries() -> None:
    memory = run(None, item("Never mock the database in tests", confidence=0.95))
    once = run(memory, item("Mock the database in tests", source="thread-2"))
    twice = evolve(
        once,
        [item("Mock the database in tests", source="thread-3")],
        branch_id="main",
        config=CONFIG,
        now=NOW,
    )
    assert len(twice.memory.contradictions) == 1
    assert twice.memory.contradictions[0].items[0].sources == ["thread-2", "thread-3"]
    assert twice.stats["conflicts"] == 0


def test_contradiction_across_sections_moves_the_old_item_out_of_its_section() -> None:
    memory = run(None, item("Always commit lock files", category=CONV, confidence=0.8))
    after = run(memory, item("Don't commit lock files", confidence=0.9, source="thread-4"))
    assert after.items[CONV] == []
    assert contents(after) == ["Don't commit lock files"]
    assert after.contradictions[0].items[0].category is CONV


def test_earlier_contradictions_and_extra_sections_are_kept() -> None:
    memory = run(None, item("Use tabs, not spaces"))
    memory = memory.model_copy(
        update={
            "contradictions": [
                Contradiction(title="Old", description="Decided by hand", status="resolved")
            ]
        }
    )
    after = run(memory, item("Use spaces, not tabs", confidence=0.9, source="thread-2"))
    assert after.contradictions[0].title == "Old"
    assert len(after.contradictions) == 2


# --- header ----------------------------------------------------------------------------------


def test_thread_count_grows_once_per_new_thread_only() -> None:
    memory = run(None, item("Use ruff for linting", source="thread-1"))
    assert memory.thread_count == 1
    same = run(memory, item("Use pytest for tests", source="thread-1"))
    assert same.thread_count == 1
    from_cli = run(same, item("Use black for formatting", source="cli"))
    assert from_cli.thread_count == 1
    by_user = run(from_cli, item("Keep functions short", source="user"))
    assert by_user.thread_count == 1
    two_items = run(
        by_user,
        item("Use mypy strict", source="thread-2"),
        item("Use uv for envs", source="thread-2"),
    )
    assert two_items.thread_count == 2


def test_evolution_is_deterministic() -> None:
    memory = run(None, item("Use tabs, not spaces"), item("Use ruff for linting"))
    batch = [
        item("Use spaces, not tabs", confidence=0.9, source="t2"),
        item("Always use ruff for linting", source="t2"),
        item("Use uv", source="t2"),
    ]
    one = evolve(memory, batch, branch_id="main", config=CONFIG, now=NOW)
    two = evolve(memory, batch, branch_id="main", config=CONFIG, now=NOW)
    assert render(one.memory) == render(two.memory)
    assert one.stats == two.stats


def test_summary_of_an_empty_memory() -> None:
    assert summarize(BranchMemory(branch_id="x")) == "This branch's memory holds no items yet."


def test_summary_cuts_a_long_item_at_a_clause_not_inside_a_number() -> None:
    text = (
        "I talked with Lena and we're moving the invoice jobs off Celery and onto Dramatiq, "
        "the prefork pool eats 1.2 GB idle and we use none of the canvas stuff"
    )
    memory = run(None, item(text))
    assert "off Celery and onto Dramatiq." in memory.summary
    assert "1.2" not in memory.summary
    words = " ".join(f"word{i}" for i in range(60))
    assert run(None, item(words)).summary.rstrip(".").endswith("…")


def test_summary_lists_the_strongest_items_first() -> None:
    items = [item(f"Use tool{i} for job{i}", confidence=0.5 + i / 20) for i in range(6)]
    memory = run(None, *items)
    prefs = memory.summary.split("Key points: ", 1)[1].split(".", 1)[0]
    assert prefs == "Use tool5 for job5; use tool4 for job4; use tool3 for job3"


def test_summary_is_three_sentences_from_the_strongest_items_whatever_their_section() -> None:
    memory = run(
        None,
        item("Jobs run on dramatiq with rabbitmq as the broker", category=DEC, confidence=0.9),
        item("Money is always Decimal, never float", category=CONV, confidence=0.85),
        item("Never disable lint rules inline", category=CONV, confidence=0.6),
        item("I prefer early returns", confidence=0.7),
        item("The webhook handler rejects every event", category=BUG, fix="Verify the raw body"),
        item("The cache lives in app/cache.py", category=NOTE),
    )
    summary = memory.summary
    assert summary.startswith(
        "This branch's memory holds 1 decision, 2 conventions, 1 coding preference, "
        "1 bug pattern and 1 implementation note from 1 thread."
    ), summary
    assert (
        "Key points: Jobs run on dramatiq with rabbitmq as the broker; money is always "
        "Decimal, never float; I prefer early returns." in summary
    ), summary
    assert "Watch for: The webhook handler rejects every event." in summary
    # a note waits until no bug is known; the summary is three sentences
    assert "app/cache.py" not in summary
    assert summary.count(". ") == 2, summary


# --- nothing lost (property) -----------------------------------------------------------------

SUBJECTS = [
    "tabs",
    "spaces",
    "httpx",
    "requests",
    "async/await",
    ".then() chains",
    "redux",
    "global state",
    "mocks",
    "lock files",
]
TEMPLATES = [
    "Use {x}",
    "Never use {x}",
    "Prefer {x} over {y}",
    "Use {x} instead of {y}",
    "Always use {x} for {y}",
    "Avoid {x}",
    "{x} in {y} caused flaky builds",
    "Use {x}, not {y}",
]
SOURCES = ["thread-1", "thread-2", "thread-3", "cli", "user"]


@st.composite
def memory_items(draw: st.DrawFn) -> MemoryItem:
    template = draw(st.sampled_from(TEMPLATES))
    x, y = draw(st.sampled_from(SUBJECTS)), draw(st.sampled_from(SUBJECTS))
    return MemoryItem(
        category=draw(st.sampled_from([PREF, CONV, BUG])),
        title="",
        content=template.format(x=x, y=y) + draw(st.sampled_from(["", ".", " always"])),
        confidence=draw(st.sampled_from([0.5, 0.75, 0.8, 0.9, 0.95])),
        sources=[draw(st.sampled_from(SOURCES))],
        extracted=draw(st.dates(min_value=date(2023, 1, 1), max_value=date(2024, 12, 31))),
        occurrences=draw(st.integers(min_value=1, max_value=3)),
    )


@st.composite
def branch_memories(draw: st.DrawFn) -> BranchMemory:
    items: dict[Category, list[MemoryItem]] = {c: [] for c in Category}
    seen: set[str] = set()
    for candidate in draw(st.lists(memory_items(), max_size=14)):
        if candidate.id not in seen:
            seen.add(candidate.id)
            items[candidate.category].append(candidate)
    return BranchMemory(branch_id="main", items=items, thread_count=draw(st.integers(0, 5)))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(branch_memories(), st.lists(memory_items(), max_size=12))
def test_nothing_is_ever_lost(current: BranchMemory, new_items: list[MemoryItem]) -> None:
    result = evolve(current, new_items, branch_id="main", config=CONFIG, now=NOW)
    after = result.memory
    in_sections = {i.id: i for i in after.all_items()}
    in_conflicts = {i.id for c in after.contradictions for i in c.items}

    for old in current.all_items():
        assert old.id in in_sections or old.id in in_conflicts
        if old.pinned:
            assert in_sections[old.id] == old
    assert [c.id for c in after.contradictions[: len(current.contradictions)]] == [
        c.id for c in current.contradictions
    ]
    assert len(in_sections) == after.item_count()  # no id twice
    assert check_evolution(current, after, new_items) == []
    assert parse(render(after), "main") == after

    # No duplicate bullets: any two look-alike items in a section both predate this run
    # (consolidation merges those) or say opposite things.
    old_ids = {i.id for i in current.all_items()}
    for category in Category:
        section = after.items[category]
        for n, a in enumerate(section):
            for b in section[n + 1 :]:
                if a.id in old_ids and b.id in old_ids:
                    continue
                assert item_similarity(a, b) < CONFIG.duplicate_threshold or contradicts(a, b)

    total = sum(result.stats.values())
    assert total >= len(new_items) - sum(1 for n in result.notes if "repeat of open" in n)


# --- consolidation ---------------------------------------------------------------------------


def memory_of(
    *items: MemoryItem, contradictions: list[Contradiction] | None = None
) -> BranchMemory:
    sections: dict[Category, list[MemoryItem]] = {c: [] for c in Category}
    for i in items:
        sections[i.category].append(i)
    return BranchMemory(
        branch_id="main",
        items=sections,
        contradictions=contradictions or [],
        thread_count=3,
        last_extraction=datetime(2024, 2, 1, tzinfo=UTC),
    )


def test_consolidation_merges_near_duplicates_into_the_first() -> None:
    first = item(
        "Prefer async/await over .then() chains", confidence=0.8, source="t1", day=date(2024, 2, 1)
    )
    other = item("Use ruff for linting")
    second = item(
        "User prefers async/await over Promise .then() chains",
        confidence=0.9,
        source="t2",
        day=date(2024, 1, 1),
    )
    result = consolidate(memory_of(first, other, second), config=CONFIG, now=NOW)
    kept = result.memory.items[PREF]
    assert [i.id for i in kept] == [first.id, other.id]
    assert kept[0].sources == ["t1", "t2"]
    assert kept[0].confidence == 0.93  # from 0.9, a quarter of the gap
    assert kept[0].extracted == date(2024, 1, 1)
    assert result.stats == {"merged": 1, "pruned": 0}
    assert result.notes == [second.id]
    memory = memory_of(first, other, second)
    assert check_evolution(memory, result.memory, [], allowed_removals=result.notes) == []
    assert result.memory.last_updated == NOW
    assert result.memory.last_extraction == datetime(2024, 2, 1, tzinfo=UTC)
    assert result.memory.thread_count == 3


def test_consolidation_keeps_pinned_items_and_opposites() -> None:
    unpinned = item("Use ruff for linting", source="t1")
    pinned = item("Use ruff for linting.", source="user")
    pinned_too = item("Use ruff for linting!", source="user")
    yes = item("Mock the database in tests")
    no = item("Never mock the database in tests")
    result = consolidate(memory_of(unpinned, pinned, pinned_too, yes, no), config=CONFIG, now=NOW)
    kept = result.memory.items[PREF]
    assert pinned in kept
    assert pinned_too in kept
    assert unpinned.id not in {i.id for i in kept}
    assert yes in kept
    assert no in kept
    assert result.stats["merged"] == 1


def test_section_cap_prunes_the_weakest_never_pinned() -> None:
    config = Config(section_cap=3)
    pinned_weak = item("Use tool0 for job0", source="user", confidence=0.1)
    weak_old = item("Use tool1 for job1", confidence=0.5, day=date(2023, 1, 1))
    weak_new = item("Use tool2 for job2", confidence=0.5, day=date(2024, 1, 1))
    strong = item("Use tool3 for job3", confidence=0.9)
    lowest = item("Use tool4 for job4", confidence=0.4)
    memory = memory_of(pinned_weak, weak_old, weak_new, strong, lowest)
    result = consolidate(memory, config=config, now=NOW)
    assert [i.id for i in result.memory.items[PREF]] == [pinned_weak.id, weak_new.id, strong.id]
    assert result.notes == [weak_old.id, lowest.id]
    assert result.stats == {"merged": 0, "pruned": 2}
    assert check_evolution(memory, result.memory, [], allowed_removals=result.notes) == []


def test_cap_cannot_remove_pinned_items() -> None:
    pinned = [item(f"Use tool{i} for job{i}", source="user") for i in range(4)]
    result = consolidate(memory_of(*pinned), config=Config(section_cap=2), now=NOW)
    assert result.memory.items[PREF] == pinned
    assert result.stats["pruned"] == 0


def test_consolidation_refreshes_the_summary_and_keeps_contradictions() -> None:
    entry = Contradiction(title="Open: x", description="Something open", status="open")
    memory = memory_of(item("Use ruff for linting"), contradictions=[entry])
    memory = memory.model_copy(update={"summary": "stale"})
    result = consolidate(memory, config=CONFIG, now=NOW)
    assert result.memory.contradictions == [entry]
    assert result.memory.summary == summarize(result.memory)
    assert "Use ruff for linting" in result.memory.summary
    assert check_evolution(memory, result.memory, []) == []


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(branch_memories(), st.integers(min_value=1, max_value=6))
def test_consolidation_only_removes_what_it_reports(memory: BranchMemory, cap: int) -> None:
    config = Config(section_cap=cap)
    result = consolidate(memory, config=config, now=NOW)
    after = result.memory
    kept = {i.id: i for i in after.all_items()}
    gone = {i.id for i in memory.all_items()} - set(kept)
    assert gone == set(result.notes)
    assert len(result.notes) == result.stats["merged"] + result.stats["pruned"]
    for old in memory.all_items():
        if old.pinned:
            assert kept[old.id] == old
    for category in Category:
        section = after.items[category]
        assert len(section) <= cap or all(i.pinned for i in section)
    assert check_evolution(memory, after, [], allowed_removals=result.notes) == []
    assert parse(render(after), "main") == after


# --- a change that names what it retires -----------------------------------------------------


def test_a_change_records_the_choice_it_retires_when_no_item_held_it() -> None:
    # The first thread's "we pickle the cache" never became an item; the second says it is
    # gone. The branch records pickle as superseded so nobody brings it back.
    memory = run(None, later("No more pickle, use msgpack for the cache.", "replaces:pickle"))

    assert contents(memory, DEC) == ["No more pickle, use msgpack for the cache."]
    (entry,) = memory.contradictions
    assert entry.status == "superseded"
    (old,) = entry.items
    assert old.title == "pickle"
    assert old.category is DEC
    assert "pickle" in old.content and "msgpack" in old.content
    assert parse(render(memory)).contradictions[0].items[0].title == "pickle"
    # it says what happened, not that one statement replaced another
    assert "retired pickle, which no earlier item of this branch recorded" in entry.description


@pytest.mark.parametrize(
    ("said", "tag"),
    [
        # a word the reversal patterns read as a name, with nothing put in its place
        ("I change to ValueKey and the flicker is gone, no more blink.", "replaces:flicker"),
        ("Please verify rather than speculate.", "replaces:speculate"),
        ("Experiments go from the jira ticket to the runs.", "replaces:ticket"),
        ("Otherwise we'll be search-and-replacing hex codes for a month.", "replaces:hex"),
        # dropping what a rule throws away, with "it is" after it
        (
            "Dropping messages under load is fine as long as the count is visible, which it is.",
            "replaces:messages",
        ),
    ],
)
def test_a_word_read_as_a_name_retires_nothing(said: str, tag: str) -> None:
    memory = run(None, later(said, tag))

    assert memory.contradictions == []


@pytest.mark.parametrize(
    ("said", "tag", "title"),
    [
        # done with it, and what comes from here on
        (
            "I'm done with styled-components. from here on it's CSS Modules.",
            "replaces:styled-components",
            "styled-components",
        ),
        # the wrong call, and where the work moves
        (
            "In hindsight argparse was the wrong call for hostctl. port it to typer.",
            "replaces:argparse",
            "argparse",
        ),
        # out, and what it is instead; the name as the statement wrote it
        (
            "We're on RDS, so Timescale is out anyway. pg_partman it is.",
            "replaces:timescale",
            "Timescale",
        ),
    ],
)
def test_a_change_in_other_words_records_what_it_retires(said: str, tag: str, title: str) -> None:
    memory = run(None, later(said, tag))

    (entry,) = memory.contradictions
    assert entry.status == "superseded"
    assert entry.items[0].title == title


def test_a_change_titled_as_one_choice_instead_of_another_records_the_other() -> None:
    # "we're dropping black. … use `ruff format`": the statement kept names only the new
    # choice; its title says what it replaced.
    change = later("Use `ruff format`, same line length 100.", "replaces:black")
    change = change.model_copy(update={"title": "Ruff format instead of black"})
    memory = run(None, change)

    (entry,) = memory.contradictions
    assert entry.items[0].title == "black"
    # a title naming something else retires nothing
    other = later("Use `ruff format`, same line length 100.", "replaces:black")
    other = other.model_copy(update={"title": "Ruff format for the service"})
    assert run(None, other).contradictions == []


def test_a_removed_package_named_outside_the_statement_is_retired() -> None:
    # The agent removed @auth0/nextjs-auth0; the user's statement names only the new choice.
    memory = run(None, later("Clerk went live this morning.", "replaces:auth0"))

    (entry,) = memory.contradictions
    assert entry.items[0].title == "auth0"


def test_a_retired_choice_takes_the_rule_naming_its_identifier() -> None:
    first = run(None, item("Token is in ROLLBAR_ACCESS_TOKEN, never hardcoded.", category=CONV))
    memory = run(first, later("From the 1st we are on Sentry, not Rollbar.", "replaces:rollbar"))

    assert contents(memory, CONV) == []
    (entry,) = memory.contradictions
    assert entry.items[0].content == "Token is in ROLLBAR_ACCESS_TOKEN, never hardcoded."


# -- a held change is committed when what it names is in force ---------------------------


def test_a_held_change_counts_only_against_a_choice_in_force() -> None:
    memory = run(None, item("For the message broker we use RabbitMQ.", category=DEC))
    change = later("Switch the message broker from RabbitMQ to NATS.", "replaces:rabbitmq")
    change = change.model_copy(update={"confidence": 0.6})
    assert replaces_in_force(memory, [change], config=CONFIG) == [change]
    assert replaces_in_force(None, [change], config=CONFIG) == []
    # A pinned rule is a person's word: no change read by a pattern outranks it.
    pinned = run(None, item("For the message broker we use RabbitMQ.", category=DEC, pinned=True))
    assert replaces_in_force(pinned, [change], config=CONFIG) == []
    # Only a named old choice counts: "actually, …" shares words, which is not enough here.
    vague = later("Actually the message broker is NATS.", "replaces:any")
    assert replaces_in_force(memory, [vague], config=CONFIG) == []


def test_a_held_change_naming_an_everyday_word_needs_the_same_subject() -> None:
    change = later("Switch the login page from tabs to a stepper.", "replaces:tabs")
    change = change.model_copy(update={"confidence": 0.6})
    # "tabs" in lower case may be any tabs: a rule on indentation is not this choice.
    indentation = run(None, item("Use tabs for indentation in the Go files.", category=CONV))
    assert replaces_in_force(indentation, [change], config=CONFIG) == []
    login = run(None, item("The login page always shows tabs for sign-in.", category=DEC))
    assert replaces_in_force(login, [change], config=CONFIG) == [change]


def test_a_setting_changed_under_its_acronym_supersedes_the_spelled_out_one() -> None:
    first = run(None, item("The minimum supported Rust version is 1.70.", category=CONV))
    memory = run(
        first,
        later("The MSRV goes up to 1.74.", "source:user").model_copy(update={"category": CONV}),
    )

    assert contents(memory, CONV) == ["The MSRV goes up to 1.74."]
    (entry,) = memory.contradictions
    assert entry.status == "superseded"
    assert entry.items[0].content == "The minimum supported Rust version is 1.70."
