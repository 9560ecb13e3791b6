"""MemoryStore: safe names, atomic writes, versions, restore, crash and concurrency safety."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.errors import InvalidInput, NotFound
from app.core.format import parse, render, validate
from app.core.models import BranchMemory, Category, MemoryItem
from app.core.paths import decode_stem, encode_branch, project_of
from app.core.store import MemoryStore, version_policy

REPO = Path(__file__).resolve().parents[2]


def _memory(branch: str, n: int = 1) -> BranchMemory:
    items = [
        MemoryItem(
            category=Category.CODING_PREFERENCES,
            title=f"Rule {i}",
            content=f"Always follow rule number {i}.",
            confidence=0.9,
            sources=["t1"],
        )
        for i in range(n)
    ]
    return BranchMemory(
        branch_id=branch, summary="Test memory.", items={Category.CODING_PREFERENCES: items}
    )


def test_plain_ids_keep_the_seed_layout(home: Path) -> None:
    store = MemoryStore(home)
    assert store.branch_file("feature-auth") == home / "branches" / "feature-auth.md"
    assert encode_branch("v1.2_fix") == "v1.2_fix"


@pytest.mark.parametrize(
    "branch",
    ["spotter/feature/auth", "a b", "ümlaut/ß", "%2F", ".hidden", "x" * 200, "日本語/" * 30],
)
def test_other_ids_are_encoded_reversibly(home: Path, branch: str) -> None:
    branch = branch[:200]
    store = MemoryStore(home)
    store.write_text(branch, render(_memory(branch)))
    assert store.list_branches() == [branch]
    assert store.branch_file(branch).parent == home / "branches"
    stem = store.branch_file(branch).stem
    assert decode_stem(stem) in (branch, None)  # None: long ids are hashed, read from header


@pytest.mark.parametrize(
    "branch", ["", ".", "..", "../../x", "a/../b", "a\x00b", "line\nbreak", " padded", "x" * 201]
)
def test_hostile_ids_are_rejected(home: Path, branch: str) -> None:
    store = MemoryStore(home)
    with pytest.raises(InvalidInput):
        store.write_text(branch, "x")
    assert not any(home.rglob("*.md"))


@settings(max_examples=150, deadline=None)
@given(st.text(min_size=1, max_size=200))
def test_no_id_ever_writes_outside_the_home(
    tmp_path_factory: pytest.TempPathFactory, branch: str
) -> None:
    root = tmp_path_factory.mktemp("h")
    home = root / "home"
    store = MemoryStore(home)
    try:
        store.write_text(branch, "content")
    except InvalidInput:
        return
    written = [p for p in root.rglob("*") if p.is_file()]
    assert all(home in p.parents for p in written)
    assert store.read_text(branch) == "content"
    assert branch in store.list_branches()


def test_project_of() -> None:
    assert project_of("spotter/feature/auth") == "spotter"
    assert project_of("feature-auth") == ""


def test_rewrite_keeps_a_version_and_restore_brings_back_identical_bytes(home: Path) -> None:
    store = MemoryStore(home)
    first = render(_memory("b", 1))
    store.write_text("b", first)
    assert store.list_versions("b") == []
    store.write_text("b", render(_memory("b", 2)))
    versions = store.list_versions("b")
    assert len(versions) == 1
    assert store.read_version("b", versions[0].version) == first
    store.restore("b", versions[0].version)
    assert store.read_bytes("b") == first.encode()


def test_delete_is_undoable(home: Path) -> None:
    store = MemoryStore(home)
    text = render(_memory("feature-auth", 3))
    store.write_text("feature-auth", text)
    version = store.delete("feature-auth")
    assert store.list_branches() == []
    assert [v.version for v in store.list_versions("feature-auth")] == [version]
    store.restore("feature-auth", version)
    assert store.read_text("feature-auth") == text
    with pytest.raises(NotFound):
        store.delete("nope")


def test_recent_versions_are_all_kept(home: Path) -> None:
    # A month of history is never thinned, whatever the count (it once kept only 20).
    store = MemoryStore(home, versions_keep=3)
    for n in range(8):
        store.write_text("b", f"content {n}")
    versions = store.list_versions("b")
    assert len(versions) == 7
    assert store.read_version("b", versions[0].version) == "content 6"


def test_version_policy_thins_old_versions_by_day_then_week() -> None:
    now = datetime(2026, 11, 25, 12, tzinfo=UTC)

    def name(moment: datetime) -> str:
        return moment.strftime("%Y%m%dT%H%M%S%fZ")

    recent = [name(now - timedelta(days=d, hours=h)) for d in range(0, 29) for h in (1, 2)]
    same_day = [name(datetime(2026, 9, 1, h, tzinfo=UTC)) for h in (3, 9, 15)]
    same_week = [name(datetime(2026, 3, d, 10, tzinfo=UTC)) for d in (2, 3, 4)]  # Mon-Wed
    evicted = version_policy(recent + same_day + same_week, keep_recent=5, now=now)
    assert not evicted & set(recent)
    assert evicted == {same_day[0], same_day[1], same_week[0], same_week[1]}


def test_a_version_identical_to_the_last_one_is_not_saved_twice(home: Path) -> None:
    store = MemoryStore(home)
    store.write_text("b", "one")
    store.write_text("b", "two")
    store.write_text("b", "one")
    store.write_text("b", "two")
    assert [store.read_version("b", v.version) for v in store.list_versions("b")] == [
        "one",
        "two",
        "one",
    ]


def _memory_with(*titles: str) -> str:
    memory = BranchMemory(branch_id="b")
    for title in titles:
        memory.items[Category.PROJECT_CONVENTIONS].append(
            MemoryItem(
                category=Category.PROJECT_CONVENTIONS, title=title, content=f"{title} always."
            )
        )
    return render(memory)


def test_evicting_a_version_archives_items_found_nowhere_else(home: Path) -> None:
    from app.core.archive import Archive

    store = MemoryStore(home, versions_keep=1)
    store.write_text("b", _memory_with("Use pnpm", "Lint first"))
    store.write_text("b", _memory_with("Lint first"))
    store.write_text("b", _memory_with("Lint first", "Tabs"))
    # Age the versions past the policy's month and into one day, so all but one go.
    folder = home / "versions" / "b"
    for n, path in enumerate(sorted(folder.glob("*.md"))):
        path.rename(folder / f"20250101T0000{n:02d}000000Z.md")
    store.write_text("b", _memory_with("Lint first", "Tabs", "Ruff"))
    archived = {e.item.title: e.reason for e in Archive(home).entries("b")}
    assert "Use pnpm" in archived and "kept from version" in archived["Use pnpm"]
    assert "Lint first" not in archived  # still in the branch file
    searchable = {
        i.title
        for v in store.list_versions("b")
        for i in parse(store.read_version("b", v.version), "b").all_items()
    }
    assert "Use pnpm" in searchable or "Use pnpm" in archived


def test_forgotten_items_are_not_archived_from_old_versions(home: Path) -> None:
    from app.core.archive import Archive

    store = MemoryStore(home, versions_keep=1)
    store.write_text("b", _memory_with("Secret thing"))
    memory = parse(store.read_text("b") or "", "b")
    Archive(home).mark_forgotten("b", [i.id for i in memory.all_items()])
    store.write_text("b", _memory_with("Other"))
    folder = home / "versions" / "b"
    for n, path in enumerate(sorted(folder.glob("*.md"))):
        path.rename(folder / f"20250101T0000{n:02d}000000Z.md")
    store.write_text("b", _memory_with("Other", "More"))
    store.write_text("b", _memory_with("Other", "More", "Again"))
    assert "Secret thing" not in {e.item.title for e in Archive(home).entries("b")}


def test_bad_version_names_are_refused(home: Path) -> None:
    store = MemoryStore(home)
    store.write_text("b", "x")
    with pytest.raises(InvalidInput):
        store.read_version("b", "../../etc/passwd")
    with pytest.raises(NotFound):
        store.read_version("b", "20240101T000000000000Z")


def test_write_if_unchanged_refuses_a_stale_base(home: Path) -> None:
    store = MemoryStore(home)
    assert store.write_if_unchanged("b", None, "one")
    assert not store.write_if_unchanged("b", None, "two")
    assert store.write_if_unchanged("b", b"one", "two")
    assert store.read_text("b") == "two"


_WRITER = textwrap.dedent("""
    import sys
    from app.core.format import render
    from app.core.models import BranchMemory, Category, MemoryItem
    from app.core.store import MemoryStore, version_policy
    store = MemoryStore(__import__("pathlib").Path(sys.argv[1]))
    n = 0
    while True:
        n += 1
        items = [MemoryItem(category=Category.PROJECT_CONVENTIONS, title=f"Rule {i}",
                            content="x" * 2000 + f" {n}", sources=["t"]) for i in range(40)]
        store.write_text("crashy", render(BranchMemory(branch_id="crashy", summary=str(n),
                         items={Category.PROJECT_CONVENTIONS: items})))
""")


def test_sigkill_never_leaves_a_damaged_file(home: Path) -> None:
    rng = random.Random(7)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for _ in range(25):
        proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(home)], env=env)
        time.sleep(rng.uniform(0.3, 0.9))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        text = MemoryStore(home).read_text("crashy")
        if text is None:
            continue
        assert validate(text) == []
        memory = parse(text, "crashy")
        assert memory.item_count() == 40
        assert all(i.content.endswith(memory.summary) for i in memory.all_items())


_APPENDER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from app.core.models import BranchMemory, Category, MemoryItem
    from app.core.store import MemoryStore, version_policy
    store = MemoryStore(Path(sys.argv[1]))
    who = sys.argv[2]
    for i in range(8):
        item = MemoryItem(category=Category.BUG_PATTERNS, title=f"{who} bug {i}",
                          content=f"Bug {i} seen by writer {who}.", sources=[who])
        def change(memory, item=item):
            memory = memory or BranchMemory(branch_id="shared", summary="s")
            memory.items[Category.BUG_PATTERNS].append(item)
            return memory
        store.update("shared", change)
""")


def test_concurrent_writers_lose_nothing(home: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen([sys.executable, "-c", _APPENDER, str(home), f"w{n}"], env=env)
        for n in range(4)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    memory = MemoryStore(home).read("shared")
    assert memory is not None
    titles = {i.title for i in memory.items[Category.BUG_PATTERNS]}
    assert titles == {f"w{n} bug {i}" for n in range(4) for i in range(8)}


@pytest.mark.parametrize(
    "pair",
    [
        ("Main", "main"),
        ("Feature/JIRA-1", "feature/jira-1"),
        ("CON", "con"),
        ("web/Aux", "web/aux"),
    ],
)
def test_ids_differing_only_by_case_get_distinct_names(home: Path, pair: tuple[str, str]) -> None:
    first, second = pair
    assert encode_branch(first).lower() != encode_branch(second).lower()
    store = MemoryStore(home)
    store.write_text(first, _memory_with("First"))
    store.write_text(second, _memory_with("Second"))
    assert "First" in (store.read_text(first) or "")
    assert "Second" in (store.read_text(second) or "")
    assert sorted(store.list_branches()) == sorted([first, second])


@pytest.mark.parametrize(
    "branch", ["CON", "con", "aux", "aux.md", "NUL", "com1", "lpt9.txt", "prn", "v1.", "p/con"]
)
def test_windows_device_names_never_become_file_names(branch: str) -> None:
    import re

    stem = encode_branch(branch)
    assert not re.fullmatch(r"(?i)(con|prn|aux|nul|com\d|lpt\d)(\..*)?", stem)
    assert not stem.endswith((".", " "))
    assert decode_stem(stem) == branch


def test_files_under_an_older_name_are_moved_to_the_new_one(home: Path) -> None:
    store = MemoryStore(home)
    store.ensure()
    (home / "branches" / "Main.md").write_text(_memory_with("Kept"), encoding="utf-8")
    (home / "versions" / "Main").mkdir()
    (home / "versions" / "Main" / "20250101T000000000000Z.md").write_text("old")
    assert store.migrate_file_names() == ["Main"]
    assert "Kept" in (store.read_text("Main") or "")
    assert [v.version for v in store.list_versions("Main")] == ["20250101T000000000000Z"]
    assert store.migrate_file_names() == []
