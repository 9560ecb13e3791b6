"""What session-start injects: branch memory, the fallback file, Known Constraints, budget."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from app.core.index import MemoryIndex
from app.core.models import CATEGORY_HEADINGS, Category
from app.core.paths import encode_branch
from app.core.store import MemoryStore
from app.integrations import context
from app.integrations.context import (
    BUDGET_CHARS,
    MAX_CONSTRAINTS,
    read_memory,
    session_context,
)
from app.integrations.gitref import Location
from tests.integrations.conftest import item, write_memory

HERE = Location("spotter", "feature-x", "/repo/spotter")


def _index(home: Path) -> None:
    store = MemoryStore(home)
    with MemoryIndex(store.index_path) as index:
        index.sync(store)


def test_mirrors_of_the_core_stay_equal() -> None:
    assert {c.value: h for c, h in CATEGORY_HEADINGS.items()} == context.CATEGORY_HEADINGS
    assert set(context.CONSTRAINT_ORDER) == {c.value for c in Category} - {"implementation_notes"}


@given(st.text(min_size=1, max_size=220))
def test_file_names_match_the_store(branch: str) -> None:
    try:
        expected: str | None = encode_branch(branch)
    except Exception:
        expected = None
    assert context.encode_branch(branch) == expected


def test_branch_items_and_summary_come_from_the_index(home: Path) -> None:
    write_memory(
        home,
        "spotter/feature-x",
        [
            item(
                "bug_patterns",
                "Watcher loses files",
                "The watcher lost files after a replace.",
                root_cause="inotify watches the inode",
                fix="watch the folder",
                confidence=0.9,
            ),
            item("coding_preferences", "Prefer pathlib", "Use pathlib for paths.", confidence=0.8),
        ],
        summary="Feature x adds folder watching.",
    )
    _index(home)

    found = session_context(home, HERE)

    assert found is not None
    assert found.path == "index"
    assert found.branch_id == "spotter/feature-x"
    assert "Feature x adds folder watching." in found.text
    assert "**Watcher loses files**" in found.text
    assert "Root cause: inotify watches the inode" in found.text
    assert "Fix: watch the folder" in found.text
    assert found.text.index("### Coding Preferences") < found.text.index("### Bug Patterns")


def test_a_hand_edit_after_indexing_is_seen(home: Path) -> None:
    path = write_memory(
        home,
        "spotter/feature-x",
        [
            item("coding_preferences", "Prefer pathlib", "Use pathlib for paths."),
        ],
    )
    _index(home)
    text = path.read_text(encoding="utf-8").replace(
        "Use pathlib for paths.", "Use pathlib for every path, never os.path."
    )
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(1, 1))  # a different signature even on coarse file-system clocks

    found = session_context(home, HERE)

    assert found is not None
    assert "never os.path" in found.text
    assert found.path == "synced"


def test_works_without_an_index_and_with_a_damaged_one(home: Path) -> None:
    write_memory(home, "spotter/feature-x", [item("coding_preferences", "Tabs", "Use tabs.")])
    (home / "index.sqlite").unlink(missing_ok=True)
    assert "**Tabs**" in (session_context(home, HERE) or context.Context("", "", 0, 0, "")).text

    (home / "index.sqlite").write_bytes(b"this is not a database" * 100)
    found = session_context(home, HERE)
    assert found is not None
    assert "**Tabs**" in found.text


def test_falls_back_to_a_file_named_after_the_branch_alone(home: Path) -> None:
    write_memory(
        home,
        "feature-x",
        [item("architectural_decisions", "SQLite index", "The index is SQLite in WAL mode.")],
    )
    _index(home)

    found = session_context(home, HERE)

    assert found is not None
    assert found.branch_id == "feature-x"
    assert "**SQLite index**" in found.text


def test_the_project_file_wins_over_the_branch_only_file(home: Path) -> None:
    write_memory(home, "feature-x", [item("coding_preferences", "Old", "Old note.")])
    write_memory(home, "spotter/feature-x", [item("coding_preferences", "New", "New note.")])
    _index(home)

    found = session_context(home, HERE)

    assert found is not None
    assert "**New**" in found.text
    assert "**Old**" not in found.text


def test_known_constraints_rank_bug_patterns_first_then_recent(home: Path) -> None:
    write_memory(home, "spotter/feature-x", [item("coding_preferences", "Mine", "Mine.")])
    write_memory(
        home,
        "spotter/main",
        [
            item(
                "project_conventions", "Conv new", "Convention, recent.", extracted=date(2026, 3, 9)
            ),
            item("bug_patterns", "Bug old", "Old bug.", extracted=date(2025, 1, 1)),
            item("bug_patterns", "Bug new", "New bug.", extracted=date(2026, 2, 1)),
            item("implementation_notes", "Impl", "Branch-specific note."),
        ],
    )
    write_memory(home, "other/main", [item("bug_patterns", "Elsewhere", "Other project.")])
    _index(home)

    found = session_context(home, HERE)

    assert found is not None
    text = found.text
    constraints = text[text.index("## Known Constraints") :]
    order = [constraints.index(f"**{t}**") for t in ("Bug new", "Bug old", "Conv new")]
    assert order == sorted(order)
    assert "[Bug Patterns, branch main]" in constraints
    assert "Impl" not in constraints
    assert "Elsewhere" not in text
    assert found.constraints == 3


def test_constraints_are_capped_and_deduplicated(home: Path) -> None:
    write_memory(home, "spotter/feature-x", [item("coding_preferences", "Mine", "Mine.")])
    for n in range(3):
        write_memory(
            home,
            f"spotter/b{n}",
            [item("bug_patterns", f"Bug {n}-{k}", f"Lesson {n}-{k}.") for k in range(10)]
            + [item("bug_patterns", "Shared", "Copied into every branch.")],
        )
    _index(home)

    found = session_context(home, HERE)

    assert found is not None
    assert found.constraints == MAX_CONSTRAINTS
    assert found.text.count("**Shared**") == 1


def test_constraints_alone_are_injected_when_the_branch_has_no_memory(home: Path) -> None:
    write_memory(home, "spotter/main", [item("bug_patterns", "Lock", "Take the lock first.")])
    _index(home)

    found = session_context(home, HERE)

    assert found is not None
    assert "## Branch Memory" not in found.text
    assert "**Lock**" in found.text


def test_nothing_to_say_gives_none(home: Path) -> None:
    assert session_context(home, HERE) is None  # no branches folder at all
    write_memory(home, "other/main", [item("bug_patterns", "Elsewhere", "Other project.")])
    _index(home)
    assert session_context(home, HERE) is None


def test_a_large_memory_fits_the_budget_and_keeps_room_for_constraints(home: Path) -> None:
    write_memory(
        home,
        "spotter/feature-x",
        [
            item("implementation_notes", f"Note {k}", "Long detail " * 40, confidence=0.5 + k / 200)
            for k in range(60)
        ],
        summary="Summary " * 400,
    )
    write_memory(
        home,
        "spotter/main",
        [item("bug_patterns", f"Bug {k}", "A lesson from main. " * 5) for k in range(30)],
    )
    _index(home)

    found = session_context(home, HERE)

    assert found is not None
    assert len(found.text) <= BUDGET_CHARS
    assert found.branch_items > 3
    assert found.constraints > 3
    # The note counts exactly what is left out, by category.
    hidden_notes = 60 - found.branch_items
    hidden_bugs = 30 - found.constraints
    assert (
        f"+{hidden_notes + hidden_bugs} more items ({hidden_bugs} bug patterns, "
        f"{hidden_notes} notes) not shown"
        in found.text
        or f"+{hidden_notes + hidden_bugs} more items ({hidden_notes} notes, "
        f"{hidden_bugs} bug patterns) not shown"
        in found.text
    ), found.text[-300:]
    assert found.text.startswith("<remembered-notes") and found.text.rstrip().endswith(
        "</remembered-notes>"
    )
    # The strongest items are the ones kept.
    assert "**Note 59**" in found.text
    assert "**Note 0**" not in found.text


def test_index_reader_returns_what_the_core_index_holds(home: Path) -> None:
    write_memory(
        home,
        "spotter/feature-x",
        [
            item(
                "bug_patterns",
                "B",
                "Bug.",
                root_cause="rc",
                fix="fx",
                occurrences=3,
                tags=["io"],
                sources=["user"],
            ),
            item("coding_preferences", "P", "Pref.", confidence=0.77),
        ],
    )
    _index(home)
    store = MemoryStore(home)
    with MemoryIndex(store.index_path) as index:
        core = {i.id: i for i in index.items(branch="spotter/feature-x")}

    memory = read_memory(home, HERE)

    assert memory is not None
    assert {i.id for i in memory.items} == set(core)
    for mine in memory.items:
        theirs = core[mine.id]
        assert (
            mine.category,
            mine.title,
            mine.content,
            mine.confidence,
            mine.pinned,
            mine.extracted,
        ) == (
            theirs.category.value,
            theirs.title,
            theirs.content,
            theirs.confidence,
            theirs.pinned,
            theirs.extracted,
        )
    bug = next(i for i in memory.items if i.category == "bug_patterns")
    assert (bug.fields["root_cause"], bug.fields["fix"], bug.fields["occurrences"]) == (
        "rc",
        "fx",
        3,
    )


def test_two_thousand_long_items_are_packed_under_the_cap_with_an_exact_note(home: Path) -> None:
    write_memory(
        home,
        "spotter/feature-x",
        [
            item(
                ("architectural_decisions", "project_conventions", "bug_patterns")[k % 3],
                f"Rule {k}",
                "A long explanation of the rule and its reasons. " * 12,
            )
            for k in range(2_000)
        ],
    )
    _index(home)

    found = session_context(home, HERE)

    assert found is not None
    assert len(found.text) <= BUDGET_CHARS < 10_000  # Claude Code's hook output cap
    hidden = 2_000 - found.branch_items
    assert f"+{hidden} more items (" in found.text
    counted = found.text.split(f"+{hidden} more items (", 1)[1].split(")", 1)[0]
    assert sum(int(part.split()[0]) for part in counted.split(", ")) == hidden
    assert len(found.ids) == found.branch_items
