"""The hook commands end to end, as Claude Code runs them: a new process, JSON on stdin."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.core.format import render
from app.core.store import MemoryStore
from app.integrations.hookio import FALLBACK_LOG, HOOK_DEADLINE_S
from tests.integrations.conftest import RunHook, checkout, item, write_memory

SESSION = "7b1c9e2a-4d3f-4a8e-9c21-5f0e6d2b8a11"


def _start_input(cwd: Path | str | None) -> bytes:
    data: dict[str, str] = {
        "session_id": "s1",
        "transcript_path": "/tmp/t.jsonl",
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    if cwd is not None:
        data["cwd"] = str(cwd)
    return json.dumps(data).encode()


def _log(home: Path) -> str:
    path = home / "logs" / "hooks.log"
    return path.read_text(encoding="utf-8") if path.is_file() else ""


def _offline(home: Path) -> None:
    (home / "config.json").write_text('{"engine": "offline"}\n', encoding="utf-8")


def _wait_drained(home: Path, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        drained = not list((home / "inbox").glob("*.json"))
        failed = (home / "inbox" / "failed").is_dir()
        # The drain logs its summary last: wait for it, not only for the files.
        if (
            drained
            and not failed
            and (home / "ledger.json").is_file()
            and "memorized" in _log(home)
        ):
            return
        time.sleep(0.1)
    pytest.fail(f"the inbox was not drained in {timeout} s; log:\n{_log(home)}")


def test_session_start_prints_the_branch_memory(
    tmp_path: Path, home: Path, run_hook: RunHook
) -> None:
    repo = checkout(tmp_path / "repos", "spotter", "ref: refs/heads/feature-x")
    (repo / "src").mkdir()
    write_memory(
        home,
        "spotter/feature-x",
        [
            item("bug_patterns", "Watcher loses files", "Watch the folder, not the file."),
        ],
        summary="Feature x: folder watching.",
    )
    write_memory(home, "spotter/main", [item("bug_patterns", "Lock first", "Take the lock.")])

    done = run_hook("--home", str(home), "hook", "session-start", stdin=_start_input(repo / "src"))

    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    output = reply["hookSpecificOutput"]
    assert output["hookEventName"] == "SessionStart"
    context = output["additionalContext"]
    assert "Feature x: folder watching." in context
    assert "**Watcher loses files**" in context
    assert "## Known Constraints" in context
    assert "**Lock first**" in context
    assert "spotter/feature-x" in _log(home)


@pytest.mark.parametrize(
    ("stdin", "reason"),
    [
        (b"", "no hook input"),
        (b"\x00\xffnot json at all{", "not JSON"),
        (b"[1, 2, 3]", "not an object"),
        (_start_input(None), "no cwd"),
        (_start_input("/no/such/folder/anywhere"), "not a folder"),
    ],
)
def test_bad_input_prints_nothing_and_logs_why(
    home: Path, run_hook: RunHook, stdin: bytes, reason: str
) -> None:
    write_memory(home, "spotter/feature-x", [item("coding_preferences", "P", "Pref.")])

    done = run_hook("--home", str(home), "hook", "session-start", stdin=stdin)

    assert (done.returncode, done.stdout) == (0, b"")
    assert reason in _log(home)


def test_an_unusable_home_prints_nothing_and_logs_to_the_temp_folder(
    tmp_path: Path, run_hook: RunHook, hook_env: dict[str, str]
) -> None:
    repo = checkout(tmp_path / "repos")
    not_a_folder = tmp_path / "home-is-a-file"
    not_a_folder.write_text("oops", encoding="utf-8")

    done = run_hook("--home", str(not_a_folder), "hook", "session-start", stdin=_start_input(repo))

    assert (done.returncode, done.stdout) == (0, b"")
    fallback = Path(hook_env["TMPDIR"]) / FALLBACK_LOG
    assert "session-start" in fallback.read_text(encoding="utf-8")


def test_no_memory_prints_nothing(tmp_path: Path, home: Path, run_hook: RunHook) -> None:
    repo = checkout(tmp_path / "repos")
    write_memory(home, "other/main", [item("bug_patterns", "Elsewhere", "Other project.")])

    done = run_hook("--home", str(home), "hook", "session-start", stdin=_start_input(repo))

    assert (done.returncode, done.stdout) == (0, b"")
    assert "no memory for spotter/feature-x" in _log(home)


def test_stdin_left_open_does_not_hang_the_hook(
    tmp_path: Path, home: Path, hook_env: dict[str, str]
) -> None:
    repo = checkout(tmp_path / "repos")
    write_memory(home, "spotter/feature-x", [item("coding_preferences", "P", "Pref.")])
    process = subprocess.Popen(
        [sys.executable, "-m", "app.integrations", "--home", str(home), "hook", "session-start"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=hook_env,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(_start_input(repo))
    process.stdin.flush()  # and never closed, as some agents do
    try:
        # The reply is far below a pipe's buffer, so the hook can exit without us reading.
        code = process.wait(timeout=30)
    finally:
        process.stdin.close()
    assert code == 0
    assert b"**P**" in process.stdout.read()
    process.stdout.close()
    assert process.stderr is not None
    process.stderr.close()


def test_session_end_returns_and_the_background_run_memorizes(
    tmp_path: Path, home: Path, run_hook: RunHook, fixtures_dir: Path
) -> None:
    _offline(home)
    transcript = tmp_path / "claude" / "projects" / "-home-dev-spotter" / f"{SESSION}.jsonl"
    transcript.parent.mkdir(parents=True)
    shutil.copyfile(fixtures_dir / "integrations" / "session-feature-x.jsonl", transcript)
    stdin = json.dumps(
        {
            "session_id": SESSION,
            "transcript_path": str(transcript),
            "cwd": "/home/dev/projects/spotter",
            "hook_event_name": "SessionEnd",
            "reason": "prompt_input_exit",
        }
    ).encode()

    done = run_hook("--home", str(home), "hook", "session-end", stdin=stdin)

    assert (done.returncode, done.stdout) == (0, b"")
    _wait_drained(home)
    memory = (home / "branches" / "spotter%2Ffeature-x.md").read_text(encoding="utf-8")
    assert "Test files mirror the app layout" in memory
    assert f"cc-{SESSION[:8]}" in memory  # the thread's source ref
    ledger = json.loads((home / "ledger.json").read_text(encoding="utf-8"))
    assert f"claude-code:{SESSION}" in ledger["threads"]
    log = _log(home)
    assert "SessionEnd: spooled" in log
    assert "memorized 1 thread(s)" in log


@pytest.mark.corpus
def test_session_end_with_a_real_claude_code_transcript(
    tmp_path: Path, home: Path, run_hook: RunHook, corpus_dir: Path
) -> None:
    _offline(home)
    session = "55604662-cf2a-4331-851a-ec234028f8ca"
    transcript = tmp_path / "projects" / "-home-marco-projects-spotter" / f"{session}.jsonl"
    transcript.parent.mkdir(parents=True)
    shutil.copyfile(corpus_dir / "claude-code" / "marot-spotter__short.jsonl", transcript)
    stdin = json.dumps(
        {
            "session_id": session,
            "transcript_path": str(transcript),
            "cwd": "/home/marco/projects/spotter",
            "hook_event_name": "PreCompact",
            "trigger": "auto",
        }
    ).encode()

    done = run_hook("--home", str(home), "hook", "pre-compact", stdin=stdin)

    assert (done.returncode, done.stdout) == (0, b"")
    _wait_drained(home)
    ledger = json.loads((home / "ledger.json").read_text(encoding="utf-8"))
    entry = ledger["threads"][f"claude-code:{session}"]
    assert entry["branchId"] == "spotter/master"
    assert entry["messages"] > 0
    assert "PreCompact: spooled" in _log(home)


def test_session_end_without_a_transcript_records_nothing(home: Path, run_hook: RunHook) -> None:
    done = run_hook(
        "--home", str(home), "hook", "session-end", stdin=b'{"session_id": "x", "cwd": "/tmp"}'
    )

    assert (done.returncode, done.stdout) == (0, b"")
    assert not (home / "inbox").exists()
    assert "no transcript_path" in _log(home)


fifo_only = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")


@fifo_only
def test_a_fifo_as_git_head_does_not_hang_session_start(
    tmp_path: Path, home: Path, run_hook: RunHook
) -> None:
    repo = checkout(tmp_path / "repos")
    (repo / ".git" / "HEAD").unlink()
    os.mkfifo(repo / ".git" / "HEAD")
    write_memory(home, "other/main", [item("coding_preferences", "P", "Pref.")])

    started = time.monotonic()
    done = run_hook(
        "--home", str(home), "hook", "session-start", stdin=_start_input(repo), timeout=20
    )

    assert time.monotonic() - started < 2.5
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


@fifo_only
def test_a_hook_stuck_on_a_file_gives_up_at_its_time_limit(
    tmp_path: Path, home: Path, run_hook: RunHook
) -> None:
    repo = checkout(tmp_path / "repos")
    write_memory(home, "spotter/feature-x", [item("coding_preferences", "P", "Pref.")])
    memory_file = MemoryStore(home).branch_file("spotter/feature-x")
    memory_file.unlink()
    os.mkfifo(memory_file)  # whatever reads it blocks until a writer comes: none will

    started = time.monotonic()
    done = run_hook(
        "--home", str(home), "hook", "session-start", stdin=_start_input(repo), timeout=20
    )

    assert time.monotonic() - started < HOOK_DEADLINE_S + 2.0
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def _prompt_input(cwd: Path, prompt: str, session: str = "s-1") -> bytes:
    return json.dumps(
        {
            "session_id": session,
            "cwd": str(cwd),
            "prompt": prompt,
            "hook_event_name": "UserPromptSubmit",
        }
    ).encode()


def test_user_prompt_submit_adds_only_relevant_notes_the_session_has_not_seen(
    tmp_path: Path, home: Path, run_hook: RunHook
) -> None:
    repo = checkout(tmp_path / "repos", "spotter", "ref: refs/heads/feature-x")
    write_memory(
        home,
        "spotter/feature-x",
        [
            item(
                "bug_patterns",
                "Token expiry",
                "Login tokens expire at midnight because token "
                "expiry uses local time instead of UTC.",
            ),
        ],
    )
    write_memory(
        home,
        "spotter/main",
        [
            item(
                "architectural_decisions",
                "Page cache",
                "Cache rendered product pages in Redis for five minutes.",
            ),
        ],
    )
    from app.core.index import MemoryIndex

    with MemoryIndex(MemoryStore(home).index_path) as index:
        index.sync(MemoryStore(home))

    asked = run_hook(
        "--home",
        str(home),
        "hook",
        "user-prompt-submit",
        stdin=_prompt_input(
            repo, "users are logged out at midnight, token expiry?", session="fresh"
        ),
    )
    assert asked.returncode == 0, asked.stderr
    output = json.loads(asked.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == "UserPromptSubmit"
    assert "local time instead of UTC" in output["additionalContext"]
    assert "Redis" not in output["additionalContext"]
    assert output["additionalContext"].startswith("<remembered-notes")

    # Nothing relevant: no output at all.
    for prompt in ("thanks!", "run the tests", "kubernetes helm upgrade fails"):
        quiet = run_hook(
            "--home",
            str(home),
            "hook",
            "user-prompt-submit",
            stdin=_prompt_input(repo, prompt, session="fresh"),
        )
        assert quiet.returncode == 0 and quiet.stdout == b"", (prompt, quiet.stdout)

    # What session start injected is not repeated for the same session.
    run_hook(
        "--home",
        str(home),
        "hook",
        "session-start",
        stdin=json.dumps({"session_id": "s-2", "cwd": str(repo)}).encode(),
    )
    again = run_hook(
        "--home",
        str(home),
        "hook",
        "user-prompt-submit",
        stdin=_prompt_input(repo, "token expiry at midnight again", "s-2"),
    )
    assert again.returncode == 0 and again.stdout == b""


def test_user_prompt_submit_finds_a_choice_by_what_it_replaced(
    tmp_path: Path, home: Path, run_hook: RunHook
) -> None:
    # "We're not doing Celery anymore, Dramatiq instead" names no subject; the item it
    # superseded ("For background jobs we use Celery") does, and a prompt about background
    # jobs gets the choice in force.
    from app.core.config import Config
    from app.core.index import MemoryIndex
    from app.core.models import MemoryItem
    from app.engines.offline.evolve import evolve

    repo = checkout(tmp_path / "repos", "spotter", "ref: refs/heads/main")
    old = MemoryItem(
        category="architectural_decisions",
        title="Background jobs",
        content="For background jobs we use Celery with Redis.",
        sources=["a"],
    )
    new = MemoryItem(
        category="architectural_decisions",
        title="Dramatiq instead of Celery",
        content="We're not doing Celery anymore, Dramatiq instead.",
        sources=["b"],
        tags=["replaces:celery"],
    )
    memory = evolve(None, [old], branch_id="spotter/main", config=Config()).memory
    memory = evolve(memory, [new], branch_id="spotter/main", config=Config()).memory
    store = MemoryStore(home)
    store.ensure()
    store.write_text("spotter/main", render(memory))
    with MemoryIndex(store.index_path) as index:
        index.sync(store)

    asked = run_hook(
        "--home",
        str(home),
        "hook",
        "user-prompt-submit",
        stdin=_prompt_input(repo, "how are background jobs run here?", session="fresh"),
    )
    assert asked.returncode == 0, asked.stderr
    context = json.loads(asked.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Dramatiq instead" in context
    assert "For background jobs we use Celery" not in context


@pytest.mark.parametrize(
    "stdin",
    [
        b"",
        b"garbage",
        b'{"prompt": 5, "cwd": []}',
        b'{"session_id": "../../etc", "cwd": "/", "prompt": "x y"}',
    ],
)
def test_user_prompt_submit_never_fails_the_prompt(
    home: Path, run_hook: RunHook, stdin: bytes
) -> None:
    done = run_hook("--home", str(home), "hook", "user-prompt-submit", stdin=stdin)
    assert done.returncode == 0 and done.stdout == b""
    assert not (home / "cache" / "sessions").exists() or not any(
        p.name.startswith("..") for p in (home / "cache" / "sessions").iterdir()
    )
