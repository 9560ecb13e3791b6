"""The `puffin-memory` command line, run as a user runs it: a real subprocess on a real home."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SEED = REPO / "tests" / "fixtures" / "format" / "seed_example.md"


def run_cli(home: Path, *args: str, stdin: bytes | None = None) -> tuple[int, dict]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "PUFFIN_MEMORY_HOME": str(home / "not-used")}
    env.pop("ANTHROPIC_API_KEY", None)
    proc = subprocess.run(
        [sys.executable, "-m", "app", "--home", str(home), *args],
        input=stdin, capture_output=True, env=env, timeout=120, check=False,
    )
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()
    return proc.returncode, json.loads(proc.stdout)


@pytest.fixture
def seeded(home: Path) -> Path:
    (home / "branches").mkdir(parents=True, exist_ok=True)
    (home / "branches" / "feature-auth.md").write_bytes(SEED.read_bytes())
    return home


def test_seed_example_show_stats_clear_versions_restore(seeded: Path) -> None:
    code, shown = run_cli(seeded, "branch", "show", "feature-auth")
    assert code == 0
    assert shown["content"] == SEED.read_text(encoding="utf-8")
    assert shown["itemCount"] == 6
    assert shown["lastUpdated"] == "2024-01-19T08:45:00Z"

    code, stats = run_cli(seeded, "stats")
    assert code == 0
    assert stats["totalBranches"] == 1
    assert stats["totalItems"] == 6

    code, refused = run_cli(seeded, "clear", "feature-auth")
    assert code == 2
    assert refused["code"] == "INVALID_INPUT"
    assert (seeded / "branches" / "feature-auth.md").exists()

    code, cleared = run_cli(seeded, "clear", "feature-auth", "--yes")
    assert code == 0
    assert cleared["success"] is True
    assert not (seeded / "branches" / "feature-auth.md").exists()

    code, versions = run_cli(seeded, "branch", "versions", "feature-auth")
    assert code == 0
    assert len(versions["versions"]) == 1
    version = versions["versions"][0]["version"]

    code, _ = run_cli(seeded, "branch", "restore", "feature-auth", version)
    assert code == 0
    assert (seeded / "branches" / "feature-auth.md").read_bytes() == SEED.read_bytes()


@pytest.mark.parametrize(
    "args",
    [
        ("branch", "show", "../../etc/passwd"),
        ("memorize", "--branch", "../../x", "--file", "-"),
        ("branch", "show", ".."),
    ],
)
def test_hostile_branch_names_exit_2(home: Path, args: tuple[str, ...]) -> None:
    code, reply = run_cli(home, *args, stdin=b"User: always use tabs")
    assert code == 2
    assert reply["code"] == "INVALID_INPUT"
    outside = [p for p in home.parent.rglob("*") if p.is_file() and home not in p.parents]
    assert outside == []


def test_missing_branch_is_not_found(home: Path) -> None:
    code, reply = run_cli(home, "branch", "show", "nothing-here")
    assert code == 2
    assert reply["code"] == "NOT_FOUND"


def test_memorize_then_show_and_retrieve(home: Path, tmp_path: Path) -> None:
    conv = tmp_path / "conv.txt"
    conv.write_text(
        "User: From now on always use async/await, never .then() chains. It keeps error "
        "handling in one place.\nAssistant: Understood, I will use async/await everywhere.\n",
        encoding="utf-8",
    )
    code, reply = run_cli(home, "memorize", "--branch", "demo", "--file", str(conv))
    assert code == 0, reply
    assert "coding_preferences" in reply["categoriesUpdated"]
    code, shown = run_cli(home, "branch", "show", "demo")
    assert code == 0
    assert shown["valid"] is True
    assert "## Coding Preferences" in shown["content"]
    assert "async/await" in shown["content"].split("## Coding Preferences")[1]

    before = shown["content"]
    code, _ = run_cli(home, "memorize", "--branch", "demo", "--file", str(conv))
    assert code == 0
    _, shown_again = run_cli(home, "branch", "show", "demo")
    assert shown_again["itemCount"] == shown["itemCount"]
    assert shown_again["content"].count("- **") == before.count("- **")

    code, found = run_cli(home, "retrieve", "async pattern")
    assert code == 0
    assert found["memories"]
    assert found["memories"][0]["branch"] == "demo"


def test_invalid_utf8_and_empty_input_are_clear_errors(home: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"User: always use \xff\xfe tabs for indentation in every file.\n")
    code, reply = run_cli(home, "memorize", "--branch", "b", "--file", str(bad))
    assert code == 0, reply
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    code, reply = run_cli(home, "memorize", "--branch", "b", "--file", str(empty))
    assert code == 2
    assert reply["code"] == "INVALID_INPUT"
    code, reply = run_cli(home, "memorize", "--branch", "b", "--file", str(tmp_path / "nope"))
    assert code == 2


def test_broken_config_is_moved_aside_and_reported(home: Path) -> None:
    (home / "config.json").write_text("{not json", encoding="utf-8")
    code, status = run_cli(home, "status")
    assert code == 0
    assert any("config.json" in note for note in status["notes"])
    assert list(home.glob("config.json.broken-*"))


def test_maintain_and_status(seeded: Path) -> None:
    code, reply = run_cli(seeded, "maintain", "--type", "full")
    assert code == 0, reply
    assert reply["success"] is True
    assert reply["results"]["filesValid"] == 1
    code, status = run_cli(seeded, "status")
    assert status["status"] == "ready"


def _memorize_text(home: Path, tmp_path: Path, branch: str, text: str, source: str) -> dict:
    conv = tmp_path / f"{source}.txt"
    conv.write_text(text, encoding="utf-8")
    code, reply = run_cli(home, "memorize", "--branch", branch, "--file", str(conv),
                          "--source", source)
    assert code == 0, reply
    return reply


def test_a_later_opposite_statement_is_recorded_with_both_sources(
    home: Path, tmp_path: Path
) -> None:
    _memorize_text(home, tmp_path, "demo", "User: Always use async/await, never .then() "
                   "chains.\n", "thread-a")
    _memorize_text(home, tmp_path, "demo", "User: Prefer .then() chains over async/await "
                   "from now on.\n", "thread-b")
    _, shown = run_cli(home, "branch", "show", "demo")
    conflicts = shown["content"].split("## Contradictions and Conflicts")[1]
    assert "thread-a" in conflicts and "thread-b" in conflicts


def test_retrieve_across_three_branches_ranks_and_reports_conflicts(
    home: Path, tmp_path: Path
) -> None:
    _memorize_text(home, tmp_path, "web/main", "User: Always use async/await for "
                   "asynchronous code, never .then() chains.\n", "t1")
    _memorize_text(home, tmp_path, "api/main", "User: Prefer .then() chains over "
                   "async/await; our tracing loses context across await.\n", "t2")
    _memorize_text(home, tmp_path, "api/stream", "User: We decided to use async generators "
                   "for streaming because they handle backpressure.\n", "t3")
    code, found = run_cli(home, "retrieve", "async pattern")
    assert code == 0
    memories = found["memories"]
    assert {m["branch"] for m in memories} == {"web/main", "api/main", "api/stream"}
    assert [m["score"] for m in memories] == sorted((m["score"] for m in memories),
                                                    reverse=True)
    assert all(m["category"] and m["id"] for m in memories)
    assert found["conflicts"]
    assert set(found["conflicts"][0]["branches"]) == {"web/main", "api/main"}


def test_a_hand_edit_is_picked_up_by_the_next_retrieve(home: Path, tmp_path: Path) -> None:
    _memorize_text(home, tmp_path, "demo", "User: Always use pathlib instead of os.path.\n",
                   "t1")
    code, found = run_cli(home, "retrieve", "pathlib")
    assert found["memories"]
    path = home / "branches" / "demo.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("## Project Conventions\n",
                                 "## Project Conventions\n\n- **Zebra naming**: Name every "
                                 "fixture after a zebra.\n"), encoding="utf-8")
    code, found = run_cli(home, "retrieve", "zebra fixture")
    assert code == 0
    assert found["memories"][0]["title"] == "Zebra naming"
