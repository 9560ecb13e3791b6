"""Tests for app/core/index.py: the derived search index over real branch files."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core.errors import InvalidInput, StorageError
from app.core.format import render
from app.core.index import IndexedItem, MemoryIndex, fts_query, query_terms
from app.core.models import BranchMemory, Category, MemoryItem
from app.core.store import MemoryStore

PREF = Category.CODING_PREFERENCES
BUG = Category.BUG_PATTERNS
ARCH = Category.ARCHITECTURAL_DECISIONS


def item(content: str, category: Category = PREF, **extra: object) -> MemoryItem:
    return MemoryItem.model_validate(
        {"category": category, "title": "", "content": content, **extra}
    )


def write(store: MemoryStore, branch: str, *items: MemoryItem) -> None:
    by_cat: dict[Category, list[MemoryItem]] = {c: [] for c in Category}
    for it in items:
        by_cat[it.category].append(it)
    store.write_text(branch, render(BranchMemory(branch_id=branch, items=by_cat)))


@pytest.fixture
def store(home: Path) -> MemoryStore:
    s = MemoryStore(home)
    s.ensure()
    return s


@pytest.fixture(params=["fts5", "scan"])
def index(request: pytest.FixtureRequest, store: MemoryStore) -> Iterator[MemoryIndex]:
    idx = MemoryIndex(store.index_path, use_fts5=request.param == "fts5")
    yield idx
    idx.close()


@pytest.fixture
def fts_index(store: MemoryStore) -> Iterator[MemoryIndex]:
    idx = MemoryIndex(store.index_path)
    yield idx
    idx.close()


def titles(hits: list[IndexedItem]) -> list[str]:
    return [h.content for h in hits]


# -- query text ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("foo-bar", '"foo-bar"'),
        ("c++", '"c++"'),
        ('it"s', '"it""s"'),
        ("AND", '"AND"*'),
        ("or NOT", '"or" OR "NOT"*'),
        ("NEAR(", '"NEAR"*'),
        ("async pattern", '"async" OR "pattern"*'),
        ("async pattern ", '"async" OR "pattern"'),
        ("what do we use for logging?", '"logging"*'),
        ("use", '"use"*'),
        ("café", '"café"*'),
        ('"quoted phrase"', '"quoted" OR "phrase"*'),
    ],
)
def test_user_text_becomes_a_quoted_or_query(text: str, expected: str) -> None:
    assert fts_query(text) == expected


@pytest.mark.parametrize("text", ["", "   ", "?!", '""', "() * -"])
def test_text_without_terms_gives_an_empty_query(text: str) -> None:
    assert fts_query(text) == ""
    assert query_terms(text) == []


def test_only_stop_words_are_kept_when_nothing_else_is_left() -> None:
    assert query_terms("what is this") == ["what", "is", "this"]
    assert query_terms("what is the retry policy") == ["retry", "policy"]


# -- searching ----------------------------------------------------------------------------
@pytest.fixture
def tricky(store: MemoryStore) -> None:
    write(
        store,
        "main",
        item("Run the foo-bar migration before deploys"),
        item("C++ modules are built with CMake presets"),
        item('The config key is called "retry_limit" in quotes'),
        item("Über-jar packaging for the café service"),
        item("AND and OR are SQL keywords we never lowercase"),
        item("Use the NEAR( operator only in the search DSL"),
    )
    write(store, "other", item("Unrelated note about tabs and spaces", ARCH))


@pytest.mark.usefixtures("tricky")
@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("foo-bar", "foo-bar migration"),
        ("c++", "C++ modules"),
        ('"retry_limit"', "retry_limit"),
        ('say "retry_limit', "retry_limit"),
        ("uber", "Über-jar"),
        ("café", "café service"),
        ("AND", "AND and OR"),
        ("NEAR(", "NEAR( operator"),
        ("migr", "foo-bar migration"),
    ],
)
def test_raw_user_text_finds_the_item_and_never_raises(
    index: MemoryIndex, store: MemoryStore, query: str, found: str
) -> None:
    index.sync(store)
    hits = index.search(query)
    assert hits, query
    assert found in hits[0].content


@pytest.mark.usefixtures("tricky")
@pytest.mark.parametrize("query", ["", "?!", "()", '"'])
def test_queries_without_terms_give_no_results(
    index: MemoryIndex, store: MemoryStore, query: str
) -> None:
    index.sync(store)
    assert index.search(query) == []


def test_relevance_is_scaled_so_the_best_hit_is_one(index: MemoryIndex, store: MemoryStore) -> None:
    write(
        store,
        "main",
        item("Retry failed uploads with exponential backoff; retry at most three times"),
        item("Uploads go through the presigned URL service"),
        item("Use exponential backoff for the websocket reconnect"),
        item("Logging uses structlog"),
    )
    index.sync(store)
    hits = index.search("retry uploads exponential backoff")
    assert [h.relevance for h in hits] == sorted((h.relevance for h in hits), reverse=True)
    assert hits[0].relevance == 1.0
    assert "Retry failed uploads" in hits[0].content
    assert all(0.0 < h.relevance < 1.0 for h in hits[1:])
    assert len(hits) == 3  # the logging item matches nothing


def test_search_covers_title_tags_category_and_detail_fields(
    fts_index: MemoryIndex, store: MemoryStore
) -> None:
    write(
        store,
        "spotter/feature/auth",
        item(
            "Sessions expire after an hour",
            ARCH,
            rationale="compliance requires it",
            tags=["security"],
        ),
        item("Login loops forever", BUG, root_cause="stale cookie", fix="clear on logout"),
    )
    fts_index.sync(store)
    assert titles(fts_index.search("compliance")) == ["Sessions expire after an hour"]
    assert titles(fts_index.search("security")) == ["Sessions expire after an hour"]
    assert titles(fts_index.search("cookie")) == ["Login loops forever"]
    assert titles(fts_index.search("bug")) == ["Login loops forever"]  # category heading
    assert len(fts_index.search("spotter")) == 2  # project column
    hit = fts_index.search("cookie")[0]
    assert (hit.branch, hit.project, hit.category) == ("spotter/feature/auth", "spotter", BUG)
    assert hit.memory_item().fix == "clear on logout"


# -- staying in line with the files ------------------------------------------------------
def test_sync_picks_up_hand_edits_new_and_deleted_files(
    index: MemoryIndex, store: MemoryStore
) -> None:
    write(store, "main", item("Use pnpm for installs"))
    first = index.sync(store)
    assert first["rebuilt"] is True
    assert titles(index.search("pnpm")) == ["Use pnpm for installs"]

    quiet = index.sync(store)
    assert (quiet["rebuilt"], quiet["updated"], quiet["removed"]) == (False, [], [])

    # An editor rewrites the file behind the app's back.
    path = store.branch_file("main")
    path.write_text(path.read_text().replace("pnpm", "yarn berry"), encoding="utf-8")
    report = index.sync(store)
    assert report["updated"] == ["main"]
    assert index.search("pnpm") == []
    assert titles(index.search("yarn")) == ["Use yarn berry for installs"]

    write(store, "feature/x", item("Feature flags live in LaunchDarkly"))
    assert index.sync(store)["updated"] == ["feature/x"]
    assert len(index.search("launchdarkly")) == 1

    store.branch_file("main").unlink()
    assert index.sync(store)["removed"] == ["main"]
    assert index.search("yarn") == []
    assert [h.branch for h in index.items()] == ["feature/x"]


def test_update_branch_without_signature_is_checked_again(
    fts_index: MemoryIndex, store: MemoryStore
) -> None:
    write(store, "main", item("Use ruff"))
    fts_index.sync(store)
    memory = store.read("main")
    assert memory is not None
    fts_index.update_branch("main", memory, None)
    assert fts_index.sync(store)["updated"] == ["main"]
    assert fts_index.sync(store)["updated"] == []


def test_updating_a_few_items_of_a_large_branch_matches_a_fresh_index(
    index: MemoryIndex, store: MemoryStore
) -> None:
    # update_branch rewrites only the rows that changed; the result must be the same rows,
    # order and search answers as indexing the new file from scratch.
    many = [item(f"Rule {n} keeps module m{n} apart", tags=[f"t{n}"]) for n in range(40)]
    bugs = [item(f"Crash {n} in parser p{n}", BUG) for n in range(10)]
    write(store, "main", *many, *bugs)
    index.sync(store)
    before = store.read("main")
    assert before is not None
    prefs = before.items[PREF]
    edited = prefs[3].model_copy(update={"content": "Rule 3 now covers the zebra module"})
    added = item("Feature flags live in LaunchDarkly", ARCH)
    after = before.model_copy(deep=True)
    after.items[PREF] = [item("Prefer small modules named after their job")] + [
        edited if it.id == edited.id else it for it in prefs if it.id != prefs[7].id
    ]
    after.items[ARCH] = [added]
    index.update_branch("main", after, None)

    fresh = MemoryIndex(store.index_path.with_name("fresh.sqlite"), use_fts5=index.fts5)
    try:
        fresh.update_branch("main", after, None)
        assert [(h.id, h.content) for h in index.items()] == [
            (h.id, h.content) for h in fresh.items()
        ]
        for query in ("zebra", "module", "launchdarkly", "parser", "m7", "t12"):
            assert titles(index.search(query)) == titles(fresh.search(query)), query
    finally:
        fresh.close()
    assert titles(index.search("zebra")) == ["Rule 3 now covers the zebra module"]
    assert index.search("m7") == []


def test_an_item_added_to_one_section_leaves_the_later_sections_rows_alone(
    fts_index: MemoryIndex, store: MemoryStore
) -> None:
    # Each section numbers its own rows: a memorize that adds a preference to a branch of
    # thousands used to move every row after it (one UPDATE each).
    prefs = [item(f"Rule {n} keeps module m{n} apart") for n in range(5)]
    bugs = [item(f"Crash {n} in parser p{n}", BUG) for n in range(30)]
    write(store, "main", *prefs, *bugs)
    fts_index.sync(store)
    before = store.read("main")
    assert before is not None
    after = before.model_copy(deep=True)
    after.items[PREF] = [*after.items[PREF], item("Prefer small modules named after their job")]
    conn = sqlite3.connect(store.index_path)
    try:
        rows = "SELECT item_id, position FROM items WHERE branch = 'main' AND category = ?"
        bug_rows = conn.execute(rows, (BUG.value,)).fetchall()
        fts_index.update_branch("main", after, None)
        conn.rollback()  # (a fresh read of the committed rows)
        assert conn.execute(rows, (BUG.value,)).fetchall() == bug_rows
    finally:
        conn.close()
    assert [h.content for h in fts_index.items()][:6] == [i.content for i in after.all_items()][:6]
    assert [h.id for h in fts_index.items()] == [i.id for i in after.all_items()]


def test_unreadable_branch_file_is_reported_and_others_still_indexed(
    fts_index: MemoryIndex, store: MemoryStore
) -> None:
    write(store, "good", item("Keep migrations reversible"))
    write(store, "bad", item("This file will break"))

    class BrokenStore:
        def read(self, branch: str) -> BranchMemory | None:
            if branch == "bad":
                raise InvalidInput("bad.md: header is missing")
            return store.read(branch)

        def signatures(self) -> dict[str, tuple[int, int]]:
            return store.signatures()

    report = fts_index.sync(BrokenStore())
    assert report["failed"] == {"bad": "bad.md: header is missing"}
    assert titles(fts_index.search("migrations")) == ["Keep migrations reversible"]
    # Not re-read on every query while nobody touches it.
    assert fts_index.sync(BrokenStore())["failed"] == {}


def test_garbage_index_file_is_rebuilt_from_the_files(store: MemoryStore) -> None:
    write(store, "main", item("Use pnpm for installs"))
    store.index_path.write_bytes(b"this is not a database\x00" * 200)
    index = MemoryIndex(store.index_path)
    report = index.sync(store)
    assert (report["rebuilt"], report["reason"]) == (True, "corrupt")
    assert titles(index.search("pnpm")) == ["Use pnpm for installs"]
    assert index.health()["integrity"] == "ok"
    index.close()


def test_index_replaced_or_deleted_under_a_running_index_is_noticed(store: MemoryStore) -> None:
    write(store, "main", item("Use pnpm for installs"))
    index = MemoryIndex(store.index_path)
    index.sync(store)
    # Another process (or the user) throws the file away and leaves garbage in its place.
    for suffix in ("", "-wal", "-shm"):
        Path(f"{store.index_path}{suffix}").unlink(missing_ok=True)
    store.index_path.write_bytes(os.urandom(8192))
    report = index.sync(store)
    assert report["rebuilt"] is True
    assert titles(index.search("pnpm")) == ["Use pnpm for installs"]
    for suffix in ("", "-wal", "-shm"):
        Path(f"{store.index_path}{suffix}").unlink(missing_ok=True)
    assert index.sync(store)["reason"] == "missing"
    assert titles(index.search("pnpm")) == ["Use pnpm for installs"]
    index.close()


def test_access_counts_survive_rebuilds(index: MemoryIndex, store: MemoryStore) -> None:
    write(store, "main", item("Use pnpm for installs"))
    index.sync(store)
    item_id = index.search("pnpm")[0].id
    index.record_access([item_id, item_id])  # one retrieve counts once
    index.record_access([item_id])
    assert index.access_count(item_id) == 2
    index.rebuild(store)
    assert index.search("pnpm")[0].access_count == 2
    got = index.get(item_id)
    assert got is not None
    assert got.access_count == 2
    assert index.get("no-such-id") is None


def test_outdated_schema_is_rebuilt(store: MemoryStore) -> None:
    write(store, "main", item("Use pnpm for installs"))
    MemoryIndex(store.index_path).close()
    conn = sqlite3.connect(store.index_path)
    conn.execute("UPDATE meta SET value = '0-old' WHERE key = 'schema'")
    conn.commit()
    conn.close()
    index = MemoryIndex(store.index_path)
    assert index.sync(store)["reason"] == "schema"
    assert len(index.search("pnpm")) == 1
    index.close()


def test_busy_index_gives_a_storage_error(store: MemoryStore) -> None:
    index = MemoryIndex(store.index_path)
    index.sync(store)
    other = sqlite3.connect(store.index_path, timeout=0, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        conn = index._db()
        conn.execute("PRAGMA busy_timeout=10")
        with pytest.raises(StorageError, match="could not write"):
            index.record_access(["x"])
    finally:
        other.execute("ROLLBACK")
        other.close()
        index.close()


# -- listing -----------------------------------------------------------------------------
def test_items_filter_by_category_branch_and_all_tags(
    index: MemoryIndex, store: MemoryStore
) -> None:
    write(
        store,
        "a",
        item("One", tags=["change:auth", "phase:apply"]),
        item("Two", BUG, tags=["change:auth"]),
        item("Three"),
    )
    write(store, "b", item("Four", tags=["phase:apply"]))
    index.sync(store)
    assert titles(index.items()) == ["One", "Three", "Two", "Four"]  # file order per branch
    assert titles(index.items(category=BUG)) == ["Two"]
    assert titles(index.items(category="bug_patterns")) == ["Two"]
    assert titles(index.items(branch="b")) == ["Four"]
    assert titles(index.items(tags=["change:auth"])) == ["One", "Two"]
    assert titles(index.items(tags=["change:auth", "phase:apply"])) == ["One"]
    assert titles(index.items(limit=2)) == ["One", "Three"]
    assert titles(index.search("one two three four", tags=["phase:apply"])) in (
        ["One", "Four"],
        ["Four", "One"],
    )
    with pytest.raises(InvalidInput, match="Unknown category"):
        index.items(category="gossip")
    hit = index.items(branch="b")[0]
    assert hit.to_dict()["tags"] == ["phase:apply"]


def test_health_reports_counts_and_mode(store: MemoryStore) -> None:
    write(store, "a", item("One"), item("Two"))
    write(store, "b", item("Three"))
    for use_fts5, mode in ((True, "fts5"), (False, "scan")):
        index = MemoryIndex(store.index_path, use_fts5=use_fts5)
        index.sync(store)
        health = index.health()
        assert (health["mode"], health["fts5"]) == (mode, use_fts5)
        assert (health["items"], health["branches"], health["integrity"]) == (3, 2, "ok")
        index.close()


# -- sharing ------------------------------------------------------------------------------
def test_two_processes_share_one_index(store: MemoryStore) -> None:
    write(store, "main", item("Use pnpm for installs"))
    app_index = MemoryIndex(store.index_path)
    cli_index = MemoryIndex(store.index_path)
    app_index.sync(store)
    assert cli_index.sync(store)["rebuilt"] is False  # the app already built it
    path = store.branch_file("main")
    path.write_text(path.read_text().replace("pnpm", "yarn"), encoding="utf-8")
    assert cli_index.sync(store)["updated"] == ["main"]
    assert app_index.sync(store)["updated"] == []  # nothing left to do
    assert titles(app_index.search("yarn")) == ["Use yarn for installs"]
    cli_index.close()
    app_index.close()


def test_worker_threads_can_share_one_index(store: MemoryStore) -> None:
    for n in range(5):
        write(store, f"b{n}", *[item(f"Rule {n}-{k} about caching layer {k}") for k in range(10)])
    index = MemoryIndex(store.index_path)
    index.sync(store)
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for _ in range(20):
                hits = index.search("caching layer")
                index.record_access(h.id for h in hits[:3])
                index.sync(store)
                assert len(index.items(branch=f"b{n}")) == 10
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sum(h.access_count for h in index.items()) == 5 * 20 * 3
    index.close()


def test_a_folder_where_the_index_belongs_is_moved_aside_and_rebuilt(tmp_path: Path) -> None:
    from app.core.index import MemoryIndex

    (tmp_path / "index.sqlite" / "junk").mkdir(parents=True)
    index = MemoryIndex(tmp_path / "index.sqlite")
    assert index.pending_rebuild == "corrupt"
    assert (tmp_path / "index.sqlite").is_file()
    assert [p.name for p in tmp_path.glob("index.sqlite.not-an-index-*")]
    index.close()


def test_a_choice_is_found_by_the_words_of_what_it_replaced(
    index: MemoryIndex, store: MemoryStore
) -> None:
    # "We're not doing Celery anymore, Dramatiq instead" names no subject; the item it
    # superseded does ("background jobs"). The result carries the new item's own text only.
    from datetime import date

    from app.core.config import Config
    from app.engines.offline.evolve import evolve

    old = item("For background jobs we use Celery with Redis.", ARCH, sources=["a"])
    new = item(
        "We're not doing Celery anymore, Dramatiq instead.",
        ARCH,
        sources=["b"],
        tags=["replaces:celery"],
        extracted=date(2026, 11, 27),
    )
    first = evolve(None, [old], branch_id="app/main", config=Config()).memory
    memory = evolve(first, [new], branch_id="app/main", config=Config()).memory
    assert [c.status for c in memory.contradictions] == ["superseded"]
    store.write_text("app/main", render(memory))
    index.sync(store)

    (hit,) = index.search("background jobs")
    assert hit.content == new.content
    assert "background" not in hit.text

    # A later change of that item keeps the index in step (rows are updated, not rebuilt).
    again = memory.model_copy(deep=True)
    again.contradictions = []
    store.write_text("app/main", render(again))
    index.sync(store)
    assert index.search("background jobs") == []
