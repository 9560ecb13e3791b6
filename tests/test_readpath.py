"""The cold read path (app/readpath.py): same answers as the full path, and reads never write."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from app import readpath
from app.core import index as core_index

REPO = Path(__file__).resolve().parents[1]
ITEMS = [
    ("shop/main", "coding_preferences", "Prefer async/await over .then() chains in the API"),
    ("shop/feature-ui", "coding_preferences", "Prefer .then() chains to async/await in the API"),
    ("shop/main", "bug_patterns", "The watcher drops rename events on macOS; debounce them"),
    ("shop/main", "project_conventions", "Use pnpm for installs, never npm"),
    ("blog/main", "implementation_notes", "The watcher rebuilds the index after a rename"),
    ("blog/main", "architectural_decisions", "Files are the truth; SQLite is only an index"),
]
QUERIES = [
    ("retrieve", "async await chains"),
    ("retrieve", "watcher rename", "--branch", "shop/main"),
    ("retrieve", "watcher rename", "--project", "blog", "--max-results", "1"),
    ("retrieve", "pnpm installs", "--max-results", "3", "--mode", "fast"),
    ("retrieve", "nothing matches this zebra"),
]


def _env(home: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "PUFFIN_MEMORY_HOME": str(home / "unused")}
    env.pop("ANTHROPIC_API_KEY", None)
    return env


def _run(
    home: Path, args: tuple[str, ...], *, full: bool, probe: bool = False
) -> tuple[int, dict[str, Any], set[str]]:
    """One command in a fresh process: through `app` (lean when it can) or the full CLI."""
    entry = "from app.cli import main" if full else "from app.__main__ import main"
    code = (
        "import sys\n"
        f"{entry}\n"
        "sys.argv = ['puffin-memory', *sys.argv[1:]]\n"
        "rc = main(sys.argv[1:]) if " + str(full) + " else main()\n"
        "print('\\nMODULES ' + ' '.join(sorted(sys.modules)), file=sys.stderr)\n"
        "sys.exit(rc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, "--home", str(home), *args],
        capture_output=True,
        text=True,
        env=_env(home),
        check=False,
        timeout=120,
    )
    assert "Traceback" not in done.stderr, done.stderr
    modules = set(done.stderr.rsplit("MODULES ", 1)[-1].split()) if probe else set()
    answer = json.loads(done.stdout) if done.stdout.startswith("{") else {"text": done.stdout}
    return done.returncode, answer, modules


@pytest.fixture(scope="module")
def memory_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home with items in three branches (one cross-branch dispute), index built."""
    from app.container import build_api

    home = tmp_path_factory.mktemp("readpath") / "home"
    home.mkdir()
    # Lexical search, as on a machine without the embedding model.
    (home / "config.json").write_text(json.dumps({"semantic_search": False}))

    def fill() -> None:
        api = build_api(home, engine_override="offline")
        for branch, category, text in ITEMS:
            reply = api.invoke(
                "memory:remember", {"branch": branch, "text": text, "category": category}
            )
            assert reply.get("success"), reply
        api.index.sync(api.store)
        api.index.close()

    fill()
    return home


def _same(lean: dict[str, Any], full: dict[str, Any]) -> None:
    lean, full = dict(lean), dict(full)
    lean.pop("retrievalTime"), full.pop("retrievalTime")
    assert lean == full


@pytest.mark.parametrize("args", QUERIES)
def test_lean_retrieve_answers_like_the_full_path(memory_home: Path, args: tuple[str, ...]) -> None:
    request = readpath.parse(["--home", str(memory_home), *args])
    assert request is not None
    log = memory_home / core_index.ACCESS_LOG
    log.unlink(missing_ok=True)  # both paths rank from the same counts
    code, full, _ = _run(memory_home, args, full=True)
    assert code == 0
    if full["memories"]:
        assert log.exists()  # the full path noted its answer too
    log.unlink(missing_ok=True)
    lean = readpath.retrieve(memory_home, request)
    assert lean is not None, "the lean path should answer on a current index"
    _same(lean, full)


def test_uses_in_the_log_count_in_both_paths(memory_home: Path) -> None:
    log = memory_home / core_index.ACCESS_LOG
    args = ("retrieve", "watcher rename")
    request = readpath.parse(list(args))
    assert request is not None
    log.unlink(missing_ok=True)
    first = readpath.retrieve(memory_home, request)
    assert first is not None
    for _ in range(30):  # someone keeps being shown the second hit
        core_index.note_access(memory_home / "index.sqlite", [first["memories"][1]["id"]])
    lean = readpath.retrieve(memory_home, request)
    assert lean is not None
    log.write_bytes(log.read_bytes().rsplit(b"\n", 2)[0] + b"\n")  # drop the lean answer's line
    _code, full, _ = _run(memory_home, args, full=True)
    _same(lean, full)
    assert lean["memories"][1]["score"] > first["memories"][1]["score"]
    log.unlink(missing_ok=True)


@pytest.mark.parametrize(
    "args",
    [
        ("list",),
        ("list", "--type", "coding_preferences"),
        ("list", "--branch", "shop/main"),
        ("list", "--limit", "2"),
        ("list", "--branch", "nobody/here", "--limit", "0"),
    ],
)
def test_lean_list_answers_like_the_full_path(memory_home: Path, args: tuple[str, ...]) -> None:
    request = readpath.parse_list(["--home", str(memory_home), *args])
    assert request is not None
    lean = readpath.list_items(memory_home, request)
    assert lean is not None
    code, full, _ = _run(memory_home, args, full=True)
    assert code == 0
    assert lean == full


def test_other_list_forms_take_the_full_path() -> None:
    for argv in (
        ["list", "--tags", "a"],
        ["list", "--type", "gossip"],
        ["list", "--limit", "x"],
        ["branch", "list"],
        ["review", "list"],
        ["list", "extra"],
    ):
        assert readpath.parse_list(argv) is None, argv


def test_a_dispute_between_branches_is_reported_by_both_paths(memory_home: Path) -> None:
    request = readpath.parse(["retrieve", "async await chains"])
    assert request is not None
    lean = readpath.retrieve(memory_home, request)
    assert lean is not None
    assert len(lean["conflicts"]) == 1
    assert set(lean["conflicts"][0]["branches"]) == {"shop/main", "shop/feature-ui"}


def test_a_dispute_between_branches_costs_the_cold_path_no_model_import(
    memory_home: Path,
) -> None:
    # The conflict is found and described on plain rows (`conflict_groups`), not on models.
    code, answer, modules = _run(
        memory_home, ("retrieve", "async await chains"), full=False, probe=True
    )
    assert code == 0
    assert [set(c["branches"]) for c in answer["conflicts"]] == [{"shop/main", "shop/feature-ui"}]
    assert "app.core.conflicts" in modules
    assert not {"pydantic", "app.core.models", "app.core.engine"} & modules


def test_cold_retrieve_loads_no_heavy_module_and_writes_nothing(memory_home: Path) -> None:
    before = _snapshot(memory_home)
    code, answer, modules = _run(memory_home, ("retrieve", "pnpm installs"), full=False, probe=True)
    assert code == 0
    assert answer["memories"][0]["title"].startswith("Use pnpm")
    heavy = (
        "pydantic",
        "anthropic",
        "openai",
        "markdown_it",
        "asyncio",
        "argparse",
        "numpy",
        "PySide6",
        "app.container",
        "app.cli",
        "app.core.api",
        "app.core.models",
    )
    assert sorted(m for m in modules if m in heavy or m.startswith("app.engines")) == []
    after = _snapshot(memory_home)
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    assert changed == {core_index.ACCESS_LOG}  # only the side log of access counts grew
    code, listed, modules = _run(memory_home, ("list", "--limit", "3"), full=False, probe=True)
    assert (code, listed["count"]) == (0, 3)
    assert sorted(m for m in modules if m in heavy or m.startswith("app.engines")) == []
    assert _snapshot(memory_home) == after


@pytest.mark.parametrize(
    "args",
    [
        ("list",),
        ("get", "no-such-id"),
        ("context",),
        ("retrieve", "watcher"),
    ],
)
def test_reads_through_the_full_path_write_nothing_but_the_access_log(
    memory_home: Path, args: tuple[str, ...]
) -> None:
    before = _snapshot(memory_home)
    _run(memory_home, args, full=True)
    after = _snapshot(memory_home)
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    assert changed <= {core_index.ACCESS_LOG}


def test_access_counts_fold_into_the_index_on_its_next_write(tmp_path: Path) -> None:
    from app.core.index import MemoryIndex

    path = tmp_path / "index.sqlite"
    index = MemoryIndex(path)
    core_index.note_access(path, ["a", "b", "a"])
    core_index.note_access(path, ["a"])
    with open(tmp_path / core_index.ACCESS_LOG, "ab") as log:
        log.write(b"17000 torn-li")  # a line cut short by a crash
    assert index.access_count("a") == 2  # noted in the log, counted already
    core_index.note_access(path, ["b"])
    assert index.access_count("b") == 2  # only the appended line was read
    with open(tmp_path / core_index.ACCESS_LOG, "ab") as log:
        log.write(b"17000.5 b")  # a line still being written: left for the next read
    assert index.access_count("b") == 2
    with open(tmp_path / core_index.ACCESS_LOG, "ab") as log:
        log.write(b"\n")
    assert index.access_count("b") == 3
    assert index.fold_access() == 6
    assert (index.access_count("a"), index.access_count("b")) == (2, 3)
    assert not (tmp_path / core_index.ACCESS_LOG).exists()
    left = tmp_path / f"{core_index.ACCESS_LOG}.folding-1-1"  # a fold cut short by a crash
    left.write_bytes(b"17000 a\n")
    assert index.fold_access() == 0  # young: perhaps another process's fold under way
    old = time.time() - core_index.STALE_FOLD_S - 1
    os.utime(left, (old, old))
    assert index.fold_access() == 1
    assert index.access_count("a") == 3 and not left.exists()
    index.close()


def test_stale_index_or_other_forms_take_the_full_path(memory_home: Path, tmp_path: Path) -> None:
    for argv in (
        ["retrieve", "x", "--mode", "deep"],
        ["retrieve", "--max-results", "2", "x"],
        ["retrieve", "x", "--include-archive"],
        ["--engine", "offline", "retrieve", "x"],
        ["retrieve", "x", "--max-results=2"],
        ["list"],
    ):
        assert readpath.parse(argv) is None, argv
    request = readpath.parse(["retrieve", "watcher"])
    assert request is not None
    assert readpath.retrieve(tmp_path, request) is None  # no index at all
    copy = tmp_path / "copy"
    copy.mkdir()
    for name in ("index.sqlite", "config.json"):
        (copy / name).write_bytes((memory_home / name).read_bytes())
    (copy / "branches").mkdir()
    for file in (memory_home / "branches").iterdir():
        (copy / "branches" / file.name).write_bytes(file.read_bytes())  # new mtimes
    assert readpath.retrieve(copy, request) is None


def test_semantic_search_that_would_run_takes_the_full_path(tmp_path: Path) -> None:
    from app.core import embeddings

    config = dict(readpath.CONFIG_DEFAULTS)
    assert readpath._semantic_would_run(tmp_path, config) is False  # no vectors yet
    (tmp_path / "vectors.sqlite").write_bytes(b"")
    assert readpath._semantic_would_run(tmp_path, config) is embeddings.available()
    assert readpath._semantic_would_run(tmp_path, {**config, "semantic_search": False}) is False


def test_mirrors_match_the_core() -> None:
    from app.core import ranking
    from app.core.config import Config
    from app.core.models import CATEGORY_HEADINGS
    from app.core.requests import RetrieveRequest

    defaults = Config()
    assert {k: getattr(defaults, k) for k in readpath.CONFIG_DEFAULTS} == readpath.CONFIG_DEFAULTS
    # Scoring and packing are shared (app.core.ranking); the headings it packs with are the
    # branch file's.
    assert {c.value: h for c, h in CATEGORY_HEADINGS.items()} == ranking.HEADINGS
    limits = {
        type(m).__name__: m
        for name in ("query", "max_results")
        for m in RetrieveRequest.model_fields[name].metadata
    }
    assert limits["MaxLen"].max_length == readpath.MAX_QUERY_CHARS
    assert limits["Le"].le == ranking.MAX_RESULTS


def _snapshot(home: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every file under the home: (mtime_ns, size, bytes)."""
    files: dict[str, tuple[int, int, bytes]] = {}
    for path in home.rglob("*"):
        if path.is_file():
            st = path.stat()
            files[str(path.relative_to(home))] = (st.st_mtime_ns, st.st_size, path.read_bytes())
    return files
