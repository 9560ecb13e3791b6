"""The `puffin-memory` command line, run as a user runs it: a real subprocess on a real home."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SEED = REPO / "tests" / "fixtures" / "format" / "seed_example.md"


def run_cli(
    home: Path, *args: str, stdin: bytes | None = None, timeout: float = 120
) -> tuple[int, dict]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "PUFFIN_MEMORY_HOME": str(home / "not-used")}
    env.pop("ANTHROPIC_API_KEY", None)
    proc = subprocess.run(
        [sys.executable, "-m", "app", "--home", str(home), *args],
        input=stdin,
        capture_output=True,
        env=env,
        timeout=timeout,
        check=False,
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
    code, reply = run_cli(
        home, "memorize", "--branch", branch, "--file", str(conv), "--source", source
    )
    assert code == 0, reply
    return reply


def test_a_later_opposite_statement_is_recorded_with_both_sources(
    home: Path, tmp_path: Path
) -> None:
    _memorize_text(
        home, tmp_path, "demo", "User: Always use async/await, never .then() chains.\n", "thread-a"
    )
    _memorize_text(
        home,
        tmp_path,
        "demo",
        "User: Prefer .then() chains over async/await from now on.\n",
        "thread-b",
    )
    _, shown = run_cli(home, "branch", "show", "demo")
    conflicts = shown["content"].split("## Contradictions and Conflicts")[1]
    assert "thread-a" in conflicts and "thread-b" in conflicts


def test_retrieve_across_three_branches_ranks_and_reports_conflicts(
    home: Path, tmp_path: Path
) -> None:
    _memorize_text(
        home,
        tmp_path,
        "web/main",
        "User: Always use async/await for asynchronous code, never .then() chains.\n",
        "t1",
    )
    _memorize_text(
        home,
        tmp_path,
        "api/main",
        "User: Prefer .then() chains over async/await; our tracing loses context across await.\n",
        "t2",
    )
    _memorize_text(
        home,
        tmp_path,
        "api/stream",
        "User: We decided to use async generators "
        "for streaming because they handle backpressure.\n",
        "t3",
    )
    code, found = run_cli(home, "retrieve", "async pattern")
    assert code == 0
    memories = found["memories"]
    assert {m["branch"] for m in memories} == {"web/main", "api/main", "api/stream"}
    assert [m["score"] for m in memories] == sorted((m["score"] for m in memories), reverse=True)
    assert all(m["category"] and m["id"] for m in memories)
    assert found["conflicts"]
    assert set(found["conflicts"][0]["branches"]) == {"web/main", "api/main"}


def test_a_hand_edit_is_picked_up_by_the_next_retrieve(home: Path, tmp_path: Path) -> None:
    _memorize_text(home, tmp_path, "demo", "User: Always use pathlib instead of os.path.\n", "t1")
    code, found = run_cli(home, "retrieve", "pathlib")
    assert found["memories"]
    path = home / "branches" / "demo.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace(
            "## Project Conventions\n",
            "## Project Conventions\n\n- **Zebra naming**: Name every fixture after a zebra.\n",
        ),
        encoding="utf-8",
    )
    code, found = run_cli(home, "retrieve", "zebra fixture")
    assert code == 0
    assert found["memories"][0]["title"] == "Zebra naming"


# -- bad input never gives a traceback, and says so in JSON ---------------------------------

SESSION = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
fifo_only = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")


@pytest.mark.parametrize(
    "args",
    [
        ("bogus",),
        ("retrieve",),
        ("retrieve", "x", "--max-results", "lots"),
        ("list", "--type", "nope"),
        ("branch", "show"),
        ("--engine", "nope", "stats"),
        ("forget", "--older-than", "soon"),
        ("scan", "--source", "vim"),
    ],
)
def test_argument_errors_are_json_and_exit_2(home: Path, args: tuple[str, ...]) -> None:
    code, reply = run_cli(home, *args)

    assert code == 2
    assert reply["error"] is True
    assert reply["code"] == "INVALID_INPUT"
    assert reply["message"]


def _claude_projects(root: Path, lines: bytes) -> Path:
    folder = root / "projects" / "-nowhere-app"
    folder.mkdir(parents=True)
    (folder / f"{SESSION}.jsonl").write_bytes(lines)
    good = (
        b'{"type":"user","message":{"role":"user","content":"Always use pathlib instead '
        b'of os.path in this project."},"timestamp":"2026-02-10T21:11:56Z",'
        b'"cwd":"/nowhere/app","gitBranch":"main"}\n'
    )
    (folder / "11111111-2222-3333-4444-555555555555.jsonl").write_bytes(good)
    return root / "projects"


def test_a_malformed_line_does_not_abort_the_scan(home: Path, tmp_path: Path) -> None:
    projects = _claude_projects(tmp_path, b'{"type": []}\n{"type":"user","message": 5}\n')

    code, reply = run_cli(home, "--engine", "offline", "scan", "--path", str(projects))

    assert code == 0, reply
    assert reply["memorized"] == 1
    assert reply["discoveryErrors"] == []
    assert sum(reply["skippedRecords"].values()) >= 1


@fifo_only
def test_a_scan_where_nothing_could_be_read_exits_non_zero(home: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)

    code, reply = run_cli(home, "scan", "--path", str(fifo), timeout=30)
    assert code == 1
    assert any(str(fifo) in e for e in reply["discoveryErrors"])

    code, reply = run_cli(home, "scan", "--dry-run", "--path", str(fifo), timeout=30)
    assert code == 1
    assert any(str(fifo) in e for e in reply["errors"])


@fifo_only
@pytest.mark.parametrize("command", [("memorize", "--branch", "b", "--file"), ("import",)])
def test_a_fifo_as_input_file_is_refused_not_waited_on(
    home: Path, tmp_path: Path, command: tuple[str, ...]
) -> None:
    fifo = tmp_path / "input"
    os.mkfifo(fifo)

    code, reply = run_cli(home, *command, str(fifo), timeout=30)

    assert code == 2
    assert reply["code"] == "INVALID_INPUT"
    assert "stdin" in reply["message"]


@fifo_only
def test_a_fifo_as_claude_settings_is_refused_not_waited_on(home: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "settings.json"
    os.mkfifo(fifo)

    code, reply = run_cli(home, "install-hooks", "--settings", str(fifo), timeout=30)

    assert (code, reply["code"]) == (2, "INVALID_INPUT")


def test_a_home_that_is_a_file_is_a_storage_error(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "home"
    not_a_folder.write_text("oops", encoding="utf-8")

    code, reply = run_cli(not_a_folder, "stats")

    assert code == 1
    assert reply["code"] == "STORAGE_ERROR"
    assert str(not_a_folder) in reply["message"]


def test_export_under_a_file_is_a_storage_error(home: Path, tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("x", encoding="utf-8")

    code, reply = run_cli(home, "export", str(tmp_path / "a-file" / "out.json"))

    assert code == 1
    assert reply["code"] == "STORAGE_ERROR"
    assert "a-file" in reply["message"]


def test_a_catastrophic_forget_pattern_is_refused_at_once(home: Path) -> None:
    code, _ = run_cli(home, "remember", "--branch", "b", "a" * 40 + "!")
    assert code == 0

    # `(a+)+$` against 40 `a` and a `!` backtracks 2**40 times: it must never run.
    code, reply = run_cli(home, "forget", "--pattern", "(a+)+$", timeout=30)
    assert code == 2
    assert reply["code"] == "INVALID_INPUT"
    assert "exponential" in reply["message"]

    code, reply = run_cli(home, "forget", "--pattern", "a{40}!")
    assert (code, reply["forgotten"]) == (0, 1)


def test_a_lone_surrogate_escape_does_not_fail_the_thread(home: Path, tmp_path: Path) -> None:
    line = (
        b'{"type":"user","message":{"role":"user","content":"Always use pathlib \\ud800 '
        b'in this project, never os.path."},"timestamp":"2026-02-10T21:11:56Z",'
        b'"cwd":"/nowhere/app","gitBranch":"main\\udc00"}\n'
    )
    projects = _claude_projects(tmp_path, line)

    code, reply = run_cli(home, "--engine", "offline", "scan", "--path", str(projects))

    assert code == 0, reply
    assert (reply["memorized"], reply["failed"]) == (2, 0), reply["errors"]


def test_a_scan_in_which_every_thread_failed_exits_non_zero(home: Path, tmp_path: Path) -> None:
    # A branch name longer than any branch id may be: the one thread cannot be memorized.
    line = (
        json.dumps(
            {
                "type": "user",
                "message": {"role": "user", "content": "Use pathlib."},
                "timestamp": "2026-02-10T21:11:56Z",
                "cwd": "/nowhere/app",
                "gitBranch": "b" * 300,
            }
        ).encode()
        + b"\n"
    )
    folder = tmp_path / "projects" / "-nowhere-app"
    folder.mkdir(parents=True)
    (folder / f"{SESSION}.jsonl").write_bytes(line)

    code, reply = run_cli(home, "--engine", "offline", "scan", "--path", str(tmp_path / "projects"))

    assert (code, reply["memorized"], reply["failed"]) == (1, 0, 1)
    assert "longer than" in reply["errors"][0]


def test_archive_list_and_restore_from_the_command_line(home: Path) -> None:
    from app.core.archive import Archive
    from app.core.models import Category, MemoryItem

    item = MemoryItem(
        category=Category.PROJECT_CONVENTIONS,
        title="Use pnpm",
        content="Use pnpm workspaces for the monorepo.",
        id="conv-0badc0de",
    )
    Archive(home).add("web/main", [(item, "pruned by weekly maintenance")])
    code, listed = run_cli(home, "archive", "list", "web/main")
    assert code == 0 and [i["id"] for i in listed["items"]] == ["conv-0badc0de"]
    code, found = run_cli(home, "retrieve", "pnpm workspaces", "--include-archive")
    assert code == 0 and found["archived"][0]["reason"] == "pruned by weekly maintenance"
    code, done = run_cli(home, "archive", "restore", "web/main", "conv-0badc0de")
    assert code == 0 and done["success"] is True
    code, shown = run_cli(home, "get", "conv-0badc0de")
    assert code == 0 and shown["item"]["title"] == "Use pnpm", shown
    code, missing = run_cli(home, "archive", "restore", "web/main", "conv-0badc0de")
    assert code != 0 and missing["code"] == "NOT_FOUND"


@pytest.mark.parametrize(
    "args",
    [
        ("retrieve", "pnpm"),
        ("list",),
        ("branch", "list"),
        ("stats",),
        ("status",),
        ("context",),
        ("archive", "list", "main"),
    ],
)
def test_read_commands_do_not_create_a_missing_home(tmp_path: Path, args: tuple[str, ...]) -> None:
    home = tmp_path / "never-made"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("PUFFIN_MEMORY_HOME", None)
    proc = subprocess.run(
        [sys.executable, "-m", "app", "--home", str(home), *args],
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert b"Traceback" not in proc.stderr
    assert not home.exists()
    assert b"puffin-memory-empty" not in proc.stdout


def test_crash_leftover_temp_files_are_swept_on_start(home: Path) -> None:
    (home / "branches").mkdir(parents=True)
    stale = home / "branches" / ".main.md.k3j4h5g6.tmp"
    stale.write_text("half a file")
    fresh = home / "branches" / ".other.md.a1b2c3d4.tmp"
    fresh.write_text("being written now")
    old = time.time() - 7200
    os.utime(stale, (old, old))
    code, _ = run_cli(home, "branch", "list")
    assert code == 0
    assert not stale.exists() and fresh.exists()


def test_writing_commands_leave_an_operations_log_and_reads_do_not(
    home: Path, tmp_path: Path
) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    conv = tmp_path / "c.txt"
    conv.write_text("User: We use pnpm, not npm, in every package of this repo.\n")
    code, _ = run_cli(home, "branch", "list")
    log = home / "logs" / "puffin-memory.log"
    assert code == 0 and not log.exists()
    code, _ = run_cli(home, "memorize", "--branch", "web/main", "--file", str(conv))
    assert code == 0
    code, _ = run_cli(home, "memorize", "--branch", "../bad", "--file", str(conv))
    assert code == 2
    text = log.read_text(encoding="utf-8")
    assert "op=memory:memorize branchId='web/main' source='cli' outcome=ok" in text
    assert "outcome=INVALID_INPUT" in text
    assert "pnpm" not in text  # the log holds where and how, never the conversation
    shown = subprocess.run(
        [sys.executable, "-m", "app", "--home", str(home), "logs"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert shown.returncode == 0 and "op=memory:memorize" in shown.stdout
    where = subprocess.run(
        [sys.executable, "-m", "app", "--home", str(home), "logs", "--path"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert where.stdout.strip() == str(log)


def test_memorize_reads_a_raw_claude_code_transcript(home: Path, tmp_path: Path) -> None:
    from tests.engines.test_offline_rendered import _session

    path = tmp_path / "77777777-0000-4000-8000-000000000000.jsonl"
    _session(path)

    code, reply = run_cli(home, "memorize", "--branch", "shop/main", "--file", str(path))

    assert code == 0, reply
    memory = (home / "branches" / "shop%2Fmain.md").read_text(encoding="utf-8")
    assert "returns a float" in memory  # the confirmed bug, read as the scan reads it
    assert '"sessionId"' not in memory and "parentUuid" not in memory
    assert "extracted: 2026-03-05" in memory  # dated by the session's own messages


def test_memorize_reads_a_raw_aider_chat_history(home: Path, tmp_path: Path) -> None:
    # The user's lines are the `####` ones; read as prose, the whole file was one speaker's.
    history = REPO / "tests" / "fixtures" / "sources" / "aider" / ".aider.chat.history.md"

    code, reply = run_cli(home, "memorize", "--branch", "calc/main", "--file", str(history))

    assert code == 0, reply
    memory = (home / "branches" / "calc%2Fmain.md").read_text(encoding="utf-8")
    assert "Always use two-space indentation in CSS." in memory
    assert "####" not in memory and "aider chat started" not in memory
    assert "extracted: 2026-01-06" in memory  # the session's own day, not the file's


def test_memorize_reads_a_raw_puffin_history(home: Path, tmp_path: Path) -> None:
    def prompt(pid: str, content: str, answer: str, minute: int) -> dict[str, object]:
        stamp = f"2026-02-03T10:{minute:02d}:00Z"
        return {
            "id": pid,
            "parentId": None if pid == "p1" else "p1",
            "content": content,
            "timestamp": stamp,
            "children": ["p2"] if pid == "p1" else [],
            "response": {"content": answer, "timestamp": stamp},
        }

    history = {
        "branches": {
            "backend": {
                "id": "backend",
                "name": "Backend",
                "prompts": [
                    prompt(
                        "p1",
                        "Add the todo endpoints.",
                        "I added GET and POST /todos in server/routes.js.",
                        1,
                    ),
                    prompt(
                        "p2",
                        "From now on every endpoint validates its body with zod before it "
                        "touches the store.",
                        "Noted, every endpoint validates its body with zod first.",
                        2,
                    ),
                ],
            }
        }
    }
    path = tmp_path / "history.json"
    path.write_text(json.dumps(history, indent=2), encoding="utf-8")

    code, reply = run_cli(home, "memorize", "--branch", "todo/main", "--file", str(path))

    assert code == 0, reply
    memory = (home / "branches" / "todo%2Fmain.md").read_text(encoding="utf-8")
    assert "validates its body with zod" in memory
    assert '"prompts"' not in memory and "parentId" not in memory
    assert "extracted: 2026-02-03" in memory


def test_memorize_refuses_a_transcript_with_no_conversation(home: Path) -> None:
    code, reply = run_cli(
        home, "memorize", "--branch", "a/main", stdin=b'{"sessionId": "x", "type": "odd"}\n'
    )
    assert code == 2 and reply["code"] == "INVALID_INPUT", reply
    assert "transcript" in reply["message"]


@pytest.mark.parametrize(
    ("text", "named"),
    [
        (b"# aider chat started at 2026-01-05 09:00:00\n\n> Aider v0.82.2\n", "Aider"),
        (b'{"branches": {"ui": {"id": "ui", "prompts": []}}}', "Puffin"),
    ],
)
def test_memorize_refuses_a_history_with_no_conversation(
    home: Path, text: bytes, named: str
) -> None:
    code, reply = run_cli(home, "memorize", "--branch", "a/main", stdin=text)
    assert code == 2 and reply["code"] == "INVALID_INPUT", reply
    assert named in reply["message"] and "no conversation" in reply["message"]
    assert not (home / "branches" / "a%2Fmain.md").exists()
